/**
 * {@linkcode TlsConnectionDecryptorStream}: {@linkcode TlsConnectionDecryptor} as a stream stage, for one connection.
 * Internal.
 *
 * @module
 */
import type { TcpDirection } from "../records.ts";
import { DecoderStream } from "../../streams/decoder_stream.ts";
import type { KeyLog } from "./key_log.ts";
import { TlsConnectionDecryptor, type TlsConnectionDecryptorOptions } from "./tls_connection_decryptor.ts";
import type { TlsEvent } from "./tls_events.ts";

/** What the stage takes: bytes one side sent, or how many bytes of one side the capture lost. */
export type TlsConnectionInput =
  | { readonly direction: TcpDirection; readonly bytes: Uint8Array }
  | { readonly direction: TcpDirection; readonly gap: number };

/**
 * The bytes of one TLS connection's two directions (interleaved as captured) to its {@linkcode TlsEvent}s: a
 * {@linkcode TlsConnectionDecryptor} in a `TransformStream`. Problems are events, not errors: the stage errors only
 * if its input does.
 */
export class TlsConnectionDecryptorStream extends DecoderStream<TlsConnectionInput, TlsEvent> {
  /** A stage reading keys from `keyLog`. */
  constructor(keyLog: KeyLog, options: TlsConnectionDecryptorOptions = {}) {
    const decryptor = new TlsConnectionDecryptor(keyLog, options);
    super({
      push(input, emit) {
        return "gap" in input
          ? decryptor.gap(input.direction, input.gap, emit)
          : decryptor.push(input.direction, input.bytes, emit);
      },
      finish(emit) {
        return decryptor.end(emit);
      },
    });
  }
}
