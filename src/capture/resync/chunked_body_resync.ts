/**
 * {@linkcode ChunkedBodyResync}: an HTTP/1.1 chunked body after bytes were lost from it, decoded again from its next
 * chunk. Internal.
 *
 * @module
 */
import { ChunkedDecoder } from "../../transport/chunked_decoder.ts";
import { ScanBuffer } from "./scan_buffer.ts";

const CR = 0x0d;
const LF = 0x0a;

/** Limits and the report of {@linkcode ChunkedBodyResync}. */
export interface ChunkedBodyResyncOptions {
  /** Longest chunk-size line (size and extensions) taken. */
  readonly maxChunkLineBytes: number;
  /** Largest chunk taken as the place to resume at (it is held whole until the next chunk-size line confirms it). */
  readonly maxChunkBytes: number;
  /** Told once, at the chunk found, with how many bytes were skipped before it. */
  readonly found: (skippedBytes: number) => void;
}

/**
 * Finds, in the bytes of an HTTP/1.1 connection after a gap inside a chunked body, the first place where a chunk
 * plausibly starts, and decodes the body from there (its payload, then its end):
 *
 * - a chunk-size line (hex digits, any extensions, CRLF) of a chunk within `maxChunkBytes`, its data, the CRLF after
 *   it, and the next chunk-size line (with its CRLF);
 * - or the last chunk (`0`, CRLF) followed by the CRLF that ends the body.
 *
 * It waits for the bytes each decision needs, so what it yields does not depend on the chunking.
 */
export class ChunkedBodyResync {
  readonly #options: ChunkedBodyResyncOptions;
  readonly #held = new ScanBuffer();
  #decoder: ChunkedDecoder | undefined;

  /** A resync that tells `options.found` where the body goes on. */
  constructor(options: ChunkedBodyResyncOptions) {
    this.#options = options;
  }

  /** True once the body has ended (its last chunk and trailer section read). */
  get done(): boolean {
    return this.#decoder?.done ?? false;
  }

  /**
   * Takes the next bytes: payload goes to `onPayload` (views). Returns the bytes of `chunk` after the body's end, if it
   * ended inside it (`done`): the connection's next bytes.
   */
  push(chunk: Uint8Array, onPayload: (payload: Uint8Array) => void): Uint8Array | undefined {
    if (this.#decoder !== undefined) return this.#decode(chunk, onPayload);
    this.#held.append(chunk);
    return this.#scan(false, onPayload);
  }

  /**
   * The bytes have ended: a body found goes on no further (`ChunkedDecoder.finish` throws where it was cut). Returns
   * the bytes held after the body's end, if a chunk found only now ended it.
   */
  finish(onPayload: (payload: Uint8Array) => void): Uint8Array | undefined {
    const after = this.#decoder === undefined ? this.#scan(true, onPayload) : undefined;
    this.#decoder?.finish();
    return after;
  }

  #decode(chunk: Uint8Array, onPayload: (payload: Uint8Array) => void): Uint8Array | undefined {
    const used = this.#decoder!.push(chunk, onPayload);
    return this.#decoder!.done ? chunk.subarray(used) : undefined;
  }

  #scan(final: boolean, onPayload: (payload: Uint8Array) => void): Uint8Array | undefined {
    const b = this.#held.view;
    let i = 0;
    for (; i < b.length; i++) {
      const verdict = this.#chunkAt(b, i, final);
      if (verdict === WAIT) break;
      if (verdict === NO) continue;
      this.#held.drop(i);
      this.#options.found(this.#held.dropped);
      this.#decoder = new ChunkedDecoder({ maxChunkLineBytes: this.#options.maxChunkLineBytes });
      return this.#decode(this.#held.take(), onPayload);
    }
    this.#held.drop(final ? b.length : i);
    return undefined;
  }

  /** Whether a chunk plausibly starts at `b[i]` (YES, NO), or WAIT for more bytes to tell. */
  #chunkAt(b: Uint8Array, i: number, final: boolean): number {
    const first = sizeLine(b, i, this.#options.maxChunkLineBytes, this.#options.maxChunkBytes);
    if (first === WAIT) return final ? NO : WAIT;
    if (first === NO) return NO;
    const { size, end } = first;
    if (size === 0) {
      // The last chunk: the body ends with an empty line (trailers are not looked into).
      if (end + 2 > b.length) return final ? NO : WAIT;
      return b[end] === CR && b[end + 1] === LF ? YES : NO;
    }
    const after = end + size;
    if (after + 2 > b.length) return final ? NO : WAIT;
    if (b[after] !== CR || b[after + 1] !== LF) return NO;
    const next = sizeLine(b, after + 2, this.#options.maxChunkLineBytes, this.#options.maxChunkBytes);
    if (next === WAIT) return final ? NO : WAIT;
    return next === NO ? NO : YES;
  }
}

const YES = 1;
const NO = -1;
const WAIT = -2;

// Hex digit values; 255 marks a non-digit.
const HEX = new Uint8Array(256).fill(255);
for (let i = 0; i < 10; i++) HEX[0x30 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[0x41 + i] = 10 + i;
  HEX[0x61 + i] = 10 + i;
}

/**
 * The chunk size of a chunk-size line at `b[i]` and where its data starts (after the CRLF), NO, or WAIT when the bytes
 * end before that can be told. Extensions (`;...`) are passed over up to `maxChunkLineBytes`; a size over
 * `maxChunkBytes` is NO.
 */
function sizeLine(
  b: Uint8Array,
  i: number,
  maxChunkLineBytes: number,
  maxChunkBytes: number,
): { size: number; end: number } | typeof NO | typeof WAIT {
  let size = 0;
  let at = i;
  for (; at < b.length && HEX[b[at]] !== 255; at++) {
    size = size * 16 + HEX[b[at]];
    if (size > maxChunkBytes) return NO;
  }
  if (at === i) return at < b.length ? NO : WAIT;
  // After the digits: the CRLF, or whitespace and extensions (visible characters, spaces, tabs) before it.
  if (at < b.length && b[at] !== CR && b[at] !== 0x3b && b[at] !== 0x20 && b[at] !== 0x09) return NO;
  for (; at < b.length && b[at] !== CR; at++) {
    if (at - i >= maxChunkLineBytes) return NO;
    if (b[at] !== 0x09 && (b[at] < 0x20 || b[at] > 0x7e)) return NO;
  }
  if (at + 1 >= b.length) return WAIT;
  return b[at + 1] === LF ? { size, end: at + 2 } : NO;
}

/** A chunked body resumed after a gap (see {@linkcode chunkedBodyAfterGap}). */
export interface ChunkedBodyAfterGap {
  /** The payload of the chunks from the one found on. */
  readonly body: ReadableStream<Uint8Array>;
  /** Once the body has ended: the connection's bytes after it; undefined when it did not end (or none follow). */
  readonly rest: Promise<ReadableStream<Uint8Array> | undefined>;
  /** Whether a chunk was found. */
  found(): boolean;
  /** The bytes of `input` read so far. */
  received(): number;
}

/**
 * The bytes of an HTTP/1.1 connection after a gap inside a chunked body (`input`) as the body's payload from the next
 * chunk found ({@linkcode ChunkedBodyResync}) and the connection's bytes after the body. A failure of `input` (another
 * gap) fails the body with it.
 */
export function chunkedBodyAfterGap(
  input: ReadableStream<Uint8Array>,
  options: ChunkedBodyResyncOptions,
): ChunkedBodyAfterGap {
  let found = false;
  let received = 0;
  const resync = new ChunkedBodyResync({
    ...options,
    found(skipped) {
      found = true;
      options.found(skipped);
    },
  });
  const reader = input.getReader();
  let settle!: (rest: ReadableStream<Uint8Array> | undefined) => void;
  const rest = new Promise<ReadableStream<Uint8Array> | undefined>((resolve) => (settle = resolve));
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        let read: ReadableStreamReadResult<Uint8Array>;
        try {
          read = await reader.read();
        } catch (error) {
          settle(undefined);
          throw error;
        }
        let given = false;
        const give = (payload: Uint8Array) => {
          controller.enqueue(payload);
          given = true;
        };
        if (read.done) {
          const after = resync.finish(give);
          settle(after === undefined || after.length === 0 ? undefined : following(after, reader));
          controller.close();
          return;
        }
        received += read.value.length;
        const after = resync.push(read.value, give);
        if (resync.done) {
          controller.close();
          settle(following(after ?? new Uint8Array(0), reader));
          return;
        }
        if (given) return;
      }
    },
    cancel(reason) {
      settle(undefined);
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  return { body, rest, found: () => found, received: () => received };
}

/** A stream of `first` (unless empty), then what `reader` yields. */
function following(first: Uint8Array, reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  let pending = first.length > 0 ? first : undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pending !== undefined) {
        controller.enqueue(pending);
        pending = undefined;
        return;
      }
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}
