/**
 * {@linkcode CaptureFileDecoder}: the bytes of a pcap or pcapng capture file, in any chunking, to its records (packets
 * and decryption secrets), in bounded memory. Internal.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import type { CaptureRecord } from "../records.ts";
import { captureFormatOf, MAGIC_LENGTH } from "./capture_format.ts";
import { readUint32 } from "./read_uint.ts";
import { type CaptureFormatReader, UnitPlan } from "./unit_plan.ts";

/** The default of `maxRecordBytes`: 16 MiB. */
export const DEFAULT_MAX_RECORD_BYTES = 16 * 1024 * 1024;

/** Options of {@linkcode CaptureFileDecoder} and `CaptureFileDecoderStream`. */
export interface CaptureFileDecoderOptions {
  /**
   * The largest record accepted, in bytes: a pcap record (its 16-byte header and captured bytes) or a pcapng block
   * (its total length, of any type). One announcing more is a `MESSAGE_TOO_LARGE` error at its offset, before anything
   * is allocated for it. Default {@linkcode DEFAULT_MAX_RECORD_BYTES} (16 MiB). (TLS records inside the packets are
   * bounded by `maxTlsRecordBytes`.)
   */
  maxRecordBytes?: number;
}

/** The longest head a format asks for (an Enhanced Packet Block's 28 bytes), rounded up. */
const HEAD_CAPACITY = 32;

/** Where in the unit being read the decoder is: its head, its data, or the rest skipped. */
const enum Phase {
  Head,
  Data,
  Rest,
}

/**
 * Decodes a capture file: pcap (magic 0xa1b2c3d4 or 0xa1b23c4d, microsecond or nanosecond timestamps, either byte
 * order) or pcapng (sections of either byte order, each with its interfaces), told apart by the first 4 bytes.
 *
 * - Each packet becomes a `CapturedPacket`, each pcapng Decryption Secrets Block a `CapturedSecrets`, in file order;
 *   other pcapng blocks (name resolution, interface statistics, custom blocks, ...) are skipped.
 * - A record's `data` is a view of the input chunk when it lies in one, else a copy of exactly its length: a record is
 *   held only until it is complete, so a file of any size streams through in memory bounded by `maxRecordBytes`.
 * - Faults are `DecodeError`s at the file offset of the record or block at fault, after every record before it:
 *   `MESSAGE_TOO_LARGE` for one over `maxRecordBytes` (as soon as its length is read), `TRUNCATED` for input that ends
 *   inside one, `CAPTURE_INVALID` for anything else (bad magic, a block length that is not a multiple of 4 or is
 *   under 12, a trailing length that differs from the leading one, a packet longer than its block, a packet for an
 *   interface not described).
 */
export class CaptureFileDecoder implements StreamDecoder<Uint8Array, CaptureRecord> {
  readonly #maxRecordBytes: number;
  #reader: CaptureFormatReader | undefined;
  readonly #plan = new UnitPlan();
  #phase = Phase.Head;
  /** Input bytes before the current chunk. */
  #offset = 0;
  /** The file offset of the unit being read. */
  #unitStart = 0;
  #headWant = MAGIC_LENGTH;
  /** Head bytes gathered in `#head` (0 while a head is read straight from its chunk). */
  #headHave = 0;
  readonly #head = new Uint8Array(HEAD_CAPACITY);
  /** The unit's data: a view of a chunk, or the copy being filled; undefined until it starts. */
  #data: Uint8Array | undefined;
  #dataFilled = 0;
  #restLeft = 0;
  /** A pcapng block's last 4 bytes, gathered while its rest is skipped. */
  readonly #trailer = new Uint8Array(4);

  constructor(options: CaptureFileDecoderOptions = {}) {
    const maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    if (!Number.isSafeInteger(maxRecordBytes) || maxRecordBytes < 0) {
      throw new RangeError(`maxRecordBytes must be a non-negative integer, not ${maxRecordBytes}`);
    }
    this.#maxRecordBytes = maxRecordBytes;
  }

  push(chunk: Uint8Array, emit: (record: CaptureRecord) => void): void {
    const n = chunk.length;
    const base = this.#offset;
    const plan = this.#plan;
    let i = 0;
    for (;;) {
      if (this.#phase === Phase.Head) {
        if (i === n) break;
        const want = this.#headWant;
        // The head is read where it is: in this chunk when it lies there whole, else gathered in #head.
        let bytes = chunk;
        let at = i;
        if (this.#headHave === 0) this.#unitStart = base + i;
        if (this.#headHave === 0 && n - i >= want) {
          i += want;
        } else {
          const take = Math.min(want - this.#headHave, n - i);
          this.#head.set(chunk.subarray(i, i + take), this.#headHave);
          this.#headHave += take;
          i += take;
          if (this.#headHave < want) break;
          bytes = this.#head;
          at = 0;
        }
        const reader = this.#reader ??= captureFormatOf(bytes.subarray(at, at + want), this.#maxRecordBytes);
        if (!reader.plan(bytes, at, want, this.#unitStart, plan)) {
          // A longer head: read from the unit's start again when it was in this chunk, else gather on.
          if (bytes === chunk) i = at;
          this.#headWant = plan.head;
          continue;
        }
        this.#headHave = 0;
        this.#restLeft = plan.rest;
        this.#phase = Phase.Data;
      }
      if (this.#phase === Phase.Data) {
        const need = plan.data;
        if (this.#data === undefined) {
          if (n - i >= need) {
            // Within this chunk: a view, no copy.
            this.#data = chunk.subarray(i, i + need);
            this.#dataFilled = need;
            i += need;
          } else {
            if (i === n) break;
            // Spans chunks: a buffer of its own, of exactly its length (at most maxRecordBytes, checked in the plan).
            this.#data = new Uint8Array(need);
            this.#dataFilled = 0;
          }
        }
        if (this.#dataFilled < need) {
          const take = Math.min(need - this.#dataFilled, n - i);
          this.#data.set(chunk.subarray(i, i + take), this.#dataFilled);
          this.#dataFilled += take;
          i += take;
          if (this.#dataFilled < need) break;
        }
        this.#phase = Phase.Rest;
      }
      const left = this.#restLeft;
      if (left > 0) {
        if (i === n) break;
        const take = Math.min(left, n - i);
        if (plan.trailer) {
          // The byte at i + k is the unit's last but (left - k - 1): its trailer holds the last 4.
          for (let k = Math.max(0, left - 4); k < take; k++) this.#trailer[4 - left + k] = chunk[i + k];
        }
        this.#restLeft = left - take;
        i += take;
        if (this.#restLeft > 0) break;
      }
      this.#complete(emit);
    }
    this.#offset = base + n;
  }

  /** The unit has been read: checks its trailing length and hands it to the format's reader. */
  #complete(emit: (record: CaptureRecord) => void): void {
    const plan = this.#plan;
    const reader = this.#reader!;
    const data = this.#data!;
    const start = this.#unitStart;
    this.#data = undefined;
    this.#phase = Phase.Head;
    this.#headWant = reader.unitHead;
    if (plan.trailer) {
      const trailing = readUint32(this.#trailer, 0, plan.littleEndian);
      if (trailing !== plan.length) {
        throw new DecodeError(
          "CAPTURE_INVALID",
          start,
          `${plan.name}'s trailing length ${trailing} differs from its leading length ${plan.length}`,
        );
      }
    }
    reader.complete(data, start, emit);
  }

  finish(): void {
    const reader = this.#reader;
    if (reader === undefined) {
      throw new DecodeError(
        "TRUNCATED",
        0,
        `input ended before the capture file's magic number (${this.#headHave} of ${MAGIC_LENGTH} bytes)`,
      );
    }
    if (this.#phase === Phase.Head) {
      const have = this.#headHave;
      if (have === 0) return;
      // Past the first head of a unit, the format has named it.
      const what = this.#headWant > reader.unitHead ? this.#plan.name : reader.unitName;
      throw new DecodeError(
        "TRUNCATED",
        this.#unitStart,
        `input ended inside the head of the ${what} (${have} of ${this.#headWant} bytes)`,
      );
    }
    const plan = this.#plan;
    throw new DecodeError(
      "TRUNCATED",
      this.#unitStart,
      `input ended inside the ${plan.name} (${this.#offset - this.#unitStart} of ${plan.length} bytes)`,
    );
  }
}
