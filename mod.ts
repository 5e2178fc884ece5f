/**
 * watchwire: Kubernetes (and etcd) watch traffic to typed watch events, with Web Streams, in any JavaScript runtime.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse } from "watchwire";
 *
 * const body = '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web","resourceVersion":"5"}}}\n';
 * const response = new Response(body, { headers: { "content-type": "application/json;stream=watch" } });
 * for await (const event of decodeWatchResponse(response)) {
 *   if (event.type !== "ERROR") console.log(event.type, event.object.metadata?.name); // ADDED web
 * }
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
export * from "./src/codec/json_watch_event_decoder_stream.ts";
export * from "./src/codec/media_type.ts";
export type { Http1BodyFraming, Http1Head } from "./src/transport/http1_head.ts";
export * from "./src/transport/http1_response_decoder_stream.ts";
export * from "./src/watch/decode_watch_response.ts";
export * from "./src/cli/main.ts";
export * from "./src/transport/gunzip_stream.ts";
export * from "./src/streams/decoder_stream.ts";
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
export {
  decodeKubernetesProtobufObject,
  type KubernetesProtobufMode,
  type KubernetesProtobufOptions,
} from "./src/codec/kubernetes/decode_object.ts";
export * from "./src/codec/kubernetes/watch_event_frame.ts";
export * from "./src/codec/kubernetes/protobuf_watch_decoder_stream.ts";
export * from "./src/codec/kubernetes/protobuf_watch_event_decoder_stream.ts";
export * from "./src/codec/msgpack/msgpack_event_encoder_stream.ts";
export * from "./src/codec/msgpack/msgpack_event_decoder_stream.ts";
