/**
 * {@linkcode PcapngReader}: the blocks of a pcapng file, section by section, for the capture-file decoder. Internal.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { CaptureRecord } from "../records.ts";
import { readUint16, readUint32 } from "./read_uint.ts";
import { type PcapngInterface, pcapngInterfaceOf } from "./pcapng_interface.ts";
import type { CaptureFormatReader, UnitPlan } from "./unit_plan.ts";

/** The Section Header Block's type: the same bytes in either byte order, and a pcapng file's first 4 bytes. */
export const SECTION_HEADER_BLOCK = 0x0a0d0d0a;
/** The byte-order magic of a Section Header Block, as read in the section's own byte order. */
export const BYTE_ORDER_MAGIC = 0x1a2b3c4d;

const INTERFACE_DESCRIPTION_BLOCK = 0x00000001;
const PACKET_BLOCK = 0x00000002;
const SIMPLE_PACKET_BLOCK = 0x00000003;
const ENHANCED_PACKET_BLOCK = 0x00000006;
const DECRYPTION_SECRETS_BLOCK = 0x0000000a;

/**
 * Interfaces one section may describe: each is kept until the section ends, so a file of nothing but Interface
 * Description Blocks would otherwise grow without bound.
 */
export const MAX_INTERFACES_PER_SECTION = 0x10000;

/** What the block being read hands on when complete. */
const enum Pending {
  Nothing,
  Packet,
  Secrets,
  Interface,
}

/**
 * Reads a pcapng file: each Section Header Block sets the byte order of its section and starts its list of
 * interfaces; Interface Description Blocks add to it; Enhanced, Simple and (obsolete) Packet Blocks become
 * `CapturedPacket`s, Decryption Secrets Blocks `CapturedSecrets`; every other block is skipped by
 * its length. Each block's trailing length must repeat its leading one.
 */
export class PcapngReader implements CaptureFormatReader {
  /** Type and length, in the section's byte order (a Section Header Block needs 4 more to tell that order). */
  readonly unitHead = 8;
  readonly unitName = "pcapng block";
  readonly #maxRecordBytes: number;
  #littleEndian = true;
  #interfaces: PcapngInterface[] = [];
  // The block being read, from its head.
  #pending = Pending.Nothing;
  #interfaceId = 0;
  #seconds = 0;
  #nanoseconds = 0;
  #originalLength = 0;
  #secretsType = 0;
  #linkType = 0;
  #snapLength = 0;

  /** `maxRecordBytes`: the largest block (its total length) accepted. */
  constructor(maxRecordBytes: number) {
    this.#maxRecordBytes = maxRecordBytes;
  }

  plan(bytes: Uint8Array, at: number, headLength: number, offset: number, plan: UnitPlan): boolean {
    plan.trailer = true;
    if (readUint32(bytes, at, true) === SECTION_HEADER_BLOCK) {
      return this.#planSection(bytes, at, headLength, offset, plan);
    }
    const little = this.#littleEndian;
    plan.littleEndian = little;
    const type = readUint32(bytes, at, little);
    const length = readUint32(bytes, at + 4, little);
    switch (type) {
      case ENHANCED_PACKET_BLOCK:
      case PACKET_BLOCK: {
        plan.name = type === ENHANCED_PACKET_BLOCK ? "Enhanced Packet Block" : "Packet Block";
        this.#checkLength(length, 32, offset, plan);
        if (headLength < 28) return this.#longer(28, plan);
        const interfaceId = type === ENHANCED_PACKET_BLOCK
          ? readUint32(bytes, at + 8, little)
          : readUint16(bytes, at + 8, little);
        const iface = this.#interface(interfaceId, offset, plan);
        const capturedLength = readUint32(bytes, at + 20, little);
        if (capturedLength > length - 32) {
          throw new DecodeError(
            "CAPTURE_INVALID",
            offset,
            `${plan.name}'s captured length ${capturedLength} overruns the block (${length} bytes)`,
          );
        }
        iface.units.convert(readUint32(bytes, at + 12, little), readUint32(bytes, at + 16, little));
        this.#seconds = iface.units.seconds;
        this.#nanoseconds = iface.units.nanoseconds;
        this.#packet(interfaceId, iface, readUint32(bytes, at + 24, little));
        return this.#planned(28, capturedLength, plan);
      }
      case SIMPLE_PACKET_BLOCK: {
        plan.name = "Simple Packet Block";
        this.#checkLength(length, 16, offset, plan);
        if (headLength < 12) return this.#longer(12, plan);
        const iface = this.#interface(0, offset, plan);
        const originalLength = readUint32(bytes, at + 8, little);
        // The captured length is not written: the original length, cut to the interface's snapshot length.
        const capturedLength = iface.snapLength !== 0 && originalLength > iface.snapLength
          ? iface.snapLength
          : originalLength;
        if (capturedLength > length - 16) {
          throw new DecodeError(
            "CAPTURE_INVALID",
            offset,
            `Simple Packet Block's packet of ${capturedLength} bytes overruns the block (${length} bytes)`,
          );
        }
        this.#seconds = 0;
        this.#nanoseconds = 0;
        this.#packet(0, iface, originalLength);
        return this.#planned(12, capturedLength, plan);
      }
      case DECRYPTION_SECRETS_BLOCK: {
        plan.name = "Decryption Secrets Block";
        this.#checkLength(length, 20, offset, plan);
        if (headLength < 16) return this.#longer(16, plan);
        const secretsLength = readUint32(bytes, at + 12, little);
        if (secretsLength > length - 20) {
          throw new DecodeError(
            "CAPTURE_INVALID",
            offset,
            `Decryption Secrets Block's secrets length ${secretsLength} overruns the block (${length} bytes)`,
          );
        }
        this.#pending = Pending.Secrets;
        this.#secretsType = readUint32(bytes, at + 8, little);
        return this.#planned(16, secretsLength, plan);
      }
      case INTERFACE_DESCRIPTION_BLOCK: {
        plan.name = "Interface Description Block";
        this.#checkLength(length, 20, offset, plan);
        if (headLength < 16) return this.#longer(16, plan);
        if (this.#interfaces.length === MAX_INTERFACES_PER_SECTION) {
          throw new DecodeError(
            "CAPTURE_INVALID",
            offset,
            `more than ${MAX_INTERFACES_PER_SECTION} interfaces in one section`,
          );
        }
        this.#pending = Pending.Interface;
        this.#linkType = readUint16(bytes, at + 8, little);
        this.#snapLength = readUint32(bytes, at + 12, little);
        // The options, without the trailing length.
        return this.#planned(16, length - 20, plan);
      }
      default:
        plan.name = `block of type 0x${type.toString(16).padStart(8, "0")}`;
        this.#checkLength(length, 12, offset, plan);
        this.#pending = Pending.Nothing;
        return this.#planned(8, 0, plan);
    }
  }

  /** A Section Header Block: its byte-order magic tells how to read its length and the blocks of its section. */
  #planSection(bytes: Uint8Array, at: number, headLength: number, offset: number, plan: UnitPlan): boolean {
    plan.name = "Section Header Block";
    if (headLength < 12) return this.#longer(12, plan);
    const magic = readUint32(bytes, at + 8, true);
    const little = magic === BYTE_ORDER_MAGIC;
    if (!little && readUint32(bytes, at + 8, false) !== BYTE_ORDER_MAGIC) {
      throw new DecodeError(
        "CAPTURE_INVALID",
        offset,
        `Section Header Block's byte-order magic is 0x${magic.toString(16).padStart(8, "0")} (read little-endian), ` +
          `not 0x1a2b3c4d in either byte order`,
      );
    }
    plan.littleEndian = little;
    this.#checkLength(readUint32(bytes, at + 4, little), 28, offset, plan);
    if (headLength < 24) return this.#longer(24, plan);
    const major = readUint16(bytes, at + 12, little);
    if (major !== 1) {
      const minor = readUint16(bytes, at + 14, little);
      throw new DecodeError("CAPTURE_INVALID", offset, `pcapng version ${major}.${minor} is not supported (1.x is)`);
    }
    // A new section: its own byte order, and no interfaces yet.
    this.#littleEndian = little;
    this.#interfaces = [];
    this.#pending = Pending.Nothing;
    // Section length and options (bytes 16 on) are not needed.
    return this.#planned(24, 0, plan);
  }

  /** Checks a block's total length: a multiple of 4, at least `minimum` (its type's fixed fields), within the limit. */
  #checkLength(length: number, minimum: number, offset: number, plan: UnitPlan): void {
    if (length % 4 !== 0 || length < 12) {
      throw new DecodeError(
        "CAPTURE_INVALID",
        offset,
        `${plan.name}'s length ${length} is not ${length < 12 ? "at least 12" : "a multiple of 4"}`,
      );
    }
    // Checked before anything is gathered for it.
    if (length > this.#maxRecordBytes) {
      throw new DecodeError(
        "MESSAGE_TOO_LARGE",
        offset,
        `${plan.name} of ${length} bytes is over maxRecordBytes (${this.#maxRecordBytes} bytes)`,
      );
    }
    if (length < minimum) {
      throw new DecodeError(
        "CAPTURE_INVALID",
        offset,
        `${plan.name} of ${length} bytes is shorter than its fixed fields (${minimum} bytes)`,
      );
    }
    plan.length = length;
  }

  /** The interface `id` of this section, or `CAPTURE_INVALID` if no block has described it. */
  #interface(id: number, offset: number, plan: UnitPlan): PcapngInterface {
    const iface = this.#interfaces[id];
    if (iface === undefined) {
      const count = this.#interfaces.length;
      throw new DecodeError(
        "CAPTURE_INVALID",
        offset,
        `${plan.name} names interface ${id}, but the section has described ${
          count === 0 ? "none" : count === 1 ? "only interface 0" : `only interfaces 0 to ${count - 1}`
        }`,
      );
    }
    return iface;
  }

  /** Notes the packet being read (its time is already in `#seconds` and `#nanoseconds`). */
  #packet(interfaceId: number, iface: PcapngInterface, originalLength: number): void {
    this.#pending = Pending.Packet;
    this.#interfaceId = interfaceId;
    this.#linkType = iface.linkType;
    this.#originalLength = originalLength;
  }

  /** Asks for a head of `length` bytes. */
  #longer(length: number, plan: UnitPlan): false {
    plan.head = length;
    return false;
  }

  /** Lays the block out: a head of `head` bytes, `data` bytes, and the rest of its length. */
  #planned(head: number, data: number, plan: UnitPlan): true {
    plan.head = head;
    plan.data = data;
    plan.rest = plan.length - head - data;
    return true;
  }

  complete(data: Uint8Array, offset: number, emit: (record: CaptureRecord) => void): void {
    switch (this.#pending) {
      case Pending.Packet:
        emit({
          kind: "packet",
          seconds: this.#seconds,
          nanoseconds: this.#nanoseconds,
          interfaceId: this.#interfaceId,
          linkType: this.#linkType,
          data,
          originalLength: this.#originalLength,
          fileOffset: offset,
        });
        break;
      case Pending.Secrets:
        emit({ kind: "secrets", secretsType: this.#secretsType, data, fileOffset: offset });
        break;
      case Pending.Interface:
        this.#interfaces.push(pcapngInterfaceOf(this.#linkType, this.#snapLength, data, this.#littleEndian, offset));
        break;
    }
    this.#pending = Pending.Nothing;
  }
}
