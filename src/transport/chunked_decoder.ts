/**
 * The HTTP/1.1 chunked transfer coding (RFC 9112 §7.1) as an incremental, zero-copy state machine.
 * {@linkcode ChunkedDecoderStream} wraps it as a stream; the HTTP/1.1 response decoder drives it directly.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import { type FieldList, parseFieldLine } from "./field_line.ts";
import { LineBuffer } from "./line_buffer.ts";
import { ChunkExtensionChecker } from "./chunk_extension.ts";
import { describe } from "../describe_byte.ts";

/**
 * Limits of {@linkcode ChunkedDecoder}.
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import { ChunkedDecoder, type ChunkedDecoderOptions } from "watchwire/wire";
 *
 * const options: ChunkedDecoderOptions = { maxChunkLineBytes: 8, maxTrailerBytes: 1024 };
 * const decoder = new ChunkedDecoder(options);
 * try {
 *   decoder.push(new TextEncoder().encode("5;name=value\r\nhello\r\n"), () => {});
 * } catch (error) {
 *   if (error instanceof DecodeError) console.log(error.code, error.offset); // HEADER_TOO_LARGE 8
 * }
 * ```
 */
export interface ChunkedDecoderOptions {
  /**
   * Longest chunk-size line (size and extensions, without CRLF) accepted. Default
   * {@linkcode DEFAULT_MAX_CHUNK_LINE_BYTES}.
   */
  maxChunkLineBytes?: number;
  /**
   * Largest trailer section (all field lines with their CRLFs) accepted. Default {@linkcode DEFAULT_MAX_TRAILER_BYTES}.
   */
  maxTrailerBytes?: number;
}

/**
 * The default of `maxChunkLineBytes` (of {@linkcode ChunkedDecoder} and the HTTP/1.1 decoders): 4096 bytes.
 *
 * @example
 * ```ts
 * import { ChunkedDecoder, DEFAULT_MAX_CHUNK_LINE_BYTES } from "watchwire/wire";
 *
 * // Chunk extensions up to twice the default fit on the chunk-size line.
 * const decoder = new ChunkedDecoder({ maxChunkLineBytes: 2 * DEFAULT_MAX_CHUNK_LINE_BYTES });
 * console.log(DEFAULT_MAX_CHUNK_LINE_BYTES, decoder.done); // 4096 false
 * ```
 */
export const DEFAULT_MAX_CHUNK_LINE_BYTES = 4096;

/**
 * The default of `maxTrailerBytes` (of {@linkcode ChunkedDecoder} and the HTTP/1.1 decoders): 16384 bytes.
 *
 * @example
 * ```ts
 * import { ChunkedDecoder, DEFAULT_MAX_TRAILER_BYTES } from "watchwire/wire";
 *
 * const decoder = new ChunkedDecoder({ maxTrailerBytes: DEFAULT_MAX_TRAILER_BYTES / 4 });
 * console.log(DEFAULT_MAX_TRAILER_BYTES, decoder.done); // 16384 false
 * ```
 */
export const DEFAULT_MAX_TRAILER_BYTES = 16384;

const CR = 13;
const LF = 10;

const enum State {
  SizeStart,
  Size,
  SizeWhitespace,
  Extension,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  TrailerLine,
  TrailerLf,
  Done,
}

// Hex digit values; 255 marks a non-digit.
const HEX = new Uint8Array(256).fill(255);
for (let i = 0; i < 10; i++) HEX[0x30 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[0x41 + i] = 10 + i;
  HEX[0x61 + i] = 10 + i;
}

/**
 * Decodes a chunked body incrementally. Feed it input with {@linkcode ChunkedDecoder.push}; payload bytes are handed
 * to the callback as `subarray` views of the input, never copied.
 *
 * @example
 * ```ts
 * import { ChunkedDecoder } from "watchwire/wire";
 *
 * const decoder = new ChunkedDecoder();
 * const parts: string[] = [];
 * decoder.push(new TextEncoder().encode("5\r\nhello\r\n0\r\nX-Done: yes\r\n\r\n"), (p) => parts.push(new TextDecoder().decode(p)));
 * console.log(parts, decoder.done, decoder.trailers); // [ "hello" ] true [ [ "x-done", "yes" ] ]
 * ```
 */
export class ChunkedDecoder {
  /** Trailer fields, complete once {@linkcode ChunkedDecoder.done} is true. */
  readonly trailers: FieldList = [];
  #state = State.SizeStart;
  #remaining = 0;
  #lineBytes = 0;
  #trailerBytes = 0;
  #consumed = 0;
  #line = new LineBuffer();
  #lineStart = 0;
  readonly #extension = new ChunkExtensionChecker();
  readonly #maxChunkLineBytes: number;
  readonly #maxTrailerBytes: number;

  constructor(options: ChunkedDecoderOptions = {}) {
    this.#maxChunkLineBytes = options.maxChunkLineBytes ?? DEFAULT_MAX_CHUNK_LINE_BYTES;
    this.#maxTrailerBytes = options.maxTrailerBytes ?? DEFAULT_MAX_TRAILER_BYTES;
  }

  /** True once the last chunk, the trailer section and the final CRLF have been read. */
  get done(): boolean {
    return this.#state === State.Done;
  }

  /** Bytes of input consumed so far. */
  get offset(): number {
    return this.#consumed;
  }

  /**
   * Decodes as much of `input` as belongs to the chunked body, calling `onPayload` with each run of payload bytes.
   * Returns how many bytes of `input` were consumed: all of them, unless the body ended inside `input`.
   * Throws {@linkcode DecodeError} on malformed input.
   */
  push(input: Uint8Array, onPayload: (payload: Uint8Array) => void): number {
    const n = input.length;
    let i = 0;
    while (i < n && this.#state !== State.Done) {
      switch (this.#state) {
        case State.Data: {
          const take = Math.min(this.#remaining, n - i);
          const view = input.subarray(i, i + take);
          i += take;
          this.#remaining -= take;
          if (this.#remaining === 0) this.#state = State.DataCr;
          onPayload(view);
          break;
        }
        case State.SizeStart:
        case State.Size: {
          const b = input[i];
          const digit = HEX[b];
          if (digit !== 255) {
            const size = this.#remaining * 16 + digit;
            if (size > Number.MAX_SAFE_INTEGER) {
              throw this.#error("CHUNK_SIZE_OVERFLOW", i, "chunk size does not fit in 53 bits");
            }
            this.#remaining = size;
            this.#state = State.Size;
            this.#countLineByte(i);
            i++;
            break;
          }
          if (this.#state === State.SizeStart) {
            throw this.#error("CHUNK_SIZE_INVALID", i, `expected a hex chunk size, found ${describe(b)}`);
          }
          this.#afterSize(b, i);
          i++;
          break;
        }
        case State.SizeWhitespace: {
          // RFC 9112: whitespace after the size may only precede a chunk extension.
          if (input[i] === CR) {
            throw this.#error("CHUNK_SIZE_INVALID", i, "whitespace after a chunk size without an extension");
          }
          this.#afterSize(input[i], i);
          i++;
          break;
        }
        case State.Extension: {
          // Chunk extensions carry nothing watchwire needs: skip them, but only well-formed and bounded.
          const b = input[i];
          if (b === LF) throw this.#error("CRLF_EXPECTED", i, "bare LF ends a chunk-size line (CRLF required)");
          if (b === CR) {
            const fault = this.#extension.end();
            if (fault !== undefined) throw this.#error("CHUNK_SIZE_INVALID", i, fault);
            this.#state = State.SizeLf;
          } else {
            const fault = this.#extension.step(b);
            if (fault !== undefined) throw this.#error("CHUNK_SIZE_INVALID", i, fault);
            this.#countLineByte(i);
          }
          i++;
          break;
        }
        case State.SizeLf: {
          if (input[i] !== LF) {
            throw this.#error("CRLF_EXPECTED", i, `expected LF after CR, found ${describe(input[i])}`);
          }
          i++;
          this.#lineBytes = 0;
          if (this.#remaining === 0) {
            this.#state = State.TrailerLine;
            this.#lineStart = this.#consumed + i;
          } else {
            this.#state = State.Data;
          }
          break;
        }
        case State.DataCr: {
          if (input[i] !== CR) {
            throw this.#error("CRLF_EXPECTED", i, `chunk data must be followed by CRLF, found ${describe(input[i])}`);
          }
          this.#state = State.DataLf;
          i++;
          break;
        }
        case State.DataLf: {
          if (input[i] !== LF) {
            throw this.#error("CRLF_EXPECTED", i, `expected LF after CR, found ${describe(input[i])}`);
          }
          this.#state = State.SizeStart;
          i++;
          break;
        }
        case State.TrailerLine: {
          const cr = input.indexOf(CR, i);
          const end = cr === -1 ? n : cr;
          const lf = input.subarray(i, end).indexOf(LF);
          if (lf !== -1) throw this.#error("CRLF_EXPECTED", i + lf, "bare LF in the trailer section (CRLF required)");
          this.#trailerBytes += end - i + (cr === -1 ? 0 : 2);
          if (this.#trailerBytes > this.#maxTrailerBytes) {
            throw this.#error("HEADER_TOO_LARGE", i, `trailer section longer than ${this.#maxTrailerBytes} bytes`);
          }
          this.#line.append(input.subarray(i, end));
          i = end;
          if (cr !== -1) {
            this.#state = State.TrailerLf;
            i++;
          }
          break;
        }
        case State.TrailerLf: {
          if (input[i] !== LF) {
            throw this.#error("CRLF_EXPECTED", i, `expected LF after CR, found ${describe(input[i])}`);
          }
          i++;
          if (this.#line.length === 0) {
            this.#state = State.Done;
          } else {
            this.trailers.push(parseFieldLine(this.#line.view(), this.#lineStart));
            this.#line.clear();
            this.#lineStart = this.#consumed + i;
            this.#state = State.TrailerLine;
          }
          break;
        }
      }
    }
    this.#consumed += i;
    return i;
  }

  /** Declares the end of input: throws a `TRUNCATED` {@linkcode DecodeError} unless the body is complete. */
  finish(): void {
    if (this.#state === State.Done) return;
    const where = this.#state === State.Data
      ? `inside chunk data (${this.#remaining} bytes missing)`
      : this.#state === State.TrailerLine || this.#state === State.TrailerLf
      ? "inside the trailer section"
      : "before the last chunk";
    throw new DecodeError("TRUNCATED", this.#consumed, `chunked body ended ${where}`);
  }

  #afterSize(b: number, i: number): void {
    if (b === CR) {
      this.#state = State.SizeLf;
    } else if (b === 0x3b /* ; */) {
      this.#state = State.Extension;
      this.#extension.reset();
      this.#countLineByte(i);
    } else if (b === 0x20 || b === 0x09) {
      this.#state = State.SizeWhitespace;
      this.#countLineByte(i);
    } else if (b === LF) {
      throw this.#error("CRLF_EXPECTED", i, "bare LF ends a chunk-size line (CRLF required)");
    } else {
      throw this.#error("CHUNK_SIZE_INVALID", i, `unexpected ${describe(b)} in a chunk-size line`);
    }
  }

  #countLineByte(i: number): void {
    if (++this.#lineBytes > this.#maxChunkLineBytes) {
      throw this.#error("HEADER_TOO_LARGE", i, `chunk-size line longer than ${this.#maxChunkLineBytes} bytes`);
    }
  }

  #error(
    code: "CHUNK_SIZE_INVALID" | "CHUNK_SIZE_OVERFLOW" | "CRLF_EXPECTED" | "HEADER_TOO_LARGE",
    i: number,
    message: string,
  ) {
    return new DecodeError(code, this.#consumed + i, message);
  }
}
