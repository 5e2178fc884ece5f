/**
 * {@linkcode Http2FrameDecoderStream}: the bytes of one direction of an HTTP/2 connection to its frames.
 *
 * @module
 */
import { DecoderStream, type DecoderStreamOptions } from "../../streams/decoder_stream.ts";
import { Http2FrameDecoder, type Http2FrameDecoderOptions } from "./frame_decoder.ts";
import type { Http2Frame } from "./frames.ts";

/**
 * Options of {@linkcode Http2FrameDecoderStream}: the decoder's limits and preface mode, and the stream's buffering.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames, Http2FrameDecoderStream } from "watchwire/wire";
 * import type { Http2FrameDecoderStreamOptions } from "watchwire/wire";
 *
 * // Client-to-server bytes; frames up to 64 KiB; up to 16 frames may wait unread.
 * const options: Http2FrameDecoderStreamOptions = {
 *   preface: "expect",
 *   maxFrameSize: 65536,
 *   readableHighWaterMark: 16,
 * };
 * const wire = encodeHttp2Frames([{ type: "SETTINGS", streamId: 0, parameters: [] }], { preface: true });
 * for await (const frame of ReadableStream.from([wire]).pipeThrough(new Http2FrameDecoderStream(options))) {
 *   console.log(frame.type, frame.offset); // SETTINGS 24
 * }
 * ```
 */
export interface Http2FrameDecoderStreamOptions extends Http2FrameDecoderOptions, DecoderStreamOptions {}

/**
 * Decodes one direction of an HTTP/2 connection (RFC 9113), e.g. a capture or what a recording proxy saw, into
 * {@linkcode Http2Frame}s: typed, validated as far as one direction can be without connection state, payloads as
 * `subarray` views of the input where a frame lies within one chunk. Faults are {@linkcode DecodeError}s with the byte
 * offset in this direction's input (see {@linkcode Http2FrameDecoder} for the list); the frames before a fault are
 * delivered first. Field blocks stay HPACK-encoded (`fragment`).
 *
 * @example
 * ```ts
 * import { Http2FrameDecoderStream } from "watchwire/wire";
 *
 * // A client's first bytes: the preface, an empty SETTINGS frame, then HEADERS on stream 1 (":method: GET", ":path: /",
 * // ":scheme: http" as HPACK indexed fields) with END_STREAM and END_HEADERS.
 * const wire = new Uint8Array([
 *   ...new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
 *   ...[0, 0, 0, 0x4, 0, 0, 0, 0, 0],
 *   ...[0, 0, 3, 0x1, 0x5, 0, 0, 0, 1, 0x82, 0x84, 0x86],
 * ]);
 * const frames = new Blob([wire]).stream().pipeThrough(new Http2FrameDecoderStream({ preface: "expect" }));
 * for await (const frame of frames) {
 *   console.log(frame.type, frame.streamId, frame.offset); // SETTINGS 0 24, then HEADERS 1 33
 *   if (frame.type === "HEADERS") console.log(frame.endStream, frame.fragment); // true Uint8Array(3) [ 130, 132, 134 ]
 * }
 * ```
 */
export class Http2FrameDecoderStream extends DecoderStream<Uint8Array, Http2Frame> {
  readonly #decoder: Http2FrameDecoder;

  /** A decoder stream for one direction of a connection; throws a `RangeError` for an option out of its range. */
  constructor(options: Http2FrameDecoderStreamOptions = {}) {
    const decoder = new Http2FrameDecoder(options);
    super({
      push(chunk, emit) {
        decoder.push(chunk, emit);
      },
      finish() {
        decoder.finish();
      },
    }, options);
    this.#decoder = decoder;
  }

  /** The largest frame payload accepted now (see {@linkcode Http2FrameDecoder.maxFrameSize}). */
  get maxFrameSize(): number {
    return this.#decoder.maxFrameSize;
  }

  /**
   * Applies a SETTINGS_MAX_FRAME_SIZE announced by the receiver of this direction (see
   * {@linkcode Http2FrameDecoder.setMaxFrameSize}); frames whose header is decoded afterwards are held to it.
   */
  setMaxFrameSize(size: number): void {
    this.#decoder.setMaxFrameSize(size);
  }
}
