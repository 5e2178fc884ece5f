/**
 * {@linkcode watch}: one watch request to a stream of typed events.
 *
 * @module
 */
import type { KubernetesProtobufOptions } from "../codec/kubernetes/decode_object.ts";
import type { KubernetesObject, WatchEvent } from "../events.ts";
import { decodeWatchResponse } from "../builtin_defaults.ts";
import type { ClusterConnection } from "./cluster_config.ts";
import { ClusterAccessError } from "./errors.ts";
import { ACCEPT } from "./list.ts";
import { type ResourceRef, type WatchQuery, watchUrl } from "./resource.ts";

/**
 * Options of {@linkcode watch}: the watch's query and how to decode it.
 *
 * @example
 * ```ts
 * import type { WatchOptions } from "watchwire";
 *
 * const options: WatchOptions = { resourceVersion: "1200", allowWatchBookmarks: true, format: "protobuf" };
 * console.log(options.format); // protobuf
 * ```
 */
export interface WatchOptions extends WatchQuery {
  /** The wire format asked for: `"json"` (the default) or `"protobuf"` (JSON still, for kinds without protobuf). */
  format?: "json" | "protobuf";
  /** Options of the protobuf decoding (decoders, metadata mode). */
  protobuf?: KubernetesProtobufOptions;
  /** Largest single event accepted, in bytes. Default 16 MiB. */
  maxEventBytes?: number;
  /** Ends the watch (the stream closes, the connection is released). */
  signal?: AbortSignal;
}

/**
 * Opens one watch and returns its events as they arrive. A refused request (401, 403, 410, ...) comes as one `ERROR`
 * event with the server's Status, as on the wire; a server that cannot be reached rejects with a
 * `ClusterAccessError` (`REQUEST_FAILED`). The stream ends when the server ends the watch (`timeoutSeconds`).
 *
 * @example
 * ```ts
 * import { watch, type ClusterConnection } from "watchwire";
 *
 * const body = '{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"8"}}}\n';
 * const connection: ClusterConnection = {
 *   server: "https://127.0.0.1:6443",
 *   headers: async () => new Headers(),
 *   fetch: async () => new Response(body, { headers: { "content-type": "application/json" } }),
 *   close: async () => {},
 * };
 * for await (const event of await watch(connection, { version: "v1", resource: "configmaps" }, { resourceVersion: "7" })) {
 *   if (event.type === "ADDED") console.log(event.object.metadata?.name, event.object.metadata?.resourceVersion); // a 8
 * }
 * ```
 */
export async function watch<T = KubernetesObject>(
  connection: ClusterConnection,
  ref: ResourceRef,
  options: WatchOptions = {},
): Promise<ReadableStream<WatchEvent<T>>> {
  const { format = "json", protobuf, maxEventBytes, signal, ...query } = options;
  const url = watchUrl(connection.server, ref, query);
  const headers = await connection.headers();
  headers.set("accept", ACCEPT[format]);
  let response: Response;
  try {
    response = await connection.fetch(url, { headers, ...(signal ? { signal } : {}) });
  } catch (e) {
    if (signal?.aborted) throw e;
    throw new ClusterAccessError(
      "REQUEST_FAILED",
      `watch ${url.pathname}: ${url.origin} could not be reached: ${(e as Error).message}`,
      {
        cause: e,
      },
    );
  }
  return decodeWatchResponse<T>(response, {
    ...(protobuf ? { protobuf } : {}),
    ...(maxEventBytes === undefined ? {} : { maxEventBytes }),
  });
}
