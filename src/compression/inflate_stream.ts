/**
 * {@linkcode InflateStream}: an HTTP `deflate` body (a zlib stream, RFC 1950; raw DEFLATE too) to its bytes.
 *
 * @module
 */
import { describe, hex32 } from "../describe_byte.ts";
import { DecodeError } from "../errors.ts";
import { DecoderStream, type DecoderStreamOptions } from "../streams/decoder_stream.ts";
import { adler32 } from "./adler32.ts";
import { Inflater } from "./inflate.ts";

/**
 * Decompresses what `Content-Encoding: deflate` carries: a zlib stream (RFC 1950: a 2-byte header, DEFLATE data, the
 * Adler-32 of the output), checked in full; or, as browsers and undici accept, raw DEFLATE data (RFC 1951) when the
 * first two bytes are not a zlib header. watchwire's own streaming inflater does the work in every runtime, so faults
 * are a {@linkcode DecodeError} at the exact input byte (`DECOMPRESSION_FAILED`; `TRUNCATED` when the input ends
 * inside the stream) after all output before them, where the runtimes' `DecompressionStream("deflate")` fail with an
 * untyped error. A preset dictionary (FDICT) is refused: HTTP has no way to name one. Empty input decodes to nothing.
 *
 * @example
 * ```ts
 * import { InflateStream } from "watchwire/wire";
 *
 * const body = new Blob(['{"a":1}\n']).stream().pipeThrough(new CompressionStream("deflate"));
 * console.log(await new Response(body.pipeThrough(new InflateStream())).text()); // {"a":1}\n
 * ```
 */
export class InflateStream extends DecoderStream<Uint8Array, Uint8Array> {
  /** `options`: those of every decoder stage (`placeFault` maps the faults it finds before they are reported). */
  constructor(options: DecoderStreamOptions = {}) {
    const decoder = new ZlibDecoder();
    super({
      push(chunk, emit) {
        decoder.push(chunk, emit);
      },
      finish() {
        decoder.finish();
      },
    }, options);
  }
}

const enum State {
  /** Before the first byte. */
  Start,
  /** One header byte seen (kept in `#first`). */
  Header,
  Deflate,
  /** The 4-byte Adler-32 after the DEFLATE data (zlib only). */
  Trailer,
  Done,
}

/** The zlib format around the {@linkcode Inflater}, incrementally. */
class ZlibDecoder {
  readonly #inflater = new Inflater();
  #state = State.Start;
  /** Offset of the next input byte this decoder parses. */
  #offset = 0;
  #first = 0;
  /** Whether a zlib header (and so an Adler-32 trailer) was found, rather than raw DEFLATE. */
  #zlib = false;
  #adler = 1;
  #trailer = 0;
  #trailerHave = 0;
  #emit: (output: Uint8Array) => void = () => {};
  readonly #sink = (output: Uint8Array): void => {
    if (this.#zlib) this.#adler = adler32(this.#adler, output);
    this.#emit(output);
  };

  push(chunk: Uint8Array, emit: (output: Uint8Array) => void): void {
    this.#emit = emit;
    this.#feed(chunk);
  }

  finish(): void {
    if (this.#state === State.Start || this.#state === State.Done) return;
    const where = this.#state === State.Trailer
      ? "in the Adler-32 trailer"
      : this.#state === State.Header
      ? "in the zlib header"
      : "in the compressed data";
    throw new DecodeError("TRUNCATED", this.#offset, `deflate: the body ended ${where}`);
  }

  #feed(bytes: Uint8Array): void {
    let i = 0;
    while (i < bytes.length) {
      switch (this.#state) {
        case State.Start:
          this.#first = bytes[i++];
          this.#offset++;
          this.#state = State.Header;
          break;
        case State.Header: {
          const cmf = this.#first;
          const flg = bytes[i];
          if ((cmf & 0x0f) === 8 && cmf >>> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0) {
            if (flg & 0x20) {
              throw new DecodeError(
                "DECOMPRESSION_FAILED",
                this.#offset,
                "deflate: a preset dictionary (FDICT) is required",
              );
            }
            this.#zlib = true;
            i++;
            this.#offset++;
            this.#state = State.Deflate;
            this.#inflater.reset(this.#offset);
          } else {
            // Raw DEFLATE: the byte taken for a header is its first byte, fed to the inflater now.
            this.#state = State.Deflate;
            this.#offset--;
            this.#inflater.reset(this.#offset);
            this.#feedInflater(Uint8Array.of(cmf), 0);
          }
          break;
        }
        case State.Deflate:
          i = this.#feedInflater(bytes, i);
          break;
        case State.Trailer: {
          this.#trailer = (this.#trailer * 256 + bytes[i++]) >>> 0;
          this.#offset++;
          if (++this.#trailerHave === 4) {
            if (this.#trailer !== this.#adler) {
              throw new DecodeError(
                "DECOMPRESSION_FAILED",
                this.#offset - 4,
                `deflate: Adler-32 mismatch: data has ${hex32(this.#adler)}, trailer says ${hex32(this.#trailer)}`,
              );
            }
            this.#state = State.Done;
          }
          break;
        }
        case State.Done:
          throw new DecodeError(
            "DECOMPRESSION_FAILED",
            this.#offset,
            `deflate: ${describe(bytes[i])} after the end of the compressed data`,
          );
      }
    }
  }

  /** Feeds `bytes[i..]` to the inflater; returns where it stopped. On its end, moves on to the trailer or the end. */
  #feedInflater(bytes: Uint8Array, i: number): number {
    const stop = this.#inflater.push(bytes, i, this.#sink);
    this.#offset += stop - i;
    if (!this.#inflater.done) return stop;
    // The inflater may have read a few bytes past the end of the compressed data: they come first.
    const leftover = this.#inflater.takeLeftover();
    this.#offset -= leftover.length;
    this.#state = this.#zlib ? State.Trailer : State.Done;
    if (leftover.length > 0) this.#feed(leftover);
    return stop;
  }
}
