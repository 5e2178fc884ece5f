/**
 * {@linkcode TlsConnectionDecryptor}: the two byte streams of one captured TLS connection and a key log to the
 * application data of each direction, the handshake's parameters, alerts and problems. Internal.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { TcpDirection } from "../records.ts";
import { alertDescriptionName } from "./alert_descriptions.ts";
import { cipherSuiteName, supportedCipherSuite, type TlsCipherSuite, type TlsVersion } from "./cipher_suites.ts";
import {
  CLIENT_HELLO,
  DEFAULT_MAX_HANDSHAKE_MESSAGE_BYTES,
  ENCRYPTED_EXTENSIONS,
  FINISHED,
  type HandshakeMessage,
  KEY_UPDATE,
  SERVER_HELLO,
} from "./handshake_message_reader.ts";
import {
  type ClientHelloInfo,
  type EncryptedExtensionsInfo,
  readClientHello,
  readEncryptedExtensions,
  readServerHello,
  type ServerHelloInfo,
} from "./hello_messages.ts";
import { bytesToHex, type KeyLog, type TlsSecrets } from "./key_log.ts";
import { RecordProtection } from "./record_protection.ts";
import { type Tls12KeyBlock, tls12KeyBlock } from "./tls12_key_block.ts";
import { nextTrafficSecret, trafficKeys } from "./tls13_key_schedule.ts";
import { TlsDirectionState } from "./tls_direction_state.ts";
import type { TlsEvent, TlsProblemReason } from "./tls_events.ts";
import { TlsFault } from "./tls_fault.ts";
import { TlsRecordResync, type TlsResyncCandidate } from "./tls_record_resync.ts";
import {
  ALERT,
  APPLICATION_DATA,
  CHANGE_CIPHER_SPEC,
  DEFAULT_MAX_TLS_RECORD_BYTES,
  HANDSHAKE,
  type TlsRecord,
  TlsRecordSplitter,
} from "./tls_record_splitter.ts";

/** Options of {@linkcode TlsConnectionDecryptor}. */
export interface TlsConnectionDecryptorOptions {
  /**
   * The longest TLS record fragment accepted, in bytes (a capture file's own records are bounded by `maxRecordBytes`).
   * Default {@linkcode DEFAULT_MAX_TLS_RECORD_BYTES} (2^14 + 256, RFC 8446's ciphertext limit).
   */
  maxTlsRecordBytes?: number;
  /**
   * The longest handshake message read whole (hellos, EncryptedExtensions), in bytes. Default
   * {@linkcode DEFAULT_MAX_HANDSHAKE_MESSAGE_BYTES} (64 KiB).
   */
  maxHandshakeMessageBytes?: number;
  /**
   * The most bytes of one direction's records that may wait for the other direction's handshake (when the capture
   * delivers, say, a direction's encrypted records before the hello they depend on), in bytes. Default
   * {@linkcode DEFAULT_MAX_PENDING_BYTES} (1 MiB).
   */
  maxPendingBytes?: number;
  /**
   * After bytes of a direction were lost (a TCP gap) past its handshake, decryption looks for the next record that
   * opens: each plausible record header after the gap is tried under the sequence numbers from the one expected next
   * upward, as many as records could have been lost (skipped bytes / the smallest record + 1), but at most this many.
   * 0: a gap ends the direction's decryption. Default {@linkcode DEFAULT_MAX_RESYNC_RECORDS} (1024).
   */
  maxResyncRecords?: number;
}

/** The default of `maxResyncRecords`. */
export const DEFAULT_MAX_RESYNC_RECORDS = 1024;

/** Plausible record headers after a gap that may fail to open before decryption of the direction gives up. */
const MAX_RESYNC_CANDIDATES = 8;

const RECORD_HEADER_BYTES = 5;

/** The default of `maxPendingBytes`. */
export const DEFAULT_MAX_PENDING_BYTES = 1024 * 1024;

/** The largest TLS 1.3 inner plaintext: 2^14 bytes of content and its content type (RFC 8446 §5.2). */
const MAX_INNER_PLAINTEXT_BYTES = 16384 + 1;

type Emit = (event: TlsEvent) => void;

/**
 * Decrypts one TLS 1.2 or 1.3 connection from the bytes of its two directions (as a TCP reassembly delivers them: each
 * direction in order, in any chunking, the two interleaved in any way) and a {@linkcode KeyLog}.
 *
 * - Yields a `handshake` event once (before any `data`), `data` events (each direction's plaintext, in order),
 *   `alert` events, and `problem` events: after a problem its direction, or the whole connection, yields nothing
 *   more. Before the handshake event every problem ends the whole connection.
 * - Each direction's keys come from the key log (TLS 1.2: the master secret; TLS 1.3: each side's traffic secrets),
 *   so each direction decrypts on its own; what one direction needs of the other (the client random of the
 *   ClientHello, the suite of the ServerHello) it waits for, holding its records (up to `maxPendingBytes`). So the
 *   events of each direction do not depend on how the two directions are interleaved, nor on the chunking.
 * - Suites: TLS 1.3 TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256; TLS 1.2 the
 *   (EC)DHE and RSA key exchanges with AES-GCM and ChaCha20-Poly1305. Not: CBC or CCM suites, renegotiation, 0-RTT
 *   data (a rejected attempt's records are skipped, as the server skips them).
 * - The key log is consulted once both hellos are known (and, for each later secret, when it is needed): a line added
 *   later than that does not help this connection.
 * - Lost bytes (a TCP gap, {@linkcode TlsConnectionDecryptor.gap}) during the handshake end the direction (a
 *   `problem`). After it (AEAD records of the application data phase, TLS 1.2 and 1.3), the direction's plaintext
 *   stops there (a `lost` event) and decryption resumes at the next record that opens (a `resync` event, then its
 *   `data`): the bytes after the gap are scanned for a plausible record header (content type 23, version 0x0303, a
 *   length within `maxTlsRecordBytes`; TLS 1.2 also an alert's), and its record is opened under the sequence numbers
 *   from the one expected next upward (as many as the skipped bytes could have held, at most `maxResyncRecords`; TLS
 *   1.2 AES-GCM tries the record's explicit nonce first); if none opens, the next plausible header is tried, and after
 *   8 that do not, the direction ends with a `problem`. Nothing that fails authentication is ever handed on. A key
 *   update lost in the gap is not recovered.
 *
 * Each call returns a promise (WebCrypto decrypts asynchronously); calls are taken in order, whether or not the
 * caller waits for each, and each call's events go to its `emit` before its promise resolves.
 */
export class TlsConnectionDecryptor {
  readonly #keyLog: KeyLog;
  readonly #maxPendingBytes: number;
  readonly #maxResyncRecords: number;
  readonly #client: TlsDirectionState;
  readonly #server: TlsDirectionState;
  #clientHello: ClientHelloInfo | undefined;
  #serverHello: ServerHelloInfo | undefined;
  #serverHelloOffset = 0;
  #suite: TlsCipherSuite | undefined;
  #helloRetry = false;
  #secrets: TlsSecrets | undefined;
  #keyBlock: Tls12KeyBlock | undefined;
  #encryptedExtensions: EncryptedExtensionsInfo | undefined;
  #announced = false;
  #connectionFailed = false;
  #ended = false;
  #work: Promise<void> = Promise.resolve();

  /** A decryptor reading keys from `keyLog` (which may still be added to). */
  constructor(keyLog: KeyLog, options: TlsConnectionDecryptorOptions = {}) {
    this.#keyLog = keyLog;
    const maxTlsRecordBytes = limit(options.maxTlsRecordBytes, DEFAULT_MAX_TLS_RECORD_BYTES, "maxTlsRecordBytes");
    const maxHandshakeMessageBytes = limit(
      options.maxHandshakeMessageBytes,
      DEFAULT_MAX_HANDSHAKE_MESSAGE_BYTES,
      "maxHandshakeMessageBytes",
    );
    this.#maxPendingBytes = limit(options.maxPendingBytes, DEFAULT_MAX_PENDING_BYTES, "maxPendingBytes");
    this.#maxResyncRecords = limit(options.maxResyncRecords, DEFAULT_MAX_RESYNC_RECORDS, "maxResyncRecords");
    this.#client = new TlsDirectionState("client", maxTlsRecordBytes, maxHandshakeMessageBytes);
    this.#server = new TlsDirectionState("server", maxTlsRecordBytes, maxHandshakeMessageBytes);
  }

  /** Takes the next bytes `direction` sent. `bytes` may be reused once the promise resolves. */
  push(direction: TcpDirection, bytes: Uint8Array, emit: Emit): Promise<void> {
    return this.#serially(() => this.#push(direction, bytes, emit));
  }

  /**
   * `length` bytes of `direction` are missing from the capture (a TCP gap): after the handshake, decryption resumes at
   * the next record that opens (a `lost` event now, a `resync` event then); during it, the direction is read no
   * further (a `problem`).
   */
  gap(direction: TcpDirection, length: number, emit: Emit): Promise<void> {
    return this.#serially(() => {
      const state = this.#state(direction);
      if (state.stopped || state.inputClosed || this.#ended) return Promise.resolve();
      if (state.resync !== undefined) {
        emit({ kind: "lost", direction, streamOffset: state.resync.offset, length });
        state.resync.lose(length);
        return Promise.resolve();
      }
      if (this.#canResync(state)) {
        const at = state.splitter.offset;
        const lastRecordEnd = state.splitter.partialRecordOffset ?? at;
        const minFragmentBytes = state.protection!.minFragmentBytes;
        // TLS 1.2 shows an alert's content type, and its protected length (the alert's 2 bytes and the overhead).
        const alertBytes = this.#suite!.version === "1.2" ? minFragmentBytes + 2 : 0;
        state.resync = new TlsRecordResync(
          at + length,
          lastRecordEnd,
          minFragmentBytes,
          state.maxTlsRecordBytes,
          alertBytes,
        );
        emit({ kind: "lost", direction, streamOffset: at, length });
        return Promise.resolve();
      }
      state.inputClosed = true;
      const error = new DecodeError(
        "TLS_INVALID",
        state.splitter.offset,
        `${length} bytes are missing from the capture: the rest of this direction cannot be decrypted`,
        { context: state.context },
      );
      state.enqueue(new TlsFault("lost-bytes", error));
      return this.#run(emit);
    });
  }

  /** Both directions have ended: reports what is left unread (a record cut short, records that still wait). */
  end(emit: Emit): Promise<void> {
    return this.#serially(async () => {
      if (this.#ended) return;
      this.#ended = true;
      for (const state of [this.#client, this.#server]) {
        const resync = state.resync;
        if (resync !== undefined && !state.stopped) {
          // The last candidates, whose lengths run past the end, are no records: those after them may be.
          const after = await this.#resync(state, resync, new Uint8Array(0), emit, true);
          if (state.stopped) continue;
          if (after === undefined) {
            state.resync = undefined;
            // Bytes came after the gap and none of them decrypted: say so (a gap at the very end needs no word).
            if (resync.received > 0) this.#fail(state, this.#notResynced(state, resync), emit);
            continue;
          }
          try {
            state.splitter.push(after, (record) => state.enqueue(record));
          } catch (error) {
            if (!(error instanceof DecodeError)) throw error;
            state.inputClosed = true;
            state.enqueue(new TlsFault(error.code === "MESSAGE_TOO_LARGE" ? "too-large" : "malformed", error));
          }
        }
        const partial = state.splitter.partialRecordOffset;
        if (state.stopped || state.inputClosed || partial === undefined) continue;
        const error = new DecodeError("TRUNCATED", partial, "the bytes end inside a TLS record", {
          context: state.context,
        });
        state.enqueue(new TlsFault("truncated", error));
      }
      await this.#run(emit);
      for (const state of [this.#client, this.#server]) {
        if (state.stopped) continue;
        const next = state.peek();
        if (next !== undefined) {
          this.#fail(
            state,
            this.#waitedInVain(state, next instanceof TlsFault ? next.error.offset : next.offset),
            emit,
          );
        } else if (!state.handshake.atBoundary) {
          const error = new DecodeError(
            "TRUNCATED",
            state.handshake.partialMessageOffset,
            "the bytes end inside a TLS handshake message",
            { context: state.context },
          );
          this.#fail(state, new TlsFault("truncated", error), emit);
        }
      }
    });
  }

  #serially(step: () => Promise<void>): Promise<void> {
    const run = this.#work.then(step);
    this.#work = run.catch(() => {});
    return run;
  }

  #state(direction: TcpDirection): TlsDirectionState {
    return direction === "client" ? this.#client : this.#server;
  }

  async #push(direction: TcpDirection, bytes: Uint8Array, emit: Emit): Promise<void> {
    const state = this.#state(direction);
    if (state.stopped || state.inputClosed || this.#ended) return;
    if (state.resync !== undefined) {
      const after = await this.#resync(state, state.resync, bytes, emit);
      if (after === undefined || state.stopped) return;
      bytes = after;
    }
    try {
      state.splitter.push(bytes, (record) => state.enqueue(record));
    } catch (error) {
      if (!(error instanceof DecodeError)) throw error;
      state.inputClosed = true;
      state.enqueue(new TlsFault(error.code === "MESSAGE_TOO_LARGE" ? "too-large" : "malformed", error));
    }
    await this.#run(emit);
    for (const s of [this.#client, this.#server]) {
      if (s.stopped) continue;
      s.holdWaiting();
      if (s.pendingBytes > this.#maxPendingBytes) {
        const next = s.peek()!;
        const error = new DecodeError(
          "MESSAGE_TOO_LARGE",
          next instanceof TlsFault ? next.error.offset : next.offset,
          `more than maxPendingBytes (${this.#maxPendingBytes}) of records wait for the other direction's handshake`,
          { context: s.context },
        );
        this.#fail(s, new TlsFault("too-large", error), emit);
      }
    }
  }

  /** Reads the waiting records of both directions until neither can go on. */
  async #run(emit: Emit): Promise<void> {
    for (let progressed = true; progressed;) {
      progressed = false;
      for (const state of [this.#client, this.#server]) {
        for (let entry = state.peek(); entry !== undefined && !state.stopped; entry = state.peek()) {
          try {
            if (entry instanceof TlsFault) throw this.#placeInputFault(state, entry);
            if ((await this.#read(state, entry, emit)) === "wait") break;
            state.recordsRead++;
            state.shift();
          } catch (error) {
            if (!(error instanceof TlsFault)) throw error;
            this.#fail(state, error, emit);
          }
          progressed = true;
        }
      }
    }
  }

  /** A fault of the input itself; at the very first record it means the capture holds no handshake. */
  #placeInputFault(state: TlsDirectionState, fault: TlsFault): TlsFault {
    if (state.recordsRead > 0 || fault.error.offset !== 0 || fault.reason !== "malformed") return fault;
    return this.#noHandshake(state, `its first bytes are not a TLS record (${fault.error.detail})`);
  }

  #fail(state: TlsDirectionState, fault: TlsFault, emit: Emit): void {
    const whole = fault.wholeConnection || !this.#announced;
    if (whole) {
      if (this.#connectionFailed) return;
      this.#connectionFailed = true;
      this.#client.stop();
      this.#server.stop();
    } else {
      state.stop();
    }
    emit({
      kind: "problem",
      direction: whole ? undefined : state.direction,
      reason: fault.reason,
      error: fault.error,
      message: fault.error.message,
    });
  }

  #fault(state: TlsDirectionState, reason: TlsProblemReason, offset: number, detail: string): TlsFault {
    return new TlsFault(reason, new DecodeError("TLS_INVALID", offset, detail, { context: state.context }));
  }

  /** Reads one record; "wait" when it needs what the other direction has not told yet. */
  #read(state: TlsDirectionState, record: TlsRecord, emit: Emit): Promise<"wait" | "done"> | "wait" | "done" {
    if (state.phase === "hello") {
      if (state.direction === "client") this.#readClientHelloRecord(state, record, emit);
      else this.#readServerHelloRecord(state, record, emit);
      return "done";
    }
    // The client's records after its hello need the server's suite; the handshake event comes before any data.
    if (state.direction === "client" && !this.#announced) return "wait";
    return this.#suite!.version === "1.3" ? this.#readTls13(state, record, emit) : this.#readTls12(state, record, emit);
  }

  #noHandshake(state: TlsDirectionState, why: string): TlsFault {
    const hello = state.direction === "client" ? "ClientHello" : "ServerHello";
    const error = new DecodeError(
      "TLS_INVALID",
      0,
      `the ${state.direction}'s bytes do not start with a TLS ${hello}: ${why} (a capture that started ` +
        `mid-connection?)`,
      { context: state.context },
    );
    return new TlsFault("no-handshake", error, true);
  }

  /** Checks that a direction's first record opens its hello (`type`): the handshake is in the capture. */
  #checkFirstRecord(state: TlsDirectionState, record: TlsRecord, type: number): void {
    if (state.recordsRead > 0) return;
    const name = (t: number) => t === CLIENT_HELLO ? "a ClientHello" : t === SERVER_HELLO ? "a ServerHello" : "";
    if (record.type !== HANDSHAKE) {
      throw this.#noHandshake(state, `its first record is of content type ${record.type}, not a handshake`);
    }
    const first = record.fragment[0];
    if (record.fragment.length === 0 || first !== type) {
      const swapped = first === (type === CLIENT_HELLO ? SERVER_HELLO : CLIENT_HELLO);
      throw this.#noHandshake(
        state,
        swapped
          ? `it starts with ${name(first)} (client and server swapped?)`
          : `its first handshake message is of type ${first}`,
      );
    }
  }

  #readClientHelloRecord(state: TlsDirectionState, record: TlsRecord, emit: Emit): void {
    this.#checkFirstRecord(state, record, CLIENT_HELLO);
    if (record.type !== HANDSHAKE) {
      throw this.#fault(state, "malformed", record.offset, "a record of another type inside the ClientHello");
    }
    for (const message of this.#handshakeMessages(state, record, record.fragment)) {
      if (this.#clientHello !== undefined) {
        throw this.#fault(state, "malformed", record.offset, "a handshake message after the ClientHello, unanswered");
      }
      this.#clientHello = readClientHello(message.body!, (detail) => {
        throw this.#fault(state, "malformed", message.recordOffset, detail);
      });
      state.phase = "after-hello";
    }
    this.#announceWhenKnown(emit);
  }

  #readServerHelloRecord(state: TlsDirectionState, record: TlsRecord, emit: Emit): void {
    if (record.type === ALERT && record.fragment.length === 2) {
      this.#alert(state, record.fragment, record, emit); // a refusal, before any ServerHello
      return;
    }
    if (record.type === CHANGE_CIPHER_SPEC && this.#helloRetry) return; // compatibility mode (RFC 8446 §D.4)
    this.#checkFirstRecord(state, record, SERVER_HELLO);
    if (record.type !== HANDSHAKE) {
      throw this.#fault(
        state,
        "malformed",
        record.offset,
        `a record of content type ${record.type} before the ServerHello`,
      );
    }
    for (const message of this.#handshakeMessages(state, record, record.fragment)) {
      if (state.phase !== "hello") continue; // TLS 1.2: the rest of the server's first flight (certificate, ...)
      if (message.type !== SERVER_HELLO) {
        throw this.#fault(
          state,
          "malformed",
          message.recordOffset,
          `handshake message ${message.type} before the ServerHello`,
        );
      }
      const hello = readServerHello(message.body!, (detail) => {
        throw this.#fault(state, "malformed", message.recordOffset, detail);
      });
      if (hello.helloRetry) {
        if (this.#helloRetry) throw this.#fault(state, "malformed", message.recordOffset, "a second HelloRetryRequest");
        this.#helloRetry = true;
        continue;
      }
      this.#acceptServerHello(state, hello, message.recordOffset);
      state.phase = "after-hello";
      if (this.#suite!.version === "1.3" && message.end !== record.fragment.length) {
        throw this.#fault(state, "malformed", record.offset, "handshake data after the ServerHello in its record");
      }
    }
    this.#announceWhenKnown(emit);
  }

  #acceptServerHello(state: TlsDirectionState, hello: ServerHelloInfo, offset: number): void {
    const version: TlsVersion | undefined = hello.version === 0x0304
      ? "1.3"
      : hello.version === 0x0303
      ? "1.2"
      : undefined;
    const connectionFault = (detail: string) =>
      new TlsFault(
        "unsupported",
        new DecodeError("TLS_INVALID", offset, detail, { context: state.context }),
        true,
      );
    if (version === undefined) {
      const names: Record<number, string> = { 0x0300: "SSL 3.0", 0x0301: "TLS 1.0", 0x0302: "TLS 1.1" };
      const name = names[hello.version] ?? `version 0x${hello.version.toString(16).padStart(4, "0")}`;
      throw connectionFault(`the server chose ${name}; only TLS 1.2 and 1.3 are decrypted`);
    }
    const suite = supportedCipherSuite(hello.cipherSuite);
    if (suite === undefined) {
      throw connectionFault(
        `the server chose ${cipherSuiteName(hello.cipherSuite)}, a cipher suite that is not supported ` +
          "(only AES-GCM and ChaCha20-Poly1305 suites are decrypted)",
      );
    }
    if (suite.version !== version) {
      throw this.#fault(state, "malformed", offset, `the server chose ${suite.name} for TLS ${version}`);
    }
    this.#serverHello = hello;
    this.#serverHelloOffset = offset;
    this.#suite = suite;
  }

  /**
   * Once both hellos are known: finds the connection's secrets (TLS 1.2: derives the key block); then, with TLS 1.2
   * at once and with TLS 1.3 once the EncryptedExtensions are read, yields the handshake event.
   */
  #announceWhenKnown(emit: Emit): void {
    const clientHello = this.#clientHello;
    const serverHello = this.#serverHello;
    const suite = this.#suite;
    if (this.#announced || clientHello === undefined || serverHello === undefined || suite === undefined) return;
    if (this.#secrets === undefined) {
      const secrets = this.#keyLog.secretsFor(clientHello.random);
      const usable = secrets !== undefined &&
        (suite.version === "1.2"
          ? secrets.masterSecret !== undefined
          : secrets.clientHandshakeTrafficSecret !== undefined || secrets.serverHandshakeTrafficSecret !== undefined ||
            secrets.clientTrafficSecret0 !== undefined || secrets.serverTrafficSecret0 !== undefined);
      if (secrets === undefined || !usable) {
        const wanted = suite.version === "1.2" ? "CLIENT_RANDOM line (master secret)" : "TLS 1.3 traffic secrets";
        // Placed at the ServerHello whichever direction got here first, so that it reads the same in any interleaving.
        const error = new DecodeError(
          "TLS_INVALID",
          this.#serverHelloOffset,
          `the key log has no ${wanted} for client random ${bytesToHex(clientHello.random)}`,
          { context: this.#server.context },
        );
        throw new TlsFault("no-key", error, true);
      }
      this.#secrets = secrets;
      if (suite.version === "1.2") {
        this.#keyBlock = tls12KeyBlock(suite, secrets.masterSecret!, clientHello.random, serverHello.random);
      }
    }
    const alpn = suite.version === "1.2" ? serverHello.alpn : this.#encryptedExtensions?.alpn;
    if (suite.version === "1.3" && this.#encryptedExtensions === undefined) return;
    this.#announced = true;
    emit({
      kind: "handshake",
      version: suite.version,
      cipherSuite: suite.name,
      cipherSuiteId: suite.id,
      alpn,
      serverName: clientHello.serverName,
      clientRandom: bytesToHex(clientHello.random),
      helloRetry: this.#helloRetry,
    });
  }

  #handshakeMessages(state: TlsDirectionState, record: TlsRecord, fragment: Uint8Array): HandshakeMessage[] {
    try {
      return state.handshake.push(fragment, record.offset);
    } catch (error) {
      if (!(error instanceof DecodeError)) throw error;
      throw new TlsFault("too-large", error);
    }
  }

  async #readTls13(state: TlsDirectionState, record: TlsRecord, emit: Emit): Promise<"wait" | "done"> {
    if (
      state.direction === "client" && this.#clientHello!.offersEarlyData && this.#encryptedExtensions?.acceptsEarlyData
    ) {
      throw this.#fault(state, "unsupported", record.offset, "the server accepted 0-RTT data, which is not decrypted");
    }
    switch (record.type) {
      case CHANGE_CIPHER_SPEC:
        this.#checkChangeCipherSpec(state, record);
        return "done"; // compatibility mode (RFC 8446 §D.4): no meaning in TLS 1.3
      case ALERT:
        this.#alert(state, record.fragment, record, emit);
        return "done";
      case HANDSHAKE:
        if (state.direction === "client" && this.#helloRetry && !state.secondHello && state.protection === undefined) {
          for (const message of this.#handshakeMessages(state, record, record.fragment)) {
            if (message.type !== CLIENT_HELLO) {
              throw this.#fault(
                state,
                "malformed",
                message.recordOffset,
                `handshake message ${message.type} in plaintext`,
              );
            }
            state.secondHello = true;
          }
          return "done";
        }
        throw this.#fault(state, "malformed", record.offset, "a handshake record in plaintext after the hellos");
    }
    // APPLICATION_DATA: a protected record. The server's keys are found by the client's random.
    if (this.#clientHello === undefined) return "wait";
    const protection = state.protection ?? this.#startTls13(state, record);
    if (record.fragment.length < protection.minFragmentBytes) {
      throw this.#fault(state, "malformed", record.offset, `a protected record of ${record.fragment.length} bytes`);
    }
    const inner = await protection.open(record.type, record.version, record.fragment);
    if (inner === undefined) {
      if (state.skipUndecryptable) return "done"; // rejected 0-RTT data (RFC 8446 §4.2.10)
      throw this.#authenticationFault(state, record);
    }
    state.skipUndecryptable = false;
    this.#readInnerPlaintext(state, inner, record, emit);
    return "done";
  }

  /** TLS 1.3: an opened record's inner plaintext (content, content type, zero padding). */
  #readInnerPlaintext(state: TlsDirectionState, inner: Uint8Array, record: TlsRecord, emit: Emit): void {
    let end = inner.length;
    while (end > 0 && inner[end - 1] === 0) end--;
    if (end === 0) throw this.#fault(state, "malformed", record.offset, "a protected record without a content type");
    if (inner.length > MAX_INNER_PLAINTEXT_BYTES) {
      throw this.#fault(
        state,
        "malformed",
        record.offset,
        `a record of ${inner.length} bytes of plaintext (record_overflow)`,
      );
    }
    this.#readPlaintext(state, inner[end - 1], inner.subarray(0, end - 1), record, emit);
  }

  /** Whether lost bytes of `state` can be skipped: its side's handshake is over, its records are AEAD-protected. */
  #canResync(state: TlsDirectionState): boolean {
    return this.#maxResyncRecords > 0 && this.#announced && state.phase === "encrypted" && state.finished &&
      state.protection !== undefined && !state.waiting;
  }

  /**
   * Scans bytes after a gap for the next record that opens. Once one does: yields the `resync` event and its content,
   * and returns the bytes after it (read as records from then on); undefined while none has yet (or none will).
   */
  async #resync(
    state: TlsDirectionState,
    resync: TlsRecordResync,
    bytes: Uint8Array,
    emit: Emit,
    final = false,
  ): Promise<Uint8Array | undefined> {
    resync.push(bytes);
    const found = await this.#findRecord(state, resync, final, emit);
    if (found === undefined) return undefined;
    const { candidate } = found;
    const protection = state.protection!;
    const skippedRecords = found.sequence - protection.sequence;
    protection.resumeAfter(found.sequence);
    const end = candidate.offset + RECORD_HEADER_BYTES + candidate.fragment.length;
    const after = resync.after(candidate);
    state.resync = undefined;
    state.splitter = new TlsRecordSplitter(state.maxTlsRecordBytes, state.context, end);
    emit({
      kind: "resync",
      direction: state.direction,
      recordOffset: candidate.offset,
      skippedBytes: resync.skippedTo(candidate.offset),
      skippedRecords,
    });
    const record: TlsRecord = {
      type: candidate.type,
      version: candidate.version,
      fragment: candidate.fragment,
      owned: false,
      offset: candidate.offset,
    };
    try {
      if (this.#suite!.version === "1.3") this.#readInnerPlaintext(state, found.plain, record, emit);
      else this.#readPlaintext(state, record.type, found.plain, record, emit);
      state.recordsRead++;
    } catch (error) {
      if (!(error instanceof TlsFault)) throw error;
      this.#fail(state, error, emit);
      return undefined;
    }
    return after;
  }

  /**
   * The first candidate after a gap that opens, in order; while the first waits for its fragment, one after it that
   * has come and opens (see `TlsRecordResync.ahead`). Undefined while none has (or, having failed the direction, none
   * will: after MAX_RESYNC_CANDIDATES that do not open).
   */
  async #findRecord(
    state: TlsDirectionState,
    resync: TlsRecordResync,
    final: boolean,
    emit: Emit,
  ): Promise<{ candidate: TlsResyncCandidate; sequence: number; plain: Uint8Array } | undefined> {
    const protection = state.protection!;
    for (;;) {
      const candidate = resync.next(final);
      if (candidate === undefined) {
        for (const ahead of final ? [] : resync.ahead()) {
          const opened = await this.#openAfterGap(protection, resync, ahead);
          if (opened !== undefined) return { candidate: ahead, ...opened };
          resync.failed(ahead);
        }
        return undefined;
      }
      const opened = resync.knownToFail(candidate)
        ? undefined
        : await this.#openAfterGap(protection, resync, candidate);
      if (opened !== undefined) return { candidate, ...opened };
      resync.reject();
      if (resync.rejected < MAX_RESYNC_CANDIDATES) continue;
      if (!final) {
        state.resync = undefined;
        this.#fail(state, this.#notResynced(state, resync), emit);
      }
      return undefined;
    }
  }

  /**
   * Opens a candidate record after a gap under the sequence numbers it may have: from the one expected next upward,
   * one more than the records the skipped bytes could hold, at most `maxResyncRecords`.
   */
  async #openAfterGap(
    protection: RecordProtection,
    resync: TlsRecordResync,
    candidate: TlsResyncCandidate,
  ): Promise<{ sequence: number; plain: Uint8Array } | undefined> {
    const { type, version, fragment } = candidate;
    const expected = protection.sequence;
    const smallest = RECORD_HEADER_BYTES + protection.minFragmentBytes;
    const tries = Math.min(this.#maxResyncRecords, Math.floor(resync.skippedTo(candidate.offset) / smallest) + 1);
    const hint = protection.explicitNonceOf(fragment);
    const hinted = hint !== undefined && hint >= expected && hint < expected + tries ? hint : undefined;
    if (hinted !== undefined) {
      const plain = await protection.openAt(hinted, type, version, fragment);
      if (plain !== undefined) return { sequence: hinted, plain };
    }
    for (let sequence = expected; sequence < expected + tries; sequence++) {
      if (sequence === hinted) continue;
      const plain = await protection.openAt(sequence, type, version, fragment);
      if (plain !== undefined) return { sequence, plain };
    }
    return undefined;
  }

  /** The problem of a direction whose bytes after a gap hold no record that opens. */
  #notResynced(state: TlsDirectionState, resync: TlsRecordResync): TlsFault {
    const error = new DecodeError(
      "TLS_INVALID",
      resync.lastRecordEnd,
      `bytes are missing from the capture, and no record in the ${resync.received} bytes after them decrypts (` +
        `${resync.rejected} plausible record headers tried; a key update lost with them?): the rest of this ` +
        "direction cannot be decrypted",
      { context: state.context },
    );
    return new TlsFault("lost-bytes", error);
  }

  /** TLS 1.3: the direction's handshake keys, from its logged handshake traffic secret. */
  #startTls13(state: TlsDirectionState, record: TlsRecord): RecordProtection {
    const secret = state.direction === "client"
      ? this.#secrets!.clientHandshakeTrafficSecret
      : this.#secrets!.serverHandshakeTrafficSecret;
    if (secret === undefined) {
      throw this.#missingSecret(state, record, `${state.direction.toUpperCase()}_HANDSHAKE_TRAFFIC_SECRET`);
    }
    state.skipUndecryptable = state.direction === "client" && this.#clientHello!.offersEarlyData;
    state.phase = "encrypted";
    return this.#useTrafficSecret(state, secret);
  }

  #useTrafficSecret(state: TlsDirectionState, secret: Uint8Array): RecordProtection {
    const { key, iv } = trafficKeys(this.#suite!, secret);
    state.trafficSecret = secret;
    state.protection = new RecordProtection(this.#suite!, key, iv);
    return state.protection;
  }

  #missingSecret(state: TlsDirectionState, record: TlsRecord, label: string): TlsFault {
    const random = bytesToHex(this.#clientHello!.random);
    return this.#fault(state, "no-key", record.offset, `the key log has no ${label} for client random ${random}`);
  }

  #authenticationFault(state: TlsDirectionState, record: TlsRecord): TlsFault {
    return this.#fault(
      state,
      "authentication",
      record.offset,
      `a TLS record of ${record.fragment.length} bytes fails authentication (the logged keys are not this ` +
        "connection's, or the record is damaged)",
    );
  }

  async #readTls12(state: TlsDirectionState, record: TlsRecord, emit: Emit): Promise<"wait" | "done"> {
    if (state.protection === undefined) {
      switch (record.type) {
        case HANDSHAKE:
          this.#handshakeMessages(state, record, record.fragment); // the rest of the handshake, in plaintext: skipped
          return "done";
        case ALERT:
          this.#alert(state, record.fragment, record, emit);
          return "done";
        case CHANGE_CIPHER_SPEC: {
          if (!this.#announced) return "wait"; // the server's: the key block needs the client random
          this.#checkChangeCipherSpec(state, record);
          if (!state.handshake.atBoundary) {
            throw this.#fault(state, "malformed", record.offset, "ChangeCipherSpec inside a handshake message");
          }
          const keys = this.#keyBlock!;
          const client = state.direction === "client";
          state.protection = new RecordProtection(
            this.#suite!,
            client ? keys.clientKey : keys.serverKey,
            client ? keys.clientIv : keys.serverIv,
          );
          state.phase = "encrypted";
          return "done";
        }
      }
      throw this.#fault(state, "malformed", record.offset, "application data before ChangeCipherSpec");
    }
    if (record.type === CHANGE_CIPHER_SPEC) {
      throw this.#fault(
        state,
        "unsupported",
        record.offset,
        "a second ChangeCipherSpec: renegotiation is not decrypted",
      );
    }
    const protection = state.protection;
    if (record.fragment.length < protection.minFragmentBytes) {
      throw this.#fault(state, "malformed", record.offset, `a protected record of ${record.fragment.length} bytes`);
    }
    const plain = await protection.open(record.type, record.version, record.fragment);
    if (plain === undefined) throw this.#authenticationFault(state, record);
    this.#readPlaintext(state, record.type, plain, record, emit);
    return "done";
  }

  #checkChangeCipherSpec(state: TlsDirectionState, record: TlsRecord): void {
    if (record.fragment.length !== 1 || record.fragment[0] !== 1) {
      throw this.#fault(state, "malformed", record.offset, "a ChangeCipherSpec record other than the single byte 1");
    }
  }

  /** A decrypted record's content: application data, an alert, or handshake messages. */
  #readPlaintext(state: TlsDirectionState, type: number, content: Uint8Array, record: TlsRecord, emit: Emit): void {
    switch (type) {
      case APPLICATION_DATA:
        if (!state.finished) {
          throw this.#fault(state, "malformed", record.offset, "application data before the handshake's Finished");
        }
        if (content.length > 0) {
          emit({ kind: "data", direction: state.direction, bytes: content, recordOffset: record.offset });
        }
        return;
      case ALERT:
        this.#alert(state, content, record, emit);
        return;
      case HANDSHAKE:
        if (content.length === 0) throw this.#fault(state, "malformed", record.offset, "an empty handshake record");
        for (const message of this.#handshakeMessages(state, record, content)) {
          this.#readProtectedHandshake(state, message, content.length, record, emit);
        }
        return;
    }
    throw this.#fault(state, "malformed", record.offset, `a protected record of content type ${type}`);
  }

  /** A handshake message after the keys are in use: the ones that change keys, and TLS 1.3's EncryptedExtensions. */
  #readProtectedHandshake(
    state: TlsDirectionState,
    message: HandshakeMessage,
    contentBytes: number,
    record: TlsRecord,
    emit: Emit,
  ): void {
    const tls13 = this.#suite!.version === "1.3";
    if (tls13 && state.direction === "server" && this.#encryptedExtensions === undefined) {
      if (message.type !== ENCRYPTED_EXTENSIONS) {
        throw this.#fault(
          state,
          "malformed",
          message.recordOffset,
          `handshake message ${message.type} before EncryptedExtensions`,
        );
      }
    }
    const atRecordEnd = () => {
      if (message.end !== contentBytes) {
        throw this.#fault(state, "malformed", record.offset, "handshake data after a key change in the same record");
      }
    };
    if (message.type === FINISHED && !state.finished) {
      state.finished = true;
      if (!tls13) return;
      atRecordEnd();
      const secret = state.direction === "client"
        ? this.#secrets!.clientTrafficSecret0
        : this.#secrets!.serverTrafficSecret0;
      if (secret === undefined) {
        throw this.#missingSecret(state, record, `${state.direction.toUpperCase()}_TRAFFIC_SECRET_0`);
      }
      this.#useTrafficSecret(state, secret);
    } else if (tls13 && message.type === ENCRYPTED_EXTENSIONS && state.direction === "server" && !state.finished) {
      this.#encryptedExtensions = readEncryptedExtensions(message.body!, (detail) => {
        throw this.#fault(state, "malformed", message.recordOffset, detail);
      });
      this.#announceWhenKnown(emit);
    } else if (tls13 && message.type === KEY_UPDATE) {
      const body = message.body!;
      if (!state.finished || body.length !== 1 || body[0] > 1) {
        throw this.#fault(state, "malformed", message.recordOffset, "a KeyUpdate before Finished or with a bad body");
      }
      atRecordEnd();
      this.#useTrafficSecret(state, nextTrafficSecret(this.#suite!, state.trafficSecret!));
    }
    // Others (certificates, tickets, TLS 1.2 renegotiation's hellos) do not change what is decrypted.
  }

  #alert(state: TlsDirectionState, content: Uint8Array, record: TlsRecord, emit: Emit): void {
    const level = content[0] === 1 ? "warning" : content[0] === 2 ? "fatal" : undefined;
    if (content.length !== 2 || level === undefined) {
      throw this.#fault(
        state,
        "malformed",
        record.offset,
        `an alert record of ${content.length} bytes, level ${content[0]}`,
      );
    }
    emit({
      kind: "alert",
      direction: state.direction,
      level,
      description: content[1],
      name: alertDescriptionName(content[1]),
      recordOffset: record.offset,
    });
  }

  /** The problem of a direction whose records still wait when the bytes end. */
  #waitedInVain(state: TlsDirectionState, offset: number): TlsFault {
    const missing = state.direction === "client"
      ? this.#serverHello === undefined ? "the server's ServerHello" : "the server's EncryptedExtensions"
      : "the client's ClientHello";
    return this.#fault(
      state,
      "incomplete",
      offset,
      `the ${state.direction}'s records from here on cannot be decrypted: ${missing} is not in the capture`,
    );
  }
}

function limit(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`);
  return value;
}
