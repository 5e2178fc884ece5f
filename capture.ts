/**
 * watchwire/capture: captured connections, decoded. The bytes a client received on an HTTP/1.1 connection to its
 * responses (`Http1ResponseDecoderStream`), the bytes it sent to its requests (`Http1RequestDecoderStream`), both
 * directions paired (`decodeHttp1Exchanges`, which also frames what the response bytes alone cannot: a response to
 * `HEAD`, a `CONNECT` tunnel); an HTTP/2 connection to its streams (`Http2ConnectionDecoderStream`), and both
 * directions paired (`decodeHttp2Exchanges`). Each response's `toResponse()` is a `fetch` `Response` with its body
 * decoded (chunked, gzip, deflate): `decodeWatchResponse` of `watchwire` reads its events. And whole capture files
 * (pcap, pcapng from tcpdump or Wireshark, read as a stream): `decodeCapture` reassembles TCP, decrypts TLS with a key
 * log, and yields every watch's events with its connection and time. This is what `watchwire decode`
 * (`watchwire/cli`) runs on a capture.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse } from "watchwire";
 * import { Http1ResponseDecoderStream } from "watchwire/capture";
 *
 * // The server-to-client bytes of a connection: one chunked watch response.
 * const event = '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web"}}}\n';
 * const capture = new Blob([
 *   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
 *   `${event.length.toString(16)}\r\n${event}\r\n0\r\n\r\n`,
 * ]).stream();
 * for await (const response of capture.pipeThrough(new Http1ResponseDecoderStream())) {
 *   const [first] = await Array.fromAsync(decodeWatchResponse(response.toResponse()));
 *   if (first.type === "ADDED") console.log(response.status, first.type, first.object.metadata?.name); // 200 ADDED web
 * }
 * ```
 *
 * @module
 */
// HTTP/1.1 connections.
export type { Http1BodyFraming, Http1Head, Http1RequestHead, TransferCoding } from "./src/transport/http1_head.ts";
export type { Http1DecoderOptions, Http1Message } from "./src/transport/http1_connection.ts";
export * from "./src/transport/http1_response_decoder_stream.ts";
export * from "./src/transport/http1_request_decoder_stream.ts";
export * from "./src/transport/http1_exchanges.ts";
// HTTP/2 connections.
export * from "./src/transport/http2/connection_decoder_stream.ts";
export * from "./src/transport/http2/exchanges.ts";
// Capture files (pcap, pcapng): TCP reassembled, TLS decrypted, every watch's events.
export { decodeCapture } from "./src/watch/decode_capture.ts";
export type { CaptureItem, CaptureOrigin, DecodeCaptureOptions, GrpcMethodDecoders } from "./src/watch/capture_item.ts";
export type { CaptureTime } from "./src/capture/records.ts";
