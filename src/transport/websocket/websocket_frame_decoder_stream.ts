/**
 * {@linkcode WebSocketFrameDecoderStream}: the bytes of one direction of a WebSocket connection to its messages.
 *
 * @module
 */
import { DecoderStream, type DecoderStreamOptions } from "../../streams/decoder_stream.ts";
import { WebSocketFrameDecoder, type WebSocketFrameDecoderOptions } from "./websocket_frame_decoder.ts";
import type { WebSocketMessage } from "./websocket_message.ts";

/**
 * Options of {@linkcode WebSocketFrameDecoderStream}: the decoder's (`sender`, `maxEventBytes`) and the stream's.
 *
 * @example
 * ```ts
 * import type { WebSocketFrameDecoderStreamOptions } from "watchwire/wire";
 *
 * const options: WebSocketFrameDecoderStreamOptions = { sender: "server", maxEventBytes: 1 << 20, readableHighWaterMark: 8 };
 * console.log(options.maxEventBytes); // 1048576
 * ```
 */
export interface WebSocketFrameDecoderStreamOptions extends WebSocketFrameDecoderOptions, DecoderStreamOptions {}

/**
 * Decodes one direction of a WebSocket connection (RFC 6455), the bytes that follow a `101 Switching Protocols` in an
 * HTTP/1.1 capture or a recording, into {@linkcode WebSocketMessage}s: text and binary messages with their fragments
 * joined, pings, pongs and the close frame (see {@linkcode WebSocketFrameDecoder} for the rules and faults). Faults are
 * {@linkcode DecodeError}s at the input offset of the frame at fault, after every message before it.
 *
 * @example
 * ```ts
 * import { WebSocketFrameDecoderStream } from "watchwire/wire";
 *
 * // A client's masked text frame "hi" (key 1 2 3 4), then its masked close frame without a code.
 * const wire = Uint8Array.of(0x81, 0x82, 1, 2, 3, 4, 0x68 ^ 1, 0x69 ^ 2, 0x88, 0x80, 1, 2, 3, 4);
 * const messages = new Blob([wire]).stream().pipeThrough(new WebSocketFrameDecoderStream({ sender: "client" }));
 * for await (const message of messages) {
 *   console.log(message.kind, message.offset, message.kind === "text" ? message.text : message.bytes.length); // text 0 hi, then close 8 0
 * }
 * ```
 */
export class WebSocketFrameDecoderStream extends DecoderStream<Uint8Array, WebSocketMessage> {
  /** A decoder stream for one direction; throws a `RangeError` for a bad `maxEventBytes`. */
  constructor(options: WebSocketFrameDecoderStreamOptions) {
    const { readableHighWaterMark, placeFault, ...decoderOptions } = options;
    super(new WebSocketFrameDecoder(decoderOptions), {
      ...(readableHighWaterMark === undefined ? {} : { readableHighWaterMark }),
      ...(placeFault === undefined ? {} : { placeFault }),
    });
  }
}
