/**
 * The unfinished last line of the input seen so far, kept until it ends.
 *
 * @module
 */
import { concatBytes } from "../bytes.ts";

/**
 * Holds a line that spans input chunks as views of those chunks, not copying them as they come, and joins them once,
 * into a buffer of exactly the line's size, when the line ends. A growable buffer would copy a long line several
 * times and briefly hold twice its size: for a multi-megabyte event, most of a decoder's memory (measured in
 * bench/RESULTS.md, section 4).
 */
export class PartialLine {
  #pieces: Uint8Array[] = [];
  #length = 0;

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

  /** The whole line: the one piece itself, or the pieces joined. Then forgets them. */
  take(): Uint8Array {
    const pieces = this.#pieces;
    const length = this.#length;
    this.#pieces = [];
    this.#length = 0;
    return concatBytes(pieces, length);
  }
}
