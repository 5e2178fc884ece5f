/**
 * {@linkcode BytePool}: copies of small byte ranges, carved out of shared blocks. Internal.
 *
 * @module
 */

/** Block size of a {@linkcode BytePool}. */
export const POOL_BLOCK_BYTES = 32 * 1024;
/** Largest copy a {@linkcode BytePool} puts in a shared block; larger ones get a buffer of their own. */
export const POOL_MAX_COPY_BYTES = 8 * 1024;

/**
 * Copies byte ranges that must outlive their input (the bytes a lazy object keeps), the way Node's `Buffer` pool does:
 * a copy of up to 8 KiB is carved out of a shared 32 KiB block, larger ones get a buffer of exactly their size: a new
 * buffer costs more than the copy into it, and much of what a metadata-only event costs. What a kept copy keeps
 * alive: its block, 32 KiB, or its own bytes; hence the bound a lazy object's views of the input are held to as well,
 * four times its size plus 32 KiB. A block is never written again once full, so no copy ever changes.
 * Kept: metadata mode's real-server decode rows (bench/RESULTS.md §11, "What each optimisation mechanism buys").
 */
export class BytePool {
  #block = new Uint8Array(0);
  #used = 0;

  /** A copy of `bytes[start..end)` that shares nothing with `bytes`. */
  copy(bytes: Uint8Array, start: number, end: number): Uint8Array {
    const n = end - start;
    if (n > POOL_MAX_COPY_BYTES) return bytes.slice(start, end);
    if (this.#used + n > this.#block.length) {
      this.#block = new Uint8Array(POOL_BLOCK_BYTES);
      this.#used = 0;
    }
    const at = this.#used;
    this.#block.set(bytes.subarray(start, end), at);
    this.#used = at + n;
    return this.#block.subarray(at, at + n);
  }
}
