/**
 * {@linkcode ScanBuffer}: the bytes a resync scanner holds while it looks for a place to resume at. Internal.
 *
 * @module
 */

/**
 * A growable buffer of the bytes after a gap not yet passed over: appended to at the end, dropped from the front.
 * Views of it stay valid until the next `append`.
 */
export class ScanBuffer {
  #bytes = new Uint8Array(0);
  #start = 0;
  #end = 0;
  /** Bytes dropped from the front so far. */
  dropped = 0;

  /** The bytes held. */
  get view(): Uint8Array {
    return this.#bytes.subarray(this.#start, this.#end);
  }

  /** How many bytes are held. */
  get length(): number {
    return this.#end - this.#start;
  }

  /** Holds `chunk` after the bytes held. */
  append(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    const held = this.#end - this.#start;
    if (this.#end + chunk.length > this.#bytes.length) {
      if (held + chunk.length <= this.#bytes.length && this.#start >= held) {
        this.#bytes.copyWithin(0, this.#start, this.#end);
      } else {
        const grown = new Uint8Array(Math.max(held + chunk.length, this.#bytes.length * 2, 4096));
        grown.set(this.#bytes.subarray(this.#start, this.#end));
        this.#bytes = grown;
      }
      this.#start = 0;
      this.#end = held;
    }
    this.#bytes.set(chunk, this.#end);
    this.#end += chunk.length;
  }

  /** Drops the first `n` bytes held. */
  drop(n: number): void {
    this.#start += n;
    this.dropped += n;
    if (this.#start === this.#end) this.#start = this.#end = 0;
  }

  /** Hands over the bytes held (a view) and holds none. */
  take(): Uint8Array {
    const view = this.view;
    this.#bytes = new Uint8Array(0);
    this.#start = this.#end = 0;
    return view;
  }
}
