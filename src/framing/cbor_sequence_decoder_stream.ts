/**
 * {@linkcode CborSequenceDecoderStream}: a CBOR sequence (`application/cbor-seq`) to the bytes of each data item.
 *
 * @module
 */
import { DecoderStream } from "../streams/decoder_stream.ts";
import { CborSequenceDecoder, type CborSequenceDecoderOptions } from "./cbor_sequence_decoder.ts";

/**
 * Splits a CBOR sequence (RFC 8742, as a Kubernetes CBOR watch body is one: an event per data item) into the bytes
 * of each data item, as {@linkcode CborSequenceDecoder} does: items within one chunk as views of it, an item that
 * spans chunks copied once; `MESSAGE_TOO_LARGE` over `maxEventBytes`, `MESSAGE_INVALID` for input that is not
 * well-formed or nests deeper than `maxDepth`, `TRUNCATED` for input that ends inside an item; each error at its
 * input offset, after every item before it.
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import { CborSequenceDecoderStream } from "watchwire/wire";
 *
 * // 1, then [_ "a" (an indefinite-length array never ended).
 * const wire = Uint8Array.of(0x01, 0x9f, 0x61, 0x61);
 * try {
 *   for await (const item of new Blob([wire]).stream().pipeThrough(new CborSequenceDecoderStream())) {
 *     console.log(item); // Uint8Array(1) [ 1 ]
 *   }
 * } catch (error) {
 *   if (error instanceof DecodeError) console.log(error.code, error.offset); // TRUNCATED 1
 * }
 * ```
 */
export class CborSequenceDecoderStream extends DecoderStream<Uint8Array, Uint8Array> {
  constructor(options: CborSequenceDecoderOptions = {}) {
    const decoder = new CborSequenceDecoder(options);
    super({
      push(chunk, emit) {
        decoder.push(chunk, (item) => emit(item));
      },
      finish() {
        decoder.finish();
      },
    });
  }
}
