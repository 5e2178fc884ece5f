/**
 * {@linkcode RecordProtection}: the record decryption of one direction under one key (TLS 1.3 RFC 8446 §5.2-5.3,
 * TLS 1.2 AES-GCM RFC 5288 and ChaCha20-Poly1305 RFC 7905): nonces from the IV and the record sequence number,
 * additional data from the record header. Internal.
 *
 * @module
 */
import { type AeadOpener, openerFor } from "./aead_opener.ts";
import type { TlsCipherSuite } from "./cipher_suites.ts";

const TAG_BYTES = 16;
const EXPLICIT_NONCE_BYTES = 8;
const TWO_32 = 2 ** 32;

/** Decrypts the records one side sends under one key, in order: the record sequence number counts them. */
export class RecordProtection {
  readonly #suite: TlsCipherSuite;
  readonly #opener: AeadOpener;
  readonly #iv: Uint8Array;
  #sequence = 0;

  /** Protection under `key` and `iv` (TLS 1.3: 12 bytes; TLS 1.2: the AES-GCM salt, 4, or ChaCha20's 12). */
  constructor(suite: TlsCipherSuite, key: Uint8Array, iv: Uint8Array) {
    this.#suite = suite;
    this.#opener = openerFor(suite, key);
    this.#iv = iv;
  }

  /** The smallest protected fragment: the tag, and in TLS 1.2 AES-GCM the explicit nonce; in TLS 1.3 the inner type. */
  get minFragmentBytes(): number {
    if (this.#suite.version === "1.3") return TAG_BYTES + 1;
    return this.#suite.aead === "AES-GCM" ? EXPLICIT_NONCE_BYTES + TAG_BYTES : TAG_BYTES;
  }

  /** The sequence number of the next record to open. */
  get sequence(): number {
    return this.#sequence;
  }

  /**
   * The plaintext of a record (`type`, `version` and `fragment` as in its header; at least `minFragmentBytes`), or
   * undefined if it fails authentication. TLS 1.3: the inner plaintext (content, type, padding). The sequence number
   * advances only when a record opens.
   */
  async open(type: number, version: number, fragment: Uint8Array): Promise<Uint8Array | undefined> {
    const plain = await this.openAt(this.#sequence, type, version, fragment);
    if (plain !== undefined) this.#sequence++;
    return plain;
  }

  /**
   * {@linkcode RecordProtection.open} as the record of sequence number `sequence`, without moving the sequence number:
   * how decryption finds its place again after records were lost (see {@linkcode RecordProtection.resumeAfter}).
   */
  openAt(sequence: number, type: number, version: number, fragment: Uint8Array): Promise<Uint8Array | undefined> {
    return this.#suite.version === "1.3"
      ? this.#opener.open(this.#maskedNonce(sequence), recordHeader(type, version, fragment.length), fragment)
      : this.#openTls12(sequence, type, version, fragment);
  }

  /** The record of sequence number `sequence` has opened (by `openAt`): the next record is the one after it. */
  resumeAfter(sequence: number): void {
    this.#sequence = sequence + 1;
  }

  /**
   * TLS 1.2 AES-GCM: a record's explicit nonce, which senders (OpenSSL, Go, NSS) set to the record's sequence number:
   * a hint worth trying first, never trusted (the sequence number is authenticated, the nonce is not a proof of it).
   * Undefined for the other suites, or a nonce beyond 2^53.
   */
  explicitNonceOf(fragment: Uint8Array): number | undefined {
    if (this.#suite.version !== "1.2" || this.#suite.aead !== "AES-GCM" || fragment.length < EXPLICIT_NONCE_BYTES) {
      return undefined;
    }
    const view = new DataView(fragment.buffer, fragment.byteOffset, EXPLICIT_NONCE_BYTES);
    const high = view.getUint32(0);
    return high >= 2 ** 21 ? undefined : high * TWO_32 + view.getUint32(4);
  }

  #openTls12(sequence: number, type: number, version: number, fragment: Uint8Array): Promise<Uint8Array | undefined> {
    // additional_data = seq_num + TLSCompressed.type + TLSCompressed.version + TLSCompressed.length
    const additionalData = new Uint8Array(13);
    writeSequence(additionalData, 0, sequence);
    additionalData[8] = type;
    additionalData[9] = version >>> 8;
    additionalData[10] = version & 0xff;
    if (this.#suite.aead === "CHACHA20-POLY1305") {
      writeLength(additionalData, 11, fragment.length - TAG_BYTES);
      return this.#opener.open(this.#maskedNonce(sequence), additionalData, fragment);
    }
    // AES-GCM: nonce = 4-byte salt from the key block + the record's 8-byte explicit nonce.
    writeLength(additionalData, 11, fragment.length - EXPLICIT_NONCE_BYTES - TAG_BYTES);
    const nonce = new Uint8Array(12);
    nonce.set(this.#iv);
    nonce.set(fragment.subarray(0, EXPLICIT_NONCE_BYTES), 4);
    return this.#opener.open(nonce, additionalData, fragment.subarray(EXPLICIT_NONCE_BYTES));
  }

  /** The 12-byte IV XOR the 64-bit sequence number, padded on the left (TLS 1.3, and TLS 1.2 ChaCha20-Poly1305). */
  #maskedNonce(sequence: number): Uint8Array {
    const nonce = this.#iv.slice();
    const bytes = new Uint8Array(8);
    writeSequence(bytes, 0, sequence);
    for (let i = 0; i < 8; i++) nonce[4 + i] ^= bytes[i];
    return nonce;
  }
}

function writeSequence(out: Uint8Array, at: number, sequence: number): void {
  const view = new DataView(out.buffer, out.byteOffset + at, 8);
  view.setUint32(0, Math.floor(sequence / TWO_32));
  view.setUint32(4, sequence >>> 0);
}

/** A record header: the additional data of TLS 1.3. */
function recordHeader(type: number, version: number, length: number): Uint8Array {
  const header = new Uint8Array(5);
  header[0] = type;
  header[1] = version >>> 8;
  header[2] = version & 0xff;
  writeLength(header, 3, length);
  return header;
}

function writeLength(out: Uint8Array, at: number, length: number): void {
  out[at] = length >>> 8;
  out[at + 1] = length & 0xff;
}
