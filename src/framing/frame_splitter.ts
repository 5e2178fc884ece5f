/**
 * {@linkcode FrameSplitter}: the state machine shared by the length-prefixed framings (Kubernetes protobuf watch
 * frames, gRPC messages): an optional 1-byte flag, a 4-byte big-endian length, that many bytes.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../limits.ts";

/** The largest length a 4-byte prefix can announce (4 GiB - 1). */
export const MAX_FRAME_LENGTH = 0xffff_ffff;

/** Options of {@linkcode FrameSplitter}. */
export interface FrameSplitterOptions {
  /** Whether each frame starts with a 1-byte flag before its length (gRPC). */
  flagged: boolean;
  /**
   * The largest event (here: one frame, without its prefix) accepted, in bytes. Default
   * {@linkcode DEFAULT_MAX_EVENT_BYTES}.
   */
  maxEventBytes?: number | undefined;
  /** Checks a frame's flag as soon as it arrives; throws a {@linkcode DecodeError} placed at `offset` if bad. */
  checkFlag?: ((flag: number, offset: number) => void) | undefined;
}

/**
 * Receives one frame: its bytes, its flag (0 when unflagged) and the input offset of its prefix. `data` is never
 * written again (a view of an input chunk, which Web Streams hand over, or a buffer of the frame's own): the sink may
 * keep it. A kept view keeps its whole `data.buffer` alive.
 */
export type FrameSink = (data: Uint8Array, flag: number, offset: number) => void;

/**
 * Splits bytes into length-prefixed frames. A frame that lies within one input chunk is handed on as a `subarray`
 * view of that chunk; a frame that spans chunks is copied once into a buffer of exactly its length.
 *
 * That buffer is allocated when the frame is seen to span chunks (its length known and checked against
 * `maxEventBytes`), and each later chunk is copied straight into it. Keeping the pieces as views and joining them at
 * the end (as `PartialLine` does for NDJSON, where the length is not known in advance) would copy the bytes as often,
 * but hold the pieces and the joined frame at once (twice the frame, briefly) and pin whole input chunks of which the
 * frame may use only a few bytes. The cost of allocating first: a peer that announces a large frame makes us hold its
 * size before sending it, which `maxEventBytes` bounds, as it bounds the frame once received.
 */
export class FrameSplitter {
  readonly #prefixLength: number;
  readonly #max: number;
  readonly #checkFlag: ((flag: number, offset: number) => void) | undefined;
  /** Bytes consumed before the current chunk. */
  #offset = 0;
  /** The prefix bytes seen so far, when a prefix spans chunks. */
  readonly #prefix = new Uint8Array(5);
  #prefixHave = 0;
  /** The frame being assembled across chunks, if any, and how much of it is filled. */
  #body: Uint8Array | undefined;
  #filled = 0;
  /** The current frame's flag and the input offset of its prefix (while a prefix or a frame spans chunks). */
  #flag = 0;
  #frameStart = 0;

  constructor(options: FrameSplitterOptions) {
    const max = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new RangeError(`maxEventBytes must be a non-negative integer, not ${max}`);
    }
    this.#max = max;
    this.#prefixLength = options.flagged ? 5 : 4;
    this.#checkFlag = options.checkFlag;
  }

  /** Bytes consumed so far. */
  get offset(): number {
    return this.#offset;
  }

  /** Passes each frame completed by `chunk` to `sink`, keeping an unfinished one. Throws a {@linkcode DecodeError}. */
  push(chunk: Uint8Array, sink: FrameSink): void {
    const n = chunk.length;
    const base = this.#offset;
    let i = 0;
    const body = this.#body;
    if (body !== undefined) {
      // The frame that began in an earlier chunk.
      const need = body.length - this.#filled;
      if (n < need) {
        body.set(chunk, this.#filled);
        this.#filled += n;
        this.#offset += n;
        return;
      }
      body.set(need === n ? chunk : chunk.subarray(0, need), this.#filled);
      this.#body = undefined;
      this.#filled = 0;
      i = need;
      sink(body, this.#flag, this.#frameStart);
    }
    const p = this.#prefixLength;
    while (i < n) {
      let start: number;
      let flag = 0;
      let length: number;
      if (this.#prefixHave === 0 && n - i >= p) {
        // The whole prefix is in this chunk: the common case.
        start = base + i;
        if (p === 5) {
          flag = chunk[i];
          this.#checkFlag?.(flag, start);
        }
        const at = i + p - 4;
        length = chunk[at] * 0x100_0000 + ((chunk[at + 1] << 16) | (chunk[at + 2] << 8) | chunk[at + 3]);
        i += p;
      } else {
        if (this.#prefixHave === 0) this.#frameStart = base + i;
        start = this.#frameStart;
        while (this.#prefixHave < p && i < n) {
          const b = chunk[i++];
          // A bad flag fails at once, not when the rest of its prefix has arrived.
          if (p === 5 && this.#prefixHave === 0) this.#checkFlag?.(b, start);
          this.#prefix[this.#prefixHave++] = b;
        }
        if (this.#prefixHave < p) break;
        this.#prefixHave = 0;
        const q = this.#prefix;
        if (p === 5) flag = q[0];
        const at = p - 4;
        length = q[at] * 0x100_0000 + ((q[at + 1] << 16) | (q[at + 2] << 8) | q[at + 3]);
      }
      // Checked before anything is allocated or awaited.
      if (length > this.#max) {
        throw new DecodeError(
          "MESSAGE_TOO_LARGE",
          start,
          `message of ${length} bytes is over maxEventBytes (${this.#max} bytes)`,
        );
      }
      if (n - i >= length) {
        sink(chunk.subarray(i, i + length), flag, start);
        i += length;
        continue;
      }
      // The frame spans chunks: one buffer of exactly its length (see the class comment).
      const frame = new Uint8Array(length);
      frame.set(chunk.subarray(i), 0);
      this.#body = frame;
      this.#filled = n - i;
      this.#flag = flag;
      this.#frameStart = start;
      i = n;
    }
    this.#offset += n;
  }

  /** The input has ended: throws `TRUNCATED` (at the unfinished frame's prefix) if it ended inside a frame. */
  finish(): void {
    if (this.#body !== undefined) {
      throw new DecodeError(
        "TRUNCATED",
        this.#frameStart,
        `input ended inside a message (${this.#filled} of ${this.#body.length} bytes)`,
      );
    }
    if (this.#prefixHave > 0) {
      throw new DecodeError(
        "TRUNCATED",
        this.#frameStart,
        `input ended inside a message's prefix (${this.#prefixHave} of ${this.#prefixLength} bytes)`,
      );
    }
  }
}
