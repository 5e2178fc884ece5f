/**
 * {@linkcode TlsDirectionState}: what the decryptor keeps for one direction of a connection. Internal.
 *
 * @module
 */
import type { TcpDirection } from "../records.ts";
import { HandshakeMessageReader } from "./handshake_message_reader.ts";
import type { RecordProtection } from "./record_protection.ts";
import type { TlsFault } from "./tls_fault.ts";
import { type TlsRecord, TlsRecordSplitter } from "./tls_record_splitter.ts";
import type { TlsRecordResync } from "./tls_record_resync.ts";

/** Where a direction is: before its hello, after it in plaintext, or decrypting. */
export type TlsDirectionPhase = "hello" | "after-hello" | "encrypted";

/**
 * One direction's reading state: its record splitter and handshake reader, the records that wait (for the other
 * direction's handshake, or in line behind one that does), and its current keys.
 */
export class TlsDirectionState {
  readonly direction: TcpDirection;
  /** How its faults name its bytes: "client-to-server bytes" or "server-to-client bytes". */
  readonly context: string;
  /** Its records; a new one when records follow on again after bytes were lost. */
  splitter: TlsRecordSplitter;
  readonly handshake: HandshakeMessageReader;
  phase: TlsDirectionPhase = "hello";
  /** Records read so far (the first must hold the hello). */
  recordsRead = 0;
  /** The current record protection, once its side encrypts. */
  protection: RecordProtection | undefined;
  /** TLS 1.3: the current traffic secret (for a KeyUpdate). */
  trafficSecret: Uint8Array | undefined;
  /** Whether its side's Finished has been read (application data may follow). */
  finished = false;
  /** TLS 1.3, client: a second ClientHello (after a HelloRetryRequest) has been read. */
  secondHello = false;
  /** TLS 1.3, client: rejected 0-RTT records, which do not open, are skipped until one does. */
  skipUndecryptable = false;
  /** A problem has ended it: nothing more is read or yielded. */
  stopped = false;
  /** Bytes were lost after the handshake: the next record that opens is looked for (see `TlsRecordResync`). */
  resync: TlsRecordResync | undefined;
  /** Its input can no longer be split (a fault in a record header, lost bytes): later bytes are ignored. */
  inputClosed = false;
  readonly #queue: (TlsRecord | TlsFault)[] = [];
  #head = 0;
  #pendingBytes = 0;
  #heldUpTo = 0;

  /** The longest record fragment accepted (`maxTlsRecordBytes`). */
  readonly maxTlsRecordBytes: number;

  constructor(direction: TcpDirection, maxTlsRecordBytes: number, maxHandshakeMessageBytes: number) {
    this.direction = direction;
    this.maxTlsRecordBytes = maxTlsRecordBytes;
    this.context = direction === "client" ? "client-to-server bytes" : "server-to-client bytes";
    this.splitter = new TlsRecordSplitter(maxTlsRecordBytes, this.context);
    this.handshake = new HandshakeMessageReader(maxHandshakeMessageBytes, this.context);
  }

  /** Queues a record (or a fault found in the input) behind those not read yet. */
  enqueue(entry: TlsRecord | TlsFault): void {
    this.#queue.push(entry);
    if (!(entry instanceof Error)) this.#pendingBytes += entry.fragment.length;
  }

  /** The next entry to read, if any. */
  peek(): TlsRecord | TlsFault | undefined {
    return this.#head < this.#queue.length ? this.#queue[this.#head] : undefined;
  }

  /** Drops the entry just read. */
  shift(): void {
    const entry = this.#queue[this.#head++];
    if (!(entry instanceof Error)) this.#pendingBytes -= entry.fragment.length;
    if (this.#head === this.#queue.length) {
      this.#queue.length = 0;
      this.#head = 0;
      this.#heldUpTo = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue.splice(0, this.#head);
      this.#heldUpTo = Math.max(0, this.#heldUpTo - this.#head);
      this.#head = 0;
    }
  }

  /** Whether records wait. */
  get waiting(): boolean {
    return this.#head < this.#queue.length;
  }

  /** Bytes of the records that wait. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /**
   * Copies the fragments of waiting records that are still views of input chunks, so that they stay valid after the
   * push that brought them returns (the caller may reuse its chunk).
   */
  holdWaiting(): void {
    for (let i = Math.max(this.#head, this.#heldUpTo); i < this.#queue.length; i++) {
      const entry = this.#queue[i];
      if (!(entry instanceof Error) && !entry.owned) {
        entry.fragment = entry.fragment.slice();
        entry.owned = true;
      }
    }
    this.#heldUpTo = this.#queue.length;
  }

  /** Ends the direction: drops what waits. */
  stop(): void {
    this.stopped = true;
    this.#queue.length = 0;
    this.#head = 0;
    this.#heldUpTo = 0;
    this.#pendingBytes = 0;
  }
}
