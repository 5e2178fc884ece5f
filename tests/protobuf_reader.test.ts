import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { DecodeError } from "../mod.ts";
import { ProtobufReader } from "../wire.ts";
import { ProtoWriter } from "./peers/etcd_proto_encode.ts";

const U64 = (1n << 64n) - 1n;

function assertInvalid(fn: () => unknown, offset: number, pattern?: RegExp): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof DecodeError, `expected a DecodeError, got ${caught}`);
  assert.equal(caught.code, "MESSAGE_INVALID", caught.message);
  assert.equal(caught.offset, offset, caught.message);
  if (pattern) assert.match(caught.message, pattern);
}

test("protobuf: varints round trip as uint64/int64, exact as bigint, rounded as number", () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: U64 }), (v) => {
      const bytes = new ProtoWriter().varint(v).bytes();
      const r = () => new ProtobufReader(bytes);
      assert.equal(r().uint64BigInt(), v);
      assert.equal(r().int64BigInt(), BigInt.asIntN(64, v));
      assert.equal(r().uint64(), Number(v));
      assert.equal(r().int64(), Number(BigInt.asIntN(64, v)));
      assert.equal(r().uint32(), Number(v & 0xffffffffn));
      assert.equal(r().int32(), Number(BigInt.asIntN(32, v)));
      assert.equal(r().bool(), v !== 0n);
      const reader = r();
      reader.uint64();
      assert.equal(reader.pos, bytes.length);
      assert.ok(reader.done);
    }),
    { numRuns: 2000 },
  );
  // Edges.
  for (const v of [0n, 1n, 127n, 128n, (1n << 53n) - 1n, 1n << 53n, (1n << 63n) - 1n, 1n << 63n, U64]) {
    const bytes = new ProtoWriter().varint(v).bytes();
    assert.equal(new ProtobufReader(bytes).uint64BigInt(), v);
    assert.equal(new ProtobufReader(bytes).int64(), Number(BigInt.asIntN(64, v)));
  }
  assert.equal(new ProtobufReader(new ProtoWriter().varint(-1).bytes()).int64(), -1);
  assert.equal(new ProtobufReader(new ProtoWriter().varint(-1).bytes()).int32(), -1);
});

test("protobuf: zigzag sint32/sint64", () => {
  fc.assert(
    fc.property(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), (v) => {
      const bytes = new ProtoWriter().zigzag(v).bytes();
      assert.equal(new ProtobufReader(bytes).sint64(), Number(v));
    }),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), (v) => {
      assert.equal(new ProtobufReader(new ProtoWriter().zigzag(v).bytes()).sint32(), v);
    }),
  );
});

test("protobuf: fixed32/64, sfixed, float, double", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: U64 }),
      fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      fc.double(),
      (v64, v32, d) => {
        const bytes = new ProtoWriter().fixed(v64, 8).fixed(v32, 4).fixed(v64, 8).fixed(v32, 4).bytes();
        const dv = new DataView(new ArrayBuffer(12));
        dv.setFloat64(0, d, true);
        dv.setFloat32(8, d, true);
        const r = new ProtobufReader(bytes);
        assert.equal(r.fixed64(), Number(v64));
        assert.equal(r.fixed32(), v32);
        assert.equal(r.sfixed64(), Number(BigInt.asIntN(64, v64)));
        assert.equal(r.sfixed32(), v32 | 0);
        const f = new ProtobufReader(new Uint8Array(dv.buffer));
        assert.ok(Object.is(f.double(), d));
        assert.ok(Object.is(f.float(), Math.fround(d)));
      },
    ),
  );
});

type Field =
  | { n: number; wire: 0; v: bigint }
  | { n: number; wire: 1; v: bigint }
  | { n: number; wire: 2; v: Uint8Array }
  | { n: number; wire: 5; v: number };

const fieldArb: fc.Arbitrary<Field> = fc.oneof(
  fc.record({ n: fc.integer({ min: 1, max: 2 ** 29 - 1 }), wire: fc.constant(0 as const), v: fc.bigInt(0n, U64) }),
  fc.record({ n: fc.integer({ min: 1, max: 2 ** 29 - 1 }), wire: fc.constant(1 as const), v: fc.bigInt(0n, U64) }),
  fc.record({
    n: fc.integer({ min: 1, max: 2 ** 29 - 1 }),
    wire: fc.constant(2 as const),
    v: fc.uint8Array({ maxLength: 300 }),
  }),
  fc.record({
    n: fc.integer({ min: 1, max: 2 ** 29 - 1 }),
    wire: fc.constant(5 as const),
    v: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
  }),
);

function encodeFields(fields: Field[]): Uint8Array {
  const w = new ProtoWriter();
  for (const f of fields) {
    w.tag(f.n, f.wire);
    if (f.wire === 0) w.varint(f.v);
    else if (f.wire === 1) w.fixed(f.v, 8);
    else if (f.wire === 2) w.len(f.v);
    else w.fixed(f.v, 4);
  }
  return w.bytes();
}

test("protobuf: messages of random fields read back, and skip() passes over every wire type", () => {
  fc.assert(
    fc.property(fc.array(fieldArb, { maxLength: 20 }), fc.nat(1000), (fields, base) => {
      const bytes = encodeFields(fields);
      const r = new ProtobufReader(bytes, base);
      for (const f of fields) {
        const tag = r.tag();
        assert.equal(tag >>> 3, f.n);
        assert.equal(tag & 7, f.wire);
        if (f.wire === 0) assert.equal(r.uint64BigInt(), f.v);
        else if (f.wire === 1) assert.equal(r.fixed64(), Number(f.v));
        else if (f.wire === 2) {
          const view = r.bytes();
          assert.deepEqual(Array.from(view), Array.from(f.v));
          assert.equal(view.buffer, bytes.buffer, "a view, not a copy");
        } else assert.equal(r.fixed32(), f.v);
      }
      assert.ok(r.done);
      const s = new ProtobufReader(bytes);
      let count = 0;
      while (!s.done) {
        s.skip(s.tag());
        count++;
      }
      assert.equal(count, fields.length);
    }),
    { numRuns: 500 },
  );
});

test("protobuf: embedded messages and strings", () => {
  const inner = new ProtoWriter().tag(1, 2).len(new TextEncoder().encode("héllo")).bytes();
  const outer = new ProtoWriter().tag(3, 0).varint(5).tag(4, 2).len(inner).tag(5, 0).varint(6).bytes();
  const r = new ProtobufReader(outer, 100);
  r.skip(r.tag());
  assert.equal(r.tag(), (4 << 3) | 2);
  const m = r.message();
  assert.equal(m.tag() >>> 3, 1);
  assert.equal(m.string(), "héllo");
  assert.ok(m.done);
  assert.equal(r.tag() >>> 3, 5);
  assert.equal(r.uint32(), 6);
  // An embedded reader's errors are located in the outer input; it cannot read past its own end.
  const bad = new ProtoWriter().tag(4, 2).len([0x08]).tag(5, 0).varint(1).bytes();
  const outerReader = new ProtobufReader(bad, 100);
  outerReader.tag();
  const sub = outerReader.message();
  sub.tag();
  assertInvalid(() => sub.uint32(), 103, /varint truncated/);
});

test("protobuf: malformed input is MESSAGE_INVALID at the element's offset", () => {
  const at = (bytes: number[], base = 0) => new ProtobufReader(Uint8Array.from(bytes), base);
  assertInvalid(() => at([0x80]).uint64(), 0, /truncated/);
  assertInvalid(() => at([]).uint64(), 0, /truncated/);
  assertInvalid(() => at([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]).uint64(), 0, /10 bytes/);
  assertInvalid(() => at([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00]).uint64(), 0, /10 bytes/);
  assertInvalid(() => at([0x0c]).tag(), 0, /end of group \(wire type 4\) in field 1 outside a group/);
  assertInvalid(() => at([0x0e]).tag(), 0, /wire type 6/);
  assertInvalid(() => at([0x0f]).tag(), 0, /wire type 7/);
  assertInvalid(() => at([0x02]).tag(), 0, /field number 0/);
  // Go's field number is int32(wire >> 3): bit 35 alone makes it 0, bit 34 negative.
  assertInvalid(() => at([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]).tag(), 0, /field number 0/);
  assertInvalid(() => at([0x88, 0x80, 0x80, 0x80, 0x40]).tag(), 0, /field number -2147483647/);
  assertInvalid(() => at([0x05, 1, 2]).bytes(), 0, /exceeds/);
  assertInvalid(() => at([0xff, 0xff, 0xff, 0xff, 0x7f]).bytes(), 0, /exceeds/);
  assertInvalid(() => at([1, 2, 3]).fixed32(), 0, /truncated/);
  assertInvalid(() => at([1, 2, 3, 4, 5, 6, 7]).fixed64(), 4, /truncated/);
  assertInvalid(() => at([0x02, 0xc3, 0x28], 10).string(), 11, /UTF-8/);
  const r = at([0x09, 1, 2]); // field 1 fixed64, only 2 bytes
  assertInvalid(() => r.skip(r.tag()), 1, /truncated/);
});

test("protobuf: varints and tags are read as loosely as Go's generated code reads them, no more", () => {
  // (tools/refgen/cmd/damagevectors has Go's generated Unmarshal accept each of these; tests/kubernetes_damage.test.ts
  // checks the Kubernetes decoders against it.)
  const at = (bytes: number[]) => new ProtobufReader(Uint8Array.from(bytes));
  // A tenth byte's bits past the 64th are dropped: bit 63 is its lowest bit.
  const nines = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
  assert.equal(at([...nines, 0x02]).uint64BigInt(), 2n ** 63n - 1n);
  assert.equal(at([...nines, 0x7f]).uint64BigInt(), 2n ** 64n - 1n);
  assert.equal(at([...nines, 0x7e]).int64BigInt(), 2n ** 63n - 1n);
  // A tag's bits past the 35th are dropped ...
  const r = at([0x8a, 0x80, 0x80, 0x80, 0x80, 0x7f, 0x01, 0x09]);
  assert.equal(r.tag(), (1 << 3) | 2);
  assert.deepEqual(Array.from(r.bytes()), [9]);
  // ... and a field number above 2^29 - 1 (bits 32 to 34) reads as 2^29 - 1, the largest field number (unknown here): skipped.
  const large = at([0x88, 0x80, 0x80, 0x80, 0x10, 0x05, 0x10, 0x07]);
  const tag = large.tag();
  assert.deepEqual([tag >>> 3, tag & 7], [2 ** 29 - 1, 0]);
  large.skip(tag);
  assert.equal(large.tag(), 2 << 3);
  assert.equal(large.uint32(), 7);
});

test("protobuf: any input either reads or fails with MESSAGE_INVALID (fuzz)", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      const r = new ProtobufReader(bytes);
      try {
        while (!r.done) r.skip(r.tag());
      } catch (e) {
        assert.ok(e instanceof DecodeError && e.code === "MESSAGE_INVALID", String(e));
        assert.ok(e.offset >= 0 && e.offset <= bytes.length);
      }
      assert.ok(r.pos <= bytes.length);
    }),
    { numRuns: 3000 },
  );
  // Every strict prefix of a valid message with a truncated last field fails; none reads past the end.
  fc.assert(
    fc.property(fc.array(fieldArb, { minLength: 1, maxLength: 5 }), fc.nat(), (fields, cut) => {
      const bytes = encodeFields(fields);
      const prefix = bytes.subarray(0, cut % bytes.length);
      const r = new ProtobufReader(prefix);
      try {
        while (!r.done) r.skip(r.tag());
      } catch (e) {
        assert.ok(e instanceof DecodeError && e.code === "MESSAGE_INVALID", String(e));
      }
      assert.ok(r.pos <= prefix.length);
    }),
  );
});

/** The field numbers of the known fields around the skipped ones (random fields have lower ones). */
const KNOWN_VARINT = 2 ** 29 - 1;
const KNOWN_LEN = 2 ** 29 - 2;

/** A group: start tag, the fields, end tag (field `n`, wire types 3 and 4). */
function group(n: number, inner: Uint8Array): Uint8Array {
  const start = new ProtoWriter().tag(n, 3).bytes();
  const end = new ProtoWriter().tag(n, 4).bytes();
  return Uint8Array.from([...start, ...inner, ...end]);
}

test("protobuf: a group (proto2) is returned by tag() and skipped whole by skip(), nested groups too", () => {
  // Random fields, some wrapped in groups (nested up to three deep), between two known fields: reading the known ones
  // and skipping everything else gives the known ones back, wherever the input is cut into readers' views.
  const nested: fc.Arbitrary<Uint8Array> = fc.letrec<{ node: Uint8Array }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      // (Field numbers below those of the two known fields.)
      fc.array(fieldArb.filter((f) => f.n < KNOWN_LEN), { maxLength: 4 }).map(encodeFields),
      fc.tuple(fc.integer({ min: 1, max: 2 ** 29 - 1 }), fc.array(tie("node"), { maxLength: 3 })).map(([n, parts]) =>
        group(n, Uint8Array.from(parts.flatMap((p) => Array.from(p))))
      ),
    ),
  })).node;
  fc.assert(
    fc.property(nested, fc.array(nested, { maxLength: 3 }), (g, rest) => {
      const skipped = [g, ...rest].flatMap((p) => Array.from(p));
      const bytes = Uint8Array.from([
        ...new ProtoWriter().tag(KNOWN_VARINT, 0).varint(7n).bytes(),
        ...skipped,
        ...new ProtoWriter().tag(KNOWN_LEN, 2).len(Uint8Array.of(1, 2)).bytes(),
      ]);
      const r = new ProtobufReader(bytes);
      const known: unknown[] = [];
      while (!r.done) {
        const tag = r.tag();
        if (tag === KNOWN_VARINT * 8) known.push(r.uint64());
        else if (tag === KNOWN_LEN * 8 + 2) known.push(Array.from(r.bytes()));
        else r.skip(tag);
      }
      assert.deepEqual(known, [7, [1, 2]]);
    }),
  );
  // tag() hands a start of group on: the field number and wire type 3.
  const r = new ProtobufReader(group(5, new ProtoWriter().tag(1, 0).varint(1n).bytes()));
  const tag = r.tag();
  assert.deepEqual([tag >>> 3, tag & 7], [5, 3]);
  r.skip(tag);
  assert.ok(r.done);
});

test("protobuf: malformed groups are MESSAGE_INVALID at their byte", () => {
  const at = (bytes: number[], base = 0) => new ProtobufReader(Uint8Array.from(bytes), base);
  const skipAll = (r: ProtobufReader) => {
    while (!r.done) r.skip(r.tag());
  };
  // Never closed (at the start of the group), also when a nested one is closed.
  assertInvalid(() => skipAll(at([0x08, 0x01, 0x0b, 0x10, 0x01], 100)), 102, /group in field 1 has no end of group/);
  assertInvalid(() => skipAll(at([0x0b, 0x13, 0x14])), 0, /group in field 1 has no end of group/);
  // An end of group outside any group, at the top or after a group closed.
  assertInvalid(() => skipAll(at([0x0b, 0x0c, 0x0c])), 2, /outside a group/);
  // Inside a group, a tag's wire type is all that is read (as in Go's generated code): 6 and 7 are invalid, a start of
  // group of field 0 is a start of group (so this one is never closed), and lengths still must fit.
  assertInvalid(() => skipAll(at([0x0b, 0x0e, 0x0c])), 1, /invalid wire type 6/);
  assertInvalid(() => skipAll(at([0x0b, 0x03, 0x0c])), 0, /group in field 1 has no end of group/);
  assertInvalid(() => skipAll(at([0x0b, 0x12, 0x05, 0x0c])), 2, /exceeds/);
  // A group cannot reach past the end of the message it is in.
  const outer = at([0x12, 0x02, 0x0b, 0x08, 0x01, 0x0c]);
  outer.tag();
  const inner = outer.message();
  assertInvalid(() => skipAll(inner), 4, /varint truncated/);
});

test("protobuf: groups are skipped as Go's generated code skips them, which protobuf-go would refuse", () => {
  const at = (bytes: number[]) => new ProtobufReader(Uint8Array.from(bytes));
  const skipAll = (r: ProtobufReader) => {
    while (!r.done) r.skip(r.tag());
    return r.pos;
  };
  // Closed by the end of another field's group, nested ones too.
  assert.equal(skipAll(at([0x0b, 0x14])), 2);
  assert.equal(skipAll(at([0x0b, 0x13, 0x0c, 0x14])), 4);
  // Tags of field 0 and tags of more than 32 bits inside.
  assert.equal(skipAll(at([0x0b, 0x00, 0x05, 0x02, 0x01, 0x78, 0x05, 1, 2, 3, 4, 0x0c])), 12);
  assert.equal(skipAll(at([0x0b, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f, 0x01, 0x0c])), 9);
  // Nesting is not bounded but by the message (an open group costs a count): 50 000 deep, past protobuf-go's 10 000.
  const deep = (n: number) => [...Array(n).fill(0x0b), ...Array(n).fill(0x0c)];
  assert.equal(skipAll(at(deep(50_000))), 100_000);
});
