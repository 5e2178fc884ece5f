/**
 * {@linkcode CborSequenceDecoder}: a CBOR sequence (RFC 8742: data items one after another, nothing between them) to
 * the bytes of each data item, found by walking the items' heads (RFC 8949 §3): no CBOR value is decoded.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../limits.ts";
import type { StreamDecoder } from "../streams/decoder_stream.ts";

/**
 * The default of {@linkcode CborSequenceDecoderOptions.maxDepth}: Kubernetes' CBOR decoder's nesting limit.
 *
 * @example
 * ```ts
 * import { DEFAULT_CBOR_MAX_DEPTH } from "watchwire/wire";
 *
 * console.log(DEFAULT_CBOR_MAX_DEPTH); // 10000
 * ```
 */
export const DEFAULT_CBOR_MAX_DEPTH = 10_000;

/**
 * Options of {@linkcode CborSequenceDecoder} and `CborSequenceDecoderStream`.
 *
 * @example
 * ```ts
 * import { type CborSequenceDecoderOptions, CborSequenceDecoderStream } from "watchwire/wire";
 *
 * // Items of up to 1 MiB, nested at most 64 levels (each array, map, tag and indefinite-length string is one).
 * const options: CborSequenceDecoderOptions = { maxEventBytes: 1024 * 1024, maxDepth: 64 };
 * const items = new CborSequenceDecoderStream(options);
 * console.log(items instanceof TransformStream); // true
 * ```
 */
export interface CborSequenceDecoderOptions {
  /**
   * The largest event (here: one CBOR data item, all its bytes) accepted, in bytes. Default `DEFAULT_MAX_EVENT_BYTES`
   * (16 MiB). An item found to be longer (as soon as a string's or container's head says so, or its bytes pass the
   * limit) is `MESSAGE_TOO_LARGE`, before more of it is held.
   */
  maxEventBytes?: number;
  /**
   * How deep items may nest: each array, map, tag and indefinite-length string opens one level (the item itself is at
   * level 0). Deeper is `MESSAGE_INVALID`. Default {@linkcode DEFAULT_CBOR_MAX_DEPTH} (10 000).
   */
  maxDepth?: number;
}

/**
 * Receives one data item: its bytes (never written again: the sink may keep them) and the input offset of its start.
 *
 * @example
 * ```ts
 * import type { CborItemSink } from "watchwire/wire";
 *
 * const sizes: number[] = [];
 * const sink: CborItemSink = (item, offset) => void sizes.push(item.length, offset);
 * sink(Uint8Array.of(0xa0), 0); // an empty map at offset 0
 * console.log(sizes); // [ 1, 0 ]
 * ```
 */
export type CborItemSink = (item: Uint8Array, offset: number) => void;

// What an open level of the stack is; its count is in `#left`.
/** A definite-length array or map, or a tag: `left` items still to come. */
const DEFINITE = 0;
/** An indefinite-length array: items until a break. */
const INDEFINITE_ARRAY = 1;
/** An indefinite-length map: keys and values until a break (`left` counts them, to refuse a break after a key). */
const INDEFINITE_MAP = 2;
/** An indefinite-length byte string (text string: 3): definite strings of its type until a break. */
const INDEFINITE_BYTES = 3;
const INDEFINITE_TEXT = 4;

const TWO_32 = 4294967296;

/**
 * Splits a CBOR sequence into its data items: as `application/cbor-seq` carries them (a Kubernetes CBOR watch: one
 * event per item), or any concatenation of self-delimiting items. Each item's end is found from the heads alone:
 * definite and indefinite lengths, nesting, tags; string contents are skipped, never looked at.
 *
 * - An item within one input chunk is handed on as a `subarray` view of that chunk (no copy); one that spans chunks
 *   is held as views of them and copied once, when it ends, into a buffer of exactly its length. So an item's bytes
 *   are never written again, and the sink may keep them (a kept view keeps its whole `buffer` alive).
 * - An item over `maxEventBytes` is `MESSAGE_TOO_LARGE` at its first byte, as soon as a head announces more than
 *   the limit leaves (a string's length; an array or map of more items than bytes left, each item taking one at
 *   least) or its bytes pass it: never held beyond the limit.
 * - Not well-formed input (RFC 8949 §3 and appendix F) is `MESSAGE_INVALID` at the offending head: additional
 *   information 28-30, an indefinite length on an integer or a tag, a break outside an indefinite-length item or
 *   after a map's key, a chunk of an indefinite-length string that is not a definite string of its type, a simple
 *   value under 32 in two bytes; and nesting deeper than `maxDepth`.
 * - Input that ends inside an item (a cut item, an indefinite length never ended) is `TRUNCATED` at the item's first
 *   byte.
 *
 * Every error's `offset` counts input bytes, and every item before the fault has been handed on first.
 *
 * @example
 * ```ts
 * import { CborSequenceDecoder } from "watchwire/wire";
 *
 * // [1, "a"], then a map of one pair with an indefinite-length array as its value ({"k": [_ 0]}), in two chunks.
 * const decoder = new CborSequenceDecoder();
 * const items: number[][] = [];
 * decoder.push(Uint8Array.of(0x82, 0x01, 0x61, 0x61, 0xa1, 0x61), (item) => items.push([...item]));
 * decoder.push(Uint8Array.of(0x6b, 0x9f, 0x00, 0xff), (item, offset) => items.push([offset, ...item]));
 * decoder.finish();
 * console.log(items); // [ [ 130, 1, 97, 97 ], [ 4, 161, 97, 107, 159, 0, 255 ] ]
 * ```
 */
export class CborSequenceDecoder implements StreamDecoder<Uint8Array, Uint8Array> {
  readonly #max: number;
  readonly #maxDepth: number;
  /** Input bytes consumed before the current chunk. */
  #offset = 0;
  /** The input offset of the current item's first byte (while one is open). */
  #itemStart = 0;
  /** Whether an item has begun and not ended. */
  #inItem = false;
  /** The open levels: what each is, and what it still expects (see the constants above). */
  #kinds: number[] = [];
  #left: number[] = [];
  /** String bytes still to skip (they may span chunks). */
  #skip = 0;
  /** A head cut by the end of a chunk: its bytes so far, how many it has and needs, and its input offset. */
  readonly #head = new Uint8Array(9);
  #headHave = 0;
  #headNeed = 0;
  #headAt = 0;
  /** Views of earlier chunks that hold the start of the current item, and their total length. */
  #pieces: Uint8Array[] = [];
  #held = 0;

  constructor(options: CborSequenceDecoderOptions = {}) {
    const max = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new RangeError(`maxEventBytes must be a non-negative integer, not ${max}`);
    }
    const maxDepth = options.maxDepth ?? DEFAULT_CBOR_MAX_DEPTH;
    if (!Number.isSafeInteger(maxDepth) || maxDepth < 0) {
      throw new RangeError(`maxDepth must be a non-negative integer, not ${maxDepth}`);
    }
    this.#max = max;
    this.#maxDepth = maxDepth;
  }

  /** Input bytes consumed so far. */
  get offset(): number {
    return this.#offset;
  }

  /** Passes each item completed by `chunk` to `emit`, holding an unfinished one. Throws a {@linkcode DecodeError}. */
  push(chunk: Uint8Array, emit: CborItemSink): void {
    const n = chunk.length;
    const base = this.#offset;
    /** Where in `chunk` the current item starts (0 when it began in an earlier chunk). */
    let from = 0;
    let i = 0;
    while (i < n) {
      if (this.#skip > 0) {
        const take = Math.min(this.#skip, n - i);
        i += take;
        this.#skip -= take;
        if (this.#skip > 0) break;
        if (this.#completed()) {
          this.#emit(chunk, from, i, emit);
          from = i;
        }
        continue;
      }
      if (!this.#inItem) {
        // An item that lies within this chunk, of the common forms: found by a tight scan.
        const itemEnd = scanItem(chunk, i, n, this.#maxDepth);
        if (itemEnd !== -1 && itemEnd - i <= this.#max) {
          emit(chunk.subarray(i, itemEnd), base + i);
          i = itemEnd;
          continue;
        }
        // Otherwise (it goes on in the next chunk, it has indefinite lengths, or something is wrong with it) the
        // state machine below walks it, and says what is wrong.
        this.#inItem = true;
        this.#itemStart = base + i;
        from = i;
      }
      let at: number;
      let initial: number;
      let argument: number;
      if (this.#headHave === 0) {
        at = base + i;
        initial = chunk[i];
        const ai = initial & 31;
        if (ai < 24) {
          argument = ai;
          i++;
        } else if (ai <= 27) {
          const size = 1 << (ai - 24);
          if (n - i <= size) {
            // The head's argument goes on in the next chunk.
            this.#head.set(chunk.subarray(i), 0);
            this.#headHave = n - i;
            this.#headNeed = size + 1;
            this.#headAt = at;
            i = n;
            break;
          }
          argument = readArgument(chunk, i + 1, size);
          i += size + 1;
        } else {
          argument = 0;
          i++;
        }
      } else {
        while (this.#headHave < this.#headNeed && i < n) this.#head[this.#headHave++] = chunk[i++];
        if (this.#headHave < this.#headNeed) break;
        at = this.#headAt;
        initial = this.#head[0];
        argument = readArgument(this.#head, 1, this.#headNeed - 1);
        this.#headHave = 0;
      }
      if (this.#onHead(initial, argument, at, base + i)) {
        this.#emit(chunk, from, i, emit);
        from = i;
      }
    }
    if (this.#inItem) {
      // The item goes on in the next chunk: hold what this one has of it.
      if (from < n) {
        const piece = chunk.subarray(from);
        this.#pieces.push(piece);
        this.#held += piece.length;
      }
      if (this.#held > this.#max) throw this.#tooLarge();
    }
    this.#offset += n;
  }

  /** The input has ended: throws `TRUNCATED` (at the item's first byte) if it ended inside an item. */
  finish(): void {
    if (!this.#inItem) return;
    const depth = this.#kinds.length;
    throw new DecodeError(
      "TRUNCATED",
      this.#itemStart,
      `input ended inside a CBOR data item (${this.#offset - this.#itemStart} bytes of it${
        depth > 0 ? `, ${depth} level${depth === 1 ? "" : "s"} still open` : ""
      })`,
    );
  }

  /**
   * Takes a head (its initial byte and argument) at input offset `at`, ending at input offset `end`: opens a level,
   * starts a string's skip, or completes an item. Whether the top-level item is complete.
   */
  #onHead(initial: number, argument: number, at: number, end: number): boolean {
    if (end - this.#itemStart > this.#max) throw this.#tooLarge();
    const major = initial >> 5;
    const ai = initial & 31;
    const kinds = this.#kinds;
    const depth = kinds.length;
    const top = depth === 0 ? -1 : kinds[depth - 1];
    if (top === INDEFINITE_BYTES || top === INDEFINITE_TEXT) {
      // Inside an indefinite-length string: definite strings of its type, or the break.
      if (initial === 0xff) return this.#close();
      if (major !== top - 1 || ai === 31 || ai >= 28) {
        throw invalid(at, "a chunk of an indefinite-length string that is not a definite string of its type");
      }
    }
    if (ai >= 28 && ai <= 30) throw invalid(at, `reserved additional information ${ai} (major type ${major})`);
    if (ai === 31) {
      switch (major) {
        case 0:
        case 1:
        case 6:
          throw invalid(at, `an indefinite length on major type ${major}`);
        case 2:
        case 3:
          return this.#open(major === 2 ? INDEFINITE_BYTES : INDEFINITE_TEXT, 0, at);
        case 4:
          return this.#open(INDEFINITE_ARRAY, 0, at);
        case 5:
          return this.#open(INDEFINITE_MAP, 0, at);
        default:
          // 0xff, the break.
          if (top !== INDEFINITE_ARRAY && top !== INDEFINITE_MAP) {
            throw invalid(at, "a break outside an indefinite-length item");
          }
          if (top === INDEFINITE_MAP && this.#left[depth - 1] % 2 === 1) {
            throw invalid(at, "a break where a map value should be");
          }
          return this.#close();
      }
    }
    switch (major) {
      case 2:
      case 3:
        if (argument === 0) return this.#completed();
        this.#checkRoom(end, argument);
        this.#skip = argument;
        return false;
      case 4:
      case 5: {
        if (argument === 0) return this.#completed();
        const items = major === 5 ? 2 * argument : argument;
        // Each item takes a byte at least.
        this.#checkRoom(end, items);
        return this.#open(DEFINITE, items, at);
      }
      case 6:
        return this.#open(DEFINITE, 1, at);
      case 7:
        if (ai === 24 && argument < 32) throw invalid(at, `simple value ${argument} in two bytes`);
        return this.#completed();
      default:
        return this.#completed();
    }
  }

  /** Opens a level (at the head at input offset `at`); never completes an item. */
  #open(kind: number, left: number, at: number): false {
    if (this.#kinds.length >= this.#maxDepth) {
      throw invalid(at, `nested deeper than maxDepth (${this.#maxDepth} levels)`);
    }
    this.#kinds.push(kind);
    this.#left.push(left);
    return false;
  }

  /** Closes the innermost (indefinite-length) level at its break: it is one item of the level around it. */
  #close(): boolean {
    this.#kinds.pop();
    this.#left.pop();
    return this.#completed();
  }

  /** One item (a leaf, or a level just closed) is complete: closes the levels it completes. Whether the top one is. */
  #completed(): boolean {
    const kinds = this.#kinds;
    const left = this.#left;
    for (let d = kinds.length - 1; d >= 0; d--) {
      const kind = kinds[d];
      if (kind === DEFINITE) {
        if (--left[d] > 0) return false;
        kinds.pop();
        left.pop();
        continue;
      }
      // An indefinite-length level counts its items (a map: to refuse a break after a key), and stays open.
      if (kind === INDEFINITE_MAP) left[d] = left[d] === 1 ? 0 : 1;
      return false;
    }
    return true;
  }

  /** Throws `MESSAGE_TOO_LARGE` if `more` bytes after input offset `end` would take the item over the limit. */
  #checkRoom(end: number, more: number): void {
    if (end - this.#itemStart + more > this.#max) throw this.#tooLarge(more);
  }

  #tooLarge(announced?: number): DecodeError {
    return new DecodeError(
      "MESSAGE_TOO_LARGE",
      this.#itemStart,
      announced === undefined
        ? `a CBOR data item over maxEventBytes (${this.#max} bytes)`
        : `a CBOR data item over maxEventBytes (${this.#max} bytes): a head announces ${announced} more bytes or items`,
    );
  }

  /** Hands on the item that ends at `end` of `chunk` (it started at `from`, or in earlier chunks). */
  #emit(chunk: Uint8Array, from: number, end: number, emit: CborItemSink): void {
    const start = this.#itemStart;
    this.#inItem = false;
    if (this.#pieces.length === 0) {
      emit(chunk.subarray(from, end), start);
      return;
    }
    const total = this.#held + end;
    if (total > this.#max) throw this.#tooLarge();
    const item = new Uint8Array(total);
    let at = 0;
    for (const piece of this.#pieces) {
      item.set(piece, at);
      at += piece.length;
    }
    item.set(chunk.subarray(0, end), at);
    this.#pieces = [];
    this.#held = 0;
    emit(item, start);
  }
}

/**
 * The end of the data item at `b[i]` if it lies within `b[..n)`, has definite lengths only, opens no more than
 * `maxContainers` arrays, maps and tags, and is well-formed; else -1 (the state machine then decides). Each item
 * still needed is counted, not a stack of levels: a container adds its items to the count.
 */
function scanItem(b: Uint8Array, i: number, n: number, maxContainers: number): number {
  let need = 1;
  let containers = 0;
  while (need > 0) {
    if (i >= n) return -1;
    const x = b[i];
    const ai = x & 31;
    let argument: number;
    if (ai < 24) {
      argument = ai;
      i++;
    } else if (ai <= 27) {
      const size = 1 << (ai - 24);
      if (n - i <= size) return -1;
      argument = readArgument(b, i + 1, size);
      i += size + 1;
    } else return -1;
    need--;
    switch (x >> 5) {
      case 2:
      case 3:
        i += argument;
        if (i > n) return -1;
        break;
      case 4:
        need += argument;
        containers++;
        break;
      case 5:
        need += 2 * argument;
        containers++;
        break;
      case 6:
        need++;
        containers++;
        break;
      case 7:
        if (ai === 24 && argument < 32) return -1;
        break;
    }
    if (containers > maxContainers) return -1;
  }
  return i;
}

/** The big-endian unsigned integer of `size` (1, 2, 4 or 8) bytes at `at` (beyond 2^53: the nearest double). */
function readArgument(b: Uint8Array, at: number, size: number): number {
  switch (size) {
    case 1:
      return b[at];
    case 2:
      return (b[at] << 8) | b[at + 1];
    case 4:
      return b[at] * 0x100_0000 + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]);
    default:
      return (b[at] * 0x100_0000 + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3])) * TWO_32 +
        (b[at + 4] * 0x100_0000 + ((b[at + 5] << 16) | (b[at + 6] << 8) | b[at + 7]));
  }
}

function invalid(at: number, detail: string): DecodeError {
  return new DecodeError("MESSAGE_INVALID", at, `CBOR: ${detail}`);
}
