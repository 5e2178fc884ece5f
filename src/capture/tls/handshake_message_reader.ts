/**
 * {@linkcode HandshakeMessageReader}: the handshake messages of one direction (RFC 8446 §4, RFC 5246 §7.4) out of the
 * fragments of its handshake records, a message in several records or several in one. Internal.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";

/** Handshake message types. */
export const CLIENT_HELLO = 1;
/** @see {@linkcode CLIENT_HELLO} */
export const SERVER_HELLO = 2;
/** @see {@linkcode CLIENT_HELLO} */
export const NEW_SESSION_TICKET = 4;
/** @see {@linkcode CLIENT_HELLO} */
export const ENCRYPTED_EXTENSIONS = 8;
/** @see {@linkcode CLIENT_HELLO} */
export const FINISHED = 20;
/** @see {@linkcode CLIENT_HELLO} */
export const KEY_UPDATE = 24;

/** The default of `maxHandshakeMessageBytes`: the largest message kept whole (a ClientHello, say) is 64 KiB. */
export const DEFAULT_MAX_HANDSHAKE_MESSAGE_BYTES = 65536;

/** The messages whose body the decryptor reads; the others (certificates, key exchanges, tickets) are skipped. */
const KEPT = new Set([CLIENT_HELLO, SERVER_HELLO, ENCRYPTED_EXTENSIONS, KEY_UPDATE]);

const HEADER_BYTES = 4;

/** One handshake message. */
export interface HandshakeMessage {
  /** Its type (1 ClientHello, 2 ServerHello, ...). */
  readonly type: number;
  /** Its body (without the 4-byte header) for the types the decryptor reads, else undefined (skipped, not kept). */
  readonly body: Uint8Array | undefined;
  /** Where it ends in the fragment that completed it (to tell whether more follows in the same record). */
  readonly end: number;
  /** Offset of the record it started in. */
  readonly recordOffset: number;
}

/**
 * Reassembles handshake messages across records. Bodies are kept only for the types the decryptor reads, each in a
 * buffer of exactly its size, allocated only when its length is within `maxHandshakeMessageBytes` (else a
 * `MESSAGE_TOO_LARGE` fault); skipped messages are counted past, whatever their length.
 */
export class HandshakeMessageReader {
  readonly #maxHandshakeMessageBytes: number;
  readonly #context: string;
  readonly #header = new Uint8Array(HEADER_BYTES);
  #headerFill = 0;
  #type = 0;
  #remaining = 0; // body bytes still to come of the current message (after its header)
  #body: Uint8Array | undefined;
  #bodyFill = 0;
  #inBody = false;
  #startOffset = 0;

  /** A reader whose faults name `context` (e.g. "server-to-client bytes"). */
  constructor(maxHandshakeMessageBytes: number, context: string) {
    this.#maxHandshakeMessageBytes = maxHandshakeMessageBytes;
    this.#context = context;
  }

  /** Whether no message is begun and incomplete. */
  get atBoundary(): boolean {
    return this.#headerFill === 0 && !this.#inBody;
  }

  /** Offset of the record the incomplete message began in (when not `atBoundary`). */
  get partialMessageOffset(): number {
    return this.#startOffset;
  }

  /** The messages that `fragment` (of the record at `recordOffset`) completes, in order. */
  push(fragment: Uint8Array, recordOffset: number): HandshakeMessage[] {
    const messages: HandshakeMessage[] = [];
    let at = 0;
    while (at < fragment.length) {
      if (!this.#inBody) {
        if (this.#headerFill === 0) this.#startOffset = recordOffset;
        const n = Math.min(fragment.length - at, HEADER_BYTES - this.#headerFill);
        this.#header.set(fragment.subarray(at, at + n), this.#headerFill);
        this.#headerFill += n;
        at += n;
        if (this.#headerFill < HEADER_BYTES) break;
        this.#headerFill = 0;
        this.#type = this.#header[0];
        this.#remaining = (this.#header[1] << 16) | (this.#header[2] << 8) | this.#header[3];
        this.#body = undefined;
        if (KEPT.has(this.#type)) {
          if (this.#remaining > this.#maxHandshakeMessageBytes) {
            throw new DecodeError(
              "MESSAGE_TOO_LARGE",
              this.#startOffset,
              `TLS handshake message (type ${this.#type}) of ${this.#remaining} bytes is longer than ` +
                `maxHandshakeMessageBytes (${this.#maxHandshakeMessageBytes})`,
              { context: this.#context },
            );
          }
          this.#body = new Uint8Array(this.#remaining);
          this.#bodyFill = 0;
        }
        this.#inBody = true;
      }
      const n = Math.min(fragment.length - at, this.#remaining);
      if (this.#body !== undefined) {
        this.#body.set(fragment.subarray(at, at + n), this.#bodyFill);
        this.#bodyFill += n;
      }
      this.#remaining -= n;
      at += n;
      if (this.#remaining === 0) {
        this.#inBody = false;
        messages.push({ type: this.#type, body: this.#body, end: at, recordOffset: this.#startOffset });
        this.#body = undefined;
      }
    }
    return messages;
  }
}
