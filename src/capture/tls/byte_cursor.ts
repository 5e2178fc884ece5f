/**
 * {@linkcode ByteCursor}: bounds-checked reads of the fields of a TLS handshake message. Internal.
 *
 * @module
 */

/** Reads big-endian integers and length-prefixed vectors from `bytes`, calling `fail` (which throws) when short. */
export class ByteCursor {
  readonly #bytes: Uint8Array;
  readonly #what: string;
  readonly #fail: (detail: string) => never;
  #at = 0;

  /** A cursor over `bytes`, the body of `what` (a name for messages, e.g. "ServerHello"). */
  constructor(bytes: Uint8Array, what: string, fail: (detail: string) => never) {
    this.#bytes = bytes;
    this.#what = what;
    this.#fail = fail;
  }

  /** Bytes not read yet. */
  get remaining(): number {
    return this.#bytes.length - this.#at;
  }

  /** The next `n` bytes, as a view. */
  bytes(n: number, field: string): Uint8Array {
    if (n > this.remaining) {
      this.#fail(`${this.#what} is too short for its ${field} (${n} bytes wanted, ${this.remaining} left)`);
    }
    const out = this.#bytes.subarray(this.#at, this.#at + n);
    this.#at += n;
    return out;
  }

  /** The next byte. */
  u8(field: string): number {
    return this.bytes(1, field)[0];
  }

  /** The next 2 bytes, big-endian. */
  u16(field: string): number {
    const b = this.bytes(2, field);
    return (b[0] << 8) | b[1];
  }

  /** A vector with a 1- or 2-byte length prefix, as a cursor of its own. */
  vector(lengthBytes: 1 | 2, field: string): ByteCursor {
    const length = lengthBytes === 1 ? this.u8(field) : this.u16(field);
    return new ByteCursor(this.bytes(length, field), `the ${field} of ${this.#what}`, this.#fail);
  }

  /** Fails unless every byte has been read. */
  end(): void {
    if (this.remaining !== 0) this.#fail(`${this.#what} has ${this.remaining} bytes too many`);
  }
}
