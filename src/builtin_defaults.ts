/**
 * The Kubernetes protobuf decoders of the `watchwire` entry point: those of `watchwire/core` with every built-in kind
 * (`builtinDecoders`) as the default `decoders`. The core ones default to none but `Status` and never import the
 * generated decoders, so that a bundle built from `watchwire/core` holds only the group/versions its code names.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "./events.ts";
import type { JsonObject } from "./codec/kubernetes/registry.ts";
import type { KubernetesProtobufOptions } from "./codec/kubernetes/decode_object.ts";
import { builtinDecoders } from "./codec/kubernetes/generated/all.ts";
import { decodeKubernetesProtobufObject as decodeObjectCore } from "./codec/kubernetes/decode_kubernetes_protobuf_object.ts";
import { KubernetesProtobufWatchEventDecoder as EventDecoderCore } from "./codec/kubernetes/watch_event_decoder.ts";
import {
  KubernetesProtobufWatchDecoder as WatchDecoderCore,
  type KubernetesProtobufWatchOptions,
} from "./codec/kubernetes/protobuf_watch_decoder.ts";
import { KubernetesProtobufWatchDecoderStream as WatchDecoderStreamCore } from "./codec/kubernetes/protobuf_watch_decoder_stream.ts";
import { KubernetesProtobufWatchEventDecoderStream as EventDecoderStreamCore } from "./codec/kubernetes/protobuf_watch_event_decoder_stream.ts";
import {
  type DecodeWatchOptions,
  decodeWatchResponse as decodeWatchResponseCore,
  decodeWatchResponseBatches as decodeWatchResponseBatchesCore,
} from "./watch/decode_watch_response.ts";

/** `options` with `decoders` defaulting to every built-in kind. */
function withBuiltins<O extends KubernetesProtobufOptions>(options: O): O {
  return options.decoders === undefined ? { ...options, decoders: builtinDecoders } : options;
}

/**
 * The body of a Kubernetes protobuf watch (bytes) to typed watch events in one stage, every built-in kind decoded
 * unless `options.decoders` says otherwise: see the core class of `watchwire/core` for the rules.
 *
 * @example
 * ```ts
 * import { KubernetesProtobufWatchDecoderStream } from "watchwire";
 *
 * const envelope = [0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03];
 * const frame = [0x0a, 5, 0x45, 0x52, 0x52, 0x4f, 0x52, 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope];
 * const body = new Blob([Uint8Array.of(0, 0, 0, frame.length, ...frame)]).stream();
 * for await (const event of body.pipeThrough(new KubernetesProtobufWatchDecoderStream())) {
 *   if (event.type === "ERROR") console.log(event.object.code); // 410
 * }
 * ```
 */
export class KubernetesProtobufWatchDecoderStream<T = KubernetesObject> extends WatchDecoderStreamCore<T> {
  constructor(options: KubernetesProtobufWatchOptions = {}) {
    super(withBuiltins(options));
  }
}

/**
 * The decoding of {@linkcode KubernetesProtobufWatchDecoderStream} without a stream (body bytes to typed watch
 * events), every built-in kind decoded unless `options.decoders` says otherwise: see the core class of
 * `watchwire/core`.
 *
 * @example
 * ```ts
 * import { BatchDecoderStream, KubernetesProtobufWatchDecoder } from "watchwire";
 *
 * const envelope = [0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03];
 * const frame = [0x0a, 5, 0x45, 0x52, 0x52, 0x4f, 0x52, 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope];
 * const body = new Blob([Uint8Array.of(0, 0, 0, frame.length, ...frame, 0, 0, 0, frame.length, ...frame)]).stream();
 * for await (const batch of body.pipeThrough(new BatchDecoderStream(new KubernetesProtobufWatchDecoder()))) {
 *   console.log(batch.map((event) => event.type)); // [ "ERROR", "ERROR" ]
 * }
 * ```
 */
export class KubernetesProtobufWatchDecoder<T = KubernetesObject> extends WatchDecoderCore<T> {
  constructor(options: KubernetesProtobufWatchOptions = {}) {
    super(withBuiltins(options));
  }
}

/**
 * The frames of a Kubernetes protobuf watch (from `LengthPrefixedDecoderStream`) to typed watch events, every
 * built-in kind decoded unless `options.decoders` says otherwise: see the core class of `watchwire/core`.
 *
 * @example
 * ```ts
 * import { KubernetesProtobufWatchEventDecoderStream, LengthPrefixedDecoderStream } from "watchwire";
 *
 * const envelope = [0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03];
 * const frame = [0x0a, 5, 0x45, 0x52, 0x52, 0x4f, 0x52, 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope];
 * const events = new Blob([Uint8Array.of(0, 0, 0, frame.length, ...frame)]).stream()
 *   .pipeThrough(new LengthPrefixedDecoderStream())
 *   .pipeThrough(new KubernetesProtobufWatchEventDecoderStream());
 * for await (const event of events) console.log(event.type, event.object.kind); // ERROR Status
 * ```
 */
export class KubernetesProtobufWatchEventDecoderStream<T = KubernetesObject> extends EventDecoderStreamCore<T> {
  constructor(options: KubernetesProtobufOptions = {}) {
    super(withBuiltins(options));
  }
}

/**
 * One frame of a Kubernetes protobuf watch to a typed watch event, without streams, every built-in kind decoded unless
 * `options.decoders` says otherwise: see the core class of `watchwire/core`.
 *
 * @example
 * ```ts
 * import { KubernetesProtobufWatchEventDecoder } from "watchwire";
 *
 * const envelope = [0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03];
 * const frame = Uint8Array.of(0x0a, 5, 0x45, 0x52, 0x52, 0x4f, 0x52, 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope);
 * const event = new KubernetesProtobufWatchEventDecoder().decode(frame, 4);
 * if (event.type === "ERROR") console.log(event.object.kind, event.object.code); // Status 410
 * ```
 */
export class KubernetesProtobufWatchEventDecoder extends EventDecoderCore {
  constructor(options: KubernetesProtobufOptions = {}) {
    super(withBuiltins(options));
  }
}

/**
 * One Kubernetes object in its protobuf serialization (`k8s\0` + `runtime.Unknown`) to the object its JSON would
 * show, every built-in kind decoded unless `options.decoders` says otherwise: see the core function of
 * `watchwire/core`.
 *
 * @example
 * ```ts
 * import { decodeKubernetesProtobufObject } from "watchwire";
 *
 * // k8s\0 + Unknown { typeMeta: { apiVersion: "v1", kind: "Status" }, raw: Status { code: 410 } }
 * const bytes = Uint8Array.of(
 *   0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03,
 * );
 * const status = decodeKubernetesProtobufObject(bytes);
 * console.log(status.kind, status.apiVersion, status.code, status.metadata); // Status v1 410 {}
 * ```
 */
export function decodeKubernetesProtobufObject(
  bytes: Uint8Array,
  options: KubernetesProtobufOptions = {},
  baseOffset = 0,
): JsonObject {
  return decodeObjectCore(bytes, withBuiltins(options), baseOffset);
}

/**
 * A `fetch` `Response` of a Kubernetes watch to its typed events (JSON, Kubernetes protobuf with every built-in kind
 * unless `options.protobuf.decoders` says otherwise, more through `options.codecs`): see the core function of
 * `watchwire/core` for the rules.
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
 * ```
 */
export function decodeWatchResponse<T = KubernetesObject>(
  response: Response,
  options: DecodeWatchOptions = {},
): ReadableStream<WatchEvent<T>> {
  return decodeWatchResponseCore<T>(response, { ...options, protobuf: withBuiltins(options.protobuf ?? {}) });
}

/**
 * {@linkcode decodeWatchResponse} with the events handed on in arrays, one for each read of the body that completes
 * any (Kubernetes protobuf with every built-in kind unless `options.protobuf.decoders` says otherwise): see the core
 * function of `watchwire/core` for the rules.
 *
 * @example
 * ```ts
 * import { decodeWatchResponseBatches } from "watchwire";
 *
 * const response = new Response('{"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"web"}}}\n', {
 *   headers: { "content-type": "application/json;stream=watch" },
 * });
 * for await (const batch of decodeWatchResponseBatches(response)) {
 *   console.log(batch.length, batch[0].type); // 1 DELETED
 * }
 * ```
 */
export function decodeWatchResponseBatches<T = KubernetesObject>(
  response: Response,
  options: DecodeWatchOptions = {},
): ReadableStream<WatchEvent<T>[]> {
  return decodeWatchResponseBatchesCore<T>(response, { ...options, protobuf: withBuiltins(options.protobuf ?? {}) });
}
