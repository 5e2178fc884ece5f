/**
 * The events of `TlsConnectionDecryptor`: what the handshake said, each direction's decrypted application
 * data, alerts, and problems that end the decryption of a direction or of the connection. Internal.
 *
 * @module
 */
import type { DecodeError } from "../../errors.ts";
import type { TcpDirection } from "../records.ts";
import type { TlsVersion } from "./cipher_suites.ts";

/** The handshake, once its hellos (and in TLS 1.3 the server's EncryptedExtensions) have been read. Comes once. */
export interface TlsHandshakeEvent {
  readonly kind: "handshake";
  readonly version: TlsVersion;
  /** The IANA name of the negotiated suite, e.g. `TLS_AES_128_GCM_SHA256`. */
  readonly cipherSuite: string;
  /** The suite's code point, e.g. 0x1301. */
  readonly cipherSuiteId: number;
  /** The protocol ALPN selected (`"h2"`, `"http/1.1"`), if any: TLS 1.2's ServerHello, TLS 1.3's EncryptedExtensions. */
  readonly alpn: string | undefined;
  /** The host name the ClientHello asked for (SNI), if any. */
  readonly serverName: string | undefined;
  /** The client random, in hex: the key log's key for this connection. */
  readonly clientRandom: string;
  /** Whether the server answered the first ClientHello with a HelloRetryRequest (TLS 1.3). */
  readonly helloRetry: boolean;
}

/** Decrypted application data of one direction, one record's worth, in order. */
export interface TlsDataEvent {
  readonly kind: "data";
  readonly direction: TcpDirection;
  /** The plaintext (a buffer of its own, never written again). */
  readonly bytes: Uint8Array;
  /** Offset of the record that held it in the direction's bytes. */
  readonly recordOffset: number;
}

/** An alert one side sent (in plaintext before the keys are in use, decrypted after). */
export interface TlsAlertEvent {
  readonly kind: "alert";
  readonly direction: TcpDirection;
  readonly level: "warning" | "fatal";
  /** The alert description's code (0 close_notify, 40 handshake_failure, ...). */
  readonly description: number;
  /** Its name, e.g. `close_notify`. */
  readonly name: string;
  /** Offset of the record that held it. */
  readonly recordOffset: number;
}

/**
 * Bytes of a direction were lost after its handshake (a TCP gap): its plaintext stops here, and the decryptor looks
 * for the next record that opens; a `resync` event says where it found one, a `problem` that it found none. Comes
 * once per gap, before anything of the bytes after it.
 */
export interface TlsLostEvent {
  readonly kind: "lost";
  readonly direction: TcpDirection;
  /** Where the lost bytes start in the direction's bytes, and how many. */
  readonly streamOffset: number;
  readonly length: number;
}

/**
 * Decryption of a direction goes on after lost bytes, at a record that opened under a later sequence number: the
 * `data` events that follow are the plaintext from that record on.
 */
export interface TlsResyncEvent {
  readonly kind: "resync";
  readonly direction: TcpDirection;
  /** Offset of the record that opened, in the direction's bytes. */
  readonly recordOffset: number;
  /** Bytes of the direction not decrypted: from the end of the last record read to `recordOffset`, the gap's included. */
  readonly skippedBytes: number;
  /** Records lost: how far its sequence number is past the one expected next. */
  readonly skippedRecords: number;
}

/** Why decryption stopped. */
export type TlsProblemReason =
  /** A direction's first bytes are not its hello: the capture started mid-connection (or the roles are swapped). */
  | "no-handshake"
  /** The key log has no secret for this connection (named by its client random), or lacks one it needs. */
  | "no-key"
  /** A cipher suite or version the decryptor does not read, renegotiation, 0-RTT data. */
  | "unsupported"
  /** A record fails authentication: the logged keys are not this connection's, or its bytes were damaged. */
  | "authentication"
  /** A record or handshake message breaks the protocol. */
  | "malformed"
  /** A record, handshake message or the records waiting for the other direction exceed their limit. */
  | "too-large"
  /** The bytes end inside a record or a handshake message. */
  | "truncated"
  /** Records wait for the other direction's handshake, which is not in the capture. */
  | "incomplete"
  /** Bytes of the direction are missing from the capture (during the handshake, or none after them decrypts). */
  | "lost-bytes";

/**
 * Decryption has stopped: for `direction`, or (`direction` undefined) for the whole connection. Nothing more comes
 * for it: never bytes that did not authenticate.
 */
export interface TlsProblemEvent {
  readonly kind: "problem";
  readonly direction: TcpDirection | undefined;
  readonly reason: TlsProblemReason;
  /** The fault: `TLS_INVALID`, `TRUNCATED` or `MESSAGE_TOO_LARGE`, at its byte offset in its direction's bytes. */
  readonly error: DecodeError;
  /** `error.message`: what happened and where, for a person. */
  readonly message: string;
}

/** What `TlsConnectionDecryptor` yields. */
export type TlsEvent =
  | TlsHandshakeEvent
  | TlsDataEvent
  | TlsAlertEvent
  | TlsProblemEvent
  | TlsLostEvent
  | TlsResyncEvent;
