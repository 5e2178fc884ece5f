/**
 * {@linkcode LengthPrefixedDecoderStream}: Kubernetes' protobuf watch framing (a 4-byte big-endian length, then that
 * many bytes) to the bytes of each frame.
 *
 * @module
 */
import { DecoderStream } from "../streams/decoder_stream.ts";
import { FrameSplitter } from "./frame_splitter.ts";

/**
 * Options of {@linkcode LengthPrefixedDecoderStream}.
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import { type LengthPrefixedDecoderOptions, LengthPrefixedDecoderStream } from "watchwire/wire";
 *
 * const wire = Uint8Array.of(0, 0, 0, 2, 1, 2, 0, 0, 0, 5); // a 2-byte frame, then the prefix of a 5-byte one
 * const options: LengthPrefixedDecoderOptions = { maxEventBytes: 4 };
 * try {
 *   for await (const frame of new Blob([wire]).stream().pipeThrough(new LengthPrefixedDecoderStream(options))) {
 *     console.log(frame.length); // 2
 *   }
 * } catch (error) {
 *   if (error instanceof DecodeError) console.log(error.code, error.offset); // MESSAGE_TOO_LARGE 6
 * }
 * ```
 */
export interface LengthPrefixedDecoderOptions {
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes: here a frame,
   * without its prefix. Default `DEFAULT_MAX_EVENT_BYTES` (16 MiB).
   */
  maxEventBytes?: number;
}

/**
 * Decodes length-prefixed frames as Kubernetes sends a protobuf watch (`application/vnd.kubernetes.protobuf;stream=watch`):
 * each frame is a 4-byte big-endian unsigned length followed by that many bytes, and is passed on as those bytes.
 *
 * - A frame within one input chunk is passed on as a `subarray` view of that chunk (no copy); a frame that spans
 *   chunks is copied once into a buffer of exactly its length.
 * - A length over `maxEventBytes` is a `MESSAGE_TOO_LARGE` error as soon as its prefix has arrived, before anything
 *   is allocated or more input is read.
 * - Input that ends inside a prefix or a frame is `TRUNCATED`. A zero-length frame is an empty array.
 *
 * Every error's `offset` is the input offset of the offending frame's prefix, and every frame before it has been
 * delivered.
 *
 * @example
 * ```ts
 * import { LengthPrefixedDecoderStream } from "watchwire/wire";
 *
 * const wire = Uint8Array.of(0, 0, 0, 2, 0x68, 0x69, 0, 0, 0, 0);
 * for await (const frame of new Blob([wire]).stream().pipeThrough(new LengthPrefixedDecoderStream())) {
 *   console.log(frame); // Uint8Array(2) [ 104, 105 ], then Uint8Array(0) []
 * }
 * ```
 */
export class LengthPrefixedDecoderStream extends DecoderStream<Uint8Array, Uint8Array> {
  constructor(options: LengthPrefixedDecoderOptions = {}) {
    const splitter = new FrameSplitter({ flagged: false, maxEventBytes: options.maxEventBytes });
    super({
      push(chunk, emit) {
        splitter.push(chunk, (data) => emit(data));
      },
      finish() {
        splitter.finish();
      },
    });
  }
}
