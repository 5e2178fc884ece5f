/**
 * {@linkcode list}: every object of a resource, by a paginated list, in JSON or protobuf.
 *
 * @module
 */
import { decodeKubernetesProtobufObject } from "../builtin_defaults.ts";
import type { KubernetesProtobufOptions } from "../codec/kubernetes/decode_object.ts";
import { hasKubernetesProtobufMagic } from "../codec/kubernetes/envelope.ts";
import type { KubernetesObject } from "../events.ts";
import type { ClusterConnection } from "./cluster_config.ts";
import { ClusterAccessError } from "./errors.ts";
import { type ListQuery, listUrl, type ResourceRef } from "./resource.ts";
import { responseError } from "./response_error.ts";

/** The Accept header of each wire format: protobuf falls back to JSON for kinds that have no protobuf (CRDs). */
export const ACCEPT = {
  json: "application/json",
  protobuf: "application/vnd.kubernetes.protobuf, application/json",
} as const;

/**
 * Options of {@linkcode list}.
 *
 * @example
 * ```ts
 * import type { ListOptions } from "watchwire";
 *
 * const options: ListOptions = { format: "protobuf", limit: 500, labelSelector: "app=web" };
 * console.log(options.format); // protobuf
 * ```
 */
export interface ListOptions extends Omit<ListQuery, "continue"> {
  /** The wire format asked for: `"json"` (the default) or `"protobuf"` (JSON still, for kinds without protobuf). */
  format?: "json" | "protobuf";
  /** Options of the protobuf decoding (decoders, metadata mode). */
  protobuf?: KubernetesProtobufOptions;
  /** Stops the list. */
  signal?: AbortSignal;
  /**
   * How often a list whose continue token expired (410) starts again from the first page; after that, one list
   * without `limit` (as client-go's pager does). Default 3.
   */
  restartsOnExpiredContinue?: number;
  /**
   * How often a page answered 429 or 5xx with a `Retry-After` header is asked again, after the seconds it says (30 at
   * most), as client-go's REST client does. Default 10.
   */
  maxRetries?: number;
  /** Called with each page's items as it arrives (e.g. to show progress); the next page waits for its promise. */
  onPage?(page: { items: number; total: number }): void | Promise<void>;
}

/**
 * What {@linkcode list} returns: the items, and the list's resourceVersion (to watch from).
 *
 * @example
 * ```ts
 * import type { ListResult } from "watchwire";
 *
 * const result: ListResult = { apiVersion: "v1", kind: "PodList", resourceVersion: "42", items: [], pages: 1, restarts: 0 };
 * console.log(result.resourceVersion); // 42
 * ```
 */
export interface ListResult<T = KubernetesObject> {
  apiVersion: string;
  /** The list's kind, e.g. `ConfigMapList`. */
  kind: string;
  /** The resourceVersion the list was read at: a watch from it misses nothing and repeats nothing. */
  resourceVersion: string;
  /** Every object, each with its `apiVersion` and `kind` (which the server leaves out of a built-in list's items). */
  items: T[];
  /** How many requests it took. */
  pages: number;
  /** How often it started again after an expired continue token. */
  restarts: number;
}

type ListObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[] | null;
};

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

async function readPage(
  connection: ClusterConnection,
  url: URL,
  options: ListOptions,
  what: string,
  retries: number,
): Promise<{ expired: boolean; page?: ListObject }> {
  const headers = await connection.headers();
  headers.set("accept", ACCEPT[options.format ?? "json"]);
  let response: Response;
  try {
    response = await connection.fetch(url, { headers, ...(options.signal ? { signal: options.signal } : {}) });
  } catch (e) {
    // An abort stays one; connectCluster's fetch has typed its failure already (CLOSED, REQUEST_FAILED, ...).
    if (options.signal?.aborted || e instanceof ClusterAccessError) throw e;
    throw new ClusterAccessError(
      "REQUEST_FAILED",
      `${what}: ${url.origin} could not be reached: ${(e as Error).message}`,
      {
        cause: e,
      },
    );
  }
  if (response.headers.has("retry-after") && (response.status === 429 || response.status >= 500) && retries > 0) {
    // client-go's rule: an answer with Retry-After is tried again after that many seconds, a few times.
    const seconds = Number(response.headers.get("retry-after"));
    await response.body?.cancel();
    await sleep(Math.min(Number.isFinite(seconds) && seconds >= 0 ? seconds : 1, 30) * 1000, options.signal);
    return await readPage(connection, url, options, what, retries - 1);
  }
  if (response.status === 410 && url.searchParams.has("continue")) {
    await response.body?.cancel();
    return { expired: true };
  }
  if (!response.ok) throw await responseError(response, what);
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (e) {
    const name = (e as { name?: unknown } | null)?.name;
    if (options.signal?.aborted || e instanceof ClusterAccessError || name === "AbortError") throw e;
    // As watch() says it: one error in every runtime (undici's `terminated`, Deno's and Bun's own words as the cause).
    const why = (e as { message?: unknown } | null)?.message ?? String(e);
    throw new ClusterAccessError(
      "CONNECTION_LOST",
      `${what}: the connection was lost in the answer of ${url} (${why})`,
      {
        cause: e,
      },
    );
  }
  let page: ListObject;
  if (hasKubernetesProtobufMagic(bytes)) {
    // Metadata mode applies to a top-level object, here the List itself, which would keep its items as bytes: a list
    // is decoded in full (its items whole), so a metadata-only informer's list sync holds whole objects.
    const protobuf = options.protobuf?.mode === "metadata"
      ? { ...options.protobuf, mode: "full" as const }
      : options.protobuf;
    page = decodeKubernetesProtobufObject(bytes, protobuf) as ListObject;
  } else {
    page = JSON.parse(new TextDecoder().decode(bytes)) as ListObject;
  }
  // Protobuf cannot tell an empty list from none: the server's JSON says [] for both.
  if (page !== null && typeof page === "object" && (page.items === undefined || page.items === null)) page.items = [];
  if (page === null || typeof page !== "object" || !Array.isArray(page.items)) {
    throw new ClusterAccessError("STATUS", `${what}: the answer is not a list (kind ${JSON.stringify(page?.kind)})`);
  }
  return { expired: false, page };
}

/**
 * Lists every object of a resource: page by page (`limit`, then each `continue` token), in JSON or protobuf. A
 * continue token that expired (410, when etcd compacted the list's revision) starts the list again. A failed
 * request is a `ClusterAccessError` with the server's Status message (`UNAUTHORIZED` for a 401, `FORBIDDEN` for a
 * 403); an answer whose body breaks off is `CONNECTION_LOST` (the runtime's own error its `cause`).
 *
 * @example
 * ```ts
 * import { list, type ClusterConnection } from "watchwire";
 *
 * // A connection whose fetch answers from memory: two pages of ConfigMaps.
 * const pages = [
 *   { kind: "ConfigMapList", apiVersion: "v1", metadata: { resourceVersion: "7", continue: "next" }, items: [{ metadata: { name: "a" } }] },
 *   { kind: "ConfigMapList", apiVersion: "v1", metadata: { resourceVersion: "7" }, items: [{ metadata: { name: "b" } }] },
 * ];
 * const connection: ClusterConnection = {
 *   server: "https://127.0.0.1:6443",
 *   headers: async () => new Headers(),
 *   fetch: async (input) => Response.json(pages[new URL(String(input)).searchParams.has("continue") ? 1 : 0]),
 *   close: async () => {},
 * };
 * const result = await list(connection, { version: "v1", resource: "configmaps" }, { limit: 1 });
 * console.log(result.items.map((o) => o.metadata?.name), result.items[0].kind, result.resourceVersion); // [ "a", "b" ] ConfigMap 7
 * ```
 */
export async function list<T = KubernetesObject>(
  connection: ClusterConnection,
  ref: ResourceRef,
  options: ListOptions = {},
): Promise<ListResult<T>> {
  const { format: _f, protobuf: _p, signal: _s, maxRetries: _m, restartsOnExpiredContinue = 3, onPage, ...query } =
    options;
  const what = `list ${ref.group ? `${ref.resource}.${ref.group}` : ref.resource}${
    ref.namespace === undefined ? "" : ` in namespace ${ref.namespace}`
  }`;
  let restarts = 0;
  let pages = 0;
  let limit = query.limit;
  restart: for (;;) {
    const items: unknown[] = [];
    let first: ListObject | undefined;
    let continueToken: string | undefined;
    do {
      const url = listUrl(connection.server, ref, { ...query, limit, continue: continueToken });
      // A continued page is read at the first page's resourceVersion: the query's own would be refused with it.
      if (continueToken !== undefined) {
        url.searchParams.delete("resourceVersion");
        url.searchParams.delete("resourceVersionMatch");
      }
      const { expired, page } = await readPage(connection, url, options, what, options.maxRetries ?? 10);
      pages++;
      if (expired || page === undefined) {
        restarts++;
        if (restarts > restartsOnExpiredContinue) limit = undefined;
        continue restart;
      }
      first ??= page;
      items.push(...page.items!);
      await onPage?.({ items: page.items!.length, total: items.length });
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken !== undefined);
    const apiVersion = first!.apiVersion ?? (ref.group ? `${ref.group}/${ref.version}` : ref.version);
    const listKind = first!.kind ?? "List";
    const itemKind = listKind.endsWith("List") ? listKind.slice(0, -4) : undefined;
    for (const item of items as KubernetesObject[]) {
      // The server leaves a built-in list's items without apiVersion and kind; a watch event's object has them.
      if (item.apiVersion === undefined) item.apiVersion = apiVersion;
      if (item.kind === undefined && itemKind !== undefined) item.kind = itemKind;
    }
    return {
      apiVersion,
      kind: listKind,
      resourceVersion: first!.metadata?.resourceVersion ?? "",
      items: items as T[],
      pages,
      restarts,
    };
  }
}
