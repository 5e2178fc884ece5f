/**
 * The unfinished last line of the input seen so far, kept until it ends.
 *
 * @module
 */

/** Lines up to this size are joined in one buffer reused from line to line; longer ones get a buffer of their own. */
export const REUSED_JOIN_BYTES = 256 * 1024;
/** The least the reused buffer is allocated at, so that slowly growing lines do not reallocate it each time. */
const MIN_JOIN_BUFFER = 4 * 1024;

/**
 * Holds a line that spans input chunks as views of those chunks, not copying them as they come, and joins them once,
 * when the line ends. A growable buffer would copy a long line several times and briefly hold twice its size: for a
 * multi-megabyte event, most of a decoder's memory (bench/RESULTS.md §4).
 *
 * The joined line is only ever decoded to text at once, never kept, so lines up to {@linkcode REUSED_JOIN_BYTES} are
 * joined in one buffer reused from line to line (grown to the longest such line seen, in powers of two): with events
 * of tens of KB about every other one spans reads, and a fresh buffer for each costs more than copying into it (and
 * dead buffers of external memory pile up until the engine's GC runs).
 */
export class PartialLine {
  #pieces: Uint8Array[] = [];
  #length = 0;
  #join: Uint8Array | undefined;

  /** Bytes held. */
  get length(): number {
    return this.#length;
  }

  /** Adds a view of input (kept, not copied: input chunks are not reused once handed to a stream). */
  append(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.#pieces.push(bytes);
    this.#length += bytes.length;
  }

  /**
   * The whole line, then forgets it: the one piece itself, or the pieces joined. Joined bytes may be a view of the
   * reused buffer, valid only until the next call: decode them at once.
   */
  take(): Uint8Array {
    const pieces = this.#pieces;
    const length = this.#length;
    this.#pieces = [];
    this.#length = 0;
    if (pieces.length === 1) return pieces[0];
    const out = length <= REUSED_JOIN_BYTES ? this.#joinBuffer(length) : new Uint8Array(length);
    let at = 0;
    for (const piece of pieces) {
      out.set(piece, at);
      at += piece.length;
    }
    return out;
  }

  /** A view of `length` bytes of the reused buffer, growing it first if needed. */
  #joinBuffer(length: number): Uint8Array {
    if (this.#join === undefined || this.#join.length < length) {
      let size = MIN_JOIN_BUFFER;
      while (size < length) size *= 2;
      this.#join = new Uint8Array(size);
    }
    return this.#join.subarray(0, length);
  }
}
