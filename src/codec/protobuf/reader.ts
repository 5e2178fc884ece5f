/**
 * {@linkcode ProtobufReader}: a small, bounds-checked reader of the protobuf wire format, for decoders written ahead of
 * time from a schema (no reflection, no code generation at run time, no `eval`).
 *
 * @module
 */
import type { DecodeError } from "../../errors.ts";
import { ProtobufCursor } from "./cursor.ts";

/**
 * Protobuf wire types (the low 3 bits of a tag). Groups (3 and 4) are proto2's deprecated groups: the reader's `tag`
 * returns a start of group, and `skip` skips the whole group.
 *
 * @example
 * ```ts
 * import { ProtobufWireType } from "watchwire/wire";
 *
 * const tag = 0x12; // field 2, length-delimited
 * console.log(tag >>> 3, (tag & 7) === ProtobufWireType.LEN); // 2 true
 * ```
 */
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
 * Reads protobuf wire data from a `Uint8Array`, field by field. Every read is bounds-checked; malformed input (a varint
 * longer than 10 bytes, a length past the end, an invalid wire type, an end of group outside its group, a field number
 * of 0 or below, invalid UTF-8 in a string) throws {@linkcode DecodeError} `MESSAGE_INVALID` whose `offset` is
 * `baseOffset` plus the position (in `bytes`) of the element at fault. What is malformed is what the Go code generated
 * by gogo-protobuf (Kubernetes' and etcd's Go types, so client-go's and etcd's clients) refuses: it reads more loosely
 * than protobuf-go, so a tenth varint byte's bits past the 64th are dropped, a tag's field number is its bits 3 to 34
 * (`int32(wire >> 3)`, a number above 2^29 - 1 reading as 2^29 - 1, the largest a schema may use and one no Kubernetes
 * or etcd message uses), and groups are skipped by counting their starts and ends, whatever their field numbers.
 * Nothing is allocated per byte: length-delimited fields are `subarray` views of the input (no copy), and 64-bit
 * varints are assembled in two 32-bit halves. (The varint, tag and length reading is the same code as the generated
 * Kubernetes decoders': {@linkcode ProtobufCursor}.)
 *
 * 64-bit integers: {@linkcode ProtobufReader.int64} and {@linkcode ProtobufReader.uint64} return JavaScript numbers,
 * exact up to 2^53 (`Number.MAX_SAFE_INTEGER`) in magnitude and rounded to the nearest double beyond it (as
 * `JSON.parse` rounds the same decimal). Revisions and versions stay far below 2^53; randomly chosen 64-bit ids (etcd
 * lease, cluster and member ids) may not: read those with {@linkcode ProtobufReader.int64BigInt} /
 * {@linkcode ProtobufReader.uint64BigInt} where exactness matters.
 *
 * @example
 * ```ts
 * import { ProtobufReader, ProtobufWireType } from "watchwire/wire";
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
export class ProtobufReader extends ProtobufCursor {
  /** The end of the readable range (exclusive). */
  readonly end: number;

  /** A reader of `bytes` (all of it, or `start` to `end`); `baseOffset` locates `bytes[0]` in a larger input. */
  constructor(bytes: Uint8Array, baseOffset = 0, start = 0, end = bytes.length) {
    super(bytes, start, baseOffset);
    this.end = end;
  }

  /** The bytes read. */
  get data(): Uint8Array {
    return this.b;
  }

  /** Offset of `bytes[0]` in a larger input, added to every error's offset. */
  get baseOffset(): number {
    return this.base;
  }

  /** Whether everything has been read. */
  get done(): boolean {
    return this.pos >= this.end;
  }

  /** A `MESSAGE_INVALID` error at position `at` of `bytes`. */
  error(at: number, detail: string): DecodeError {
    return this.fail(at, detail);
  }

  /**
   * Reads a field's tag: `tag >>> 3` is the field number, `tag & 7` the wire type. Rejects a field number of 0 or below
   * (bits 3 to 34 of the varint, as Go's `int32(wire >> 3)`), wire types 6 and 7, and an end of group (4) outside a
   * group; a start of group (3) is returned, for `skip`.
   */
  override tag(): number {
    return super.tag(this.end);
  }

  /** Reads a varint as an unsigned 64-bit number (see the precision note on {@linkcode ProtobufReader}). */
  override uint64(): number {
    return super.uint64(this.end);
  }

  /** Reads a varint as a signed 64-bit number (`int64`; see the precision note on {@linkcode ProtobufReader}). */
  override int64(): number {
    return super.int64(this.end);
  }

  /** Reads a varint as an exact unsigned 64-bit `bigint`. */
  uint64BigInt(): bigint {
    const lo = this.varint(this.end);
    return (BigInt(this.hi) << 32n) | BigInt(lo);
  }

  /** Reads a varint as an exact signed 64-bit `bigint`. */
  int64BigInt(): bigint {
    return BigInt.asIntN(64, this.uint64BigInt());
  }

  /** Reads a varint as `uint32` (its low 32 bits, as protobuf does). */
  override uint32(): number {
    return super.uint32(this.end);
  }

  /** Reads a varint as `int32` (its low 32 bits, signed; negative values are sent as 10-byte varints). */
  override int32(): number {
    return super.int32(this.end);
  }

  /** Reads a zigzag varint as `sint32`. */
  sint32(): number {
    const n = this.varint(this.end);
    return (n >>> 1) ^ -(n & 1);
  }

  /** Reads a zigzag varint as `sint64` (see the precision note on {@linkcode ProtobufReader}). */
  sint64(): number {
    const lo0 = this.varint(this.end);
    const hi0 = this.hi;
    const sign = -(lo0 & 1);
    const lo = (((lo0 >>> 1) | (hi0 << 31)) ^ sign) >>> 0;
    const hi = ((hi0 >>> 1) ^ sign) >>> 0;
    return signed(lo, hi);
  }

  /** Reads a varint as `bool` (any non-zero value is `true`). */
  override bool(): boolean {
    return super.bool(this.end);
  }

  /** Reads a little-endian `fixed32`. */
  fixed32(): number {
    const b = this.b;
    const i = this.fixed(this.end, 4);
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
    return signed(lo, this.fixed32());
  }

  /** Reads a little-endian IEEE 754 `float`. */
  float(): number {
    const i = this.fixed(this.end, 4);
    return new DataView(this.b.buffer, this.b.byteOffset + i, 4).getFloat32(0, true);
  }

  /** Reads a little-endian IEEE 754 `double`. */
  double(): number {
    const i = this.fixed(this.end, 8);
    return new DataView(this.b.buffer, this.b.byteOffset + i, 8).getFloat64(0, true);
  }

  /** Reads a length-delimited value (`bytes`, an embedded message, a packed array) as a `subarray` view, no copy. */
  bytes(): Uint8Array {
    const e = this.len(this.end);
    const at = this.pos;
    this.pos = e;
    return this.b.subarray(at, e);
  }

  /** Reads a length-delimited value as strict UTF-8 (`string`); invalid UTF-8 is `MESSAGE_INVALID`. */
  string(): string {
    const e = this.len(this.end);
    const at = this.pos;
    this.pos = e;
    try {
      return utf8.decode(this.b.subarray(at, e));
    } catch {
      throw this.fail(at, "string is not valid UTF-8");
    }
  }

  /** Reads a length-delimited value (an embedded message) and returns a reader of it, sharing `bytes`. */
  message(): ProtobufReader {
    const e = this.len(this.end);
    const at = this.pos;
    this.pos = e;
    return new ProtobufReader(this.b, this.base, at, e);
  }

  /**
   * Skips the value of a field whose `tag` was just read, whatever its wire type. A group is skipped to the end of group
   * that closes it, counting the groups nested in it however deep, and whatever the field numbers of the tags in it
   * (Go's generated code skips an unknown group so; protobuf-go would refuse an end of group of another field).
   */
  override skip(tag: number): void {
    super.skip(tag, this.end);
  }
}

/** A signed 64-bit number (two's complement) from its unsigned 32-bit halves, as the nearest double. */
function signed(lo: number, hi: number): number {
  if (hi < 0x80000000) return hi * TWO_32 + lo;
  const negLo = (~lo + 1) >>> 0;
  const negHi = (~hi + (negLo === 0 ? 1 : 0)) >>> 0;
  return -(negHi * TWO_32 + negLo);
}
