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
  /**
   * For a sink that keeps nothing of a frame's bytes once it returns (it decodes them into values of their own): a
   * frame that spans chunks and is at most this long is assembled in one buffer reused from frame to frame, and handed
   * on as `"borrowed"`. A fresh buffer per frame costs more than copying into it (3-8 us for 32 KB in V8, measured),
   * and most frames of a few tens of KB span reads of 64 KiB. Default 0: each spanning frame gets a buffer of its own.
   * The reused buffer lives as long as the splitter and is as long as the longest such frame (at least 64 KiB, or the
   * smaller of this option and `maxEventBytes`: it never exceeds either).
   */
  reuseBufferUpTo?: number | undefined;
  /**
   * With `reuseBufferUpTo`: also hand the sink, for each frame assembled in the reused buffer, the views of the input
   * chunks it was assembled from (its 5th argument), for a sink that may keep a frame's bytes without copying them
   * (input chunks are not written once handed over, as Web Streams have it). Views of one buffer that follow each
   * other are joined into one; a frame made of more than {@linkcode MAX_FRAME_PIECES} pieces gets none.
   */
  keepPieces?: boolean | undefined;
  /**
   * With `keepPieces`: a frame that goes to the reused buffer is not copied there as its chunks arrive. The sink gets
   * it as `"unfilled"`: `data` is the reused buffer, not yet holding the frame, and `pieces` hold its bytes; the sink
   * reads the pieces, or calls {@linkcode fillFrame} first. For a sink that reads a few bytes of most frames (Kubernetes
   * metadata mode), the copy would cost more than its reading. A frame in more than {@linkcode MAX_FRAME_PIECES}
   * pieces is copied after all, and handed on as `"borrowed"`.
   */
  deferSpanning?: boolean | undefined;
}

/** The most pieces {@linkcode FrameSplitter} hands on for one frame (`keepPieces`); a frame in more has none. */
export const MAX_FRAME_PIECES = 64;

/**
 * Who may use a frame's bytes besides its sink, which decides what a decoder that keeps objects as bytes (Kubernetes
 * metadata mode, unknown kinds) may hold on to:
 * - `"own"`: a buffer of the frame's own that nothing else uses (the framing's copy of a frame that spanned reads):
 *   kept objects may take views of it;
 * - `"chunk"`: part of a stream chunk handed over to the decoder (Web Streams chunks are not written once enqueued):
 *   a kept view keeps the whole chunk alive;
 * - `"borrowed"`: the caller keeps and may reuse the bytes once the sink returns: anything kept must be copied.
 *
 * @example
 * ```ts
 * import { KubernetesProtobufObject } from "watchwire";
 * import { type FrameOwnership, KubernetesProtobufWatchEventDecoder } from "watchwire/kubernetes";
 *
 * const text = (s: string) => [...new TextEncoder().encode(s)];
 * const typeMeta = [0x0a, 4, ...text("x/v1"), 0x12, 6, ...text("Widget")]; // a kind the decoders do not know
 * const envelope = [...text("k8s\0"), 0x0a, typeMeta.length, ...typeMeta, 0x12, 5, 0x0a, 3, 0x0a, 1, ...text("w")];
 * const frame = Uint8Array.of(0x0a, 5, ...text("ADDED"), 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope);
 * const decoder = new KubernetesProtobufWatchEventDecoder();
 * // "own": `frame` is ours alone, so the object's raw bytes may be a view of it; "borrowed" (the default): a copy.
 * for (const ownership of ["own", "borrowed"] satisfies FrameOwnership[]) {
 *   const { object } = decoder.decode(frame, 0, ownership);
 *   if (object instanceof KubernetesProtobufObject) console.log(ownership, object.raw.buffer === frame.buffer);
 * } // own true, then borrowed false
 * ```
 */
export type FrameOwnership = "own" | "chunk" | "borrowed";

/**
 * Receives one frame: its bytes, its flag (0 when unflagged), the input offset of its prefix, who owns `data`, and
 * (with `keepPieces`, for a frame assembled in the reused buffer) the views of the input chunks that hold its bytes.
 */
export type FrameSink = (
  data: Uint8Array,
  flag: number,
  offset: number,
  ownership: FrameOwnership | "unfilled",
  pieces?: readonly Uint8Array[],
) => void;

/** Copies `pieces` one after the other into `frame` (an `"unfilled"` frame: see `deferSpanning`); returns `frame`. */
export function fillFrame(frame: Uint8Array, pieces: readonly Uint8Array[]): Uint8Array {
  let at = 0;
  for (const piece of pieces) {
    frame.set(piece, at);
    at += piece.length;
  }
  return frame;
}

/** The least a reused assembly buffer is allocated at, so that slowly growing frames do not reallocate it each time. */
const MIN_REUSED_BUFFER = 64 * 1024;

/**
 * Splits bytes into length-prefixed frames. A frame that lies within one input chunk is handed on as a `subarray`
 * view of that chunk; a frame that spans chunks is copied once into a buffer of exactly its length (or, with
 * `reuseBufferUpTo`, into a buffer reused from frame to frame).
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
  /** Spanning frames up to this long go into {@linkcode #reused}. */
  readonly #reuseUpTo: number;
  #reused: Uint8Array | undefined;
  /** Whether {@linkcode #body} is a view of {@linkcode #reused}. */
  #bodyReused = false;
  readonly #keepPieces: boolean;
  /** With `keepPieces`: the views of the input that hold the frame being assembled in the reused buffer. */
  #pieces: Uint8Array[] | undefined;
  readonly #deferSpanning: boolean;
  /** Whether the frame being assembled is only in {@linkcode #pieces} so far (`deferSpanning`). */
  #deferred = false;

  constructor(options: FrameSplitterOptions) {
    const max = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new RangeError(`maxEventBytes must be a non-negative integer, not ${max}`);
    }
    this.#max = max;
    this.#prefixLength = options.flagged ? 5 : 4;
    this.#checkFlag = options.checkFlag;
    const reuseUpTo = options.reuseBufferUpTo ?? 0;
    if (!Number.isSafeInteger(reuseUpTo) || reuseUpTo < 0) {
      throw new RangeError(`reuseBufferUpTo must be a non-negative integer, not ${reuseUpTo}`);
    }
    // Never above `maxEventBytes`: the reused buffer is never larger than a frame may be.
    this.#reuseUpTo = Math.min(reuseUpTo, max);
    this.#keepPieces = options.keepPieces ?? false;
    this.#deferSpanning = this.#keepPieces && (options.deferSpanning ?? false);
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
      // Pieces first: one too many copies the deferred ones (#addPiece), then this one is copied as usual.
      if (n < need) {
        if (this.#pieces !== undefined) this.#addPiece(chunk);
        if (!this.#deferred) body.set(chunk, this.#filled);
        this.#filled += n;
        this.#offset += n;
        return;
      }
      const last = need === n ? chunk : chunk.subarray(0, need);
      if (this.#pieces !== undefined) this.#addPiece(last);
      if (!this.#deferred) body.set(last, this.#filled);
      const pieces = this.#pieces;
      const ownership = this.#deferred ? "unfilled" : this.#bodyReused ? "borrowed" : "own";
      this.#body = undefined;
      this.#pieces = undefined;
      this.#deferred = false;
      this.#filled = 0;
      i = need;
      sink(body, this.#flag, this.#frameStart, ownership, pieces);
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
        sink(chunk.subarray(i, i + length), flag, start, "chunk");
        i += length;
        continue;
      }
      // The frame spans chunks: one buffer of exactly its length (see the class comment), or the reused one.
      let frame: Uint8Array;
      if (length <= this.#reuseUpTo) {
        let reused = this.#reused;
        if (reused === undefined || reused.length < length) {
          reused = this.#reused = new Uint8Array(Math.max(length, Math.min(MIN_REUSED_BUFFER, this.#reuseUpTo)));
        }
        frame = reused.subarray(0, length);
        this.#bodyReused = true;
      } else {
        frame = new Uint8Array(length);
        this.#bodyReused = false;
      }
      const first = chunk.subarray(i);
      if (this.#bodyReused && this.#keepPieces) {
        this.#pieces = [];
        if (first.length > 0) this.#pieces.push(first);
        this.#deferred = this.#deferSpanning;
      }
      if (!this.#deferred) frame.set(first, 0);
      this.#body = frame;
      this.#filled = n - i;
      this.#flag = flag;
      this.#frameStart = start;
      i = n;
    }
    this.#offset += n;
  }

  /** Adds a view of the input to {@linkcode #pieces}: joined to the last one when it follows it in one buffer. */
  #addPiece(view: Uint8Array): void {
    const pieces = this.#pieces!;
    const k = pieces.length - 1;
    const last = pieces[k];
    if (last !== undefined && last.buffer === view.buffer && last.byteOffset + last.length === view.byteOffset) {
      pieces[k] = new Uint8Array(last.buffer, last.byteOffset, last.length + view.length);
    } else if (pieces.length === MAX_FRAME_PIECES) {
      // Too many to be worth keeping: the frame is copied after all (the sink copies what it keeps).
      if (this.#deferred) fillFrame(this.#body!, pieces);
      this.#deferred = false;
      this.#pieces = undefined;
    } else {
      pieces.push(view);
    }
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
