/**
 * {@linkcode TlsRecordResync}: after bytes of a direction were lost, the bytes that follow scanned for the headers of
 * the protected records that may start there. Internal.
 *
 * @module
 */
import { ALERT, APPLICATION_DATA } from "./tls_record_splitter.ts";

const HEADER_BYTES = 5;

/** A place where a protected record may start: its header looks like one, and its whole fragment has come. */
export interface TlsResyncCandidate {
  /** The direction's offset of its header. */
  readonly offset: number;
  readonly type: number;
  readonly version: number;
  /** Its fragment: a view of the scanner's buffer, valid until the next `push`, `lose` or `reject`. */
  readonly fragment: Uint8Array;
}

/**
 * Holds a direction's bytes after a gap and finds, in order, each place whose five bytes are a plausible application
 * data record header (content type 23, legacy version 0x0303, a length from `minFragmentBytes` to `maxTlsRecordBytes`;
 * with TLS 1.2, also an alert record: content type 21 and the length of a protected alert), once the record's whole
 * fragment has come. The caller tries to open each (see `TlsConnectionDecryptor`): the first
 * that opens is where records follow on again; one that does not is rejected and the scan goes on one byte further
 * (while one waits for its fragment, those after it may be tried: `ahead`). What is found depends only on the bytes,
 * never on how they were chunked. It holds at most one record's bytes and the chunk being scanned.
 */
export class TlsRecordResync {
  readonly #minFragmentBytes: number;
  readonly #maxTlsRecordBytes: number;
  readonly #alertBytes: number;
  /** Where the last record read before the gap ended: skipped bytes count from here. */
  readonly lastRecordEnd: number;
  #buffer = new Uint8Array(0);
  #length = 0;
  /** The scan position in `#buffer`. */
  #scan = 0;
  /** The direction's offset of `#buffer[0]`. */
  #base: number;
  /** Candidates rejected so far. */
  rejected = 0;
  /** Bytes that came since the gap (the lost ones not counted). */
  received = 0;
  /** Offsets of candidates tried ahead of the scan that did not open. */
  readonly #failed = new Set<number>();

  /**
   * A scanner whose first byte will be the direction's byte `startOffset` (just after the gap), the last record read
   * having ended at `lastRecordEnd`; `alertBytes`: the fragment length of a protected alert record, where its header
   * shows its content type (TLS 1.2), else 0.
   */
  constructor(
    startOffset: number,
    lastRecordEnd: number,
    minFragmentBytes: number,
    maxTlsRecordBytes: number,
    alertBytes: number,
  ) {
    this.#base = startOffset;
    this.lastRecordEnd = lastRecordEnd;
    this.#minFragmentBytes = minFragmentBytes;
    this.#maxTlsRecordBytes = maxTlsRecordBytes;
    this.#alertBytes = alertBytes;
  }

  /** The direction's offset of the next byte to come. */
  get offset(): number {
    return this.#base + this.#length;
  }

  /** Bytes skipped from the end of the last record read to the direction's byte `offset`. */
  skippedTo(offset: number): number {
    return offset - this.lastRecordEnd;
  }

  /** The next bytes of the direction. */
  push(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.received += bytes.length;
    this.#compact();
    if (this.#length + bytes.length > this.#buffer.length) {
      const grown = new Uint8Array(Math.max(this.#length + bytes.length, this.#buffer.length * 2, 4096));
      grown.set(this.#buffer.subarray(0, this.#length));
      this.#buffer = grown;
    }
    this.#buffer.set(bytes, this.#length);
    this.#length += bytes.length;
  }

  /** More bytes were lost: what is held can hold no whole record any more. */
  lose(length: number): void {
    this.#failed.clear();
    this.#base += this.#length + length;
    this.#length = 0;
    this.#scan = 0;
  }

  /**
   * The first candidate at or after the scan position, or undefined until more bytes come (see `ahead`). `final`: no
   * more will come, and a header whose fragment is cut short is no record (it is passed over, as a rejected one).
   */
  next(final = false): TlsResyncCandidate | undefined {
    for (let i = this.#scan; i + HEADER_BYTES <= this.#length; i++) {
      const length = this.#plausible(i);
      if (length < 0) continue;
      this.#scan = i;
      if (i + HEADER_BYTES + length > this.#length) {
        if (!final) return undefined; // its fragment has not all come
        this.rejected++;
        continue;
      }
      return this.#candidate(i, length);
    }
    // No header starts before the last four bytes: only they may still begin one.
    this.#scan = Math.max(this.#scan, this.#length - (HEADER_BYTES - 1));
    return undefined;
  }

  /**
   * While the first candidate waits for its fragment: the candidates after it whose fragments have all come (and that
   * were not tried yet). One of them that opens proves the waiting ones before it are no records (a record cannot lie
   * inside another's ciphertext and authenticate), so trying them early finds the same record as waiting would, only
   * sooner: a header in the ciphertext the gap cut that claims a long fragment does not hold up the resumption.
   */
  ahead(): TlsResyncCandidate[] {
    const out: TlsResyncCandidate[] = [];
    for (let i = this.#scan + 1; i + HEADER_BYTES <= this.#length; i++) {
      const length = this.#plausible(i);
      if (length < 0 || i + HEADER_BYTES + length > this.#length || this.#failed.has(this.#base + i)) continue;
      out.push(this.#candidate(i, length));
    }
    return out;
  }

  /** A candidate of `ahead` does not open: when the scan gets to it, it is rejected without another try. */
  failed(candidate: TlsResyncCandidate): void {
    this.#failed.add(candidate.offset);
  }

  /** Whether the candidate `next` returned was found not to open already (by `ahead`). */
  knownToFail(candidate: TlsResyncCandidate): boolean {
    return this.#failed.has(candidate.offset);
  }

  /** The candidate `next` returned does not open: the scan goes on from its second byte. */
  reject(): void {
    this.#failed.delete(this.#base + this.#scan);
    this.#scan++;
    this.rejected++;
  }

  /** The fragment length of a plausible record header at `#buffer[i]`, or -1. */
  #plausible(i: number): number {
    const b = this.#buffer;
    if (b[i + 1] !== 3 || b[i + 2] !== 3) return -1;
    const length = (b[i + 3] << 8) | b[i + 4];
    if (b[i] === APPLICATION_DATA) {
      return length < this.#minFragmentBytes || length > this.#maxTlsRecordBytes ? -1 : length;
    }
    return b[i] === ALERT && length === this.#alertBytes ? length : -1;
  }

  #candidate(i: number, length: number): TlsResyncCandidate {
    const b = this.#buffer;
    return {
      offset: this.#base + i,
      type: b[i],
      version: 0x0303,
      fragment: b.subarray(i + HEADER_BYTES, i + HEADER_BYTES + length),
    };
  }

  /** The bytes after the record of `candidate` (which opened): a view, valid as long as nothing more is pushed. */
  after(candidate: TlsResyncCandidate): Uint8Array {
    const end = candidate.offset - this.#base + HEADER_BYTES + candidate.fragment.length;
    return this.#buffer.subarray(end, this.#length);
  }

  /** Drops what lies before the scan position. */
  #compact(): void {
    if (this.#scan === 0) return;
    this.#buffer.copyWithin(0, this.#scan, this.#length);
    this.#length -= this.#scan;
    this.#base += this.#scan;
    this.#scan = 0;
  }
}
