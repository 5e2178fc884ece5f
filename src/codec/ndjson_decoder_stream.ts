/**
 * {@linkcode NdjsonDecoderStream}: newline-delimited JSON bytes to parsed values.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../limits.ts";
import { DecoderStream, type StreamDecoder } from "../streams/decoder_stream.ts";
import { PartialLine } from "./partial_line.ts";

/**
 * Options of {@linkcode NdjsonDecoderStream}.
 *
 * @example
 * ```ts
 * import { type NdjsonDecoderOptions, NdjsonDecoderStream } from "watchwire/wire";
 *
 * const options: NdjsonDecoderOptions<number> = {
 *   maxEventBytes: 1024,
 *   map: (value) => (value as { n: number }).n,
 * };
 * const body = new Blob(['{"n":1}\n{"n":2}\n']).stream();
 * const numbers = await Array.fromAsync(body.pipeThrough(new NdjsonDecoderStream(options)));
 * console.log(numbers.join(" + ")); // 1 + 2
 * ```
 */
export interface NdjsonDecoderOptions<T> {
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes: here a line,
   * without its line ending. Default `DEFAULT_MAX_EVENT_BYTES` (16 MiB, as client-go's watch decoder).
   */
  maxEventBytes?: number;
  /**
   * Turns each parsed value into the output (validation, typing). A {@linkcode DecodeError} it throws is re-placed at
   * the line's byte offset plus the error's own `offset`.
   */
  map?: (value: unknown) => T;
}

const LF = 10;
const CR = 13;

/**
 * Decodes newline-delimited JSON: splits on `\n` (a `\r` before it is tolerated), skips blank lines, parses each line
 * with `JSON.parse`, and passes the values on. UTF-8 sequences split across input chunks are handled; a line longer
 * than `maxEventBytes` is a `LINE_TOO_LONG` error before it is buffered whole; a line that is not JSON is
 * `JSON_INVALID`; input that ends inside a line that does not parse is `TRUNCATED`. Every error names the byte offset
 * where the offending line starts, and every value before it has been delivered.
 *
 * Complete lines are decoded from UTF-8 in one call per input chunk and parsed from that text, so the cost per value
 * is close to `JSON.parse` alone.
 *
 * @example
 * ```ts
 * import { NdjsonDecoderStream } from "watchwire/wire";
 *
 * const body = new Blob(['{"type":"ADDED"}\r\n\n{"type":"DELETED"}\n']).stream();
 * for await (const value of body.pipeThrough(new NdjsonDecoderStream())) console.log(value);
 * // { type: "ADDED" }
 * // { type: "DELETED" }
 * ```
 */
export class NdjsonDecoderStream<T = unknown> extends DecoderStream<Uint8Array, T> {
  constructor(options: NdjsonDecoderOptions<T> = {}) {
    super(new NdjsonLineParser<T>(options));
  }
}

/**
 * The line splitting and parsing behind {@linkcode NdjsonDecoderStream}, usable without a stream (e.g. inside a
 * transport decoder that already holds the bytes).
 *
 * @example
 * ```ts
 * import { NdjsonLineParser } from "watchwire/wire";
 *
 * const parser = new NdjsonLineParser();
 * const values: unknown[] = [];
 * const bytes = new TextEncoder().encode('{"a":1}\n{"b"');
 * parser.push(bytes, (v) => values.push(v));
 * parser.push(new TextEncoder().encode(':2}\n'), (v) => values.push(v));
 * parser.finish((v) => values.push(v));
 * console.log(values); // [ { a: 1 }, { b: 2 } ]
 * ```
 */
export class NdjsonLineParser<T = unknown> implements StreamDecoder<Uint8Array, T> {
  readonly #max: number;
  readonly #map: ((value: unknown) => T) | undefined;
  readonly #text = new TextDecoder("utf-8", { ignoreBOM: true });
  readonly #carry = new PartialLine();
  /** Bytes consumed before the current chunk. */
  #offset = 0;

  constructor(options: NdjsonDecoderOptions<T> = {}) {
    this.#max = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    this.#map = options.map;
  }

  /** Decodes the complete lines of `chunk` (plus any carried partial line), keeping the unfinished tail. */
  push(chunk: Uint8Array, emit: (value: T) => void): void {
    const base = this.#offset;
    const firstLf = chunk.indexOf(LF);
    if (firstLf === -1) {
      this.#extendCarry(chunk, base);
      this.#offset += chunk.length;
      return;
    }
    let start = 0;
    if (this.#carry.length > 0) {
      // The line that began in an earlier chunk ends here.
      this.#extendCarry(chunk.subarray(0, firstLf), base);
      const lineStart = base - (this.#carry.length - firstLf);
      this.#parseLine(this.#text.decode(this.#carry.take()), lineStart, emit);
      start = firstLf + 1;
    }
    const lastLf = chunk.lastIndexOf(LF);
    if (lastLf >= start) {
      const region = chunk.subarray(start, lastLf);
      if (region.length <= this.#max) {
        this.#parseRegion(region, base + start, emit);
      } else {
        this.#parseRegionByLine(region, base + start, emit);
      }
    }
    this.#offset += chunk.length;
    if (lastLf + 1 < chunk.length) {
      this.#extendCarry(chunk.subarray(lastLf + 1), this.#offset - (chunk.length - lastLf - 1));
    }
  }

  /** Ends the input: a last line without a newline is parsed; one that does not parse is `TRUNCATED`. */
  finish(emit: (value: T) => void): void {
    if (this.#carry.length === 0) return;
    const lineStart = this.#offset - this.#carry.length;
    const text = this.#text.decode(this.#carry.take());
    if (isBlank(text)) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (cause) {
      throw new DecodeError("TRUNCATED", lineStart, "input ended inside a JSON line", { cause });
    }
    emit(this.#apply(value, lineStart));
  }

  /** Adds bytes of an unfinished line (starting at input offset `at`) to the carry, within `maxEventBytes`. */
  #extendCarry(bytes: Uint8Array, at: number): void {
    const lineStart = at - this.#carry.length;
    if (this.#carry.length + bytes.length > this.#max) {
      throw new DecodeError("LINE_TOO_LONG", lineStart, `line longer than maxEventBytes (${this.#max} bytes)`);
    }
    this.#carry.append(bytes);
  }

  /** `region` holds whole lines separated by LF (its last line's LF just past its end), starting at offset `at`. */
  #parseRegion(region: Uint8Array, at: number, emit: (value: T) => void): void {
    const text = this.#text.decode(region);
    let from = 0;
    let line = 0;
    for (;;) {
      const lf = text.indexOf("\n", from);
      const end = lf === -1 ? text.length : lf;
      const s = text.slice(from, end);
      if (s.length > 1 || (s.length === 1 && s !== "\r")) {
        let value: unknown;
        try {
          value = JSON.parse(s);
        } catch (cause) {
          if (!isBlank(s)) {
            throw new DecodeError("JSON_INVALID", at + lineOffset(region, line), "line is not valid JSON", { cause });
          }
          value = SKIP;
        }
        if (value !== SKIP) {
          if (this.#map === undefined) {
            emit(value as T);
          } else {
            emit(this.#applyAtLine(value, region, at, line));
          }
        }
      }
      if (lf === -1) return;
      from = lf + 1;
      line++;
    }
  }

  /** The slow path for a region longer than `maxEventBytes`: check each line's length in bytes first. */
  #parseRegionByLine(region: Uint8Array, at: number, emit: (value: T) => void): void {
    let from = 0;
    for (;;) {
      const lf = region.indexOf(LF, from);
      const end = lf === -1 ? region.length : lf;
      if (end - from > this.#max) {
        throw new DecodeError("LINE_TOO_LONG", at + from, `line longer than maxEventBytes (${this.#max} bytes)`);
      }
      this.#parseLine(this.#text.decode(region.subarray(from, end)), at + from, emit);
      if (lf === -1) return;
      from = lf + 1;
    }
  }

  #parseLine(text: string, lineStart: number, emit: (value: T) => void): void {
    if (isBlank(text)) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (cause) {
      throw new DecodeError("JSON_INVALID", lineStart, "line is not valid JSON", { cause });
    }
    emit(this.#apply(value, lineStart));
  }

  #applyAtLine(value: unknown, region: Uint8Array, at: number, line: number): T {
    try {
      return this.#map!(value);
    } catch (error) {
      throw rebase(error, at + lineOffset(region, line));
    }
  }

  #apply(value: unknown, lineStart: number): T {
    if (this.#map === undefined) return value as T;
    try {
      return this.#map(value);
    } catch (error) {
      throw rebase(error, lineStart);
    }
  }
}

const SKIP = Symbol("blank line");

function rebase(error: unknown, lineStart: number): unknown {
  if (!(error instanceof DecodeError)) return error;
  return new DecodeError(error.code, lineStart + error.offset, error.detail, { cause: error.cause });
}

/** Byte offset of line number `line` (0-based) within `region`: the error path only. */
function lineOffset(region: Uint8Array, line: number): number {
  let at = 0;
  for (let k = 0; k < line; k++) at = region.indexOf(LF, at) + 1;
  return at;
}

/** True for a line of nothing but JSON whitespace (and so for `""` and `"\r"`). */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== CR && c !== LF) return false;
  }
  return true;
}
