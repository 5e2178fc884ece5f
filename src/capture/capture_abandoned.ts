/**
 * {@linkcode CaptureAbandoned}: the error a captured connection's byte stream ends with when its decoding stopped
 * before the connection's end. Internal (exported through `capture_connections.ts`).
 *
 * @module
 */

/**
 * Why a connection's byte streams stopped before its end: the reason was reported as a `problem` already (a TLS
 * fault, a reader too far behind), or the stream reached bytes lost from the capture (a `CaptureGap`, reported as a
 * `gap`), so a reader need not report it again.
 */
export class CaptureAbandoned extends Error {
  /** An error saying `message`. */
  constructor(message: string) {
    super(message);
    this.name = "CaptureAbandoned";
  }
}
