/**
 * {@linkcode ProtobufReader}: a small, bounds-checked reader of the protobuf wire format, for decoders written ahead of
 * time from a schema (no reflection, no code generation at run time, no `eval`).
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";

/** Protobuf wire types (the low 3 bits of a tag). Groups (3 and 4) are deprecated and rejected by the reader. */
export const ProtobufWireType = {
  VARINT: 0,
  I64: 1,
  LEN: 2,
  SGROUP: 3,
  EGROUP: 4,
  I32: 5,
} as const;

const TWO_32 = 4294967296;
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Reads protobuf wire data from a `Uint8Array`, field by field. Every read is bounds-checked; malformed input (a
 * varint longer than 10 bytes or overflowing 64 bits, a length past the end, an invalid wire type, a group, a field
 * number of 0, invalid UTF-8 in a string) throws {@linkcode DecodeError} `MESSAGE_INVALID` whose `offset` is
 * `baseOffset` plus the position (in `bytes`) of the element at fault. Nothing is allocated per byte: length-delimited fields are
 * `subarray` views of the input (no copy), and 64-bit varints are assembled in two 32-bit halves.
 *
 * 64-bit integers: {@linkcode ProtobufReader.int64} and {@linkcode ProtobufReader.uint64} return JavaScript numbers,
 * exact up to 2^53 (`Number.MAX_SAFE_INTEGER`) in magnitude and rounded to the nearest double beyond it (as
 * `JSON.parse` rounds the same decimal). Revisions and versions stay far below 2^53; randomly chosen 64-bit ids (etcd
 * lease, cluster and member ids) may not: read those with {@linkcode ProtobufReader.int64BigInt} /
 * {@linkcode ProtobufReader.uint64BigInt} where exactness matters.
 *
 * @example
 * ```ts
 * import { ProtobufReader, ProtobufWireType } from "watchwire";
 *
 * // field 1 (varint) = 150, field 2 (bytes) = "hi"
 * const reader = new ProtobufReader(Uint8Array.of(0x08, 0x96, 0x01, 0x12, 0x02, 0x68, 0x69));
 * while (!reader.done) {
 *   const tag = reader.tag();
 *   const field = tag >>> 3;
 *   if (field === 1 && (tag & 7) === ProtobufWireType.VARINT) console.log(reader.uint64()); // 150
 *   else if (field === 2 && (tag & 7) === ProtobufWireType.LEN) console.log(reader.string()); // hi
 *   else reader.skip(tag);
 * }
 * ```
 */
export class ProtobufReader {
  /** The bytes read. */
  readonly data: Uint8Array;
  /** Offset of `bytes[0]` in a larger input, added to every error's offset. */
  readonly baseOffset: number;
  /** The position of the next byte to read. */
  pos: number;
  /** The end of the readable range (exclusive). */
  readonly end: number;
  // The last varint read, as two unsigned 32-bit halves.
  #lo = 0;
  #hi = 0;

  /** A reader of `bytes` (all of it, or `start` to `end`); `baseOffset` locates `bytes[0]` in a larger input. */
  constructor(bytes: Uint8Array, baseOffset = 0, start = 0, end = bytes.length) {
    this.data = bytes;
    this.baseOffset = baseOffset;
    this.pos = start;
    this.end = end;
  }

  /** Whether everything has been read. */
  get done(): boolean {
    return this.pos >= this.end;
  }

  /** A `MESSAGE_INVALID` error at position `at` of `bytes`. */
  error(at: number, detail: string): DecodeError {
    return new DecodeError("MESSAGE_INVALID", this.baseOffset + at, `protobuf: ${detail}`);
  }

  /** Reads a varint into #lo/#hi. */
  #varint(): void {
    const b = this.data;
    const end = this.end;
    const start = this.pos;
    let p = start;
    let lo = 0;
    let hi = 0;
    let byte: number;
    // Bytes 0-3: bits 0-27.
    for (let shift = 0; shift < 28; shift += 7) {
      if (p >= end) throw this.error(start, "varint truncated");
      byte = b[p++];
      lo |= (byte & 0x7f) << shift;
      if (byte < 0x80) return this.#set(lo, 0, p);
    }
    // Byte 4: bits 28-34.
    if (p >= end) throw this.error(start, "varint truncated");
    byte = b[p++];
    lo |= (byte & 0x0f) << 28;
    hi = (byte & 0x7f) >>> 4;
    if (byte < 0x80) return this.#set(lo, hi, p);
    // Bytes 5-8: bits 35-62.
    for (let shift = 3; shift < 31; shift += 7) {
      if (p >= end) throw this.error(start, "varint truncated");
      byte = b[p++];
      hi |= (byte & 0x7f) << shift;
      if (byte < 0x80) return this.#set(lo, hi, p);
    }
    // Byte 9: bit 63 only.
    if (p >= end) throw this.error(start, "varint truncated");
    byte = b[p++];
    if (byte > 1) throw this.error(start, "varint longer than 10 bytes or beyond 64 bits");
    return this.#set(lo, hi | (byte << 31), p);
  }

  #set(lo: number, hi: number, p: number): void {
    this.#lo = lo >>> 0;
    this.#hi = hi >>> 0;
    this.pos = p;
  }

  /** The last varint as a signed 64-bit number (two's complement). */
  #signed(lo: number, hi: number): number {
    if (hi < 0x80000000) return hi * TWO_32 + lo;
    const negLo = (~lo + 1) >>> 0;
    const negHi = (~hi + (negLo === 0 ? 1 : 0)) >>> 0;
    return -(negHi * TWO_32 + negLo);
  }

  /**
   * Reads a field's tag: `tag >>> 3` is the field number, `tag & 7` the wire type. Rejects field number 0, wire types
   * 6 and 7, and groups (wire types 3 and 4).
   */
  tag(): number {
    const start = this.pos;
    this.#varint();
    if (this.#hi !== 0) throw this.error(start, "tag beyond 32 bits");
    const tag = this.#lo;
    const wire = tag & 7;
    if (tag >>> 3 === 0) throw this.error(start, "field number 0");
    if (wire === 3 || wire === 4) {
      throw this.error(start, `group (wire type ${wire}) in field ${tag >>> 3}: not supported`);
    }
    if (wire > 5) throw this.error(start, `invalid wire type ${wire} in field ${tag >>> 3}`);
    return tag;
  }

  /** Reads a varint as an unsigned 64-bit number (see the precision note on {@linkcode ProtobufReader}). */
  uint64(): number {
    this.#varint();
    return this.#hi * TWO_32 + this.#lo;
  }

  /** Reads a varint as a signed 64-bit number (`int64`; see the precision note on {@linkcode ProtobufReader}). */
  int64(): number {
    this.#varint();
    return this.#signed(this.#lo, this.#hi);
  }

  /** Reads a varint as an exact unsigned 64-bit `bigint`. */
  uint64BigInt(): bigint {
    this.#varint();
    return (BigInt(this.#hi) << 32n) | BigInt(this.#lo);
  }

  /** Reads a varint as an exact signed 64-bit `bigint`. */
  int64BigInt(): bigint {
    return BigInt.asIntN(64, this.uint64BigInt());
  }

  /** Reads a varint as `uint32` (its low 32 bits, as protobuf does). */
  uint32(): number {
    this.#varint();
    return this.#lo;
  }

  /** Reads a varint as `int32` (its low 32 bits, signed; negative values are sent as 10-byte varints). */
  int32(): number {
    this.#varint();
    return this.#lo | 0;
  }

  /** Reads a zigzag varint as `sint32`. */
  sint32(): number {
    this.#varint();
    const n = this.#lo;
    return (n >>> 1) ^ -(n & 1);
  }

  /** Reads a zigzag varint as `sint64` (see the precision note on {@linkcode ProtobufReader}). */
  sint64(): number {
    this.#varint();
    const sign = -(this.#lo & 1);
    const lo = ((this.#lo >>> 1) | (this.#hi << 31)) ^ sign;
    const hi = (this.#hi >>> 1) ^ sign;
    return this.#signed(lo >>> 0, hi >>> 0);
  }

  /** Reads a varint as `bool` (any non-zero value is `true`). */
  bool(): boolean {
    this.#varint();
    return (this.#lo | this.#hi) !== 0;
  }

  #need(n: number): number {
    const at = this.pos;
    if (this.end - at < n) throw this.error(at, `${n}-byte value truncated (${this.end - at} bytes left)`);
    this.pos = at + n;
    return at;
  }

  /** Reads a little-endian `fixed32`. */
  fixed32(): number {
    const b = this.data;
    const i = this.#need(4);
    return (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0;
  }

  /** Reads a little-endian `sfixed32`. */
  sfixed32(): number {
    return this.fixed32() | 0;
  }

  /** Reads a little-endian `fixed64` (see the precision note on {@linkcode ProtobufReader}). */
  fixed64(): number {
    const lo = this.fixed32();
    return this.fixed32() * TWO_32 + lo;
  }

  /** Reads a little-endian `sfixed64` (see the precision note on {@linkcode ProtobufReader}). */
  sfixed64(): number {
    const lo = this.fixed32();
    return this.#signed(lo, this.fixed32());
  }

  /** Reads a little-endian IEEE 754 `float`. */
  float(): number {
    const i = this.#need(4);
    return new DataView(this.data.buffer, this.data.byteOffset + i, 4).getFloat32(0, true);
  }

  /** Reads a little-endian IEEE 754 `double`. */
  double(): number {
    const i = this.#need(8);
    return new DataView(this.data.buffer, this.data.byteOffset + i, 8).getFloat64(0, true);
  }

  /** Reads a length prefix and checks it against what is left; returns the start of the value. */
  #len(): number {
    const start = this.pos;
    this.#varint();
    const left = this.end - this.pos;
    if (this.#hi !== 0 || this.#lo > left) {
      throw this.error(start, `length ${this.#hi * TWO_32 + this.#lo} exceeds the ${left} bytes left`);
    }
    const at = this.pos;
    this.pos = at + this.#lo;
    return at;
  }

  /** Reads a length-delimited value (`bytes`, an embedded message, a packed array) as a `subarray` view, no copy. */
  bytes(): Uint8Array {
    const at = this.#len();
    return this.data.subarray(at, this.pos);
  }

  /** Reads a length-delimited value as strict UTF-8 (`string`); invalid UTF-8 is `MESSAGE_INVALID`. */
  string(): string {
    const at = this.#len();
    try {
      return utf8.decode(this.data.subarray(at, this.pos));
    } catch {
      throw this.error(at, "string is not valid UTF-8");
    }
  }

  /** Reads a length-delimited value (an embedded message) and returns a reader of it, sharing `bytes`. */
  message(): ProtobufReader {
    const at = this.#len();
    return new ProtobufReader(this.data, this.baseOffset, at, this.pos);
  }

  /** Skips the value of a field whose `tag` was just read, whatever its wire type (groups are rejected by `tag`). */
  skip(tag: number): void {
    switch (tag & 7) {
      case 0:
        this.#varint();
        return;
      case 1:
        this.#need(8);
        return;
      case 2:
        this.#len();
        return;
      case 5:
        this.#need(4);
        return;
      default:
        throw this.error(this.pos, `cannot skip wire type ${tag & 7}`);
    }
  }
}
