/**
 * A bounded byte accumulator for protocol lines that may span input chunks (header lines, trailer lines).
 *
 * @module
 */

/** Collects the bytes of one line across chunks; grows by doubling up to the caller's limit. */
export class LineBuffer {
  #bytes = new Uint8Array(256);
  #length = 0;

  /** Bytes collected so far. */
  get length(): number {
    return this.#length;
  }

  /** Appends `bytes` (the caller has already checked its limit). */
  append(bytes: Uint8Array): void {
    const need = this.#length + bytes.length;
    if (need > this.#bytes.length) {
      let size = this.#bytes.length * 2;
      while (size < need) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(this.#bytes.subarray(0, this.#length));
      this.#bytes = grown;
    }
    this.#bytes.set(bytes, this.#length);
    this.#length = need;
  }

  /** The collected line (a view, valid until the next `append` or `clear`). */
  view(): Uint8Array {
    return this.#bytes.subarray(0, this.#length);
  }

  /** Forgets the collected bytes (and a large buffer with them). */
  clear(): void {
    this.#length = 0;
    if (this.#bytes.length > 4096) this.#bytes = new Uint8Array(256);
  }
}
