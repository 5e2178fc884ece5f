/**
 * {@linkcode ChunkedDecoderStream}: an HTTP/1.1 chunked body to its payload bytes.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import { DecoderStream } from "../streams/decoder_stream.ts";
import { ChunkedDecoder, type ChunkedDecoderOptions } from "./chunked_decoder.ts";
import { type FieldList, toHeaders } from "./field_line.ts";

/**
 * Decodes an HTTP/1.1 chunked body (RFC 9112 §7.1) into its payload: strict hex sizes, chunk extensions held to
 * RFC 9112's grammar (names tokens, values tokens or quoted strings) and skipped, CRLF required, sizes beyond 2^53
 * rejected, trailers parsed. Payload is passed on as `subarray` views of the input chunks, never copied or
 * concatenated. Bytes after the final CRLF are a `TRAILING_DATA` error; input that ends early is `TRUNCATED`.
 *
 * @example
 * ```ts
 * import { ChunkedDecoderStream } from "watchwire/wire";
 *
 * const wire = new Blob(["7\r\n{\"a\":1}\r\n1\r\n\n\r\n0\r\nEtag: x\r\n\r\n"]).stream();
 * const chunked = new ChunkedDecoderStream();
 * const text = await new Response(wire.pipeThrough(chunked)).text();
 * console.log(text, (await chunked.trailers).get("etag")); // {"a":1}\n x
 * ```
 */
export class ChunkedDecoderStream extends DecoderStream<Uint8Array, Uint8Array> {
  /** The trailer fields, once the body has ended; rejects with the stream's error if it fails. */
  readonly trailers: Promise<Headers>;
  /** The trailer fields as received (lower-case names, in order), once the body has ended. */
  readonly trailerFields: Promise<FieldList>;

  constructor(options: ChunkedDecoderOptions = {}) {
    const decoder = new ChunkedDecoder(options);
    let settle!: (fields: FieldList) => void;
    let fail!: (error: unknown) => void;
    const trailerFields = new Promise<FieldList>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    super({
      push(chunk, emit) {
        const used = decoder.push(chunk, emit);
        if (used < chunk.length) {
          throw new DecodeError("TRAILING_DATA", decoder.offset, "data after the end of the chunked body");
        }
      },
      finish() {
        decoder.finish();
        settle(decoder.trailers);
      },
      failed: fail,
    });
    // Nobody has to await the trailers: keep an unobserved failure from being reported as unhandled.
    trailerFields.catch(() => {});
    this.trailerFields = trailerFields;
    this.trailers = trailerFields.then(toHeaders);
    this.trailers.catch(() => {});
  }
}
