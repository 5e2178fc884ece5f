/**
 * {@linkcode CaptureGap}: the end of a captured connection's byte stream at bytes lost from the capture, and the
 * stream of the bytes after them. Internal (exported through `capture_connections.ts`).
 *
 * @module
 */
import { CaptureAbandoned } from "./capture_abandoned.ts";
import type { CaptureTime, TcpDirection } from "./records.ts";

/**
 * Bytes of a direction lost from the capture (a TCP gap): where they start in the direction's bytes (as captured: for
 * TLS the encrypted bytes), how many, and when the capture knew.
 */
export interface CaptureLostBytes {
  readonly streamOffset: number;
  readonly length: number;
  readonly time: CaptureTime;
}

/**
 * Where a direction's bytes go on after a gap (see {@linkcode CaptureGap}).
 */
export interface CaptureResumption {
  /**
   * The bytes from the resumption on: plain, those right after the hole; TLS, the plaintext from the first record after
   * it that decrypts. At the next gap it fails with a {@linkcode CaptureGap} in turn. Read it or cancel it: bytes not
   * read are held for it (up to `maxUnreadBytes`).
   */
  readonly stream: ReadableStream<Uint8Array>;
  /** Where the resumed bytes start in the direction's bytes as captured (TLS: the offset of that record). */
  readonly streamOffset: number;
  /**
   * Bytes of the direction (as captured) not handed on: from the end of those handed on before the gap to
   * `streamOffset`. The gaps' bytes are among them; for TLS, so are the rest of the record the gap cut and the records
   * after it that could not be decrypted.
   */
  readonly skippedBytes: number;
  /** When the packet with the first resumed bytes was captured. */
  readonly time: CaptureTime;
}

/**
 * The error a captured connection's byte stream (see `CapturedConnection`) fails with where bytes were lost from the
 * capture: everything before the gap has been read. The direction's bytes after it come as a stream of their own,
 * {@linkcode CaptureGap.resumed}, from where decoding can go on: right after the hole for a plain connection; for TLS,
 * at the next record that decrypts (or never, when the gap cut the handshake, or no record after it opens). What reads
 * the bytes resumes on its own terms (an HTTP/2 frame, an HTTP/1.1 chunk, a watch event) and knows nothing of the
 * lost bytes but that there were some. It is a {@linkcode CaptureAbandoned}: a reader that does not resume can treat
 * it as one (the gap is reported by the capture as a `gap` event), but must cancel the resumed stream.
 */
export class CaptureGap extends CaptureAbandoned {
  /** The connection's number. */
  readonly connection: number;
  /** The direction whose bytes were lost. */
  readonly direction: TcpDirection;
  /** The gaps before the resumption: the first, then any more before it (complete once `resumed` has settled). */
  readonly gaps: CaptureLostBytes[];
  /** The bytes after the gap, once decoding can resume; undefined when it cannot (and nothing more comes). */
  readonly resumed: Promise<CaptureResumption | undefined>;

  /** The gap `first` of `direction` of connection `connection`, resumed (or not) when `resumed` settles. */
  constructor(
    connection: number,
    direction: TcpDirection,
    first: CaptureLostBytes,
    resumed: Promise<CaptureResumption | undefined>,
  ) {
    super(
      `connection ${connection}: ${first.length} bytes of the ${direction}'s are missing from the capture at its byte ` +
        first.streamOffset,
    );
    this.name = "CaptureGap";
    this.connection = connection;
    this.direction = direction;
    this.gaps = [first];
    this.resumed = resumed;
  }
}
