/**
 * The lane of the capture viewer's timeline that an event belongs to: the resource its watch request names, read from
 * the request's path (`/api/v1/namespaces/default/pods?watch=1` → `pods in default`), or the key's folder for an etcd
 * event, or the gRPC method. No DOM: scripts/capture-viewer-check.ts groups Node's decoding with it too.
 *
 * @module
 */

/**
 * The resource a Kubernetes API path names, for a person: `pods in default`, `deployments.apps`,
 * `pods in default, name web` (a watch of one object, by path or by `fieldSelector=metadata.name=`). A path that is
 * not the API's comes back without its query; no path at all (the capture missed the request) is `(request not in the
 * capture)`.
 *
 * @example
 * ```ts
 * import { resourceOfPath } from "./resource_lane.ts";
 *
 * console.log(resourceOfPath("/api/v1/namespaces/default/pods?watch=1")); // pods in default
 * console.log(resourceOfPath("/apis/apps/v1/deployments?watch=true")); // deployments.apps
 * console.log(resourceOfPath("/api/v1/namespaces/kube-system/configmaps?watch=1&fieldSelector=metadata.name%3Dx"));
 * // configmaps in kube-system, name x
 * ```
 */
export function resourceOfPath(path: string | undefined): string {
  if (path === undefined) return "(request not in the capture)";
  const queryAt = path.indexOf("?");
  const pathOnly = queryAt < 0 ? path : path.slice(0, queryAt);
  const query = new URLSearchParams(queryAt < 0 ? "" : path.slice(queryAt + 1));
  const segments = pathOnly.split("/").filter((s) => s !== "").map(decodeSegment);
  let rest: string[];
  let group = "";
  if (segments[0] === "api" && segments.length >= 3) rest = segments.slice(2);
  else if (segments[0] === "apis" && segments.length >= 4) {
    group = segments[1];
    rest = segments.slice(3);
  } else return pathOnly;
  // The old form of a watch: /api/v1/watch/namespaces/default/pods.
  if (rest[0] === "watch") rest = rest.slice(1);
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length === 0) return pathOnly;
  const resource = group === "" ? rest[0] : `${rest[0]}.${group}`;
  const name = rest[1] ?? fieldSelectorName(query.get("fieldSelector"));
  return `${resource}${namespace === undefined ? "" : ` in ${namespace}`}${name === undefined ? "" : `, name ${name}`}`;
}

/**
 * The lane of an etcd key: `etcd ` and the key up to its last `/` (`/registry/pods/default/web` →
 * `etcd /registry/pods/default/`), so that the objects of one resource and namespace share a lane.
 *
 * @example
 * ```ts
 * import { laneOfEtcdKey } from "./resource_lane.ts";
 *
 * console.log(laneOfEtcdKey("/registry/pods/default/web")); // etcd /registry/pods/default/
 * ```
 */
export function laneOfEtcdKey(key: string): string {
  const slash = key.lastIndexOf("/");
  return `etcd ${slash <= 0 ? key : key.slice(0, slash + 1)}`;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The name a `fieldSelector` pins (`metadata.name=web`, `metadata.name==web`), if any. */
function fieldSelectorName(selector: string | null): string | undefined {
  if (selector === null) return undefined;
  for (const term of selector.split(",")) {
    const match = /^\s*metadata\.name\s*==?\s*(.+?)\s*$/.exec(term);
    if (match !== null) return match[1];
  }
  return undefined;
}
