/**
 * {@linkcode PcapReader}: the units of a pcap file (its 24-byte header, then records of a 16-byte header and the
 * captured bytes) for the capture-file decoder. Internal.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { CaptureRecord } from "../records.ts";
import { readUint16, readUint32 } from "./read_uint.ts";
import type { CaptureFormatReader, UnitPlan } from "./unit_plan.ts";

/** The pcap magic numbers, as read in the file's own byte order: microsecond and nanosecond timestamps. */
export const PCAP_MAGIC_MICROSECONDS = 0xa1b2c3d4;
/** @see {@linkcode PCAP_MAGIC_MICROSECONDS} */
export const PCAP_MAGIC_NANOSECONDS = 0xa1b23c4d;

const FILE_HEADER_LENGTH = 24;
const RECORD_HEADER_LENGTH = 16;

/**
 * Reads a pcap file: the file header (byte order and timestamp unit from the magic, link type), then
 * each record (seconds, microseconds or nanoseconds, captured and original lengths) as a `CapturedPacket`
 * on interface 0.
 */
export class PcapReader implements CaptureFormatReader {
  readonly unitHead = RECORD_HEADER_LENGTH;
  readonly unitName = "pcap record";
  readonly #maxRecordBytes: number;
  #headerRead = false;
  #littleEndian = true;
  /** Sub-second units per second: 10^6 or 10^9. */
  #unitsPerSecond = 1e6;
  #linkType = 0;
  // The record being read, from its header.
  #seconds = 0;
  #fraction = 0;
  #originalLength = 0;

  /** `maxRecordBytes`: the largest record (16-byte header and captured bytes) accepted. */
  constructor(maxRecordBytes: number) {
    this.#maxRecordBytes = maxRecordBytes;
  }

  plan(bytes: Uint8Array, at: number, headLength: number, offset: number, plan: UnitPlan): boolean {
    if (!this.#headerRead) return this.#planFileHeader(bytes, at, headLength, plan);
    const little = this.#littleEndian;
    const capturedLength = readUint32(bytes, at + 8, little);
    const length = RECORD_HEADER_LENGTH + capturedLength;
    // Checked before anything is gathered for it.
    if (length > this.#maxRecordBytes) {
      throw new DecodeError(
        "MESSAGE_TOO_LARGE",
        offset,
        `pcap record of ${length} bytes (${capturedLength} captured) is over maxRecordBytes (${this.#maxRecordBytes} bytes)`,
      );
    }
    this.#seconds = readUint32(bytes, at, little);
    this.#fraction = readUint32(bytes, at + 4, little);
    this.#originalLength = readUint32(bytes, at + 12, little);
    plan.head = RECORD_HEADER_LENGTH;
    plan.data = capturedLength;
    plan.rest = 0;
    plan.length = length;
    plan.trailer = false;
    plan.name = "pcap record";
    return true;
  }

  #planFileHeader(bytes: Uint8Array, at: number, headLength: number, plan: UnitPlan): boolean {
    plan.name = "pcap file header";
    if (headLength < FILE_HEADER_LENGTH) {
      plan.head = FILE_HEADER_LENGTH;
      return false;
    }
    // The magic was recognized before this reader was chosen: one of the two, in one byte order or the other.
    let little = true;
    let magic = readUint32(bytes, at, true);
    if (magic !== PCAP_MAGIC_MICROSECONDS && magic !== PCAP_MAGIC_NANOSECONDS) {
      little = false;
      magic = readUint32(bytes, at, false);
    }
    const major = readUint16(bytes, at + 4, little);
    const minor = readUint16(bytes, at + 6, little);
    if (major !== 2) {
      throw new DecodeError("CAPTURE_INVALID", 0, `pcap version ${major}.${minor} is not supported (2.x is)`);
    }
    this.#littleEndian = little;
    this.#unitsPerSecond = magic === PCAP_MAGIC_NANOSECONDS ? 1e9 : 1e6;
    // The snapshot length (bytes 16-19) limits nothing here: records may exceed it (some writers do).
    // The upper bits of the field carry the FCS length and flags, not the link type.
    this.#linkType = readUint32(bytes, at + 20, little) & 0xffff;
    this.#headerRead = true;
    plan.head = FILE_HEADER_LENGTH;
    plan.data = 0;
    plan.rest = 0;
    plan.length = FILE_HEADER_LENGTH;
    plan.trailer = false;
    return true;
  }

  complete(data: Uint8Array, offset: number, emit: (record: CaptureRecord) => void): void {
    if (offset === 0) return; // the file header
    const perSecond = this.#unitsPerSecond;
    let seconds = this.#seconds;
    let fraction = this.#fraction;
    if (fraction >= perSecond) {
      // Out of range (a writer's bug): carried into the seconds, so that nanoseconds stay under a second.
      seconds += Math.floor(fraction / perSecond);
      fraction %= perSecond;
    }
    emit({
      kind: "packet",
      seconds,
      nanoseconds: perSecond === 1e6 ? fraction * 1000 : fraction,
      interfaceId: 0,
      linkType: this.#linkType,
      data,
      originalLength: this.#originalLength,
      fileOffset: offset,
    });
  }
}
