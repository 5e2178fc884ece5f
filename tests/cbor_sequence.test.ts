/**
 * The CBOR sequence framing (src/framing/cbor_sequence_decoder.ts): each data item's bytes found from its heads, over
 * any chunking; damage (a cut item, an indefinite length never ended, an oversized length, heads that are not
 * well-formed, nesting) as typed errors at the right offset, after every item before it. The items are bytes this
 * test builds itself (with the small encoder below), or written out by hand from RFC 8949's appendix A.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { DecodeError } from "../src/errors.ts";
import { CborSequenceDecoder } from "../src/framing/cbor_sequence_decoder.ts";
import { CborSequenceDecoderStream } from "../src/framing/cbor_sequence_decoder_stream.ts";
import { assertSplitInvariant, bytewise, concat, drain, endless, fromHex, streamOf, within } from "./_util.ts";

const decode = (options: { maxEventBytes?: number; maxDepth?: number } = {}) => (source: ReadableStream<Uint8Array>) =>
  source.pipeThrough(new CborSequenceDecoderStream(options));

const plain = (values: Uint8Array[]) => values.map((v) => Array.from(v));

/** A head: major type and argument, in the shortest form (or the form `size` forces: 0 inline, 1, 2, 4, 8 bytes). */
function head(major: number, argument: number, size?: 0 | 1 | 2 | 4 | 8): number[] {
  const m = major << 5;
  const n = size ?? (argument < 24 ? 0 : argument < 0x100 ? 1 : argument < 0x10000 ? 2 : argument < 2 ** 32 ? 4 : 8);
  if (n === 0) return [m | argument];
  const out = [m | (24 + Math.log2(n))];
  for (let i = n - 1; i >= 0; i--) out.push(Math.floor(argument / 2 ** (8 * i)) % 256);
  return out;
}

/** A CBOR item, as the arbitrary below describes it. */
type Item =
  | { t: "uint" | "nint"; v: number }
  | { t: "bytes" | "text"; v: number[]; chunks?: number[][] }
  | { t: "array"; v: Item[]; indefinite: boolean }
  | { t: "map"; v: [Item, Item][]; indefinite: boolean }
  | { t: "tag"; tag: number; v: Item }
  | { t: "simple"; v: number[] };

function encode(item: Item): number[] {
  switch (item.t) {
    case "uint":
      return head(0, item.v);
    case "nint":
      return head(1, item.v);
    case "bytes":
    case "text": {
      const major = item.t === "bytes" ? 2 : 3;
      if (item.chunks === undefined) return [...head(major, item.v.length), ...item.v];
      return [(major << 5) | 31, ...item.chunks.flatMap((c) => [...head(major, c.length), ...c]), 0xff];
    }
    case "array":
      return item.indefinite
        ? [0x9f, ...item.v.flatMap(encode), 0xff]
        : [...head(4, item.v.length), ...item.v.flatMap(encode)];
    case "map": {
      const pairs = item.v.flatMap(([k, v]) => [...encode(k), ...encode(v)]);
      return item.indefinite ? [0xbf, ...pairs, 0xff] : [...head(5, item.v.length), ...pairs];
    }
    case "tag":
      return [...head(6, item.tag), ...encode(item.v)];
    case "simple":
      return item.v;
  }
}

const ascii = fc.array(fc.integer({ min: 0x20, max: 0x7e }), { maxLength: 40 });
const leaf: fc.Arbitrary<Item> = fc.oneof(
  fc.record({ t: fc.constantFrom("uint" as const, "nint" as const), v: fc.oneof(fc.nat(30), fc.nat(2 ** 40)) }),
  fc.record({ t: fc.constantFrom("bytes" as const, "text" as const), v: ascii }),
  ascii.chain((v) =>
    fc.array(ascii, { maxLength: 3 }).map((chunks) => ({ t: "text" as const, v, chunks: [v, ...chunks] }))
  ),
  fc.constantFrom<Item>(
    { t: "simple", v: [0xf4] },
    { t: "simple", v: [0xf5] },
    { t: "simple", v: [0xf6] },
    { t: "simple", v: [0xf7] },
    { t: "simple", v: [0xf8, 0xff] },
    { t: "simple", v: [0xf9, 0x3c, 0x00] },
    { t: "simple", v: [0xfa, 0x47, 0xc3, 0x50, 0x00] },
    { t: "simple", v: [0xfb, 0x3f, 0xf1, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a] },
  ),
);
const { item } = fc.letrec<{ item: Item }>((tie) => ({
  item: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.record({
      t: fc.constant("array" as const),
      v: fc.array(tie("item"), { maxLength: 4 }),
      indefinite: fc.boolean(),
    }),
    fc.record({
      t: fc.constant("map" as const),
      v: fc.array(fc.tuple(tie("item"), tie("item")), { maxLength: 3 }),
      indefinite: fc.boolean(),
    }),
    fc.record({ t: fc.constant("tag" as const), tag: fc.oneof(fc.nat(30), fc.constant(55799)), v: tie("item") }),
  ),
}));

test("cbor sequence: RFC 8949 appendix A items, one after another, each handed on whole", async () => {
  const items = [
    "00", // 0
    "1bffffffffffffffff", // 18446744073709551615
    "3903e7", // -1000
    "f97e00", // NaN
    "fb7ff0000000000000", // Infinity
    "f0", // simple(16)
    "f8ff", // simple(255)
    "c074323031332d30332d32315432303a30343a30305a", // 0("2013-03-21T20:04:00Z")
    "d74401020304", // 23(h'01020304')
    "40", // h''
    "6449455446", // "IETF"
    "83010203", // [1, 2, 3]
    "a201020304", // {1: 2, 3: 4}
    "5f42010243030405ff", // (_ h'0102', h'030405')
    "7f657374726561646d696e67ff", // (_ "strea", "ming")
    "9f018202039f0405ffff", // [_ 1, [2, 3], [_ 4, 5]]
    "83018202039f0405ff", // [1, [2, 3], [_ 4, 5]]
    "bf61610161629f0203ffff", // {_ "a": 1, "b": [_ 2, 3]}
    "d9d9f7a0", // 55799({})
  ].map(fromHex);
  const input = concat(items);
  for (const chunks of [[input], bytewise(input)]) {
    const { values, error } = await drain(decode()(streamOf(chunks)));
    assert.equal(error, undefined);
    assert.deepEqual(plain(values), plain(items));
  }
  // Offsets: each item's first byte in the input.
  const offsets: number[] = [];
  const decoder = new CborSequenceDecoder();
  for (const chunk of bytewise(input)) decoder.push(chunk, (_item, offset) => offsets.push(offset));
  decoder.finish();
  let at = 0;
  assert.deepEqual(offsets, items.map((i) => (at += i.length) - i.length));
  assert.deepEqual((await drain(decode()(streamOf<Uint8Array>([])))).values, []);
});

test("cbor sequence: random items, random splits down to single bytes, give the same items", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 5 }), async (items) => {
      const encoded = items.map((i) => Uint8Array.from(encode(i)));
      const input = concat(encoded);
      const { values, error } = await assertSplitInvariant(input, decode(), { runs: 10, normalize: plain });
      assert.equal(error, undefined);
      assert.deepEqual(plain(values), plain(encoded));
    }),
    { numRuns: 80 },
  );
});

test("cbor sequence: an item within a chunk is a view of it; one that spans chunks a buffer of its own", () => {
  const input = fromHex("83010203" + "6449455446");
  const seen: Uint8Array[] = [];
  const decoder = new CborSequenceDecoder();
  decoder.push(input.subarray(0, 6), (i) => seen.push(i));
  decoder.push(input.subarray(6), (i) => seen.push(i));
  decoder.finish();
  assert.equal(seen[0].buffer, input.buffer, "the first item is a view of its chunk");
  assert.notEqual(seen[1].buffer, input.buffer, "the second was copied, once");
  assert.equal(seen[1].byteLength, seen[1].buffer.byteLength, "into a buffer of exactly its length");
  assert.deepEqual(Array.from(seen[1]), [0x64, 0x49, 0x45, 0x54, 0x46]);
});

/** One damaged input: the good items before it, the damage, the error expected (offset within the damage). */
const DAMAGE: {
  name: string;
  hex: string;
  code: string;
  at: number;
  options?: { maxEventBytes?: number; maxDepth?: number };
}[] = [
  { name: "a cut item", hex: "83010203".slice(0, 6), code: "TRUNCATED", at: 0 },
  { name: "a cut head", hex: "8219", code: "TRUNCATED", at: 0 },
  { name: "a cut string", hex: "a1646b6579656c", code: "TRUNCATED", at: 0 },
  { name: "an indefinite-length array never ended", hex: "9f0102", code: "TRUNCATED", at: 0 },
  { name: "an indefinite-length map never ended", hex: "bf616101", code: "TRUNCATED", at: 0 },
  { name: "an indefinite-length string never ended", hex: "5f4101", code: "TRUNCATED", at: 0 },
  { name: "a tag without its content", hex: "d9d9f7", code: "TRUNCATED", at: 0 },
  {
    name: "an oversized string length",
    hex: "a1416b5bffffffffffffff00",
    code: "MESSAGE_TOO_LARGE",
    at: 0,
    options: { maxEventBytes: 1000 },
  },
  {
    name: "an oversized array count",
    hex: "9a00100000",
    code: "MESSAGE_TOO_LARGE",
    at: 0,
    options: { maxEventBytes: 1000 },
  },
  {
    name: "an oversized map count",
    hex: "d9d9f7b9ffff",
    code: "MESSAGE_TOO_LARGE",
    at: 0,
    options: { maxEventBytes: 1000 },
  },
  {
    name: "small items that add up past the limit",
    hex: "98ff" + "00".repeat(255),
    code: "MESSAGE_TOO_LARGE",
    at: 0,
    options: { maxEventBytes: 100 },
  },
  { name: "reserved additional information 28", hex: "821c", code: "MESSAGE_INVALID", at: 1 },
  { name: "reserved additional information 30 on a tag", hex: "a161611e", code: "MESSAGE_INVALID", at: 3 },
  { name: "additional information 29 on a simple value", hex: "fd", code: "MESSAGE_INVALID", at: 0 },
  { name: "an indefinite-length integer", hex: "821f", code: "MESSAGE_INVALID", at: 1 },
  { name: "an indefinite-length tag (a bad tag)", hex: "81df00", code: "MESSAGE_INVALID", at: 1 },
  { name: "a break outside an indefinite-length item", hex: "8201ff", code: "MESSAGE_INVALID", at: 2 },
  { name: "a break at the top", hex: "ff", code: "MESSAGE_INVALID", at: 0 },
  { name: "a break after a map's key", hex: "bf6161ff", code: "MESSAGE_INVALID", at: 3 },
  { name: "a text chunk in an indefinite byte string", hex: "5f4101610aff", code: "MESSAGE_INVALID", at: 3 },
  { name: "an indefinite chunk in an indefinite string", hex: "7f7fffff", code: "MESSAGE_INVALID", at: 1 },
  { name: "a simple value under 32 in two bytes", hex: "81f818", code: "MESSAGE_INVALID", at: 1 },
  { name: "nesting deeper than maxDepth", hex: "8181818100", code: "MESSAGE_INVALID", at: 3, options: { maxDepth: 3 } },
  { name: "tags count as levels", hex: "c1c2c300", code: "MESSAGE_INVALID", at: 2, options: { maxDepth: 2 } },
];

test("cbor sequence: damage is a typed error at its offset, after every item before it, in any split", async () => {
  const good = [fromHex("83010203"), fromHex("a0"), fromHex("d9d9f7a16161f6")];
  const before = concat(good);
  for (const damage of DAMAGE) {
    const input = concat([before, fromHex(damage.hex)]);
    const { values, error } = await assertSplitInvariant(input, decode(damage.options), { runs: 20, normalize: plain });
    assert.ok(error instanceof DecodeError, damage.name);
    assert.equal(error.code, damage.code, `${damage.name}: ${error.message}`);
    assert.equal(error.offset, before.length + damage.at, `${damage.name}: ${error.message}`);
    assert.deepEqual(plain(values), plain(good), damage.name);
  }
});

test("cbor sequence: deep nesting within maxDepth passes, one level more fails at the deepest head", async () => {
  const depth = 1000;
  const nested = new Uint8Array(depth + 1).fill(0x81);
  nested[depth] = 0x00; // [[[...[0]...]]]: `depth` arrays
  const ok = await drain(decode({ maxDepth: depth })(streamOf([nested])));
  assert.equal(ok.error, undefined);
  assert.equal(ok.values.length, 1);
  const over = await drain(decode({ maxDepth: depth - 1 })(streamOf(bytewise(nested))));
  assert.ok(over.error instanceof DecodeError);
  assert.equal(over.error.code, "MESSAGE_INVALID");
  assert.equal(over.error.offset, depth - 1);
});

test("cbor sequence: an oversized length fails at once, without waiting for (or holding) the rest", async () => {
  // A byte string announcing 1 GiB, then nothing: the stream never ends, the error comes anyway.
  const stream = endless([fromHex("d9d9f7a1446b696e64"), fromHex("5a40000000"), fromHex("0102")]);
  const { error } = await within(drain(decode({ maxEventBytes: 1 << 20 })(stream)), 5000, "the error");
  assert.ok(error instanceof DecodeError);
  assert.equal(error.code, "MESSAGE_TOO_LARGE");
  assert.equal(error.offset, 0);
});

test("cbor sequence: options are checked", () => {
  assert.throws(() => new CborSequenceDecoder({ maxEventBytes: -1 }), RangeError);
  assert.throws(() => new CborSequenceDecoder({ maxDepth: 1.5 }), RangeError);
});
