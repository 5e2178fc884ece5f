/**
 * {@linkcode TlsRecordSplitter}: one direction's bytes of a TLS connection, in any chunking, to its records (RFC 8446
 * §5.1, RFC 5246 §6.2). Internal.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";

/** Record content types. */
export const CHANGE_CIPHER_SPEC = 20;
/** @see {@linkcode CHANGE_CIPHER_SPEC} */
export const ALERT = 21;
/** @see {@linkcode CHANGE_CIPHER_SPEC} */
export const HANDSHAKE = 22;
/** @see {@linkcode CHANGE_CIPHER_SPEC} */
export const APPLICATION_DATA = 23;

/**
 * The default of `maxTlsRecordBytes`: the largest record fragment RFC 8446 allows (a TLSCiphertext: 2^14 + 256 bytes).
 */
export const DEFAULT_MAX_TLS_RECORD_BYTES = 16384 + 256;

const HEADER_BYTES = 5;

/** One TLS record. */
export interface TlsRecord {
  /** The content type of its header (20 to 23). */
  readonly type: number;
  /** The protocol version of its header (0x0301 to 0x0303 in practice). */
  readonly version: number;
  /**
   * Its fragment: a view of an input chunk when the record lies within one (`owned` false), else a buffer of its own.
   */
  fragment: Uint8Array;
  /** Whether `fragment` is a buffer of its own rather than a view of an input chunk. */
  owned: boolean;
  /** Offset of its header in the direction's bytes. */
  readonly offset: number;
}

/**
 * Splits a byte stream into TLS records. A header that is not a TLS record header (content type, version) is a
 * `TLS_INVALID` fault, a length over `maxTlsRecordBytes` a `MESSAGE_TOO_LARGE` one, thrown as soon as the header has
 * arrived (after the records before it have been passed on) and placed at the record's offset.
 */
export class TlsRecordSplitter {
  readonly #maxTlsRecordBytes: number;
  readonly #context: string;
  readonly #header = new Uint8Array(HEADER_BYTES);
  #headerFill = 0;
  #body: Uint8Array | undefined;
  #bodyFill = 0;
  #offset = 0;
  #recordOffset = 0;

  /**
   * A splitter whose faults name `context` (e.g. "client-to-server bytes"), whose first byte is byte `startOffset` of
   * the direction (0, or where records follow on again after bytes were lost).
   */
  constructor(maxTlsRecordBytes: number, context: string, startOffset = 0) {
    this.#maxTlsRecordBytes = maxTlsRecordBytes;
    this.#context = context;
    this.#offset = startOffset;
  }

  /** The direction's offset of the next byte: bytes taken so far, from the start offset. */
  get offset(): number {
    return this.#offset;
  }

  /** The offset of a record begun but not complete, or undefined at a record boundary. */
  get partialRecordOffset(): number | undefined {
    return this.#headerFill > 0 || this.#body !== undefined ? this.#recordOffset : undefined;
  }

  /** Splits `chunk`, passing each complete record to `onRecord`. */
  push(chunk: Uint8Array, onRecord: (record: TlsRecord) => void): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.#body !== undefined) {
        const n = Math.min(chunk.length - at, this.#body.length - this.#bodyFill);
        this.#body.set(chunk.subarray(at, at + n), this.#bodyFill);
        this.#bodyFill += n;
        at += n;
        this.#offset += n;
        if (this.#bodyFill === this.#body.length) {
          const fragment = this.#body;
          this.#body = undefined;
          onRecord(this.#record(fragment, true));
        }
        continue;
      }
      if (this.#headerFill === 0 && chunk.length - at >= HEADER_BYTES) {
        // The fast path: the header, and perhaps the whole record, within this chunk.
        this.#recordOffset = this.#offset;
        const length = this.#checkHeader(chunk, at);
        this.#header.set(chunk.subarray(at, at + HEADER_BYTES));
        if (chunk.length - at - HEADER_BYTES >= length) {
          const fragment = chunk.subarray(at + HEADER_BYTES, at + HEADER_BYTES + length);
          at += HEADER_BYTES + length;
          this.#offset += HEADER_BYTES + length;
          onRecord(this.#record(fragment, false));
          continue;
        }
        at += HEADER_BYTES;
        this.#offset += HEADER_BYTES;
        this.#startBody(length);
        continue;
      }
      if (this.#headerFill === 0) this.#recordOffset = this.#offset;
      const n = Math.min(chunk.length - at, HEADER_BYTES - this.#headerFill);
      this.#header.set(chunk.subarray(at, at + n), this.#headerFill);
      this.#headerFill += n;
      at += n;
      this.#offset += n;
      if (this.#headerFill === HEADER_BYTES) {
        this.#headerFill = 0;
        const length = this.#checkHeader(this.#header, 0);
        if (length === 0) onRecord(this.#record(new Uint8Array(0), true));
        else this.#startBody(length);
      }
    }
  }

  /** Waits for a fragment of `length` bytes (at least 1) that spans chunks, in a buffer of exactly its size. */
  #startBody(length: number): void {
    this.#body = new Uint8Array(length);
    this.#bodyFill = 0;
  }

  #record(fragment: Uint8Array, owned: boolean): TlsRecord {
    const h = this.#header;
    return { type: h[0], version: (h[1] << 8) | h[2], fragment, owned, offset: this.#recordOffset };
  }

  /** The fragment length of the header at `bytes[at]`, or a fault if it is no TLS record header or too long. */
  #checkHeader(bytes: Uint8Array, at: number): number {
    const type = bytes[at];
    const length = (bytes[at + 3] << 8) | bytes[at + 4];
    if (type < CHANGE_CIPHER_SPEC || type > APPLICATION_DATA || bytes[at + 1] !== 3 || bytes[at + 2] > 4) {
      const header = Array.from(bytes.subarray(at, at + HEADER_BYTES), (b) => b.toString(16).padStart(2, "0"));
      throw new DecodeError(
        "TLS_INVALID",
        this.#recordOffset,
        `not a TLS record header (bytes ${header.join(" ")}: content type ${type}, version ${bytes[at + 1]}.${
          bytes[at + 2]
        })`,
        { context: this.#context },
      );
    }
    if (length > this.#maxTlsRecordBytes) {
      throw new DecodeError(
        "MESSAGE_TOO_LARGE",
        this.#recordOffset,
        `TLS record of ${length} bytes is longer than maxTlsRecordBytes (${this.#maxTlsRecordBytes})`,
        { context: this.#context },
      );
    }
    return length;
  }
}
