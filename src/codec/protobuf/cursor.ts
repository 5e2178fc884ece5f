/**
 * {@linkcode ProtobufCursor}: the one implementation of the protobuf wire format's varints, tags and lengths that
 * watchwire's readers share: {@linkcode ProtobufReader} (the public reader) and the cursor the generated Kubernetes
 * decoders run on. Internal.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";

const TWO_32 = 4294967296;
// Bit w set for the wire types a field's tag may carry: 0 (varint), 1 (fixed64), 2 (length-delimited), 3 (start of a
// group), 5 (fixed32). An end of group (4) is only met inside a group, by `skip`.
const VALID_WIRE = 0b101111;
/** How deeply groups may nest inside a skipped group (protobuf-go's default recursion limit). */
const MAX_GROUP_DEPTH = 10000;

/**
 * A position in protobuf wire data. Every read takes the `end` of the message it is in (nested messages are read in
 * place, bounded by their own end), so a length or varint that runs past it fails there, as Go's generated
 * `Unmarshal` does. Faults are {@linkcode DecodeError} `MESSAGE_INVALID` at `base` + their position in `b`.
 */
export class ProtobufCursor {
  /** The bytes read. */
  readonly b: Uint8Array;
  /** The next byte to read. */
  pos: number;
  /** Where `b[0]` is in the input of the stream, for error offsets. */
  readonly base: number;
  /** The high 32 bits of the last varint read (its low 32 bits are returned). */
  hi = 0;

  constructor(bytes: Uint8Array, start: number, baseOffset: number) {
    this.b = bytes;
    this.pos = start;
    this.base = baseOffset;
  }

  /** A `MESSAGE_INVALID` error at `at` in `b`. */
  fail(at: number, detail: string): DecodeError {
    return new DecodeError("MESSAGE_INVALID", this.base + at, `protobuf: ${detail}`);
  }

  /** Reads a varint of up to 64 bits: returns the low 32 bits (unsigned) and leaves the high ones in `hi`. */
  varint(end: number): number {
    const b = this.b;
    const p = this.pos;
    if (p < end) {
      const x = b[p];
      if (x < 0x80) {
        this.pos = p + 1;
        this.hi = 0;
        return x;
      }
    }
    return this.#varintLong(end);
  }

  // The multi-byte case, out of line so that `varint` stays small enough to inline.
  #varintLong(end: number): number {
    const b = this.b;
    const start = this.pos;
    let p = start;
    let lo = 0;
    let hi = 0;
    let byte = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (p >= end) throw this.fail(start, "varint truncated");
      byte = b[p++];
      lo |= (byte & 0x7f) << shift;
      if (byte < 0x80) {
        this.pos = p;
        this.hi = 0;
        return lo >>> 0;
      }
    }
    if (p >= end) throw this.fail(start, "varint truncated");
    byte = b[p++];
    lo |= (byte & 0x0f) << 28;
    hi = (byte & 0x7f) >>> 4;
    if (byte >= 0x80) {
      for (let shift = 3; shift < 31; shift += 7) {
        if (p >= end) throw this.fail(start, "varint truncated");
        byte = b[p++];
        hi |= (byte & 0x7f) << shift;
        if (byte < 0x80) break;
      }
      if (byte >= 0x80) {
        if (p >= end) throw this.fail(start, "varint truncated");
        byte = b[p++];
        if (byte > 1) throw this.fail(start, "varint longer than 10 bytes or beyond 64 bits");
        hi |= byte << 31;
      }
    }
    this.pos = p;
    this.hi = hi >>> 0;
    return lo >>> 0;
  }

  /**
   * Reads a field's tag: `tag >>> 3` is the field number, `tag & 7` the wire type. Field number 0, wire types 6 and 7,
   * and an end of group (4) outside a group are errors. A start of group (3, proto2's deprecated groups) is returned:
   * no schema watchwire reads has groups, so it is an unknown field to {@linkcode ProtobufCursor.skip}, or a field
   * with the wrong wire type.
   */
  tag(end: number): number {
    // Canonical tags of one or two bytes (field numbers below 2048) with a valid wire type: nearly all.
    const b = this.b;
    const p = this.pos;
    if (p + 1 < end) {
      const x = b[p];
      if (x < 0x80) {
        if (x >= 8 && ((VALID_WIRE >> (x & 7)) & 1) !== 0) {
          this.pos = p + 1;
          return x;
        }
      } else {
        const y = b[p + 1];
        if (y !== 0 && y < 0x80 && ((VALID_WIRE >> (x & 7)) & 1) !== 0) {
          this.pos = p + 2;
          return (x & 0x7f) | (y << 7);
        }
      }
    }
    return this.#tagSlow(end);
  }

  #tagSlow(end: number): number {
    const start = this.pos;
    const t = this.#anyTag(end);
    if ((t & 7) === 4) throw this.fail(start, `end of group (wire type 4) in field ${t >>> 3} outside a group`);
    return t;
  }

  /** A tag of any valid wire type, end of group included. */
  #anyTag(end: number): number {
    const start = this.pos;
    const t = this.varint(end);
    if (this.hi !== 0) throw this.fail(start, "tag beyond 32 bits");
    const w = t & 7;
    if (t >>> 3 === 0) throw this.fail(start, "field number 0");
    if (w > 5) throw this.fail(start, `invalid wire type ${w} in field ${t >>> 3}`);
    return t;
  }

  /** Reads a length prefix; returns the end of the value (which starts at `pos`), checked against `end`. */
  len(end: number): number {
    const p = this.pos;
    if (p < end) {
      const x = this.b[p];
      if (x < 0x80 && x < end - p) {
        this.pos = p + 1;
        return p + 1 + x;
      }
    }
    return this.#lenSlow(end);
  }

  #lenSlow(end: number): number {
    const start = this.pos;
    const n = this.varint(end);
    if (this.hi !== 0 || n > end - this.pos) {
      throw this.fail(start, `length ${this.hi * TWO_32 + n} exceeds the ${end - this.pos} bytes left`);
    }
    return this.pos + n;
  }

  /** `int32`: the low 32 bits of the varint, signed (negative values come as 10-byte varints). */
  int32(end: number): number {
    return this.varint(end) | 0;
  }

  /** `int64` as the nearest double (what `JSON.parse` makes of the exact decimal). */
  int64(end: number): number {
    const lo = this.varint(end);
    const hi = this.hi;
    if (hi < 0x80000000) return hi * TWO_32 + lo;
    const negLo = (~lo + 1) >>> 0;
    const negHi = (~hi + (negLo === 0 ? 1 : 0)) >>> 0;
    return -(negHi * TWO_32 + negLo);
  }

  /** `uint64` as the nearest double. */
  uint64(end: number): number {
    const lo = this.varint(end);
    return this.hi * TWO_32 + lo;
  }

  /** `uint32`: the low 32 bits. */
  uint32(end: number): number {
    return this.varint(end);
  }

  /** `bool`: any non-zero varint is true. */
  bool(end: number): boolean {
    const lo = this.varint(end);
    return (lo | this.hi) !== 0;
  }

  /** Moves past `n` bytes of a fixed-width value, which must fit before `end`; returns where it starts. */
  fixed(end: number, n: number): number {
    const at = this.pos;
    if (end - at < n) throw this.fail(at, `${n}-byte value truncated (${end - at} bytes left)`);
    this.pos = at + n;
    return at;
  }

  /**
   * Skips the value of a field whose tag `t` was just read, whatever its wire type. A group (wire type 3) is skipped
   * to its end of group, which must carry the same field number, as in protobuf-go; nested groups likewise.
   */
  skip(t: number, end: number): void {
    switch (t & 7) {
      case 0:
        this.varint(end);
        return;
      case 1:
        this.fixed(end, 8);
        return;
      case 2:
        this.pos = this.len(end);
        return;
      case 5:
        this.fixed(end, 4);
        return;
      case 3:
        this.#skipGroup(t, end);
        return;
      default:
        throw this.fail(this.pos, `cannot skip wire type ${t & 7}`);
    }
  }

  // Groups are rare (no schema watchwire reads has one), so this path may allocate: the field numbers of the open groups.
  #skipGroup(t: number, end: number): void {
    const start = this.pos - tagLength(t);
    const field = t >>> 3;
    const open = [field];
    while (open.length > 0) {
      if (this.pos >= end) throw this.fail(start, `group in field ${field} has no end of group`);
      const at = this.pos;
      const u = this.#anyTag(end);
      const w = u & 7;
      if (w === 4) {
        const expected = open.pop()!;
        if (u >>> 3 !== expected) {
          throw this.fail(at, `end of group in field ${u >>> 3} closes the group of field ${expected}`);
        }
      } else if (w === 3) {
        if (open.length >= MAX_GROUP_DEPTH) throw this.fail(at, `groups nested more than ${MAX_GROUP_DEPTH} deep`);
        open.push(u >>> 3);
      } else this.skip(u, end);
    }
  }
}

/** How many bytes the varint of tag `t` takes (for the offset of a tag once it has been read). */
export function tagLength(t: number): number {
  return t < 0x80 ? 1 : t < 0x4000 ? 2 : t < 0x200000 ? 3 : t < 0x10000000 ? 4 : 5;
}
