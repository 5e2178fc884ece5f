/**
 * {@linkcode ResourceRef}: a resource of the API (group, version, plural name, namespace), and the URLs of its list,
 * watch and objects.
 *
 * @module
 */

/**
 * Which objects: a resource of a group/version (the core group is `""`), in one namespace or, without one, in all
 * (or cluster-scoped ones).
 *
 * @example
 * ```ts
 * import { resourcePath, type ResourceRef } from "watchwire";
 *
 * const pods: ResourceRef = { version: "v1", resource: "pods", namespace: "default" };
 * const deployments: ResourceRef = { group: "apps", version: "v1", resource: "deployments" };
 * console.log(resourcePath(pods), resourcePath(deployments)); // /api/v1/namespaces/default/pods /apis/apps/v1/deployments
 * ```
 */
export interface ResourceRef {
  /** The API group; `""` or absent for the core group (`/api/v1`). */
  group?: string;
  version: string;
  /** The resource's plural name, as in the URL: `pods`, `configmaps`, `deployments`. */
  resource: string;
  /** One namespace; absent for all namespaces or a cluster-scoped resource. */
  namespace?: string;
}

/**
 * Query parameters of a list or a watch (the API's names). `undefined` ones are left out.
 *
 * @example
 * ```ts
 * import type { ListQuery } from "watchwire";
 *
 * const query: ListQuery = { labelSelector: "app=web", limit: 500 };
 * console.log(query.limit); // 500
 * ```
 */
export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  /** The page size of a list, by the API's name for it (`list()` and `informer()` take it as `pageSize`). */
  limit?: number;
  /** The continue token of the page before. */
  continue?: string;
  resourceVersion?: string;
  /** `NotOlderThan` or `Exact` (with a resourceVersion). */
  resourceVersionMatch?: "NotOlderThan" | "Exact";
  timeoutSeconds?: number;
}

/**
 * Query parameters of a watch.
 *
 * @example
 * ```ts
 * import type { WatchQuery } from "watchwire";
 *
 * // A streaming list: the current objects as ADDED events, then a bookmark, then changes.
 * const query: WatchQuery = {
 *   sendInitialEvents: true,
 *   resourceVersionMatch: "NotOlderThan",
 *   allowWatchBookmarks: true,
 * };
 * console.log(query.sendInitialEvents); // true
 * ```
 */
export interface WatchQuery extends Omit<ListQuery, "limit" | "continue"> {
  allowWatchBookmarks?: boolean;
  /** Begin with the current objects as ADDED events, ended by a bookmark annotated `k8s.io/initial-events-end`. */
  sendInitialEvents?: boolean;
}

function segment(name: string, what: string): string {
  if (name === "" || name === "." || name === ".." || name.includes("/")) {
    throw new TypeError(`${what} ${JSON.stringify(name)} cannot be part of a resource path`);
  }
  return encodeURIComponent(name);
}

/**
 * The path of a resource's collection, or of one object when `name` is given.
 *
 * @example
 * ```ts
 * import { resourcePath } from "watchwire";
 *
 * console.log(resourcePath({ version: "v1", resource: "nodes" }, "node-1")); // /api/v1/nodes/node-1
 * ```
 */
export function resourcePath(ref: ResourceRef, name?: string): string {
  const group = ref.group ?? "";
  let path = group === ""
    ? `/api/${segment(ref.version, "version")}`
    : `/apis/${segment(group, "group")}/${segment(ref.version, "version")}`;
  if (ref.namespace !== undefined) path += `/namespaces/${segment(ref.namespace, "namespace")}`;
  path += `/${segment(ref.resource, "resource")}`;
  if (name !== undefined) path += `/${segment(name, "name")}`;
  return path;
}

/** `server` (which may carry a path prefix, e.g. behind a proxy) joined with `path`. */
function joinServer(server: string, path: string): URL {
  const base = new URL(server);
  base.pathname = base.pathname.replace(/\/+$/, "") + path;
  base.search = "";
  base.hash = "";
  return base;
}

function setQuery(url: URL, query: Record<string, string | number | boolean | undefined>): URL {
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url;
}

/**
 * The URL of a list request.
 *
 * @example
 * ```ts
 * import { listUrl } from "watchwire";
 *
 * const url = listUrl("https://127.0.0.1:6443", { group: "apps", version: "v1", resource: "deployments" }, {
 *   labelSelector: "app=web",
 *   limit: 100,
 * });
 * console.log(url.href); // https://127.0.0.1:6443/apis/apps/v1/deployments?labelSelector=app%3Dweb&limit=100
 * ```
 */
export function listUrl(server: string, ref: ResourceRef, query: ListQuery = {}): URL {
  return setQuery(joinServer(server, resourcePath(ref)), { ...query });
}

/**
 * The URL of a watch request (`watch=true` and the query).
 *
 * @example
 * ```ts
 * import { watchUrl } from "watchwire";
 *
 * const url = watchUrl("https://127.0.0.1:6443", { version: "v1", resource: "pods", namespace: "web" }, {
 *   resourceVersion: "1234",
 *   allowWatchBookmarks: true,
 * });
 * console.log(url.pathname + url.search); // /api/v1/namespaces/web/pods?watch=true&resourceVersion=1234&allowWatchBookmarks=true
 * ```
 */
export function watchUrl(server: string, ref: ResourceRef, query: WatchQuery = {}): URL {
  return setQuery(joinServer(server, resourcePath(ref)), { watch: true, ...query });
}

/**
 * The URL of one object.
 *
 * @example
 * ```ts
 * import { objectUrl } from "watchwire";
 *
 * console.log(objectUrl("https://k8s.example/proxy/", { version: "v1", resource: "configmaps", namespace: "a" }, "b").href);
 * // https://k8s.example/proxy/api/v1/namespaces/a/configmaps/b
 * ```
 */
export function objectUrl(server: string, ref: ResourceRef, name: string): URL {
  return joinServer(server, resourcePath(ref, name));
}
