/**
 * {@linkcode TlsFault}: how the decryptor's steps report a problem to the loop that turns it into a problem event.
 * Internal.
 *
 * @module
 */
import type { DecodeError } from "../../errors.ts";
import type { TlsProblemReason } from "./tls_events.ts";

/** A problem found while reading a direction: why, the placed error, and whether it ends the whole connection. */
export class TlsFault extends Error {
  readonly reason: TlsProblemReason;
  readonly error: DecodeError;
  readonly wholeConnection: boolean;

  constructor(reason: TlsProblemReason, error: DecodeError, wholeConnection = false) {
    super(error.message);
    this.name = "TlsFault";
    this.reason = reason;
    this.error = error;
    this.wholeConnection = wholeConnection;
  }
}
