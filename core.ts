/**
 * watchwire/core: everything of the `watchwire` entry point but the command line, with one difference: the Kubernetes
 * protobuf decoders (`KubernetesProtobufWatchDecoderStream`, `KubernetesProtobufWatchDecoder`,
 * `KubernetesProtobufWatchEventDecoderStream`, `KubernetesProtobufWatchEventDecoder`, `decodeKubernetesProtobufObject`,
 * `decodeWatchResponse` and `decodeWatchResponseBatches` for protobuf bodies) decode only the kinds of the `decoders`
 * they are given, none but `v1` `Status` by default. Nothing here imports the generated decoders unless the code using
 * it does, so a bundle holds only the group/versions it names (core/v1 alone is about a third of them; a JSON-only
 * watcher none).
 *
 * @example
 * ```ts
 * import { coreV1, createKubernetesDecoders, KubernetesProtobufWatchDecoderStream } from "watchwire/core";
 *
 * // Pods, Nodes, ConfigMaps...: core/v1 only in the bundle. Other kinds: apiVersion, kind, metadata and raw bytes.
 * const decoders = createKubernetesDecoders([coreV1]);
 * const stream = new KubernetesProtobufWatchDecoderStream({ decoders });
 * console.log(stream.readable instanceof ReadableStream); // true
 * ```
 *
 * @module
 */
export * from "./src/errors.ts";
export * from "./src/events.ts";
export { type FieldList, toHeaders } from "./src/transport/field_line.ts";
export * from "./src/transport/chunked_decoder.ts";
export * from "./src/transport/chunked_decoder_stream.ts";
export * from "./src/codec/ndjson_decoder_stream.ts";
export * from "./src/codec/watch_event.ts";
export * from "./src/codec/json_watch_event_decoder.ts";
export * from "./src/codec/json_watch_event_decoder_stream.ts";
export * from "./src/codec/media_type.ts";
export type { Http1BodyFraming, Http1Head, Http1RequestHead, TransferCoding } from "./src/transport/http1_head.ts";
export type { Http1DecoderOptions, Http1Message } from "./src/transport/http1_connection.ts";
export * from "./src/transport/http1_response_decoder_stream.ts";
export * from "./src/transport/http1_request_decoder_stream.ts";
export * from "./src/transport/http1_exchanges.ts";
export * from "./src/watch/decode_watch_response.ts";
export * from "./src/transport/gunzip_stream.ts";
export { type ContentDecodedBody, removeContentCoding } from "./src/transport/content_coding.ts";
export * from "./src/transport/inflate_stream.ts";
export * from "./src/streams/decoder_stream.ts";
export * from "./src/streams/batch_decoder_stream.ts";
export * from "./src/framing/length_prefixed_stream.ts";
export * from "./src/framing/grpc_message_stream.ts";
export * from "./src/framing/grpc_status.ts";
export * from "./src/framing/encode.ts";
export * from "./src/transport/http2/frames.ts";
export * from "./src/transport/http2/frame_decoder.ts";
export * from "./src/transport/http2/frame_decoder_stream.ts";
export * from "./src/transport/http2/frame_encoder.ts";
export * from "./src/transport/hpack/hpack_decoder.ts";
export * from "./src/transport/http2/connection_decoder_stream.ts";
export * from "./src/transport/http2/exchanges.ts";
export * from "./src/codec/protobuf/reader.ts";
export * from "./src/codec/etcd/watch_response.ts";
export * from "./src/codec/etcd/etcd_watch_decoder_stream.ts";
export type * from "./src/codec/kubernetes/registry.ts";
export * from "./src/codec/kubernetes/decoders.ts";
export * from "./src/codec/kubernetes/generated/index.ts";
export {
  hasKubernetesProtobufMagic,
  type KubernetesEnvelope,
  parseKubernetesEnvelope,
} from "./src/codec/kubernetes/envelope.ts";
export * from "./src/codec/kubernetes/protobuf_object.ts";
export type {
  FrameOwnership,
  KubernetesProtobufInputViews,
  KubernetesProtobufMode,
  KubernetesProtobufOptions,
} from "./src/codec/kubernetes/decode_object.ts";
export * from "./src/codec/kubernetes/decode_kubernetes_protobuf_object.ts";
export * from "./src/codec/kubernetes/watch_event_decoder.ts";
export * from "./src/codec/kubernetes/protobuf_watch_decoder.ts";
export * from "./src/codec/kubernetes/protobuf_watch_decoder_stream.ts";
export * from "./src/codec/kubernetes/protobuf_watch_event_decoder_stream.ts";
export * from "./src/codec/msgpack/msgpack_event_encoder_stream.ts";
export * from "./src/codec/msgpack/msgpack_event_decoder_stream.ts";
export * from "./src/codec/msgpack/msgpack_event_decoder.ts";
export * from "./src/watch/list_watch_source.ts";
export * from "./src/watch/backoff.ts";
export * from "./src/watch/watcher.ts";
export * from "./src/watch/store.ts";
export * from "./src/watch/informer.ts";
export * from "./src/watch/informer_state.ts";
export * from "./src/watch/state_store.ts";
export * from "./src/watch/run_informer.ts";
