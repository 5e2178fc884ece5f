/**
 * The RESOURCE argument of `watchwire watch` to the resource it names, as kubectl resolves it: `pods`, `pod`, `po`,
 * `Pod`, `deployments.apps`, `deploy.apps`, `deployments.v1.apps`, `widgets.example.com`. Read from the server's
 * discovery: the aggregated documents (`/api` and `/apis` asked as `apidiscovery.k8s.io/v2`, two requests), else,
 * from a server that answers them unaggregated, the group/version documents one by one. Internal.
 *
 * @module
 */
import type { ClusterConnection } from "../cluster/cluster_config.ts";
import { ClusterAccessError } from "../cluster/errors.ts";
import { responseError } from "../cluster/response_error.ts";

/** A resource as discovery describes it. */
export interface FoundResource {
  group: string;
  version: string;
  resource: string;
  kind: string;
  singular: string;
  shortNames: string[];
  namespaced: boolean;
  verbs: string[];
}

/** A group/version and its resources; `preferred`: the group's preferred version. */
interface GroupVersion {
  group: string;
  version: string;
  preferred: boolean;
  resources: FoundResource[];
}

const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

async function getJson(connection: ClusterConnection, path: string, accept = "application/json"): Promise<unknown> {
  const url = new URL(connection.server);
  url.pathname = url.pathname.replace(/\/+$/, "") + path;
  const headers = await connection.headers();
  headers.set("accept", accept);
  let response: Response;
  try {
    response = await connection.fetch(url, { headers });
  } catch (e) {
    if (e instanceof ClusterAccessError) throw e;
    throw new ClusterAccessError("REQUEST_FAILED", `discovery: ${url.origin} could not be reached`, { cause: e });
  }
  if (!response.ok) throw await responseError(response, `discovery (${path})`);
  return await response.json();
}

interface AggregatedResource {
  resource: string;
  responseKind?: { kind?: string };
  scope?: string;
  singularResource?: string;
  shortNames?: string[];
  verbs?: string[];
}
interface AggregatedList {
  kind?: string;
  items?: { metadata?: { name?: string }; versions?: { version: string; resources?: AggregatedResource[] }[] }[];
}

function fromAggregated(document: AggregatedList): GroupVersion[] {
  const out: GroupVersion[] = [];
  for (const item of document.items ?? []) {
    const group = item.metadata?.name ?? "";
    (item.versions ?? []).forEach((v, i) => {
      out.push({
        group,
        version: v.version,
        preferred: i === 0,
        resources: (v.resources ?? []).map((r) => ({
          group,
          version: v.version,
          resource: r.resource,
          kind: r.responseKind?.kind ?? "",
          singular: r.singularResource ?? "",
          shortNames: r.shortNames ?? [],
          namespaced: r.scope === "Namespaced",
          verbs: r.verbs ?? [],
        })),
      });
    });
  }
  return out;
}

interface LegacyResourceList {
  resources?: {
    name: string;
    kind: string;
    namespaced: boolean;
    singularName?: string;
    shortNames?: string[];
    verbs?: string[];
  }[];
}

async function legacyGroupVersion(
  connection: ClusterConnection,
  group: string,
  version: string,
  preferred: boolean,
): Promise<GroupVersion> {
  const document = await getJson(
    connection,
    group === "" ? `/api/${version}` : `/apis/${group}/${version}`,
  ) as LegacyResourceList;
  return {
    group,
    version,
    preferred,
    resources: (document.resources ?? []).filter((r) => !r.name.includes("/")).map((r) => ({
      group,
      version,
      resource: r.name,
      kind: r.kind,
      singular: r.singularName || r.kind.toLowerCase(),
      shortNames: r.shortNames ?? [],
      namespaced: r.namespaced,
      verbs: r.verbs ?? [],
    })),
  };
}

/** Every group/version the server serves (only those of `groupHint`'s group when the legacy documents are read). */
async function discover(connection: ClusterConnection, groupHint: string | undefined): Promise<GroupVersion[]> {
  const core = await getJson(connection, "/api", AGGREGATED) as AggregatedList & { versions?: string[] };
  if (core.kind === "APIGroupDiscoveryList") {
    const groups = await getJson(connection, "/apis", AGGREGATED) as AggregatedList;
    return [...fromAggregated(core), ...fromAggregated(groups)];
  }
  // A server without aggregated discovery: the group/version documents.
  const out: GroupVersion[] = [];
  if (groupHint === undefined || groupHint === "" || groupHint === "v1" || groupHint === "core") {
    for (const version of core.versions ?? ["v1"]) out.push(await legacyGroupVersion(connection, "", version, true));
  }
  const groups = await getJson(connection, "/apis") as {
    groups?: { name: string; versions: { version: string }[]; preferredVersion?: { version: string } }[];
  };
  for (const group of groups.groups ?? []) {
    if (groupHint !== undefined && !groupHint.endsWith(group.name)) continue;
    const preferred = group.preferredVersion?.version ?? group.versions[0]?.version;
    for (const { version } of group.versions) {
      out.push(await legacyGroupVersion(connection, group.name, version, version === preferred));
    }
  }
  return out;
}

/**
 * The resource `arg` names: `NAME`, `NAME.GROUP` or `NAME.VERSION.GROUP`, where NAME is the resource (`pods`), its
 * singular (`pod`), a short name (`po`) or its kind (`Pod`, any case). Without a group the core group wins, then the
 * groups in the server's order (kubectl's priority); within a group, the preferred version unless one is named. A
 * name that matches nothing is a `ClusterAccessError` (`STATUS`, 404).
 */
export async function resolveResource(connection: ClusterConnection, arg: string): Promise<FoundResource> {
  const dot = arg.indexOf(".");
  const name = (dot < 0 ? arg : arg.slice(0, dot)).toLowerCase();
  const qualifier = dot < 0 ? undefined : arg.slice(dot + 1);
  const groupVersions = await discover(connection, qualifier);
  const matches = (r: FoundResource) =>
    r.resource === name || r.singular === name || r.shortNames.includes(name) || r.kind.toLowerCase() === name;
  const inScope = (gv: GroupVersion) => {
    if (qualifier === undefined) return gv.preferred;
    if (gv.group === qualifier) return gv.preferred;
    return `${gv.version}.${gv.group}` === qualifier || (gv.group === "" && gv.version === qualifier);
  };
  for (const gv of groupVersions) {
    if (!inScope(gv)) continue;
    const found = gv.resources.find((r) => !r.resource.includes("/") && matches(r));
    if (found !== undefined) return found;
  }
  throw new ClusterAccessError("STATUS", `the server doesn't have a resource type "${arg}"`, { status: 404 });
}
