/**
 * watchwire/wire: the layers of watch traffic, each a `TransformStream` and, beneath it, a stream-free decoder. HTTP/1.1
 * chunked bodies and trailers; gzip and deflate (`GunzipStream`, `InflateStream`, `removeContentCoding`); HTTP/2
 * frames and HPACK, and an HTTP/2 frame encoder; length-prefixed and gRPC framing, gRPC status, and their encoders;
 * NDJSON and JSON watch events; `DecoderStream` and `BatchDecoderStream`, which run any decoder as a stream (of
 * values, or of arrays of them); a protobuf reader; etcd v3 Watch responses; msgpack recordings of events; media
 * types. Errors are the `DecodeError` of `watchwire`. Whole connections (HTTP/1.1 responses and requests, HTTP/2
 * streams) are in `watchwire/capture`, Kubernetes protobuf in `watchwire/kubernetes`.
 *
 * @example
 * ```ts
 * import { ChunkedDecoderStream, GunzipStream, JsonWatchEventDecoderStream } from "watchwire/wire";
 *
 * // A chunked, gzipped JSON watch body, layer by layer (decodeWatchResponse does this for a fetch Response).
 * const json = '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web"}}}\n';
 * const gzipped = new Uint8Array(await new Response(new Blob([json]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
 * const chunked = new Blob([`${gzipped.length.toString(16)}\r\n`, gzipped, "\r\n0\r\n\r\n"]).stream();
 * const events = chunked.pipeThrough(new ChunkedDecoderStream()).pipeThrough(new GunzipStream())
 *   .pipeThrough(new JsonWatchEventDecoderStream());
 * const [event] = await Array.fromAsync(events);
 * if (event.type === "ADDED") console.log(event.type, event.object.metadata?.name); // ADDED web
 * ```
 *
 * @module
 */
// The default of every decoder's maxEventBytes.
export * from "./src/limits.ts";
// Running decoders as streams.
export * from "./src/streams/decoder_stream.ts";
export * from "./src/streams/batch_decoder_stream.ts";
// HTTP/1.1 bodies: chunked transfer coding, field lines, content codings.
export { type FieldList, toHeaders } from "./src/transport/field_line.ts";
export * from "./src/transport/chunked_decoder.ts";
export * from "./src/transport/chunked_decoder_stream.ts";
export { type ContentDecodedBody, removeContentCoding } from "./src/transport/content_coding.ts";
// Compression: gzip and deflate.
export * from "./src/compression/gunzip_stream.ts";
export * from "./src/compression/inflate_stream.ts";
// HTTP/2 frames and HPACK.
export * from "./src/transport/http2/frames.ts";
export * from "./src/transport/http2/frame_decoder.ts";
export * from "./src/transport/http2/frame_decoder_stream.ts";
export * from "./src/transport/http2/frame_encoder.ts";
export * from "./src/transport/hpack/hpack_decoder.ts";
// WebSocket (RFC 6455) frames, and a Kubernetes watch's messages to its events.
export * from "./src/transport/websocket/websocket_message.ts";
export * from "./src/transport/websocket/websocket_frame_decoder.ts";
export * from "./src/transport/websocket/websocket_frame_decoder_stream.ts";
export * from "./src/watch/websocket/websocket_watch_event_decoder.ts";
export * from "./src/watch/websocket/websocket_watch_event_decoder_stream.ts";
export * from "./src/watch/websocket/websocket_watch_decoder.ts";
export * from "./src/watch/websocket/websocket_watch_decoder_stream.ts";
// Framing: length-prefixed messages, gRPC messages and status, and their encoders.
export * from "./src/framing/length_prefixed_decoder_stream.ts";
export * from "./src/framing/grpc_message_decoder_stream.ts";
export * from "./src/framing/grpc_status.ts";
export * from "./src/framing/cbor_sequence_decoder.ts";
export * from "./src/framing/cbor_sequence_decoder_stream.ts";
export * from "./src/framing/encode.ts";
// JSON watch bodies: NDJSON, watch events, both in one stage.
export * from "./src/codec/media_type.ts";
export * from "./src/codec/ndjson_decoder_stream.ts";
export * from "./src/codec/watch_event_decoder_stream.ts";
export * from "./src/codec/json_watch_event_decoder.ts";
export * from "./src/codec/json_watch_event_decoder_stream.ts";
// Protobuf, and etcd v3 Watch responses.
export * from "./src/codec/protobuf/reader.ts";
export * from "./src/codec/etcd/watch_response.ts";
export * from "./src/codec/etcd/etcd_watch_decoder_stream.ts";
// Recordings of events in msgpack (watchwire/msgpack-no-eval: the decoders without code generation).
export * from "./src/codec/msgpack/msgpack_event_encoder_stream.ts";
export * from "./src/codec/msgpack/msgpack_event_decoder_stream.ts";
export * from "./src/codec/msgpack/msgpack_event_decoder.ts";
