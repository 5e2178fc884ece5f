/**
 * {@linkcode decodeWatchResponse}: a `fetch` `Response` of a Kubernetes watch to a stream of typed events
 * ({@linkcode decodeWatchResponseBatches}: of arrays of them).
 *
 * @module
 */
import { JsonWatchEventDecoder } from "../codec/json_watch_event_decoder.ts";
import type { KubernetesProtobufOptions } from "../codec/kubernetes/protobuf_options.ts";
import { decodeKubernetesProtobufObject } from "../codec/kubernetes/decode_kubernetes_protobuf_object.ts";
import { hasKubernetesProtobufMagic } from "../codec/kubernetes/envelope.ts";
import { KubernetesProtobufWatchBodyDecoder } from "../codec/kubernetes/protobuf_watch_body_decoder.ts";
import { KubernetesCborWatchBodyDecoder } from "../codec/kubernetes/cbor_watch_body_decoder.ts";
import {
  decodeKubernetesCborObject,
  hasCborSelfDescribedTag,
} from "../codec/kubernetes/decode_kubernetes_cbor_object.ts";
import { BatchDecoderStream } from "../streams/batch_decoder_stream.ts";
import { DecoderStream, type StreamDecoder } from "../streams/decoder_stream.ts";
import { type MediaType, parseMediaType } from "../codec/media_type.ts";
import { concatBytes } from "../bytes.ts";
import { DecodeError } from "../errors.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../limits.ts";
import type { ErrorWatchEvent, KubernetesObject, Status, WatchEvent } from "../events.ts";

/**
 * Options of {@linkcode decodeWatchResponse}, passed on to the body codec.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse, type DecodeWatchOptions } from "watchwire";
 *
 * // Events up to 1 MiB; protobuf objects decoded as apiVersion, kind and metadata only.
 * const options: DecodeWatchOptions = { maxEventBytes: 1024 * 1024, protobuf: { mode: "metadata" } };
 * const response = new Response('{"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"web"}}}\n', {
 *   headers: { "content-type": "application/json;stream=watch" },
 * });
 * for await (const event of decodeWatchResponse(response, options)) {
 *   if (event.type === "DELETED") console.log(event.type, event.object.metadata?.name); // DELETED web
 * }
 * ```
 */
export interface DecodeWatchOptions {
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes. Default
   * `DEFAULT_MAX_EVENT_BYTES` (16 MiB).
   */
  maxEventBytes?: number;
  /**
   * Body codecs by media type essence (`type/subtype`, lower case), tried before the built-in ones: how a new wire
   * format plugs in without touching the rest of the pipeline.
   */
  codecs?: Record<string, WatchBodyCodec>;
  /**
   * Options of the Kubernetes protobuf pipeline: `decoders` (the kinds decoded in full, from `watchwire/kubernetes`:
   * `createKubernetesDecoders([coreV1])`, `builtinDecoders`; by default none but `Status`, other kinds decoding as
   * `KubernetesProtobufObject`s), `mode` (`"full"`, the default, or `"metadata"`: see
   * `KubernetesProtobufWatchBodyDecoderStream`) and `inputViews`. Also used for a protobuf `Status` body of a non-2xx
   * response.
   */
  protobuf?: KubernetesProtobufOptions;
}

/**
 * Turns a watch response body into events; `mediaType` is the response's parsed Content-Type.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse, type WatchBodyCodec } from "watchwire";
 * import { JsonWatchEventDecoderStream } from "watchwire/wire";
 *
 * // A proxy that labels watch bodies `application/x-ndjson`: decode them as the JSON watches they are.
 * const ndjson: WatchBodyCodec = (body, _mediaType, options) =>
 *   body.pipeThrough(new JsonWatchEventDecoderStream<unknown>({ maxEventBytes: options.maxEventBytes }));
 * const response = new Response('{"type":"ADDED","object":{"metadata":{"name":"web"}}}\n', {
 *   headers: { "content-type": "application/x-ndjson; charset=utf-8" },
 * });
 * for await (const event of decodeWatchResponse(response, { codecs: { "application/x-ndjson": ndjson } })) {
 *   console.log(event.type); // ADDED
 * }
 * ```
 */
export type WatchBodyCodec = (
  body: ReadableStream<Uint8Array>,
  mediaType: MediaType,
  options: DecodeWatchOptions,
) => ReadableStream<WatchEvent<unknown>>;

/**
 * The media type of Kubernetes' protobuf serialization; a watch is `${KUBERNETES_PROTOBUF_MEDIA_TYPE};stream=watch`.
 *
 * @example
 * ```ts
 * import { KUBERNETES_PROTOBUF_MEDIA_TYPE } from "watchwire/kubernetes";
 *
 * // Protobuf for built-in kinds; the API server answers in JSON for custom resources, which have no protobuf.
 * const headers = { accept: `${KUBERNETES_PROTOBUF_MEDIA_TYPE}, application/json` };
 * console.log(headers.accept); // application/vnd.kubernetes.protobuf, application/json
 * ```
 */
export const KUBERNETES_PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf";

/** A built-in codec's decoding, which a stream of events or of event batches can run. */
type BodyDecoder = (options: DecodeWatchOptions) => StreamDecoder<Uint8Array, WatchEvent<unknown>>;

const jsonDecoder: BodyDecoder = (options) =>
  new JsonWatchEventDecoder<unknown>({ maxEventBytes: options.maxEventBytes });

const protobufDecoder: BodyDecoder = (options) =>
  new KubernetesProtobufWatchBodyDecoder<unknown>({ ...options.protobuf, maxEventBytes: options.maxEventBytes });

const cborDecoder: BodyDecoder = (options) =>
  new KubernetesCborWatchBodyDecoder<unknown>({ maxEventBytes: options.maxEventBytes });

const BUILTIN_BODY_DECODERS: Readonly<Record<string, BodyDecoder>> = {
  "application/json": jsonDecoder,
  "": jsonDecoder,
  [KUBERNETES_PROTOBUF_MEDIA_TYPE]: protobufDecoder,
  // What kube-apiserver answers a watch asked with `Accept: application/cbor` (or `application/cbor;stream=watch`).
  "application/cbor-seq": cborDecoder,
  // A watch labelled as its Accept header named it (`application/cbor;stream=watch`): a sequence of one item or more.
  "application/cbor": cborDecoder,
};

/** The stream of events a built-in body decoder makes of `body`. */
const streamCodec = (decoder: BodyDecoder): WatchBodyCodec => (body, _mediaType, options) =>
  body.pipeThrough(new DecoderStream(decoder(options)));

/**
 * The codecs watchwire has built in, by media type essence: JSON (an absent Content-Type is read as JSON),
 * Kubernetes protobuf watches and Kubernetes CBOR watches (`application/cbor-seq`, and `application/cbor` for a body
 * labelled as the request's Accept header named it).
 *
 * @example
 * ```ts
 * import { BUILTIN_WATCH_CODECS } from "watchwire";
 *
 * console.log(Object.keys(BUILTIN_WATCH_CODECS)); // [ "application/json", "", "application/vnd.kubernetes.protobuf", "application/cbor-seq", "application/cbor" ] ("": no Content-Type)
 * ```
 */
export const BUILTIN_WATCH_CODECS: Readonly<Record<string, WatchBodyCodec>> = Object.fromEntries(
  Object.entries(BUILTIN_BODY_DECODERS).map(([essence, decoder]) => [essence, streamCodec(decoder)]),
);

/**
 * Decodes the body of a watch response into typed events, choosing the pipeline from its `Content-Type`:
 * `application/json` (with or without `;stream=watch`), `application/vnd.kubernetes.protobuf;stream=watch`
 * (`KubernetesProtobufWatchBodyDecoderStream`, with `options.protobuf`), `application/cbor-seq` (a CBOR watch, as
 * kube-apiserver answers `Accept: application/cbor` with its `CBORServingAndStorage` feature gate on:
 * `KubernetesCborWatchBodyDecoderStream`), more formats through `options.codecs`. A response that is not 2xx becomes
 * a single `ERROR` event carrying its `Status` (as the API server sends it, in JSON, protobuf or CBOR, or one made
 * from the HTTP status when the body is not a Status), so a watcher handles a 410 the same
 * way whether it came as an event or as the HTTP status. A Content-Type no codec handles makes the stream fail with a
 * `CONTENT_TYPE_UNSUPPORTED` {@linkcode DecodeError}.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse } from "watchwire";
 *
 * const response = new Response(
 *   '{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}}\n',
 *   { headers: { "content-type": "application/json" } },
 * );
 * for await (const event of decodeWatchResponse(response)) {
 *   if (event.type === "BOOKMARK") console.log(event.object.metadata.resourceVersion); // 9
 * }
 * // Live: decodeWatchResponse(await fetch(`${server}/api/v1/pods?watch=1&allowWatchBookmarks=true`, { headers }))
 * ```
 */
export function decodeWatchResponse<T = KubernetesObject>(
  response: Response,
  options: DecodeWatchOptions = {},
): ReadableStream<WatchEvent<T>> {
  const body = watchBody(response, options);
  const events = "decoder" in body ? body.bytes.pipeThrough(new DecoderStream(body.decoder)) : body.events;
  return events as ReadableStream<WatchEvent<T>>;
}

/**
 * {@linkcode decodeWatchResponse} with the events handed on in arrays, one for each read of the body that completes
 * any (see {@linkcode BatchDecoderStream}): the same events, the same rules, fewer stream items, which is faster
 * where a Web Streams item costs more than decoding a small event (browsers above all). No event waits for later
 * bytes. The built-in codecs batch; a codec of `options.codecs` hands on single events, and each comes as an array
 * of one, as does the `ERROR` event of a non-2xx response.
 *
 * @example
 * ```ts
 * import { decodeWatchResponseBatches } from "watchwire";
 *
 * const response = new Response(
 *   '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ADDED","object":{"metadata":{"name":"b"}}}\n',
 *   { headers: { "content-type": "application/json;stream=watch" } },
 * );
 * const store = new Map<string, unknown>();
 * for await (const batch of decodeWatchResponseBatches(response)) {
 *   for (const event of batch) if (event.type === "ADDED") store.set(event.object.metadata?.name ?? "", event.object);
 * }
 * console.log([...store.keys()]); // [ "a", "b" ]
 * ```
 */
export function decodeWatchResponseBatches<T = KubernetesObject>(
  response: Response,
  options: DecodeWatchOptions = {},
): ReadableStream<WatchEvent<T>[]> {
  const body = watchBody(response, options);
  const batches = "decoder" in body
    ? body.bytes.pipeThrough(new BatchDecoderStream(body.decoder))
    // A DecoderStream, not a plain TransformStream: events read before the codec's stream fails still arrive.
    : body.events.pipeThrough(new DecoderStream(ONE_EVENT_BATCHES));
  return batches as ReadableStream<WatchEvent<T>[]>;
}

/** Each event as an array of one. */
const ONE_EVENT_BATCHES: StreamDecoder<WatchEvent<unknown>, WatchEvent<unknown>[]> = {
  push: (event, emit) => emit([event]),
  finish() {},
};

/** What decodes a watch response: a built-in decoder for its body, or a stream of events already. */
type WatchBody =
  | { bytes: ReadableStream<Uint8Array>; decoder: StreamDecoder<Uint8Array, WatchEvent<unknown>> }
  | { events: ReadableStream<WatchEvent<unknown>> };

function watchBody(response: Response, options: DecodeWatchOptions): WatchBody {
  const body = response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  if (response.status < 200 || response.status > 299) {
    return {
      events: errorStatusEvent(response, body, options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES, options.protobuf),
    };
  }
  const mediaType = parseMediaType(response.headers.get("content-type"));
  const codec = options.codecs?.[mediaType.essence];
  if (codec !== undefined) return { events: codec(body, mediaType, options) };
  const decoder = BUILTIN_BODY_DECODERS[mediaType.essence];
  if (decoder !== undefined) return { bytes: body, decoder: decoder(options) };
  body.cancel().catch(() => {});
  return {
    events: new ReadableStream({
      start(controller) {
        controller.error(
          new DecodeError(
            "CONTENT_TYPE_UNSUPPORTED",
            0,
            `no watch decoder for Content-Type ${JSON.stringify(response.headers.get("content-type"))}`,
          ),
        );
      },
    }),
  };
}

// metav1.StatusReason for the HTTP statuses a watch request meets.
const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Gone",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

function errorStatusEvent(
  response: Response,
  body: ReadableStream<Uint8Array>,
  maxEventBytes: number,
  protobuf: KubernetesProtobufOptions | undefined,
): ReadableStream<WatchEvent<unknown>> {
  return new ReadableStream<WatchEvent<unknown>>({
    async start(controller) {
      const bytes = await readBytes(body, maxEventBytes);
      let status: Status | undefined;
      let text = "";
      if (hasKubernetesProtobufMagic(bytes)) {
        // A protobuf Status (the API server answers in the type the client accepts), whatever the Content-Type says.
        try {
          // Only a Status matters here, which decodes whatever the decoders (core's default knows only Status).
          const object = decodeKubernetesProtobufObject(bytes, { decoders: protobuf?.decoders });
          if (object.kind === "Status") status = object as Status;
        } catch {
          // Not a whole object: described from the HTTP status below (its bytes are no message for a person).
        }
      } else if (hasCborSelfDescribedTag(bytes)) {
        // A CBOR Status (the answer to `Accept: application/cbor`).
        try {
          const object = decodeKubernetesCborObject(bytes);
          if (object.kind === "Status") status = object as Status;
        } catch {
          // Not a whole object: described from the HTTP status below.
        }
      } else {
        text = new TextDecoder().decode(bytes);
        try {
          const parsed = JSON.parse(text);
          if (parsed !== null && typeof parsed === "object" && parsed.kind === "Status") status = parsed;
        } catch {
          // Not JSON: described from the HTTP status below.
        }
      }
      status ??= {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: text.trim().slice(0, 1024) || `${response.status} ${response.statusText}`.trim(),
        reason: REASONS[response.status] ?? (response.status >= 500 ? "InternalError" : "Unknown"),
        code: response.status,
      };
      const event: ErrorWatchEvent = { type: "ERROR", object: status };
      controller.enqueue(event);
      controller.close();
    },
  });
}

/** The first `maxEventBytes` bytes of `body` (or all of it, if shorter); the rest is cancelled. */
async function readBytes(body: ReadableStream<Uint8Array>, maxEventBytes: number): Promise<Uint8Array> {
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  // A body that fails (e.g. a truncated capture) fails the stream: a half Status is not passed off as a whole one.
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length >= maxEventBytes) {
      parts.push(value.subarray(0, maxEventBytes - size));
      size = maxEventBytes;
      await reader.cancel();
      break;
    }
    parts.push(value);
    size += value.length;
  }
  return parts.length === 0 ? new Uint8Array(0) : concatBytes(parts, size);
}
