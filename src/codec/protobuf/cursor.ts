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
/**
 * The largest field number protobuf allows. Go's generated code takes a tag's field number as `int32(wire >> 3)`, so
 * a tag of more than 32 bits can carry a larger one, which no message can have: such a tag reads as this number, the
 * largest a schema may use, and that no Kubernetes or etcd message uses (so an unknown field there, as in Go).
 */
const MAX_FIELD = 0x1fffffff;

/**
 * The last tag the slow path of `tag` read, which may be longer than its value needs: where it starts, for the offset
 * of an error found after it. Kept here rather than in each cursor, where it would cost two fields per cursor made
 * (several per event) for something only a malformed or unusual tag needs.
 */
const slowTag: { cursor: ProtobufCursor | undefined; start: number; end: number } = {
  cursor: undefined,
  start: 0,
  end: 0,
};

/**
 * A position in protobuf wire data. Every read takes the `end` of the message it is in (nested messages are read in
 * place, bounded by their own end), so a length or varint that runs past it fails there, as Go's generated
 * `Unmarshal` does. Faults are {@linkcode DecodeError} `MESSAGE_INVALID` at `base` + their position in `b`.
 *
 * What is a fault is what Go's gogo-protobuf generated code (which Kubernetes' and etcd's Go types use, and so
 * client-go and etcd's client) refuses, no more: that code is looser than protobuf-go in three places, and so is this
 * cursor, so that a decoder gives an object wherever Go does (tools/refgen/cmd/damagevectors has Go show it):
 * - a varint's tenth byte may carry bits past the 64th, which are dropped (only an eleventh byte is refused);
 * - a tag's field number is bits 3 to 34 of its varint (Go's `int32(wire >> 3)`): higher bits are dropped, and 0 or a
 *   negative number is refused;
 * - a group is skipped by counting its starts and ends, whatever their field numbers, and so are the tags inside it
 *   (field number 0 included), with no limit on nesting but the message's end.
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
        if (byte >= 0x80) throw this.fail(start, "varint longer than 10 bytes");
        // Bit 63; what the byte holds above it is past the 64th bit, and dropped (as Go's generated code does).
        hi |= (byte & 1) << 31;
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
    const lo = this.varint(end);
    // Go's field number: int32(wire >> 3), bits 3 to 34; anything above is dropped.
    const field = (lo >>> 3) | ((this.hi & 7) << 29);
    const w = lo & 7;
    if (field <= 0) throw this.fail(start, `field number ${field}`);
    if (w > 5) throw this.fail(start, `invalid wire type ${w} in field ${field}`);
    if (w === 4) throw this.fail(start, `end of group (wire type 4) in field ${field} outside a group`);
    slowTag.cursor = this;
    slowTag.start = start;
    slowTag.end = this.pos;
    return field > MAX_FIELD ? MAX_FIELD * 8 + w : field * 8 + w;
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
   * Skips the value of a field whose tag `t` was just read, whatever its wire type. A group (wire type 3) is skipped to
   * the end of group that closes it, counting the groups nested in it, whatever the field numbers of their tags (as
   * Go's generated code does: protobuf-go would refuse an end of group of another field, or a tag of field 0).
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
        this.skipGroup(t >>> 3, this.tagStart(t), end);
        return;
      default:
        throw this.fail(this.pos, `cannot skip wire type ${t & 7}`);
    }
  }

  /** Where the tag `t` just read starts (a tag the slow path read may be longer than its value needs). */
  tagStart(t: number): number {
    const slow = slowTag;
    return slow.cursor === this && slow.end === this.pos ? slow.start : this.pos - tagLength(t);
  }

  /**
   * Skips a group of field `field` whose start tag (at `start`, for the offset of an error) was just read. Groups are
   * rare (no schema watchwire reads has one). Inside one, a tag's field number is not looked at (Go reads only its
   * wire type there), and an open group costs a count, not memory, however deep groups nest.
   */
  skipGroup(field: number, start: number, end: number): void {
    let depth = 1;
    while (depth > 0) {
      if (this.pos >= end) throw this.fail(start, `group in field ${field} has no end of group`);
      const at = this.pos;
      const w = this.varint(end) & 7;
      if (w === 4) depth--;
      else if (w === 3) depth++;
      else if (w > 5) throw this.fail(at, `invalid wire type ${w} in a group`);
      else this.skip(w, end);
    }
  }
}

/** How many bytes the varint of tag `t` takes (for the offset of a tag once it has been read). */
function tagLength(t: number): number {
  return t < 0x80 ? 1 : t < 0x4000 ? 2 : t < 0x200000 ? 3 : t < 0x10000000 ? 4 : 5;
}
