/**
 * {@linkcode watch}: one watch request to a stream of typed events.
 *
 * @module
 */
import type { KubernetesProtobufOptions } from "../codec/kubernetes/protobuf_options.ts";
import type { KubernetesObject, WatchEvent } from "../events.ts";
import { decodeWatchResponse } from "../watch/decode_watch_response.ts";
import type { ClusterConnection } from "./cluster_config.ts";
import { DecodeError } from "../errors.ts";
import { ClusterAccessError, describeCauses } from "./errors.ts";
import { ACCEPT } from "./list.ts";
import { checkProtobufDecoders } from "./check_protobuf_decoders.ts";
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
  /**
   * The wire format asked for: `"json"` (the default), `"protobuf"` (JSON still, for kinds without protobuf) or
   * `"cbor"` (JSON still, from a server that does not serve CBOR; kube-apiserver serves it with its
   * `CBORServingAndStorage` feature gate on, as `application/cbor-seq`). Whatever is asked, the body is decoded as
   * its Content-Type says.
   */
  format?: "json" | "protobuf" | "cbor";
  /**
   * Options of the protobuf decoding: `decoders`, the kinds decoded (`createKubernetesDecoders([coreV1])`,
   * `builtinDecoders`), needed with `format: "protobuf"` unless `mode` is `"metadata"`; `mode`. See
   * {@linkcode KubernetesProtobufOptions}.
   */
  protobuf?: KubernetesProtobufOptions;
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes. Default
   * `DEFAULT_MAX_EVENT_BYTES` (16 MiB).
   */
  maxEventBytes?: number;
  /** Ends the watch (the stream closes, the connection is released). */
  signal?: AbortSignal;
}

/**
 * Opens one watch and returns its events as they arrive. A refused request (401, 403, 410, ...) comes as one `ERROR`
 * event with the server's Status, as on the wire; a server that cannot be reached rejects with a
 * `ClusterAccessError` (`REQUEST_FAILED`); the `Retry-After` of a 429 or 5xx answer is in that Status as
 * `details.retryAfterSeconds` (where the watch loop reads it) when the body did not say it: kube-apiserver's
 * priority and fairness answers 429 with the header and a text body. The stream ends when the server ends the watch
 * (`timeoutSeconds`). A body that breaks off (the connection cut or reset, its HTTP/2 stream or connection ended)
 * fails the stream, after every event decoded before the break, with one `ClusterAccessError` (`CONNECTION_LOST`,
 * naming the URL, the bytes read and the runtime's own error, its `cause`) in every runtime; a fault in the bytes
 * themselves is a `DecodeError` (`TRUNCATED`: the body ended cleanly inside an event), and an abort (the signal, the
 * connection closed) stays one. `format: "protobuf"` needs `protobuf.decoders` (the kinds to decode) unless
 * `protobuf.mode` is `"metadata"`: without them the call rejects at once with a `USAGE` error.
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
  checkProtobufDecoders(`watch ${ref.group ? `${ref.resource}.${ref.group}` : ref.resource}`, format, protobuf);
  const url = watchUrl(connection.server, ref, query);
  const headers = await connection.headers();
  headers.set("accept", ACCEPT[format]);
  let response: Response;
  try {
    response = await connection.fetch(url, { headers, ...(signal ? { signal } : {}) });
  } catch (e) {
    // An abort stays one; connectCluster's fetch has typed its failure already (CLOSED, REQUEST_FAILED, ...).
    if (signal?.aborted || e instanceof ClusterAccessError) throw e;
    throw new ClusterAccessError(
      "REQUEST_FAILED",
      `watch ${url.pathname}: ${url.origin} could not be reached: ${(e as Error).message}`,
      {
        cause: e,
      },
    );
  }
  const events = decodeWatchResponse<T>(withTypedBodyFailure(response, url, signal), {
    ...(protobuf ? { protobuf } : {}),
    ...(maxEventBytes === undefined ? {} : { maxEventBytes }),
  });
  const retryAfter = retryAfterSeconds(response);
  if (retryAfter === undefined) return events;
  return events.pipeThrough(
    new TransformStream<WatchEvent<T>, WatchEvent<T>>({
      transform(event, controller) {
        if (event.type === "ERROR" && event.object.details?.retryAfterSeconds === undefined) {
          const details = { ...event.object.details, retryAfterSeconds: retryAfter };
          event = { type: "ERROR", object: { ...event.object, details } };
        }
        controller.enqueue(event);
      },
    }),
  );
}

/** The seconds of a 429's or 5xx's `Retry-After` header (client-go honours it on those), if it has a number. */
function retryAfterSeconds(response: Response): number | undefined {
  if (response.status !== 429 && (response.status < 500 || response.status > 599)) return undefined;
  const value = response.headers.get("retry-after")?.trim();
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

/**
 * `response` with a failure of its body as one `CONNECTION_LOST` error: each runtime's fetch says it its own way
 * (`terminated` in Node's undici, `error reading a body from connection` in Deno, `ECONNRESET` in Bun). An abort (the
 * caller's signal, the connection closed) and an error already typed pass as they are. The decoder downstream hands
 * on every event it decoded before the failure, then the failure.
 */
function withTypedBodyFailure(response: Response, url: URL, signal: AbortSignal | undefined): Response {
  // A status whose Response cannot have a body (no watch answers one) is left alone.
  if (response.body === null || [101, 204, 205, 304].includes(response.status)) return response;
  const reader = response.body.getReader();
  let bytes = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (error) {
        const name = (error as { name?: unknown } | null)?.name;
        const typed = signal?.aborted || error instanceof ClusterAccessError || error instanceof DecodeError ||
          name === "AbortError" || name === "TimeoutError";
        controller.error(
          typed ? error : new ClusterAccessError(
            "CONNECTION_LOST",
            `watch ${url}: the connection was lost after ${bytes} bytes of the response body (${
              describeCauses(error)
            })`,
            { cause: error },
          ),
        );
        return;
      }
      if (read.done) return controller.close();
      bytes += read.value.length;
      controller.enqueue(read.value);
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
