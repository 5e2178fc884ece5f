/**
 * Raw DEFLATE (RFC 1951) decompression as an incremental state machine: stored, fixed-Huffman and dynamic-Huffman
 * blocks, a 32 KiB window, input in chunks of any size (down to single bytes) and output handed on as it is produced.
 * {@linkcode GunzipStream} drives it for each gzip member (unless told to use the runtime's `DecompressionStream`),
 * {@linkcode InflateStream} for a zlib or raw DEFLATE body.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";

/** The window: the farthest back a match may reach (RFC 1951 §2). */
const WINDOW = 32768;
/** Output collected before it is handed on, beyond the window. */
const CHUNK = 65536;
/** The output buffer: the window followed by fresh output; when full, its last WINDOW bytes slide to the front. */
const BUFFER = WINDOW + CHUNK;
/** The longest match (RFC 1951 §3.2.5): this much room is made before each literal/length symbol. */
const MAX_MATCH = 258;

// Huffman tables are decoded with one lookup of the next ROOT bits, plus a second one in a subtable for longer codes.
const LIT_ROOT = 10;
const LIT_MASK = (1 << LIT_ROOT) - 1;
const DIST_ROOT = 8;
const DIST_MASK = (1 << DIST_ROOT) - 1;
const CL_ROOT = 7;
const CL_MASK = (1 << CL_ROOT) - 1;

// A table entry is `value << 5 | flags`: for a leaf, bits 0-3 are the code length (0: no such code) and `value` the
// symbol; for a link (bit 4 set) to a subtable, bits 0-3 are the subtable's index width and `value` its start.
const LINK = 16;

// Length symbols 257..285 and distance symbols 0..29: base values and extra bits (RFC 1951 §3.2.5).
// deno-fmt-ignore
const LENGTH_BASE = Uint16Array.of(
  3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
);
// deno-fmt-ignore
const LENGTH_EXTRA = Uint8Array.of(
  0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
);
// deno-fmt-ignore
const DISTANCE_BASE = Uint16Array.of(
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
  8193, 12289, 16385, 24577,
);
// deno-fmt-ignore
const DISTANCE_EXTRA = Uint8Array.of(
  0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
);
/** The order in which a dynamic block lists the code lengths of the code length alphabet (RFC 1951 §3.2.7). */
const CODE_LENGTH_ORDER = Uint8Array.of(16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15);

/** Bit-reversed bytes: Huffman codes are packed most significant bit first, everything else least significant first. */
const REVERSED = new Uint8Array(256);
for (let i = 0; i < 256; i++) {
  let r = 0;
  for (let k = 0; k < 8; k++) r |= ((i >>> k) & 1) << (7 - k);
  REVERSED[i] = r;
}

// Scratch space of buildTable (never re-entered).
const COUNT = new Uint16Array(16);
const NEXT = new Uint16Array(16);
const SUB_WIDTH = new Uint8Array(1 << LIT_ROOT);
const SUB_START = new Int32Array(1 << LIT_ROOT);

/**
 * Builds the lookup table of the canonical Huffman code (RFC 1951 §3.2.2) whose code lengths are
 * `lengths[from..from+count)` into `table` (or a larger replacement) and returns it; `undefined` if the lengths do not
 * form a prefix code. Like zlib, an incomplete code is accepted only when it has at most one code, of length 1, and
 * only where `incomplete` allows it (the literal/length and distance codes, not the code length code).
 */
function buildTable(
  lengths: Uint8Array,
  from: number,
  count: number,
  root: number,
  table: Int32Array<ArrayBuffer>,
  incomplete: boolean,
): Int32Array<ArrayBuffer> | undefined {
  COUNT.fill(0);
  let max = 0;
  for (let s = 0; s < count; s++) {
    const len = lengths[from + s];
    COUNT[len]++;
    if (len > max) max = len;
  }
  COUNT[0] = 0;
  let left = 1;
  for (let len = 1; len < 16; len++) {
    left = left * 2 - COUNT[len];
    if (left < 0) return undefined; // over-subscribed
  }
  if (left > 0 && !(incomplete && max <= 1)) return undefined;
  let code = 0;
  for (let len = 1; len < 16; len++) {
    code = (code + COUNT[len - 1]) << 1;
    NEXT[len] = code;
  }
  const rootSize = 1 << root;
  let size = rootSize;
  if (max > root) {
    // First pass over the long codes: each subtable is as wide as its longest code needs.
    SUB_WIDTH.fill(0, 0, rootSize);
    const next = NEXT.slice();
    for (let s = 0; s < count; s++) {
      const len = lengths[from + s];
      if (len <= root) continue;
      const prefix = reverse(next[len]++, len) & (rootSize - 1);
      if (len - root > SUB_WIDTH[prefix]) SUB_WIDTH[prefix] = len - root;
    }
    for (let prefix = 0; prefix < rootSize; prefix++) {
      if (SUB_WIDTH[prefix] === 0) continue;
      SUB_START[prefix] = size;
      size += 1 << SUB_WIDTH[prefix];
    }
  }
  if (table.length < size) table = new Int32Array(size);
  table.fill(0, 0, size);
  if (max > root) {
    for (let prefix = 0; prefix < rootSize; prefix++) {
      if (SUB_WIDTH[prefix] !== 0) table[prefix] = (SUB_START[prefix] << 5) | LINK | SUB_WIDTH[prefix];
    }
  }
  for (let s = 0; s < count; s++) {
    const len = lengths[from + s];
    if (len === 0) continue;
    const reversed = reverse(NEXT[len]++, len);
    const entry = (s << 5) | len;
    if (len <= root) {
      for (let i = reversed; i < rootSize; i += 1 << len) table[i] = entry;
    } else {
      const prefix = reversed & (rootSize - 1);
      const start = SUB_START[prefix];
      const width = 1 << SUB_WIDTH[prefix];
      for (let i = reversed >>> root; i < width; i += 1 << (len - root)) table[start + i] = entry;
    }
  }
  return table;
}

/** The `len` low bits of `code`, in reverse order. */
function reverse(code: number, len: number): number {
  return ((REVERSED[code & 0xff] << 8) | REVERSED[code >>> 8]) >>> (16 - len);
}

// The fixed codes of block type 1 (RFC 1951 §3.2.6). Distance symbols 30 and 31 have codes but are invalid.
const FIXED_LITERAL = (() => {
  const lengths = new Uint8Array(288);
  lengths.fill(8, 0, 144).fill(9, 144, 256).fill(7, 256, 280).fill(8, 280, 288);
  return buildTable(lengths, 0, 288, LIT_ROOT, new Int32Array(1 << LIT_ROOT), false)!;
})();
const FIXED_DISTANCE = buildTable(new Uint8Array(32).fill(5), 0, 32, DIST_ROOT, new Int32Array(1 << DIST_ROOT), false)!;

const enum Mode {
  BlockHeader,
  StoredLength,
  Stored,
  TableSizes,
  CodeLengthCode,
  CodeLengths,
  Codes,
  Distance,
  DistanceExtra,
  Done,
}

/**
 * Decompresses one raw DEFLATE stream incrementally. Feed it input with {@linkcode Inflater.push} until
 * {@linkcode Inflater.done}; the output is handed to a callback in pieces of at most 96 KiB, each a fresh copy.
 * Its memory is fixed (the window, the output buffer, the tables) whatever the input.
 *
 * Faults throw a `DECOMPRESSION_FAILED` {@linkcode DecodeError} whose offset is the input byte holding the faulty
 * code or field, counted from the offset given to {@linkcode Inflater.reset}; output before the fault has been handed
 * on by then.
 */
export class Inflater {
  #mode = Mode.BlockHeader;
  #final = false;
  /** Bit buffer: the next `#count` input bits, least significant first (up to 32). */
  #bits = 0;
  #count = 0;
  /** Input bytes loaded into the bit buffer since `reset`. */
  #loaded = 0;
  #base = 0;
  readonly #out = new Uint8Array(BUFFER);
  #at = 0;
  #emitted = 0;
  #storedLeft = 0;
  #literals = 0;
  #distances = 0;
  #codeLengths = 0;
  #index = 0;
  readonly #lengths = new Uint8Array(288 + 32);
  #codeLengthTable = new Int32Array(1 << CL_ROOT);
  #dynamicLiteral = new Int32Array(2048);
  #dynamicDistance = new Int32Array(1024);
  #literal = FIXED_LITERAL;
  #distance = FIXED_DISTANCE;
  #matchLength = 0;
  #matchDistance = 0;
  #matchExtra = 0;
  #leftover = new Uint8Array(0);

  /** True once the final block has ended. */
  get done(): boolean {
    return this.#mode === Mode.Done;
  }

  /** Starts a new DEFLATE stream whose first byte is at `offset` (for error offsets); keeps the buffers. */
  reset(offset = 0): void {
    this.#mode = Mode.BlockHeader;
    this.#final = false;
    this.#bits = 0;
    this.#count = 0;
    this.#loaded = 0;
    this.#base = offset;
    this.#at = 0;
    this.#emitted = 0;
    this.#leftover = new Uint8Array(0);
  }

  /**
   * After {@linkcode Inflater.done}: the whole bytes read ahead past the end of the DEFLATE stream (at most 4), which
   * belong to whatever follows it. They come before the input from the index `push` returned.
   */
  takeLeftover(): Uint8Array {
    const bytes = this.#leftover;
    this.#leftover = new Uint8Array(0);
    return bytes;
  }

  /**
   * Decodes `input[start..]`, handing output to `emit`, and returns the index where it stopped: `input.length`, or
   * less once the stream is done (see {@linkcode Inflater.takeLeftover} for bytes it read ahead).
   */
  push(input: Uint8Array, start: number, emit: (output: Uint8Array) => void): number {
    const out = this.#out;
    const end = input.length;
    const fastEnd = end - 8; // a literal/length/distance triple takes at most 48 bits
    let p = start;
    let b = this.#bits;
    let n = this.#count;
    let o = this.#at;
    let mode = this.#mode;
    try {
      loop: for (;;) {
        switch (mode) {
          case Mode.BlockHeader: {
            while (n < 3 && p < end) {
              b |= input[p++] << n;
              n += 8;
            }
            if (n < 3) break loop;
            this.#final = (b & 1) === 1;
            const type = (b >>> 1) & 3;
            b >>>= 3;
            n -= 3;
            if (type === 0) {
              // A stored block starts at a byte boundary.
              const skip = n & 7;
              b >>>= skip;
              n -= skip;
              mode = Mode.StoredLength;
            } else if (type === 1) {
              this.#literal = FIXED_LITERAL;
              this.#distance = FIXED_DISTANCE;
              mode = Mode.Codes;
            } else if (type === 2) {
              mode = Mode.TableSizes;
            } else {
              this.#fail("invalid block type 3", this.#loaded + p - start, n + 1);
            }
            continue;
          }
          case Mode.StoredLength: {
            // n is a multiple of 8 here and at most 24, so the buffer ends up with exactly LEN and NLEN.
            while (n < 32 && p < end) {
              b |= input[p++] << n;
              n += 8;
            }
            if (n < 32) break loop;
            const len = b & 0xffff;
            if (len !== (~b >>> 16)) {
              this.#fail("stored block length does not match its complement", this.#loaded + p - start, n);
            }
            b = 0;
            n = 0;
            this.#storedLeft = len;
            mode = Mode.Stored;
            continue;
          }
          case Mode.Stored: {
            let left = this.#storedLeft;
            while (left > 0 && p < end) {
              if (o === BUFFER) o = this.#slide(o, emit);
              const take = Math.min(left, end - p, BUFFER - o);
              out.set(input.subarray(p, p + take), o);
              p += take;
              o += take;
              left -= take;
            }
            this.#storedLeft = left;
            if (left > 0) break loop;
            mode = this.#final ? Mode.Done : Mode.BlockHeader;
            continue;
          }
          case Mode.TableSizes: {
            while (n < 14 && p < end) {
              b |= input[p++] << n;
              n += 8;
            }
            if (n < 14) break loop;
            this.#literals = (b & 31) + 257;
            this.#distances = ((b >>> 5) & 31) + 1;
            this.#codeLengths = ((b >>> 10) & 15) + 4;
            b >>>= 14;
            n -= 14;
            if (this.#literals > 286 || this.#distances > 30) {
              this.#fail("too many literal/length or distance codes", this.#loaded + p - start, n + 1);
            }
            this.#index = 0;
            mode = Mode.CodeLengthCode;
            continue;
          }
          case Mode.CodeLengthCode: {
            const lengths = this.#lengths;
            while (this.#index < this.#codeLengths) {
              while (n < 3 && p < end) {
                b |= input[p++] << n;
                n += 8;
              }
              if (n < 3) break loop;
              lengths[CODE_LENGTH_ORDER[this.#index++]] = b & 7;
              b >>>= 3;
              n -= 3;
            }
            for (let i = this.#codeLengths; i < 19; i++) lengths[CODE_LENGTH_ORDER[i]] = 0;
            const table = buildTable(lengths, 0, 19, CL_ROOT, this.#codeLengthTable, false);
            if (table === undefined) this.#fail("invalid code length code", this.#loaded + p - start, n + 1);
            this.#index = 0;
            mode = Mode.CodeLengths;
            continue;
          }
          case Mode.CodeLengths: {
            const lengths = this.#lengths;
            const table = this.#codeLengthTable;
            const total = this.#literals + this.#distances;
            let index = this.#index;
            while (index < total) {
              while (n <= 24 && p < end) {
                b |= input[p++] << n;
                n += 8;
              }
              const entry = table[b & CL_MASK];
              const len = entry & 15;
              if (len === 0 && n >= CL_ROOT) {
                this.#index = index;
                this.#fail("invalid code length symbol", this.#loaded + p - start, n);
              }
              if (len === 0 || len > n) break; // p === end: wait for more input
              const symbol = entry >>> 5;
              if (symbol < 16) {
                b >>>= len;
                n -= len;
                lengths[index++] = symbol;
                continue;
              }
              // 16: copy the previous length 3-6 times; 17: 3-10 zeros; 18: 11-138 zeros.
              const extra = symbol === 16 ? 2 : symbol === 17 ? 3 : 7;
              if (n < len + extra) break;
              const repeat = ((b >>> len) & ((1 << extra) - 1)) + (symbol === 18 ? 11 : 3);
              b >>>= len + extra;
              n -= len + extra;
              if ((symbol === 16 && index === 0) || index + repeat > total) {
                this.#index = index;
                this.#fail("invalid code length repeat", this.#loaded + p - start, n + 1);
              }
              lengths.fill(symbol === 16 ? lengths[index - 1] : 0, index, index + repeat);
              index += repeat;
            }
            this.#index = index;
            if (index < total) break loop;
            if (lengths[256] === 0) this.#fail("no end-of-block code", this.#loaded + p - start, n + 1);
            const literal = buildTable(lengths, 0, this.#literals, LIT_ROOT, this.#dynamicLiteral, true);
            const distance = buildTable(
              lengths,
              this.#literals,
              this.#distances,
              DIST_ROOT,
              this.#dynamicDistance,
              true,
            );
            if (literal === undefined || distance === undefined) {
              this.#fail("invalid literal/length or distance code lengths", this.#loaded + p - start, n + 1);
            }
            this.#literal = this.#dynamicLiteral = literal;
            this.#distance = this.#dynamicDistance = distance;
            mode = Mode.Codes;
            continue;
          }
          case Mode.Codes: {
            const literal = this.#literal;
            const distance = this.#distance;
            for (;;) {
              if (o > BUFFER - MAX_MATCH) o = this.#slide(o, emit);
              if (p < fastEnd) {
                // Enough input for a whole literal/length/distance triple: decode without checking for more input.
                if (n < 15) {
                  b |= (input[p] << n) | (input[p + 1] << (n + 8));
                  p += 2;
                  n += 16;
                }
                let entry = literal[b & LIT_MASK];
                if (entry & LINK) entry = literal[(entry >>> 5) + ((b >>> LIT_ROOT) & ((1 << (entry & 15)) - 1))];
                let len = entry & 15;
                if (len === 0) this.#fail("invalid literal/length code", this.#loaded + p - start, n);
                b >>>= len;
                n -= len;
                let symbol = entry >>> 5;
                if (symbol < 256) {
                  out[o++] = symbol;
                  continue;
                }
                if (symbol === 256) {
                  mode = this.#final ? Mode.Done : Mode.BlockHeader;
                  break;
                }
                symbol -= 257;
                if (symbol >= 29) this.#fail("invalid length symbol", this.#loaded + p - start, n + 1);
                let length = LENGTH_BASE[symbol];
                const lengthExtra = LENGTH_EXTRA[symbol];
                if (lengthExtra !== 0) {
                  if (n < lengthExtra) {
                    b |= (input[p] << n) | (input[p + 1] << (n + 8));
                    p += 2;
                    n += 16;
                  }
                  length += b & ((1 << lengthExtra) - 1);
                  b >>>= lengthExtra;
                  n -= lengthExtra;
                }
                if (n < 15) {
                  b |= (input[p] << n) | (input[p + 1] << (n + 8));
                  p += 2;
                  n += 16;
                }
                entry = distance[b & DIST_MASK];
                if (entry & LINK) entry = distance[(entry >>> 5) + ((b >>> DIST_ROOT) & ((1 << (entry & 15)) - 1))];
                len = entry & 15;
                if (len === 0) this.#fail("invalid distance code", this.#loaded + p - start, n);
                b >>>= len;
                n -= len;
                symbol = entry >>> 5;
                if (symbol >= 30) this.#fail("invalid distance symbol", this.#loaded + p - start, n + 1);
                let dist = DISTANCE_BASE[symbol];
                const distExtra = DISTANCE_EXTRA[symbol];
                if (distExtra !== 0) {
                  if (n < distExtra) {
                    b |= (input[p] << n) | (input[p + 1] << (n + 8));
                    p += 2;
                    n += 16;
                  }
                  dist += b & ((1 << distExtra) - 1);
                  b >>>= distExtra;
                  n -= distExtra;
                }
                if (dist > o) this.#fail("distance too far back", this.#loaded + p - start, n + 1);
                o = copyMatch(out, o, dist, length);
                continue;
              }
              // Near the end of the input: one symbol at a time, only with the bits there are.
              while (n <= 24 && p < end) {
                b |= input[p++] << n;
                n += 8;
              }
              let entry = literal[b & LIT_MASK];
              let width = LIT_ROOT;
              if (entry & LINK) {
                width += entry & 15;
                entry = literal[(entry >>> 5) + ((b >>> LIT_ROOT) & ((1 << (entry & 15)) - 1))];
              }
              const len = entry & 15;
              if (len === 0 && n >= width) this.#fail("invalid literal/length code", this.#loaded + p - start, n);
              if (len === 0 || len > n) break loop;
              let symbol = entry >>> 5;
              if (symbol < 256) {
                b >>>= len;
                n -= len;
                out[o++] = symbol;
                continue;
              }
              if (symbol === 256) {
                b >>>= len;
                n -= len;
                mode = this.#final ? Mode.Done : Mode.BlockHeader;
                break;
              }
              symbol -= 257;
              if (symbol >= 29) this.#fail("invalid length symbol", this.#loaded + p - start, n - len + 1);
              const extra = LENGTH_EXTRA[symbol];
              if (n < len + extra) break loop; // the code and its extra bits are taken together
              this.#matchLength = LENGTH_BASE[symbol] + ((b >>> len) & ((1 << extra) - 1));
              b >>>= len + extra;
              n -= len + extra;
              mode = Mode.Distance;
              break;
            }
            continue;
          }
          case Mode.Distance: {
            while (n <= 24 && p < end) {
              b |= input[p++] << n;
              n += 8;
            }
            const table = this.#distance;
            let entry = table[b & DIST_MASK];
            let width = DIST_ROOT;
            if (entry & LINK) {
              width += entry & 15;
              entry = table[(entry >>> 5) + ((b >>> DIST_ROOT) & ((1 << (entry & 15)) - 1))];
            }
            const len = entry & 15;
            if (len === 0 && n >= width) this.#fail("invalid distance code", this.#loaded + p - start, n);
            if (len === 0 || len > n) break loop;
            b >>>= len;
            n -= len;
            const symbol = entry >>> 5;
            if (symbol >= 30) this.#fail("invalid distance symbol", this.#loaded + p - start, n + 1);
            this.#matchDistance = DISTANCE_BASE[symbol];
            this.#matchExtra = DISTANCE_EXTRA[symbol];
            mode = Mode.DistanceExtra;
            continue;
          }
          case Mode.DistanceExtra: {
            const extra = this.#matchExtra;
            while (n < extra && p < end) {
              b |= input[p++] << n;
              n += 8;
            }
            if (n < extra) break loop;
            const dist = this.#matchDistance + (b & ((1 << extra) - 1));
            b >>>= extra;
            n -= extra;
            if (dist > o) this.#fail("distance too far back", this.#loaded + p - start, n + 1);
            o = copyMatch(out, o, dist, this.#matchLength);
            mode = Mode.Codes;
            continue;
          }
          case Mode.Done: {
            // The stream ends at a byte boundary; whole bytes read ahead go back to the caller.
            const skip = n & 7;
            b >>>= skip;
            n -= skip;
            const leftover = new Uint8Array(n >>> 3);
            for (let i = 0; i < leftover.length; i++, b >>>= 8) leftover[i] = b & 0xff;
            this.#leftover = leftover;
            b = 0;
            n = 0;
            break loop;
          }
        }
      }
    } finally {
      this.#loaded += p - start;
      this.#bits = b;
      this.#count = n;
      this.#mode = mode;
      if (o > this.#emitted) {
        emit(out.slice(this.#emitted, o));
        this.#emitted = o;
      }
      this.#at = o;
    }
    return p;
  }

  /** Hands on the pending output and moves the last WINDOW bytes to the front; returns the new output position. */
  #slide(o: number, emit: (output: Uint8Array) => void): number {
    const out = this.#out;
    if (o > this.#emitted) emit(out.slice(this.#emitted, o));
    out.copyWithin(0, o - WINDOW, o);
    this.#emitted = WINDOW;
    return WINDOW;
  }

  /**
   * Throws DECOMPRESSION_FAILED for the bit `unread` bits before the end of the `loaded` bytes read so far: `n` to
   * name the next unread bit (where a bad code starts), `n + 1` the last bit read (the end of a bad field).
   */
  #fail(detail: string, loaded: number, unread: number): never {
    const bit = loaded * 8 - unread;
    throw new DecodeError("DECOMPRESSION_FAILED", this.#base + Math.floor(bit / 8), `deflate: ${detail}`);
  }
}

/** Appends `length` bytes from `dist` back (which may overlap what it writes); returns the new output position. */
function copyMatch(out: Uint8Array, o: number, dist: number, length: number): number {
  let from = o - dist;
  if (dist >= length && length > 32) {
    out.copyWithin(o, from, from + length);
    return o + length;
  }
  const stop = o + length;
  while (o < stop) out[o++] = out[from++];
  return o;
}
