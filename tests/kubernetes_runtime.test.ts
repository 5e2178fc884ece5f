/**
 * The Kubernetes JSON runtime (src/codec/kubernetes/runtime/) against vectors Go produced
 * (fixtures/kubernetes/vectors/, written by tools/refgen/cmd/vectors from the real apimachinery code paths), plus
 * properties that do not need Go.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { DecodeError } from "../mod.ts";
import { ProtobufReader } from "../wire.ts";
import { builtinDecoders, decodeKubernetesProtobufObject } from "../kubernetes.ts";
import { fieldsV1FromCbor, isCborFieldsV1 } from "../src/codec/kubernetes/runtime/kubernetes_cbor.ts";
import { envelope, len } from "./_protobuf.ts";
import { fromHex } from "./_util.ts";
import { readGoString } from "../src/codec/kubernetes/runtime/go_string.ts";
import { forgetRepeatedJson, parseRepeatedJson } from "../src/codec/kubernetes/runtime/repeated_json.ts";
import { base64Std, encodeTable } from "../src/codec/kubernetes/runtime/base64.ts";
import { formatMicroTime, formatTime, ZERO_TIME_SECONDS } from "../src/codec/kubernetes/runtime/go_time.ts";
import { formatDuration } from "../src/codec/kubernetes/runtime/go_duration.ts";
import { canonicalQuantity } from "../src/codec/kubernetes/runtime/quantity.ts";

const dir = fileURLToPath(new URL("../fixtures/kubernetes/vectors/", import.meta.url));

interface VectorFile<V> {
  header: { count: number; go: string; modules: Record<string, string> };
  vectors: V[];
}

function load<V>(name: string): V[] {
  const file = JSON.parse(readFileSync(dir + name, "utf8")) as VectorFile<V>;
  assert.equal(file.vectors.length, file.header.count, `${name}: vector count`);
  assert.ok(file.vectors.length > 500, `${name}: too few vectors`);
  return file.vectors;
}

/** Collects failures instead of stopping at the first, so a regression shows its extent. */
function check(failures: string[], ok: boolean, describe: () => string): void {
  if (!ok && failures.length < 20) failures.push(describe());
  else if (!ok) failures.push("");
}

function assertNoFailures(what: string, failures: string[], total: number): void {
  assert.equal(
    failures.length,
    0,
    `${what}: ${failures.length} of ${total} vectors differ:\n${failures.slice(0, 20).join("\n")}`,
  );
}

test("kubernetes runtime: readGoString gives Go's string for ill-formed UTF-8 of 33-128 bytes, decoded or interned", () => {
  // Each Go vector after an ASCII prefix that brings it to 33-128 bytes: Go decodes an ASCII byte on its own, so the
  // expected string is the prefix followed by the vector's. Read in rounds, so that later rounds hit the table
  // (or find the slot taken by another string of the same length).
  const vectors = load<HexVector>("strings.json").filter((v) => v.hex.length / 2 <= 120);
  const cases: { bytes: Uint8Array; expected: string }[] = [];
  for (const [n, v] of vectors.entries()) {
    const bytes = fromHex(v.hex);
    for (const total of [33, 40 + (n % 20), 64, 65 + (n % 60), 128]) {
      const prefix = `p${n.toString(36)}-`.padEnd(total - bytes.length, "q");
      if (prefix.length + bytes.length !== total) continue;
      const padded = new Uint8Array(total);
      padded.set(new TextEncoder().encode(prefix));
      padded.set(bytes, prefix.length);
      cases.push({ bytes: padded, expected: prefix + (JSON.parse(v.json) as string) });
    }
  }
  assert.ok(cases.length >= 100, `${cases.length} cases`);
  const failures: string[] = [];
  for (let round = 0; round < 4; round++) {
    for (const c of round % 2 === 1 ? [...cases].reverse() : cases) {
      // Rounds 2 and 3 compare interned strings by words (a DataView of the bytes).
      const words = round < 2 ? undefined : new DataView(c.bytes.buffer, c.bytes.byteOffset, c.bytes.byteLength);
      const got = readGoString(c.bytes, 0, c.bytes.length, words);
      check(failures, got === c.expected, () => `${JSON.stringify(got)} for ${JSON.stringify(c.expected)}`);
    }
  }
  assertNoFailures("padded strings", failures, 4 * cases.length);
});

// ---------------------------------------------------------------------------------------------------------------
// Strings

interface HexVector {
  hex: string;
  json: string;
}

test("kubernetes runtime: readGoString equals Go's encoding/json for every string vector", () => {
  const vectors = load<HexVector>("strings.json");
  const failures: string[] = [];
  for (const v of vectors) {
    const bytes = fromHex(v.hex);
    const expected = JSON.parse(v.json) as string;
    // alone, again (intern table hit), and inside a larger buffer (start/end honoured)
    const padded = new Uint8Array(bytes.length + 7);
    padded.set([0xe2, 0x82, 0x41], 0);
    padded.set(bytes, 3);
    padded.set([0xff, 0x41, 0xc3, 0xa9], bytes.length + 3);
    const got = [
      readGoString(bytes, 0, bytes.length),
      readGoString(bytes, 0, bytes.length),
      readGoString(padded, 3, 3 + bytes.length),
    ];
    for (const g of got) check(failures, g === expected, () => `${v.hex}: got ${JSON.stringify(g)}, Go ${v.json}`);
  }
  assertNoFailures("strings", failures, vectors.length);
});

test("kubernetes runtime: readGoString compares interned strings by words (a DataView of the bytes) exactly", () => {
  // Two strings of one length that differ in a byte the intern table's hash does not read share its slot: only the
  // compare tells them apart, at any alignment of the input and any position of the differing byte.
  const hashed = (n: number) => new Set([0, n - 1, n >>> 1, n >>> 2, (n * 3) >>> 2, (n * 7) >>> 3]);
  fc.assert(
    fc.property(
      fc.string({ unit: fc.constantFrom(..."abcdefghij-./0123456789é"), minLength: 5, maxLength: 40 }),
      fc.nat(7),
      fc.nat(),
      (text, offset, pick) => {
        const a = new TextEncoder().encode(text);
        if (a.length > 64) return;
        const free = [...Array(a.length).keys()].filter((i) => !hashed(a.length).has(i));
        if (free.length === 0) return;
        const b = a.slice();
        const k = free[pick % free.length];
        b[k] = b[k] === 0x7a ? 0x79 : 0x7a; // another ASCII byte
        for (const bytes of [a, b, a, b]) {
          const buf = new Uint8Array(bytes.length + offset + 3).fill(0x41);
          buf.set(bytes, offset);
          const words = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
          const expected = new TextDecoder().decode(bytes);
          if (expected.includes("\uFFFD")) return; // a cut multi-byte character: Go's rules, tested elsewhere
          assert.equal(readGoString(buf, offset, offset + bytes.length, words), expected);
          assert.equal(readGoString(buf, offset, offset + bytes.length), expected);
        }
      },
    ),
    { numRuns: 500 },
  );
});

test("kubernetes runtime: readGoString replaces per byte as Go does, not per maximal subpart as TextDecoder", () => {
  // Spot checks whose expected values are written out: Go's per-byte U+FFFD (each also appears in strings.json).
  assert.equal(readGoString(Uint8Array.of(0xe2, 0x82, 0x41), 0, 3), "\uFFFD\uFFFDA");
  assert.equal(new TextDecoder().decode(Uint8Array.of(0xe2, 0x82, 0x41)), "\uFFFDA");
  assert.equal(readGoString(Uint8Array.of(0xed, 0xa0, 0x80), 0, 3), "\uFFFD\uFFFD\uFFFD");
  assert.equal(readGoString(Uint8Array.of(0xef, 0xbb, 0xbf, 0x61), 0, 4), "\uFEFFa");
  assert.equal(readGoString(Uint8Array.of(0xef, 0xbf, 0xbd), 0, 3), "\uFFFD");
});

test("kubernetes runtime: readGoString equals TextDecoder on well-formed UTF-8 of any length", () => {
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), fc.nat(5), (s, offset) => {
      const encoded = new TextEncoder().encode(s);
      const buf = new Uint8Array(encoded.length + offset + 2);
      buf.set(encoded, offset);
      assert.equal(readGoString(buf, offset, offset + encoded.length), decoder.decode(encoded));
    }),
    { numRuns: 500 },
  );
});

test("kubernetes runtime: readGoString's intern table never returns a colliding string", () => {
  // 20 000 distinct short ASCII strings (the table has 4096 slots, so most collide), read twice in different orders.
  const strings = Array.from(
    { length: 20000 },
    (_, i) => `k${(i * 2654435761 >>> 0).toString(36)}${"x".repeat(i % 23)}`,
  );
  const encoder = new TextEncoder();
  const encoded = strings.map((s) => encoder.encode(s));
  for (const order of [1, -1]) {
    for (let k = 0; k < strings.length; k++) {
      const i = order === 1 ? k : strings.length - 1 - k;
      assert.equal(readGoString(encoded[i], 0, encoded[i].length), strings[i]);
    }
  }
  // the second table (33-128 bytes, any UTF-8; 1024 slots): ASCII and non-ASCII strings of every length it takes
  const long = Array.from({ length: 20000 }, (_, i) => {
    const base = `${(i * 2654435761 >>> 0).toString(36)}-${i % 2 === 0 ? "é" : "x"}-${"0123456789abcdef".repeat(8)}`;
    return base.slice(0, 33 + (i % 96) - (i % 2 === 0 ? 1 : 0));
  });
  const longEncoded = long.map((s) => encoder.encode(s));
  assert.ok(longEncoded.every((e) => e.length >= 33 && e.length <= 128));
  assert.ok(longEncoded.some((e) => e.length === 33) && longEncoded.some((e) => e.length === 128));
  // with words (a DataView of the bytes) too: the same strings, each table entry compared four bytes at a time
  for (let k = 0; k < long.length; k += 7) {
    const e = longEncoded[k];
    assert.equal(readGoString(e, 0, e.length, new DataView(e.buffer, e.byteOffset, e.byteLength)), long[k]);
  }
  for (const order of [1, -1]) {
    for (let k = 0; k < long.length; k++) {
      const i = order === 1 ? k : long.length - 1 - k;
      assert.equal(readGoString(longEncoded[i], 0, longEncoded[i].length), long[i]);
    }
  }
  // same length and hash-slot pressure, differing in one byte only
  const a = encoder.encode("abcdefghijklmnop");
  const b = encoder.encode("abcdefghijklmnoq");
  assert.equal(readGoString(a, 0, a.length), "abcdefghijklmnop");
  assert.equal(readGoString(b, 0, b.length), "abcdefghijklmnoq");
  assert.equal(readGoString(a, 0, a.length), "abcdefghijklmnop");
});

// ---------------------------------------------------------------------------------------------------------------
// []byte

test("kubernetes runtime: base64Std equals Go's encoding/json for every []byte vector", () => {
  const vectors = load<HexVector>("bytes.json");
  const failures: string[] = [];
  for (const v of vectors) {
    const bytes = fromHex(v.hex);
    const expected = JSON.parse(v.json) as string;
    const padded = new Uint8Array(bytes.length + 5);
    padded.set(bytes, 2);
    for (const g of [base64Std(bytes, 0, bytes.length), encodeTable(padded, 2, 2 + bytes.length)]) {
      check(failures, g === expected, () => `${v.hex.slice(0, 40)}: got ${g.slice(0, 40)}, Go ${v.json.slice(0, 40)}`);
    }
  }
  assertNoFailures("bytes", failures, vectors.length);
});

test("kubernetes runtime: base64Std and the table encoder agree with btoa", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(3), (bytes, offset) => {
      const buf = new Uint8Array(bytes.length + offset);
      buf.set(bytes, offset);
      let binary = "";
      for (const b of bytes) binary += String.fromCharCode(b);
      const expected = btoa(binary);
      assert.equal(base64Std(buf, offset, buf.length), expected);
      assert.equal(encodeTable(buf, offset, buf.length), expected);
    }),
    { numRuns: 500 },
  );
});

// ---------------------------------------------------------------------------------------------------------------
// metav1.Time, metav1.MicroTime

interface TimeVector {
  pb: string;
  json: string;
  seconds?: string;
  nanos?: number;
}

/** Reads a Timestamp message as Go's generated Unmarshal does: seconds int64, nanos the varint's low 32 bits. */
function readTimestamp(pb: Uint8Array): { seconds: bigint; nanos: number } {
  const reader = new ProtobufReader(pb);
  let seconds = 0n;
  let nanos = 0;
  while (!reader.done) {
    const tag = reader.tag();
    if (tag === 0x08) seconds = reader.int64BigInt();
    else if (tag === 0x10) nanos = reader.int32();
    else reader.skip(tag);
  }
  return { seconds, nanos };
}

function checkTimes(name: string, format: (seconds: number | bigint, nanos: number) => string | null): void {
  const vectors = load<TimeVector>(name);
  const failures: string[] = [];
  let empty = 0;
  for (const v of vectors) {
    const expected = JSON.parse(v.json) as string | null;
    const pb = fromHex(v.pb);
    if (pb.length === 0) {
      // An empty Timestamp message is the zero time: the generated decoder prints null without calling format.
      assert.equal(expected, null, `${name}: empty message`);
      empty++;
      continue;
    }
    const { seconds, nanos } = readTimestamp(pb);
    assert.equal(seconds, BigInt(v.seconds!), `${name}: seconds of ${v.pb}`);
    assert.equal(nanos, v.nanos, `${name}: nanos of ${v.pb}`);
    const got = [format(seconds, nanos)];
    // as a number too, twice (formatTime caches recent results)
    if (Number.isSafeInteger(Number(seconds))) got.push(format(Number(seconds), nanos), format(Number(seconds), nanos));
    for (const g of got) {
      check(failures, g === expected, () => `(${v.seconds}, ${v.nanos}): got ${JSON.stringify(g)}, Go ${v.json}`);
    }
  }
  assert.equal(empty, 1, `${name}: the empty-message vector`);
  assertNoFailures(name, failures, vectors.length);
}

test("kubernetes runtime: formatTime equals Go's metav1.Time JSON for every vector", () => {
  checkTimes("times.json", (seconds) => formatTime(seconds));
});

test("kubernetes runtime: formatMicroTime equals Go's metav1.MicroTime JSON for every vector", () => {
  checkTimes("microtimes.json", formatMicroTime);
});

test("kubernetes runtime: formatTime/formatMicroTime: number and bigint agree; zero time is null; bad input throws", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: -(2 ** 52) + 1, max: 2 ** 52 - 1 }),
      fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      (s, n) => {
        assert.equal(formatTime(s), formatTime(BigInt(s)));
        assert.equal(formatMicroTime(s, n), formatMicroTime(BigInt(s), n));
      },
    ),
    { numRuns: 1000 },
  );
  assert.equal(formatTime(ZERO_TIME_SECONDS), null);
  assert.equal(formatMicroTime(ZERO_TIME_SECONDS, 999), null);
  assert.throws(() => formatTime(1.5), RangeError);
  assert.throws(() => formatTime(2n ** 63n), RangeError);
  assert.throws(() => formatMicroTime(0, 2 ** 31), RangeError);
});

// ---------------------------------------------------------------------------------------------------------------
// metav1.Duration

interface DurationVector {
  nanos: string;
  pb: string;
  json: string;
}

test("kubernetes runtime: formatDuration equals Go's metav1.Duration JSON for every vector", () => {
  const vectors = load<DurationVector>("durations.json");
  const failures: string[] = [];
  for (const v of vectors) {
    const expected = JSON.parse(v.json) as string;
    const reader = new ProtobufReader(fromHex(v.pb));
    assert.equal(reader.tag(), 0x08);
    const nanos = reader.int64BigInt();
    assert.equal(nanos, BigInt(v.nanos));
    const got = [formatDuration(nanos)];
    if (Number.isSafeInteger(Number(nanos))) got.push(formatDuration(Number(nanos)));
    for (const g of got) check(failures, g === expected, () => `${v.nanos}: got ${JSON.stringify(g)}, Go ${v.json}`);
  }
  assertNoFailures("durations", failures, vectors.length);
  assert.throws(() => formatDuration(0.5), RangeError);
  assert.throws(() => formatDuration(-(2n ** 63n) - 1n), RangeError);
});

// ---------------------------------------------------------------------------------------------------------------
// resource.Quantity

interface QuantityVector {
  hex?: string;
  s?: string;
  pb: string;
  json: string | null;
  error?: string;
}

test("kubernetes runtime: canonicalQuantity equals Go's Quantity Unmarshal + JSON for every vector", () => {
  const vectors = load<QuantityVector>("quantities.json");
  const failures: string[] = [];
  let invalid = 0;
  let emptyMessage = 0;
  for (const v of vectors) {
    const expected = v.json === null ? undefined : JSON.parse(v.json) as string;
    const pb = fromHex(v.pb);
    if (v.hex === undefined) {
      // A Quantity message without field 1 is the zero Quantity.
      assert.equal(pb.length, 0);
      assert.equal(expected, "0");
      emptyMessage++;
      continue;
    }
    const reader = new ProtobufReader(pb);
    assert.equal(reader.tag(), 0x0a);
    const field = reader.bytes();
    const s = readGoString(field, 0, field.length);
    if (v.s !== undefined) assert.equal(s, v.s);
    if (expected === undefined) invalid++;
    // twice: computed, then from the cache
    for (const g of [canonicalQuantity(s), canonicalQuantity(s)]) {
      check(
        failures,
        g === expected,
        () => `${JSON.stringify(s)}: got ${JSON.stringify(g)}, Go ${v.json} ${v.error ?? ""}`,
      );
    }
  }
  assert.equal(emptyMessage, 1);
  assert.ok(invalid > 100, `only ${invalid} invalid quantities`);
  assertNoFailures("quantities", failures, vectors.length);
});

interface FieldsCborVector {
  hex: string;
  json?: unknown;
  error?: string;
}

test("kubernetes runtime: FieldsV1 bytes that are CBOR give Go's FieldsV1 JSON for every vector, or fail where Go fails", () => {
  const vectors = load<FieldsCborVector>("fieldsv1_cbor.json");
  const failures: string[] = [];
  let refused = 0;
  for (const v of vectors) {
    const bytes = fromHex(v.hex);
    assert.ok(isCborFieldsV1(bytes[0]), v.hex);
    let got: unknown;
    let error: unknown;
    try {
      got = fieldsV1FromCbor(bytes, 0, bytes.length, 100);
    } catch (e) {
      error = e;
    }
    if (v.error !== undefined) {
      refused++;
      const at = error instanceof DecodeError ? error.offset : -1;
      check(
        failures,
        at >= 100 && at <= 100 + bytes.length,
        () => `${v.hex}: Go fails (${v.error}), we gave ${error ?? JSON.stringify(got)}`,
      );
      continue;
    }
    let same = error === undefined;
    try {
      assert.deepEqual(got, v.json);
    } catch {
      same = false;
    }
    check(
      failures,
      same,
      () => `${v.hex.slice(0, 200)}: Go ${JSON.stringify(v.json)?.slice(0, 200)}, we ${error ?? JSON.stringify(got)}`,
    );
  }
  assert.deepEqual(failures, []);
  assert.ok(refused > 500 && refused < vectors.length - 1000, `${refused} of ${vectors.length} refused`);
});

test("kubernetes runtime: a managedFields entry whose FieldsV1 holds CBOR decodes to its JSON, in full and in metadata mode", () => {
  // metadata (1) { name (1), managedFields (17) { manager (1), fieldsType (6), fieldsV1 (7) { Raw (1) } } }, its
  // FieldsV1 the CBOR that FieldsV1.MarshalCBOR (k8s.io/apimachinery v0.37.2) writes for
  // {"f:metadata":{"f:labels":{".":{},"f:app":{}}}}: map keys as byte strings, as Kubernetes' encoder writes strings.
  const cbor = fromHex("a14a663a6d65746164617461a148663a6c6162656c73a2412ea045663a617070a0");
  const entry = [...len(1, "kubectl"), ...len(6, "FieldsV1"), ...len(7, len(1, Array.from(cbor)))];
  const pod = [...len(1, [...len(1, "p"), ...len(17, entry)])];
  const expected = [{
    manager: "kubectl",
    fieldsType: "FieldsV1",
    fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:app": {} } } },
  }];
  const full = builtinDecoders.decoder("v1", "Pod")!(Uint8Array.from(pod), 0, pod.length, {}, 0);
  assert.deepEqual((full.metadata as { managedFields: unknown }).managedFields, expected);
  const lazy = decodeKubernetesProtobufObject(Uint8Array.from(envelope("v1", "Pod", pod)), {
    decoders: builtinDecoders,
    mode: "metadata",
  });
  assert.deepEqual(JSON.parse(JSON.stringify(lazy.metadata)).managedFields, expected);
  // Damaged CBOR fails as a DecodeError at its byte in the object (on first read in metadata mode).
  const bad = [...len(1, [...len(1, "p"), ...len(17, [...len(7, len(1, [0xa1, 0x41, 0x61, 0xf7]))])])];
  assert.throws(
    () => builtinDecoders.decoder("v1", "Pod")!(Uint8Array.from(bad), 0, bad.length, {}, 0),
    (e: unknown) => e instanceof DecodeError && e.code === "MESSAGE_INVALID" && e.offset === bad.length - 1,
  );
});

test("kubernetes runtime: any bytes read as Kubernetes CBOR give a value or a DecodeError inside them (fuzz)", () => {
  // Random CBOR-ish bytes: a CBOR start byte, then heads, lengths and break codes drawn often enough to nest.
  const cborish = fc.tuple(
    fc.constantFrom(0xa0, 0xa1, 0xa2, 0xbf, 0xf6, 0xc6, 0xd5, 0xd9),
    fc.array(
      fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x9f, 0xbf, 0xff, 0x5f, 0x7f, 0xd9, 0xc0, 0xc1)),
      {
        maxLength: 48,
      },
    ),
  ).map(([first, rest]) => Uint8Array.from([first, ...rest]));
  fc.assert(
    fc.property(cborish, (bytes) => {
      try {
        const value = fieldsV1FromCbor(bytes, 0, bytes.length, 7);
        assert.ok(value === null || (typeof value === "object" && !Array.isArray(value)));
      } catch (e) {
        assert.ok(e instanceof DecodeError && e.code === "MESSAGE_INVALID", String(e));
        assert.ok(e.offset >= 7 && e.offset <= 7 + bytes.length, `offset ${e.offset} of ${bytes.length} bytes`);
      }
    }),
    { numRuns: 3000 },
  );
});

// ---------------------------------------------------------------------------------------------------------------
// FieldsV1 JSON that repeats: parsed, then built again from its recorded shape

/** `text` as UTF-8 at `offset` in a larger buffer, and `JSON.parse`'s reading of it (or what it throws). */
function placed(text: string, offset: number): { buf: Uint8Array; start: number; end: number } {
  const encoded = new TextEncoder().encode(text);
  const buf = new Uint8Array(offset + encoded.length + 5).fill(0x20);
  buf.set(encoded, offset);
  return { buf, start: offset, end: offset + encoded.length };
}

/** Calls parseRepeatedJson `times` times on `text` (at several offsets) and checks each result against JSON.parse. */
function checkRepeated(text: string, times = 4): void {
  const expected = JSON.parse(text);
  let previous: unknown;
  for (let i = 0; i < times; i++) {
    const { buf, start, end } = placed(text, i % 5);
    const got = parseRepeatedJson(buf, start, end, lenientUtf8);
    assert.deepStrictEqual(got, expected);
    // the same keys in the same order, at every depth
    assert.equal(JSON.stringify(got), JSON.stringify(expected));
    if (expected !== null && typeof expected === "object") {
      assert.notEqual(got, previous, "each call returns objects of its own");
      // A caller's change to one result does not reach the next.
      if (!Array.isArray(got)) (got as Record<string, unknown>)["f:changed by the caller"] = 1;
    }
    previous = got;
  }
}
const lenientUtf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** FieldsV1-like text: objects of objects, keys from Kubernetes' prefixes plus awkward ones, duplicates allowed. */
const fieldsV1Text: fc.Arbitrary<string> = fc.letrec<{ tree: string }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant("{}"),
    fc.array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom(".", "f:metadata", "f:labels", "f:app", 'k:{"type":"Ready"}', 'v:"10.0.0.1/24"', "i:0"),
          fc.constantFrom("__proto__", "0", "1", "10", "constructor", "é", "\u2028", "a\\b", ""),
          fc.string({ maxLength: 12 }),
        ),
        tie("tree"),
      ),
      { minLength: 1, maxLength: 5 },
    ).map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`),
  ),
})).tree;

test("kubernetes runtime: FieldsV1 JSON parsed again and again equals JSON.parse each time, in objects of its own", () => {
  fc.assert(fc.property(fieldsV1Text, (text) => checkRepeated(text)), { numRuns: 1500 });
  // any JSON value (arrays, strings, numbers, nesting of every kind): never given a shape, still JSON.parse's
  fc.assert(fc.property(fc.json(), (text) => checkRepeated(text)), { numRuns: 800 });
});

test("kubernetes runtime: FieldsV1 JSON with awkward keys and depths is built exactly as JSON.parse reads it", () => {
  // `__proto__` stays an own property and the prototype stays Object.prototype.
  const proto = '{"f:metadata":{"__proto__":{"f:x":{}},"f:y":{}}}';
  checkRepeated(proto, 5);
  for (let i = 0; i < 3; i++) {
    const { buf, start, end } = placed(proto, 0);
    const inner = (parseRepeatedJson(buf, start, end, lenientUtf8) as Record<string, Record<string, unknown>>)[
      "f:metadata"
    ];
    assert.ok(Object.hasOwn(inner, "__proto__"));
    assert.equal(Object.getPrototypeOf(inner), Object.prototype);
  }
  // integer-like keys come first (as JSON.parse orders them); duplicates keep the first place and the last value
  checkRepeated('{"f:b":{},"1":{"f:c":{}},"0":{},"f:b":{"f:d":{}},"10":{}}', 5);
  // deeper than the shapes kept (64), and just inside it
  for (const depth of [63, 64, 65, 200]) checkRepeated(`${'{"f:a":'.repeat(depth)}{}${"}".repeat(depth)}`, 4);
  // not a tree of objects: arrays, other values, a top-level value that is not an object
  checkRepeated('{"f:a":{"f:b":[{},{}]},"f:padding":{}}', 4);
  checkRepeated('{"f:a":{"f:b":null},"f:padding-padding":{}}', 4);
  checkRepeated('["f:a","f:b","f:c","f:d","f:e"]', 4);
  checkRepeated('"f:a string of more than sixteen bytes"', 4);
  // ill-formed UTF-8 inside a key: the lenient decoding's U+FFFD, the same at every call
  const bad = Uint8Array.from([
    ...new TextEncoder().encode('{"f:a\xff'.slice(0, 5)),
    0xff,
    ...new TextEncoder().encode('":{},"f:bb":{}}'),
  ]);
  const expected = JSON.parse(lenientUtf8.decode(bad));
  for (let i = 0; i < 4; i++) assert.deepStrictEqual(parseRepeatedJson(bad, 0, bad.length, lenientUtf8), expected);
});

test("kubernetes runtime: bytes that are not JSON throw at every call, never recorded", () => {
  for (const text of ['{"f:metadata":{"f:labels":{}}', '{"f:metadata":{}} x', '\uFEFF{"f:metadata":{"f:a":{}}}']) {
    const { buf, start, end } = placed(text, 1);
    for (let i = 0; i < 4; i++) assert.throws(() => parseRepeatedJson(buf, start, end, lenientUtf8), SyntaxError);
  }
});

test("kubernetes runtime: many FieldsV1 texts sharing the 256 slots never give another text's tree", () => {
  // 3 000 distinct texts of a few lengths (most share a slot with others), each read three times in three orders.
  const texts = Array.from(
    { length: 3000 },
    (_, i) => `{"f:metadata":{"f:labels":{"f:${(i * 2654435761 >>> 0).toString(36).padStart(7, "0")}":{}}},"f:n":{}}`,
  );
  for (const order of [1, -1, 1]) {
    for (let k = 0; k < texts.length; k++) {
      const i = order === 1 ? k : texts.length - 1 - k;
      const { buf, start, end } = placed(texts[i], i % 4);
      assert.deepStrictEqual(parseRepeatedJson(buf, start, end, lenientUtf8), JSON.parse(texts[i]));
    }
  }
  // Two texts of one length that differ in a byte the slot's hash does not read share the slot: only the compare
  // tells them apart, wherever that byte is.
  const hashed = (n: number) => new Set([n >>> 1, n - 3, n >>> 2, (n * 3) >>> 2, (n * 7) >>> 3, 5]);
  fc.assert(
    fc.property(fieldsV1Text, fc.nat(), (text, pick) => {
      const a = new TextEncoder().encode(text);
      const letters = [...a.keys()].filter((i) => a[i] >= 0x61 && a[i] <= 0x7a && !hashed(a.length).has(i));
      if (a.length < 16 || letters.length === 0) return;
      const b = a.slice();
      const k = letters[pick % letters.length];
      b[k] = b[k] === 0x7a ? 0x79 : 0x7a;
      const texts = [a, b].map((bytes) => new TextDecoder().decode(bytes));
      // a recorded (seen twice), then b compared with it, recorded in its place, then each again
      for (const i of [0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0]) checkRepeated(texts[i], 1);
    }),
    { numRuns: 1500 },
  );
  // one text read many times between others that evict it, and after everything recorded is forgotten
  for (let k = 0; k < 40; k++) {
    checkRepeated(texts[k % 3], 1);
    if (k % 10 === 9) forgetRepeatedJson();
  }
  for (let k = 0; k < 600; k++) checkRepeated(texts[k % 7], 2);
});

test("kubernetes runtime: a managedFields entry's JSON FieldsV1 decoded again and again, in full and metadata mode", () => {
  const fieldsV1 =
    '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"web\\"}":{}}}}';
  const entry = [...len(1, "kubectl"), ...len(6, "FieldsV1"), ...len(7, len(1, fieldsV1))];
  const pod = [...len(1, [...len(1, "p"), ...len(17, entry)])];
  const expected = [{ manager: "kubectl", fieldsType: "FieldsV1", fieldsV1: JSON.parse(fieldsV1) }];
  const seen: unknown[] = [];
  for (let i = 0; i < 4; i++) {
    const full = builtinDecoders.decoder("v1", "Pod")!(Uint8Array.from(pod), 0, pod.length, {}, 0);
    const managed = (full.metadata as { managedFields: { fieldsV1: Record<string, unknown> }[] }).managedFields;
    assert.deepStrictEqual(managed, expected);
    assert.ok(!seen.includes(managed[0].fieldsV1));
    seen.push(managed[0].fieldsV1);
    managed[0].fieldsV1["f:status"] = {}; // the caller's change stays in this event
    const lazy = decodeKubernetesProtobufObject(Uint8Array.from(envelope("v1", "Pod", pod)), {
      decoders: builtinDecoders,
      mode: "metadata",
    });
    assert.deepStrictEqual(JSON.parse(JSON.stringify(lazy.metadata)).managedFields, expected);
  }
});
