/**
 * {@linkcode discoverResource}: a kind to the resource that serves it, from the API server's discovery documents.
 *
 * @module
 */
import type { ClusterConnection } from "./cluster_config.ts";
import { ClusterAccessError } from "./errors.ts";
import type { ResourceRef } from "./resource.ts";
import { responseError } from "./response_error.ts";

/**
 * A resource found by discovery: where it is, and whether it is namespaced.
 *
 * @example
 * ```ts
 * import type { DiscoveredResource } from "watchwire";
 *
 * const found: DiscoveredResource = { group: "apps", version: "v1", resource: "deployments", kind: "Deployment", namespaced: true, verbs: ["list", "watch"] };
 * console.log(found.namespaced); // true
 * ```
 */
export interface DiscoveredResource extends Required<Omit<ResourceRef, "namespace">> {
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

type ApiResourceList = {
  resources?: { name: string; kind: string; namespaced: boolean; verbs?: string[] }[];
};

/**
 * The resource that serves `kind` in `apiVersion` (`v1`, `apps/v1`, `example.com/v1alpha1`), read from the group
 * version's discovery document (`/api/v1`, `/apis/GROUP/VERSION`); subresources are skipped. Not found is a
 * `ClusterAccessError` (`STATUS`, with status 404).
 *
 * @example
 * ```ts
 * import { discoverResource, type ClusterConnection } from "watchwire";
 *
 * const connection: ClusterConnection = {
 *   server: "https://127.0.0.1:6443",
 *   headers: async () => new Headers(),
 *   fetch: async () =>
 *     Response.json({ resources: [{ name: "deployments", kind: "Deployment", namespaced: true, verbs: ["list", "watch"] }] }),
 *   close: async () => {},
 * };
 * const found = await discoverResource(connection, "apps/v1", "Deployment");
 * console.log(found.resource, found.namespaced); // deployments true
 * ```
 */
export async function discoverResource(
  connection: ClusterConnection,
  apiVersion: string,
  kind: string,
): Promise<DiscoveredResource> {
  const slash = apiVersion.lastIndexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  const path = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
  const url = new URL(connection.server);
  url.pathname = url.pathname.replace(/\/+$/, "") + path;
  const headers = await connection.headers();
  headers.set("accept", "application/json");
  let response: Response;
  try {
    response = await connection.fetch(url, { headers });
  } catch (e) {
    throw new ClusterAccessError("REQUEST_FAILED", `discovery of ${apiVersion}: ${url.origin} could not be reached`, {
      cause: e,
    });
  }
  if (!response.ok) throw await responseError(response, `discovery of ${apiVersion}`);
  const document = await response.json() as ApiResourceList;
  const found = document.resources?.find((r) => r.kind === kind && !r.name.includes("/"));
  if (found === undefined) {
    throw new ClusterAccessError("STATUS", `discovery of ${apiVersion}: the server has no resource of kind ${kind}`, {
      status: 404,
    });
  }
  return { group, version, resource: found.name, kind, namespaced: found.namespaced, verbs: found.verbs ?? [] };
}
