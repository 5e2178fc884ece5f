import { test } from "node:test";
import assert from "node:assert/strict";
import { constants, gunzipSync, gzipSync, type ZlibOptions } from "node:zlib";
import fc from "fast-check";
import { DecodeError } from "../mod.ts";
import { GunzipStream } from "../wire.ts";
import {
  assertSplitInvariant,
  bytewise,
  concat,
  cutsFor,
  drain,
  drainSlowly,
  failingAfter,
  splitAt,
  streamOf,
  utf8,
} from "./_util.ts";

type Decode = (source: ReadableStream<Uint8Array>) => ReadableStream<Uint8Array>;
/** The default: the built-in inflater, in every runtime. */
const own: Decode = (source) => source.pipeThrough(new GunzipStream());
/** `native: true`: the runtime's DecompressionStream where it passes the probe (Node), the built-in one elsewhere. */
const native: Decode = (source) => source.pipeThrough(new GunzipStream({ native: true }));
const paths: [string, Decode][] = [["own", own], ["native", native]];

/** gzip with the runtime's zlib (a plain Uint8Array, not a Buffer). */
const gzip = (data: Uint8Array, options: ZlibOptions = {}): Uint8Array => new Uint8Array(gzipSync(data, options));

/** gzip with the web `CompressionStream`. */
async function webGzip(data: Uint8Array): Promise<Uint8Array> {
  const { values, error } = await drain(
    streamOf<BufferSource>([data.slice()]).pipeThrough(new CompressionStream("gzip")),
  );
  assert.equal(error, undefined);
  return concat(values);
}

/** Decodes `chunks`: the output (joined) and the error, if any. */
async function gunzip(chunks: Uint8Array[], decode: Decode = own): Promise<{ output: Uint8Array; error: unknown }> {
  const { values, error } = await drain(decode(streamOf(chunks)));
  return { output: concat(values), error };
}

/** Compares bytes without asking assert for a diff of large arrays (slow, and unreadable). */
function assertBytes(actual: Uint8Array, expected: Uint8Array, label = "bytes"): void {
  const n = Math.min(actual.length, expected.length);
  let i = 0;
  while (i < n && actual[i] === expected[i]) i++;
  if (i < n || actual.length !== expected.length) {
    assert.fail(`${label}: ${actual.length} bytes, expected ${expected.length}; they differ from byte ${i}`);
  }
}

/** Deterministic pseudo-random bytes (mulberry32). */
function random(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let s = seed >>> 0;
  for (let i = 0; i < length; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    out[i] = (t ^ (t >>> 14)) & 0xff;
  }
  return out;
}

/** Watch-event-like NDJSON of about `size` bytes. */
function watchJson(size: number): Uint8Array {
  const lines: string[] = [];
  for (let i = 0, total = 0; total < size; i++) {
    const line = JSON.stringify({
      type: i % 3 ? "MODIFIED" : "ADDED",
      object: {
        kind: "Pod",
        metadata: {
          name: `web-${i % 97}-${(i * 7919) % 10007}`,
          namespace: `ns-${i % 7}`,
          resourceVersion: `${1000 + i}`,
        },
        status: { phase: i % 5 ? "Running" : "Pending", podIP: `10.0.${i % 256}.${(i * 13) % 256}` },
      },
    }) + "\n";
    lines.push(line);
    total += line.length;
  }
  return utf8(lines.join(""));
}

/** A random block repeated: matches ~30000 bytes back, near the 32 KiB window limit. */
const farRepeats = (() => {
  const block = random(30000, 7);
  return concat([block, block, block, block.subarray(0, 12345)]);
})();

const SAMPLES: [string, Uint8Array][] = [
  ["empty", new Uint8Array(0)],
  ["one byte", Uint8Array.of(42)],
  ["short text", utf8("hello, hello, hello gzip!")],
  ["watch json 300 KiB", watchJson(300_000)],
  ["random 100 KiB", random(100_000, 1)],
  ["zeros 200 KiB", new Uint8Array(200_000)],
  ["far repeats", farRepeats],
];

const OPTIONS: [string, ZlibOptions][] = [
  ["level 0", { level: 0 }],
  ["level 1", { level: 1 }],
  ["level 9", { level: 9 }],
  ["fixed Huffman", { strategy: constants.Z_FIXED }],
  ["Huffman only", { strategy: constants.Z_HUFFMAN_ONLY }],
  ["RLE", { strategy: constants.Z_RLE }],
];

/** Cuts `bytes` into pieces of pseudo-random sizes between 1 and `max`. */
function randomPieces(bytes: Uint8Array, max: number, seed: number): Uint8Array[] {
  const sizes = random(bytes.length + 1, seed);
  const cuts: number[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    at += 1 + Math.floor((sizes[i % sizes.length] / 256) * max);
    cuts.push(at);
  }
  return splitAt(bytes, cuts);
}

test("gunzip: zlib levels and strategies round-trip, native and built-in alike", async () => {
  for (const [name, data] of SAMPLES) {
    for (const [label, options] of OPTIONS) {
      const gz = gzip(data, options);
      for (const [path, decode] of paths) {
        const whole = await gunzip([gz], decode);
        assert.equal(whole.error, undefined, `${name}, ${label}, ${path}`);
        assertBytes(whole.output, data, `${name}, ${label}, ${path}`);
        const pieces = await gunzip(randomPieces(gz, 5000, data.length), decode);
        assert.equal(pieces.error, undefined, `${name}, ${label}, ${path}, in pieces`);
        assertBytes(pieces.output, data, `${name}, ${label}, ${path}, in pieces`);
      }
    }
  }
});

test("gunzip: the compressors really produce the block types the tests are about", () => {
  const data = watchJson(20_000);
  const blockType = (gz: Uint8Array) => (gz[10] >>> 1) & 3; // the first block header follows the 10-byte header
  assert.equal(blockType(gzip(data, { level: 0 })), 0);
  assert.equal(blockType(gzip(data, { strategy: constants.Z_FIXED })), 1);
  assert.equal(blockType(gzip(data, { level: 9 })), 2);
});

test("gunzip: CompressionStream output", async () => {
  for (const [name, data] of SAMPLES) {
    const gz = await webGzip(data);
    for (const [path, decode] of paths) {
      const { output, error } = await gunzip(randomPieces(gz, 3000, 3), decode);
      assert.equal(error, undefined, `${name}, ${path}`);
      assertBytes(output, data, `${name}, ${path}`);
    }
  }
});

test("gunzip: multi-member bodies (2 and 5 members, one of them empty)", async () => {
  const a = watchJson(70_000);
  const b = utf8("second member\n");
  const c = farRepeats;
  const d = random(5000, 9);
  const two = concat([gzip(a, { level: 1 }), gzip(b)]);
  const five = concat([
    gzip(a),
    gzip(new Uint8Array(0)),
    gzip(c, { level: 9 }),
    await webGzip(d),
    gzip(b, { level: 0 }),
  ]);
  for (const [path, decode] of paths) {
    for (const [input, expected] of [[two, concat([a, b])], [five, concat([a, c, d, b])]]) {
      for (const chunks of [[input], randomPieces(input, 200, 5), randomPieces(input, 20000, 6)]) {
        const { output, error } = await gunzip(chunks, decode);
        assert.equal(error, undefined, path);
        assertBytes(output, expected, path);
      }
    }
  }
});

test("gunzip: empty input is an empty body, with no error", async () => {
  for (const [path, decode] of paths) {
    assert.deepEqual(await drain(decode(streamOf([]))), { values: [], error: undefined }, path);
    assert.deepEqual(await drain(decode(streamOf([new Uint8Array(0)]))), { values: [], error: undefined }, path);
  }
});

test("gunzip: zero padding after the last member is accepted", async () => {
  const data = utf8("padded\n");
  const input = concat([gzip(data), gzip(data), new Uint8Array(100)]);
  for (const [path, decode] of paths) {
    const { output, error } = await gunzip(bytewise(input), decode);
    assert.equal(error, undefined, path);
    assertBytes(output, concat([data, data]), path);
  }
});

test("gunzip: output comes in bounded pieces, as it is produced", async () => {
  const data = new Uint8Array(3_000_000);
  const gz = gzip(data, { level: 9 }); // ~3 KiB: one input chunk expands a thousandfold
  const { values, error } = await drain(own(streamOf([gz])));
  assert.equal(error, undefined);
  assert.ok(values.length >= 30, `${values.length} pieces`);
  for (const v of values) assert.ok(v.length <= 96 * 1024, `a piece of ${v.length} bytes`);
  assertBytes(concat(values), data);
});

test("gunzip: header fields FEXTRA, FNAME, FCOMMENT and FHCRC are skipped, the header CRC checked", async () => {
  const data = utf8("with a full header");
  const plain = gzip(data);
  const header = [0x1f, 0x8b, 8, 2 | 4 | 8 | 16, 1, 2, 3, 4, 0, 3];
  header.push(5, 0, 0x41, 0x70, 2, 0, 0xee); // FEXTRA: XLEN 5, subfield "Ap" of length 2
  header.push(...utf8("name.json"), 0, ...utf8("a comment"), 0);
  const crc = crc32Reference(Uint8Array.from(header));
  const member = concat([Uint8Array.from([...header, crc & 0xff, (crc >>> 8) & 0xff]), plain.subarray(10)]);
  for (const [path, decode] of paths) {
    const { output, error } = await gunzip(bytewise(member), decode);
    assert.equal(error, undefined, path);
    assertBytes(output, data, path);
  }
  const emptyExtra = concat([Uint8Array.of(0x1f, 0x8b, 8, 4 | 8, 0, 0, 0, 0, 0, 3, 0, 0, 0x78, 0), plain.subarray(10)]);
  for (const [path, decode] of paths) {
    const { output, error } = await gunzip(bytewise(concat([emptyExtra, member])), decode);
    assert.equal(error, undefined, path);
    assertBytes(output, concat([data, data]), path);
  }
  const bad = member.slice();
  bad[header.length] ^= 0xff;
  await expectFault(bad, "DECOMPRESSION_FAILED", header.length, "");
});

/** CRC-32 bit by bit, independent of the library's table-driven one. */
function crc32Reference(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * Decodes `input` with the built-in decoder whole, byte by byte and split at random: expects a DecodeError with `code`
 * at `offset` and exactly `output` decoded before it, every time; with `native: true`, expects a DecodeError with
 * `code` and some prefix of `output`.
 */
async function expectFault(input: Uint8Array, code: string, offset: number, output: string | Uint8Array) {
  const expected = typeof output === "string" ? utf8(output) : output;
  const result = await assertSplitInvariant(input, own, { runs: 20, normalize: (v) => Array.from(concat(v)) });
  assert.ok(result.error instanceof DecodeError, String(result.error));
  assert.equal(`${result.error.code}@${result.error.offset}`, `${code}@${offset}`, result.error.message);
  assertBytes(concat(result.values), expected);
  const viaNative = await gunzip([input], native);
  assert.ok(viaNative.error instanceof DecodeError, String(viaNative.error));
  assert.equal(viaNative.error.code, code, viaNative.error.message);
  assertBytes(viaNative.output, expected.subarray(0, viaNative.output.length));
}

test("gunzip: bad magic, method and flags", async () => {
  const member = gzip(utf8("abc"));
  const patched = (at: number, value: number) => {
    const copy = member.slice();
    copy[at] = value;
    return copy;
  };
  await expectFault(patched(0, 0x1e), "DECOMPRESSION_FAILED", 0, "");
  await expectFault(patched(1, 0x8c), "DECOMPRESSION_FAILED", 1, "");
  await expectFault(patched(2, 7), "DECOMPRESSION_FAILED", 2, "");
  await expectFault(patched(3, 0x20), "DECOMPRESSION_FAILED", 3, "");
  await expectFault(utf8('{"not":"gzip"}'), "DECOMPRESSION_FAILED", 0, "");
  await expectFault(new Uint8Array(4), "DECOMPRESSION_FAILED", 0, "");
});

test("gunzip: garbage after a member, and after zero padding", async () => {
  const member = gzip(utf8("abc"));
  await expectFault(concat([member, utf8("junk")]), "DECOMPRESSION_FAILED", member.length, "abc");
  await expectFault(
    concat([member, member, Uint8Array.of(0x1f, 0x8c)]),
    "DECOMPRESSION_FAILED",
    2 * member.length + 1,
    "abcabc",
  );
  // Native zlib stops looking after zero padding; the built-in decoder insists it is all zeros.
  const padded = concat([member, new Uint8Array(3), Uint8Array.of(1)]);
  const { output, error } = await gunzip(bytewise(padded));
  assert.ok(error instanceof DecodeError, String(error));
  assert.equal(`${error.code}@${error.offset}`, `DECOMPRESSION_FAILED@${member.length + 3}`);
  assertBytes(output, utf8("abc"));
});

test("gunzip: CRC and length mismatches, after all the member's output", async () => {
  const data = watchJson(250_000);
  const gz = gzip(data);
  const badCrc = gz.slice();
  badCrc[gz.length - 8] ^= 1;
  const badSize = gz.slice();
  badSize[gz.length - 1] ^= 0x80;
  for (const [input, offset] of [[badCrc, gz.length - 8], [badSize, gz.length - 4]] as const) {
    const { output, error } = await gunzip([input]);
    assert.ok(error instanceof DecodeError, String(error));
    assert.equal(`${error.code}@${error.offset}`, `DECOMPRESSION_FAILED@${offset}`);
    assertBytes(output, data);
    const viaNative = await gunzip([input], native);
    assert.ok(viaNative.error instanceof DecodeError, String(viaNative.error));
    assert.equal(viaNative.error.code, "DECOMPRESSION_FAILED");
  }
  const small = gzip(utf8("tiny"));
  const smallBad = small.slice();
  smallBad[small.length - 5] ^= 0xff;
  await expectFault(
    concat([gzip(utf8("first ")), smallBad]),
    "DECOMPRESSION_FAILED",
    26 + small.length - 8,
    "first tiny",
  );
});

test("gunzip: truncation anywhere inside a member is TRUNCATED, with the output so far", async () => {
  const a = utf8("the first member, ".repeat(20));
  const b = random(300, 4);
  const members = [gzip(a), gzip(new Uint8Array(0)), gzip(b, { level: 0 })];
  const input = concat(members);
  const full = concat([a, b]);
  const boundaries = new Set([0, members[0].length, members[0].length + members[1].length, input.length]);
  for (let cut = 0; cut <= input.length; cut++) {
    for (const [path, decode] of paths) {
      const { output, error } = await gunzip(splitAt(input.subarray(0, cut), [cut >> 1, cut - 3]), decode);
      assertBytes(output, full.subarray(0, output.length), `${path}, cut at ${cut}`);
      if (boundaries.has(cut)) {
        assert.equal(error, undefined, `${path}, cut at ${cut}`);
        continue;
      }
      assert.ok(error instanceof DecodeError, `${path}, cut at ${cut}: ${error}`);
      assert.equal(error.code, "TRUNCATED", `${path}, cut at ${cut}: ${error.message}`);
      if (path === "own") assert.equal(error.offset, cut);
    }
  }
});

test("gunzip: truncated in the trailer, after everything was decoded: all output arrives before the error", async () => {
  const data = watchJson(400_000);
  const gz = gzip(data);
  for (const cut of [gz.length - 1, gz.length - 5, gz.length - 8]) {
    const { output, error } = await gunzip([gz.subarray(0, cut)]);
    assert.ok(error instanceof DecodeError, String(error));
    assert.equal(`${error.code}@${error.offset}`, `TRUNCATED@${cut}`);
    assertBytes(output, data);
  }
  // Cut in the middle of the compressed data: a long prefix of the data.
  const { output, error } = await gunzip([gz.subarray(0, gz.length >> 1)]);
  assert.ok(error instanceof DecodeError && error.code === "TRUNCATED", String(error));
  assert.ok(output.length > data.length / 4, `${output.length} bytes`);
  assertBytes(output, data.subarray(0, output.length));
});

/** What zlib makes of `input` when it may end anywhere: all it decodes to, flushed (`Z_SYNC_FLUSH`), no error. */
function zlibPartial(input: Uint8Array): Uint8Array {
  return new Uint8Array(gunzipSync(input, { finishFlush: constants.Z_SYNC_FLUSH }));
}

test("gunzip: when the input fails, all that its bytes so far decode to arrives first (as zlib flushes it), then its error", async () => {
  const data = watchJson(60_000);
  const sources = [
    gzip(data),
    gzip(data, { level: 0 }),
    gzip(data, { strategy: constants.Z_FIXED }),
    concat([gzip(data.subarray(0, 25_000), { level: 9 }), gzip(data.subarray(25_000), { level: 1 })]),
  ];
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: sources.length - 1 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.integer({ min: 1, max: 5000 }),
      async (which, where, maxPiece) => {
        const prefix = sources[which].subarray(0, Math.round(where * sources[which].length));
        const expected = zlibPartial(prefix);
        const reason = new Error("the input failed");
        const pieces = randomPieces(prefix, maxPiece, prefix.length);
        const { values, error } = await drain(own(failingAfter(pieces, reason)));
        assert.equal(error, reason, String(error));
        assertBytes(concat(values), expected, `cut at ${prefix.length}`);
        // The runtime's native stream (Node's) may keep back the output of the last input it was given.
        const viaNative = await drain(native(failingAfter(pieces, reason)));
        assert.equal(viaNative.error, reason, String(viaNative.error));
        const got = concat(viaNative.values);
        assertBytes(got, expected.subarray(0, got.length), `native, cut at ${prefix.length}`);
      },
    ),
    { numRuns: 120 },
  );
});

test("gunzip: a slow reader still gets all output before the error", async () => {
  const data = watchJson(400_000);
  const gz = gzip(data);
  const badCrc = gz.slice();
  badCrc[gz.length - 7] ^= 4;
  // One input chunk makes several output pieces, queued at once; the error must wait until they are read.
  for (
    const [input, expected] of [[gz.subarray(0, gz.length - 2), "TRUNCATED"], [badCrc, "DECOMPRESSION_FAILED"]] as const
  ) {
    const { values: pieces, error } = await drainSlowly(own(streamOf([input])), 5);
    assert.ok(error instanceof DecodeError && error.code === expected, String(error));
    assert.ok(pieces.length > 3, `${pieces.length} pieces`);
    assertBytes(concat(pieces), data, expected);
  }
});

test("gunzip: flipped bytes in compressed data are faults at or after the flip, never a hang", async () => {
  const data = watchJson(20_000);
  const sources = [gzip(data, { level: 9 }), gzip(data, { strategy: constants.Z_FIXED }), gzip(data, { level: 0 })];
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: sources.length - 1 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      fc.integer({ min: 1, max: 255 }),
      async (which, where, mask) => {
        const gz = sources[which];
        const at = 10 + Math.floor(where * (gz.length - 18));
        const bad = gz.slice();
        bad[at] ^= mask;
        const { output, error } = await gunzip(randomPieces(bad, 700, at));
        if (error === undefined) {
          // Some bits are unused: the padding of a stored block's header byte or after the last block.
          assertBytes(output, data);
          return;
        }
        assert.ok(error instanceof DecodeError, String(error));
        assert.ok(error.code === "DECOMPRESSION_FAILED" || error.code === "TRUNCATED", error.message);
        // A fault is found where the flipped bits are read; a code or field read may start up to 3 bytes earlier.
        assert.ok(error.offset >= at - 3 && error.offset <= bad.length, `${error.message}, flipped at ${at}`);
        const viaNative = await gunzip([bad], native);
        assert.ok(viaNative.error instanceof DecodeError, `${viaNative.error}, flipped at ${at}`);
      },
    ),
    { numRuns: 150 },
  );
});

test("gunzip: split invariance of corrupt members down to single bytes", async () => {
  const gz = gzip(watchJson(3000), { level: 9 });
  for (const at of [12, 40, 100, 300, gz.length - 20]) {
    const bad = gz.slice();
    bad[at] ^= 0x5a;
    const { error } = await assertSplitInvariant(bad, own, { runs: 20, normalize: (v) => Array.from(concat(v)) });
    assert.ok(error instanceof DecodeError, String(error));
  }
});

/**
 * Raw DEFLATE bits: a string is a Huffman code, written most significant bit first; `[value, n]` an n-bit number,
 * least significant bit first (RFC 1951 §3.1.1). Padded with zero bits to a whole byte.
 */
function deflateBits(...fields: (string | [number, number])[]): number[] {
  const bits: number[] = [];
  for (const field of fields) {
    if (typeof field === "string") { for (const c of field) bits.push(c === "1" ? 1 : 0); }
    else for (let k = 0; k < field[1]; k++) bits.push((field[0] >>> k) & 1);
  }
  const bytes: number[] = [];
  for (let i = 0; i < bits.length; i += 8) {
    let byte = 0;
    for (let k = 0; k < 8 && i + k < bits.length; k++) byte |= bits[i + k] << k;
    bytes.push(byte);
  }
  return bytes;
}

/** A gzip member around raw DEFLATE bytes, with the trailer of `output`. */
function member(deflate: number[], output: Uint8Array): Uint8Array {
  const crc = crc32Reference(output);
  const size = output.length;
  const le32 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
  return Uint8Array.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, ...deflate, ...le32(crc), ...le32(size)]);
}

// Fixed Huffman codes (RFC 1951 §3.2.6).
const literal = (
  byte: number,
) => (byte < 144 ? (0x30 + byte).toString(2).padStart(8, "0") : (0x190 + byte - 144).toString(2));
const END = "0000000";
const LENGTH_3 = "0000001"; // symbol 257
const distance = (symbol: number) => symbol.toString(2).padStart(5, "0");
const FIXED_FINAL: [number, number][] = [[1, 1], [1, 2]];

test("gunzip: hand-made blocks decode, and each kind of DEFLATE fault is found at its byte", async () => {
  // Valid: literal 'a', a match of 3 at distance 1, two literals, end; a stored block.
  const expected = Uint8Array.of(0x61, 0x61, 0x61, 0x61, 0xff, 0x0a);
  const valid = member(
    deflateBits(...FIXED_FINAL, literal(0x61), LENGTH_3, distance(0), literal(0xff), literal(0x0a), END),
    expected,
  );
  const stored = member([...deflateBits([1, 1], [0, 2]), 2, 0, 0xfd, 0xff, 0x68, 0x69], utf8("hi"));
  for (const [input, output] of [[valid, expected], [stored, utf8("hi")]] as const) {
    const result = await assertSplitInvariant(input, own, { normalize: (v) => Array.from(concat(v)) });
    assert.equal(result.error, undefined);
    assertBytes(concat(result.values), output);
    assertBytes((await gunzip([input], native)).output, output);
  }

  const none = new Uint8Array(0);
  // Block type 3, in the first byte of the DEFLATE data (member offset 10).
  await expectFault(member(deflateBits([1, 1], [3, 2]), none), "DECOMPRESSION_FAILED", 10, "");
  // Stored block whose NLEN is not the complement of LEN: the fault is the length field at offset 11.
  await expectFault(
    member([...deflateBits([1, 1], [0, 2]), 2, 0, 2, 0, 0x68, 0x69], none),
    "DECOMPRESSION_FAILED",
    11,
    "",
  );
  // A match before any output: distance 1 with no window; the distance code ends in bit 14 (offset 11).
  await expectFault(
    member(deflateBits(...FIXED_FINAL, LENGTH_3, distance(0), END), none),
    "DECOMPRESSION_FAILED",
    11,
    "",
  );
  // After one literal, distance 2 is too far back; the distance code ends in bit 22 (offset 12).
  await expectFault(
    member(deflateBits(...FIXED_FINAL, literal(0x61), LENGTH_3, distance(1), END), none),
    "DECOMPRESSION_FAILED",
    12,
    "a",
  );
  // Distance symbol 30 has a fixed code but no meaning.
  await expectFault(
    member(deflateBits(...FIXED_FINAL, literal(0x62), LENGTH_3, distance(30), END), none),
    "DECOMPRESSION_FAILED",
    12,
    "b",
  );
  // Literal/length symbol 286 likewise; its 8-bit code ends in bit 10 (offset 11).
  await expectFault(member(deflateBits(...FIXED_FINAL, "11000110", END), none), "DECOMPRESSION_FAILED", 11, "");
  // Dynamic block with 19 code length codes all of length 1: over-subscribed, found at its last bit (bit 73).
  const lengths: [number, number][] = Array.from({ length: 19 }, () => [1, 3]);
  await expectFault(
    member(deflateBits([1, 1], [2, 2], [0, 5], [0, 5], [15, 4], ...lengths), none),
    "DECOMPRESSION_FAILED",
    19,
    "",
  );
  // Dynamic block whose code length code has a single code: incomplete, which only the other two codes may be.
  const single: [number, number][] = [[0, 3], [0, 3], [0, 3], [1, 3]];
  await expectFault(
    member(deflateBits([1, 1], [2, 2], [0, 5], [0, 5], [0, 4], ...single), none),
    "DECOMPRESSION_FAILED",
    13,
    "",
  );
  // Dynamic block declaring 287 literal/length codes (at most 286 exist); HCLEN ends in bit 16.
  await expectFault(member(deflateBits([1, 1], [2, 2], [30, 5], [0, 5], [0, 4]), none), "DECOMPRESSION_FAILED", 12, "");
  // A valid block that is not the last one, and then the input ends: truncated, with the block's output.
  const notFinal = member(deflateBits([0, 1], [1, 2], literal(0x7a), END), none).subarray(0, 13);
  await expectFault(notFinal, "TRUNCATED", 13, "z");
});

test("gunzip: round trip of random bytes in random pieces (property)", async () => {
  const options = fc.constantFrom<ZlibOptions>(
    { level: 0 },
    { level: 1 },
    { level: 6 },
    { level: 9 },
    { strategy: constants.Z_FIXED },
    { strategy: constants.Z_HUFFMAN_ONLY },
  );
  // Random bytes barely compress; text built from a few repeated fragments exercises matches.
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 3000 }),
    fc.tuple(
      fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 8 }),
      fc.array(fc.nat(), { maxLength: 300 }),
    )
      .map(([fragments, picks]) => concat(picks.map((i) => fragments[i % fragments.length]))),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(bytes, options), { minLength: 1, maxLength: 3 }),
      fc.nat(),
      async (parts, seed) => {
        const input = concat(parts.map(([data, opts]) => gzip(data, opts)));
        const cuts = fc.sample(cutsFor(input.length), { numRuns: 1, seed })[0];
        const { output, error } = await gunzip(splitAt(input, cuts));
        assert.equal(error, undefined);
        assertBytes(output, concat(parts.map(([data]) => data)));
      },
    ),
    { numRuns: 200 },
  );
});

test("gunzip: split invariance of valid multi-member input, both paths", async () => {
  const input = concat([
    gzip(watchJson(4000), { level: 9 }),
    gzip(new Uint8Array(0)),
    gzip(random(500, 2), { level: 0 }),
  ]);
  for (const [, decode] of paths) {
    const result = await assertSplitInvariant(input, decode, { runs: 30, normalize: (v) => Array.from(concat(v)) });
    assert.equal(result.error, undefined);
  }
});

test("gunzip: cancelling the output stops the decoder, no hang", async () => {
  const gz = gzip(new Uint8Array(5_000_000));
  for (const [path, decode] of paths) {
    const reader = decode(streamOf([gz])).getReader();
    const first = await reader.read();
    assert.equal(first.done, false, path);
    await reader.cancel("enough");
  }
});
