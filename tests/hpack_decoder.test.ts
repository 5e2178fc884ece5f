/**
 * HPACK decoder (RFC 7541): the hpack-test-case interop corpus, the RFC's Appendix C examples, every error with its
 * offset, and properties (random input, Huffman round trip).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import fc from "fast-check";
import { DecodeError } from "../src/errors.ts";
import { type HeaderField, HpackDecoder } from "../src/transport/hpack/hpack_decoder.ts";
import { decodeHuffman, EOS, HUFFMAN_CODE_LENGTHS, HUFFMAN_CODES } from "../src/transport/hpack/huffman.ts";
import { STATIC_TABLE } from "../src/transport/hpack/static_table.ts";
import { concat } from "./_util.ts";

const hex = (s: string): Uint8Array =>
  Uint8Array.from(s.replace(/\s+/g, "").match(/../g) ?? [], (h) => parseInt(h, 16));
const bytes = (...parts: (number | string)[]): Uint8Array =>
  concat(parts.map((p) => typeof p === "number" ? Uint8Array.of(p) : Uint8Array.from(p, (c) => c.charCodeAt(0))));

/** Asserts that `fn` throws a DecodeError with `code` at `offset`. */
function assertDecodeError(fn: () => unknown, code: string, offset: number, detail?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof DecodeError, `expected a DecodeError, got ${e}`);
    assert.equal(`${e.code}@${e.offset}`, `${code}@${offset}`, e.message);
    if (detail !== undefined) assert.match(e.detail, detail);
    return true;
  });
}

// --- the hpack-test-case corpus ---

const FOLDERS = [
  "nghttp2",
  "nghttp2-change-table-size",
  "nghttp2-16384-4096",
  "go-hpack",
  "node-http2-hpack",
  "python-hpack",
  "swift-nio-hpack-plain-text",
  "haskell-http2-linear-huffman",
];
const envRoot = process.env.WATCHWIRE_CONFORMANCE;
const conformance = envRoot !== undefined && envRoot !== ""
  ? new URL(`file://${envRoot.replace(/\/?$/, "/")}`)
  : new URL("../../shared/conformance/", import.meta.url);
const corpus = new URL("hpack-test-case/", conformance);

interface StoryCase {
  seqno: number;
  wire: string;
  header_table_size?: number | null;
  headers: Record<string, string>[];
}

const decodedCounts: string[] = [];

for (const folder of FOLDERS) {
  test(`hpack-test-case: every story of ${folder} decodes to its headers`, () => {
    const dir = new URL(`${folder}/`, corpus);
    if (!existsSync(dir)) {
      assert.fail(
        `the HPACK conformance corpus is missing: no ${dir.pathname} (expected ../shared/conformance/hpack-test-case/ ` +
          `next to the repository, or set WATCHWIRE_CONFORMANCE to the conformance folder)`,
      );
    }
    const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
    assert.ok(files.length > 0, `no story in ${dir.pathname}`);
    let cases = 0;
    for (const file of files) {
      const story = JSON.parse(readFileSync(new URL(file, dir), "utf8")) as { cases: StoryCase[] };
      const decoder = new HpackDecoder();
      for (const c of story.cases) {
        if (c.header_table_size !== undefined && c.header_table_size !== null) {
          decoder.setMaxTableSize(c.header_table_size);
        }
        const expected = c.headers.map((h) => Object.entries(h)[0]);
        let got: HeaderField[];
        try {
          got = decoder.decode(hex(c.wire));
        } catch (e) {
          throw new Error(`${folder}/${file} case ${c.seqno}: ${e}`);
        }
        assert.deepEqual(got, expected, `${folder}/${file} case ${c.seqno}`);
        cases++;
      }
    }
    decodedCounts.push(`${folder}: ${files.length} stories, ${cases} cases`);
  });
}

test("hpack-test-case: summary", () => {
  // Runs after the folder tests (tests run in order in every runtime); prints what was decoded.
  console.log(`hpack-test-case decoded:\n  ${decodedCounts.join("\n  ")}`);
  assert.equal(decodedCounts.length, FOLDERS.length);
});

// --- RFC 7541 Appendix C ---

test("RFC 7541 C.1: integer representation", () => {
  // C.1.1: 10 in a 5-bit prefix (as a size update); C.1.2: 1337 in a 5-bit prefix.
  const d = new HpackDecoder();
  assert.deepEqual(d.decode(Uint8Array.of(0x20 | 10)), []);
  assert.equal(d.tableMaxSize, 10);
  const e = new HpackDecoder({ maxTableSize: 4096 });
  assert.deepEqual(e.decode(hex("3f9a0a")), []); // 31 + 26 + 10 * 128 = 1337
  assert.equal(e.tableMaxSize, 1337);
});

test("RFC 7541 C.2: header field representations", () => {
  let d = new HpackDecoder();
  assert.deepEqual(d.decode(hex("400a637573746f6d2d6b65790d637573746f6d2d686561646572")), [
    ["custom-key", "custom-header"],
  ]);
  assert.deepEqual(d.tableEntries(), [["custom-key", "custom-header"]]);
  assert.equal(d.tableSize, 55);

  d = new HpackDecoder();
  assert.deepEqual(d.decode(hex("040c2f73616d706c652f70617468")), [[":path", "/sample/path"]]);
  assert.deepEqual(d.tableEntries(), []);

  d = new HpackDecoder();
  assert.deepEqual(d.decodeBlock(hex("100870617373776f726406736563726574")), {
    fields: [["password", "secret"]],
    neverIndexed: [0],
  });
  assert.deepEqual(d.tableEntries(), []);

  d = new HpackDecoder();
  assert.deepEqual(d.decode(hex("82")), [[":method", "GET"]]);
  assert.equal(d.tableSize, 0);
});

const REQUESTS: [string, HeaderField[], HeaderField[], number][] = [
  [
    "",
    [[":method", "GET"], [":scheme", "http"], [":path", "/"], [":authority", "www.example.com"]],
    [[":authority", "www.example.com"]],
    57,
  ],
  [
    "",
    [[":method", "GET"], [":scheme", "http"], [":path", "/"], [":authority", "www.example.com"], [
      "cache-control",
      "no-cache",
    ]],
    [["cache-control", "no-cache"], [":authority", "www.example.com"]],
    110,
  ],
  [
    "",
    [[":method", "GET"], [":scheme", "https"], [":path", "/index.html"], [":authority", "www.example.com"], [
      "custom-key",
      "custom-value",
    ]],
    [["custom-key", "custom-value"], ["cache-control", "no-cache"], [":authority", "www.example.com"]],
    164,
  ],
];

function runSequence(
  name: string,
  wires: string[],
  steps: [string, HeaderField[], HeaderField[], number][],
  options: { maxTableSize?: number } = {},
): void {
  const d = new HpackDecoder(options);
  wires.forEach((wire, k) => {
    const [, fields, table, size] = steps[k];
    assert.deepEqual(d.decode(hex(wire)), fields, `${name} block ${k + 1}`);
    assert.deepEqual(d.tableEntries(), table, `${name} table after block ${k + 1}`);
    assert.equal(d.tableSize, size, `${name} table size after block ${k + 1}`);
  });
}

test("RFC 7541 C.3: requests without Huffman coding", () => {
  runSequence("C.3", [
    "828684410f7777772e6578616d706c652e636f6d",
    "828684be58086e6f2d6361636865",
    "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565",
  ], REQUESTS);
});

test("RFC 7541 C.4: requests with Huffman coding", () => {
  runSequence("C.4", [
    "828684418cf1e3c2e5f23a6ba0ab90f4ff",
    "828684be5886a8eb10649cbf",
    "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf",
  ], REQUESTS);
});

const DATE1 = "Mon, 21 Oct 2013 20:13:21 GMT";
const DATE2 = "Mon, 21 Oct 2013 20:13:22 GMT";
const LOC = "https://www.example.com";
const COOKIE = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";
const RESPONSES: [string, HeaderField[], HeaderField[], number][] = [
  [
    "",
    [[":status", "302"], ["cache-control", "private"], ["date", DATE1], ["location", LOC]],
    [["location", LOC], ["date", DATE1], ["cache-control", "private"], [":status", "302"]],
    222,
  ],
  [
    "",
    [[":status", "307"], ["cache-control", "private"], ["date", DATE1], ["location", LOC]],
    [[":status", "307"], ["location", LOC], ["date", DATE1], ["cache-control", "private"]],
    222,
  ],
  [
    "",
    [[":status", "200"], ["cache-control", "private"], ["date", DATE2], ["location", LOC], [
      "content-encoding",
      "gzip",
    ], ["set-cookie", COOKIE]],
    [["set-cookie", COOKIE], ["content-encoding", "gzip"], ["date", DATE2]],
    215,
  ],
];

test("RFC 7541 C.5: responses without Huffman coding, eviction in a 256-octet table", () => {
  runSequence(
    "C.5",
    [
      "4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f" +
      "7777772e6578616d706c652e636f6d",
      "4803333037c1c0bf",
      "88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d4153444a4b48514b42" +
      "5a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b2076657273696f6e3d31",
    ],
    RESPONSES,
    { maxTableSize: 256 },
  );
});

test("RFC 7541 C.6: responses with Huffman coding, eviction in a 256-octet table", () => {
  runSequence(
    "C.6",
    [
      "488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3",
      "4883640effc1c0bf",
      "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f" +
      "3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007",
    ],
    RESPONSES,
    { maxTableSize: 256 },
  );
});

// --- tables, sizes, sensitivity, octets ---

test("static table: 61 entries, every index decodes", () => {
  assert.equal(STATIC_TABLE.length, 61);
  const d = new HpackDecoder();
  for (let i = 1; i <= 61; i++) {
    const block = i < 127 ? Uint8Array.of(0x80 | i) : Uint8Array.of(0xff, i - 127);
    assert.deepEqual(d.decode(block), [[...STATIC_TABLE[i - 1]]]);
  }
  assert.deepEqual(STATIC_TABLE[0], [":authority", ""]);
  assert.deepEqual(STATIC_TABLE[15], ["accept-encoding", "gzip, deflate"]);
  assert.deepEqual(STATIC_TABLE[60], ["www-authenticate", ""]);
});

test("dynamic table: indices, eviction, an entry larger than the table empties it", () => {
  const d = new HpackDecoder({ maxTableSize: 100 });
  // 01 + new name: a=1 (34 octets), b=2 (34), then c=3 evicts a.
  d.decode(bytes(0x40, 1, "a", 1, "1", 0x40, 1, "b", 1, "2"));
  assert.deepEqual(d.tableEntries(), [["b", "2"], ["a", "1"]]);
  assert.deepEqual(d.decode(Uint8Array.of(0x80 | 62, 0x80 | 63)), [["b", "2"], ["a", "1"]]);
  d.decode(bytes(0x40, 1, "c", 1, "3"));
  assert.deepEqual(d.tableEntries(), [["c", "3"], ["b", "2"]]);
  assert.equal(d.tableSize, 68);
  // Literal with incremental indexing whose name is a dynamic entry that the insertion itself evicts.
  assert.deepEqual(d.decode(bytes(0x7f, 0x00, 60, "x".repeat(60))), [["b", "x".repeat(60)]]);
  assert.deepEqual(d.tableEntries(), [["b", "x".repeat(60)]]);
  // 32 + 1 + 70 > 100: the table empties, nothing is inserted, the field is still returned.
  assert.deepEqual(d.decode(bytes(0x40, 1, "y", 70, "z".repeat(70))), [["y", "z".repeat(70)]]);
  assert.deepEqual(d.tableEntries(), []);
  assert.equal(d.tableSize, 0);
  // Many entries: the ring buffer grows and wraps.
  const e = new HpackDecoder({ maxTableSize: 34 * 40 });
  for (let k = 0; k < 200; k++) e.decode(bytes(0x40, 1, String.fromCharCode(65 + (k % 26)), 1, String(k % 10)));
  assert.equal(e.tableEntries().length, 40);
  assert.deepEqual(e.tableEntries()[0], [String.fromCharCode(65 + (199 % 26)), "9"]);
  assert.deepEqual(e.decode(Uint8Array.of(0x80 | 101)), [[String.fromCharCode(65 + (160 % 26)), "0"]]);
});

test("dynamic table size updates: eviction, and SETTINGS changes", () => {
  const d = new HpackDecoder();
  d.decode(hex("400a637573746f6d2d6b65790d637573746f6d2d686561646572")); // 55 octets
  d.decode(bytes(0x20 | 0)); // size 0: evicts everything
  assert.deepEqual(d.tableEntries(), []);
  assert.equal(d.tableMaxSize, 0);
  d.decode(bytes(0x3f, 0xe1, 0x1f)); // back to 4096
  assert.equal(d.tableMaxSize, 4096);
  // Two updates at the start of one block are allowed.
  d.decode(bytes(0x20, 0x3f, 0xe1, 0x1f, 0x82));
  // A raised setting: an update may use it, none is required.
  d.setMaxTableSize(8192);
  assert.deepEqual(d.decode(Uint8Array.of(0x82)), [[":method", "GET"]]);
  d.setMaxTableSize(8192);
  d.decode(bytes(0x3f, 0xe1, 0x3f)); // 8192
  assert.equal(d.tableMaxSize, 8192);
  // Lowered, then raised again before the next block: the block must signal the lowest value.
  d.setMaxTableSize(100);
  d.setMaxTableSize(4096);
  assertDecodeError(() => d.decode(bytes(0x3f, 0xe1, 0x1f, 0x82)), "HPACK_INVALID", 3, /at most 100/);
  const e = new HpackDecoder();
  e.setMaxTableSize(100);
  e.setMaxTableSize(4096);
  assert.deepEqual(e.decode(bytes(0x3f, 0x45, 0x3f, 0xe1, 0x1f, 0x82)), [[":method", "GET"]]);
  assert.equal(e.tableMaxSize, 4096);
  assert.throws(() => e.setMaxTableSize(-1), RangeError);
  assert.throws(() => new HpackDecoder({ maxTableSize: 1.5 }), RangeError);
});

test("never indexed fields are reported by decodeBlock", () => {
  const d = new HpackDecoder();
  const block = bytes(0x82, 0x1f, 0x08, 5, "token", 0x00, 1, "x", 1, "y", 0x10, 1, "k", 1, "v");
  assert.deepEqual(d.decodeBlock(block), {
    fields: [[":method", "GET"], ["authorization", "token"], ["x", "y"], ["k", "v"]],
    neverIndexed: [1, 3],
  });
  assert.deepEqual(d.decode(block).length, 4);
});

test("octets 0x80-0xff map to one character each (latin1), in plain and Huffman strings", () => {
  const d = new HpackDecoder();
  const raw = Uint8Array.of(0x00, 0x7f, 0x80, 0x9f, 0xa0, 0xc3, 0xa9, 0xff);
  const expected = String.fromCharCode(...raw);
  assert.deepEqual(d.decode(concat([Uint8Array.of(0x00, 1, 0x78, raw.length), raw])), [["x", expected]]);
  const coded = huffmanEncode(raw);
  assert.deepEqual(d.decode(concat([Uint8Array.of(0x00, 1, 0x78, 0x80 | coded.length), coded])), [["x", expected]]);
  // Long strings (beyond the short-string path, and beyond one conversion chunk).
  const long = Uint8Array.from({ length: 20000 }, (_, k) => (k * 7) & 0xff);
  const d2 = new HpackDecoder({ maxHeaderListSize: 1 << 20 });
  const block = concat([Uint8Array.of(0x00, 1, 0x78, 0x7f), intTail(20000 - 127), long]);
  assert.equal(d2.decode(block)[0][1], String.fromCharCode(...long));
});

// --- errors, each at its exact offset (and shifted by the `offset` argument) ---

/** The continuation octets of an HPACK integer whose prefix is all ones: `rest` = value - (2^N - 1). */
function intTail(rest: number): Uint8Array {
  const out: number[] = [];
  while (rest >= 128) {
    out.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return Uint8Array.from(out);
}

/** An HPACK integer (RFC 7541 §5.1): `value` in a `bits`-bit prefix of a first octet carrying `flags`. */
function integer(flags: number, bits: number, value: number): Uint8Array {
  const max = 2 ** bits - 1;
  return value < max ? Uint8Array.of(flags | value) : concat([Uint8Array.of(flags | max), intTail(value - max)]);
}

test("errors: index 0 and indices beyond the tables", () => {
  const d = () => new HpackDecoder();
  assertDecodeError(() => d().decode(Uint8Array.of(0x80)), "HPACK_INVALID", 0, /index 0/);
  assertDecodeError(() => d().decode(Uint8Array.of(0x82, 0x80), 100), "HPACK_INVALID", 101);
  assertDecodeError(() => d().decode(Uint8Array.of(0x82, 0xbe)), "HPACK_INVALID", 1, /index 62/);
  assertDecodeError(() => d().decode(Uint8Array.of(0xff, 0x00)), "HPACK_INVALID", 0, /index 127/);
  // Literal whose name index is beyond the tables: 6-bit prefix, and 4-bit prefix with a continuation octet.
  assertDecodeError(() => d().decode(bytes(0x7e, 1, "v")), "HPACK_INVALID", 0, /index 62/);
  assertDecodeError(() => d().decode(bytes(0x82, 0x0f, 0x2f, 1, "v"), 7), "HPACK_INVALID", 8, /index 62/);
  const e = d();
  e.decode(bytes(0x40, 1, "a", 1, "b"));
  assert.deepEqual(e.decode(Uint8Array.of(0xbe)), [["a", "b"]]);
  assertDecodeError(() => e.decode(Uint8Array.of(0xbf)), "HPACK_INVALID", 0, /dynamic 62-62/);
});

test("errors: integers that overflow, are too long or are cut off", () => {
  const d = () => new HpackDecoder();
  // 127 + 127 * (1 + 128 + 128^2 + 128^3) + 15 * 128^4 > 2^31 - 1: the fifth continuation octet overflows.
  assertDecodeError(() => d().decode(hex("ffffffffff0f")), "HPACK_INVALID", 5, /exceeds/);
  // 2^31 - 1 itself is accepted as an integer (then rejected as an index).
  assertDecodeError(
    () => d().decode(concat([Uint8Array.of(0xff), intTail(0x7fffffff - 127)])),
    "HPACK_INVALID",
    0,
    /index 2147483647/,
  );
  assertDecodeError(() => d().decode(concat([Uint8Array.of(0xff), intTail(0x80000000 - 127)])), "HPACK_INVALID", 5);
  // Six continuation octets (zero padding) are rejected at the sixth.
  assertDecodeError(() => d().decode(hex("ff80808080808000")), "HPACK_INVALID", 6, /continuation/);
  // Cut off inside an integer: at the end of the block.
  assertDecodeError(() => d().decode(hex("82ff80"), 10), "HPACK_INVALID", 13, /ends inside an integer/);
  assertDecodeError(() => d().decode(hex("3f")), "HPACK_INVALID", 1, /ends inside an integer/);
});

test("errors: string lengths beyond the block or the limit", () => {
  const d = (o = {}) => new HpackDecoder(o);
  assertDecodeError(() => d().decode(bytes(0x40, 5, "ab")), "HPACK_INVALID", 1, /5 octets.*2 left/);
  assertDecodeError(() => d().decode(bytes(0x82, 0x41, 0x7f, 0x01, "ab")), "HPACK_INVALID", 2, /128 octets/);
  assertDecodeError(() => d().decode(bytes(0x40)), "HPACK_INVALID", 1, /ends where a string/);
  assertDecodeError(() => d().decode(bytes(0x40, 1, "a")), "HPACK_INVALID", 3, /ends where a string/);
  assertDecodeError(() => d({ maxStringLength: 3 }).decode(bytes(0x40, 4, "abcd", 0)), "HPACK_INVALID", 1, /limit/);
  assert.deepEqual(d({ maxStringLength: 3 }).decode(bytes(0x40, 3, "abc", 0)), [["abc", ""]]);
  // Huffman: 4 coded octets are within the limit, the 5 decoded ones are not.
  const coded = huffmanEncode(bytes("aaaaa"));
  assert.equal(coded.length, 4);
  assertDecodeError(
    () => d({ maxStringLength: 4 }).decode(concat([Uint8Array.of(0x82, 0x40, 0x80 | coded.length), coded, bytes(0)])),
    "HPACK_INVALID",
    2,
    /decodes to 5 octets/,
  );
});

test("errors: Huffman EOS and bad padding", () => {
  const d = () => new HpackDecoder();
  // 32 one-bits: EOS (30 ones) completes in the fourth coded octet (block offset 2 + 3).
  assertDecodeError(() => d().decode(hex("4084ffffffff00")), "HPACK_INVALID", 5, /EOS/);
  // 'a' (00011) then 3 + 8 one-bits of padding: longer than 7 bits, reported at the string's last octet.
  assertDecodeError(() => d().decode(hex("40821fff00")), "HPACK_INVALID", 3, /padding/);
  // 'a' then padding 000: not a prefix of EOS.
  assertDecodeError(() => d().decode(hex("408118 00"), 50), "HPACK_INVALID", 52, /padding/);
  // 8 one-bits alone: padding of 8 bits.
  assertDecodeError(() => d().decode(hex("0081ff")), "HPACK_INVALID", 2, /padding/);
  // Five 'a's (25 bits) and exactly 7 one-bits of padding are fine.
  const five = huffmanEncode(bytes("aaaaa"));
  assert.equal(five.length, 4); // 25 bits + 7 bits of padding
  assert.deepEqual(d().decode(concat([hex("0084"), five, hex("00")])), [["aaaaa", ""]]);
  // An empty Huffman string is valid.
  assert.deepEqual(d().decode(hex("008080")), [["", ""]]);
  const huff81 = d().decode(concat([hex("0081"), huffmanEncode(bytes("0")), hex("80")]));
  assert.deepEqual(huff81, [["0", ""]]);
});

test("errors: dynamic table size updates too large, misplaced or missing", () => {
  const d = () => new HpackDecoder();
  assertDecodeError(() => d().decode(hex("3fe21f")), "HPACK_INVALID", 0, /4097 exceeds the maximum in force \(4096\)/);
  assertDecodeError(() => d().decode(hex("203fe21f"), 10), "HPACK_INVALID", 11, /4097/);
  assertDecodeError(() => d().decode(hex("8220")), "HPACK_INVALID", 1, /only at the start/);
  const e = d();
  e.setMaxTableSize(100);
  assertDecodeError(() => e.decode(hex("82")), "HPACK_INVALID", 0, /must start with a dynamic table size update/);
  const f = d();
  f.setMaxTableSize(100);
  assertDecodeError(() => f.decode(hex("3f4682")), "HPACK_INVALID", 0, /101 exceeds/);
  const g = d();
  g.setMaxTableSize(100);
  assertDecodeError(() => g.decode(new Uint8Array(0), 4), "HPACK_INVALID", 4, /must start/);
  const h = d();
  h.setMaxTableSize(100);
  assert.deepEqual(h.decode(hex("3f4582")), [[":method", "GET"]]);
  assert.equal(h.tableMaxSize, 100);
});

test("errors: header lists beyond maxHeaderListSize (name + value + 32 per field)", () => {
  // :method GET counts 7 + 3 + 32 = 42.
  assert.deepEqual(new HpackDecoder({ maxHeaderListSize: 42 }).decode(hex("82")), [[":method", "GET"]]);
  assertDecodeError(() => new HpackDecoder({ maxHeaderListSize: 41 }).decode(hex("82")), "HEADER_TOO_LARGE", 0);
  assertDecodeError(
    () => new HpackDecoder({ maxHeaderListSize: 84 }).decode(hex("828282"), 3),
    "HEADER_TOO_LARGE",
    5,
  );
  // A literal: 42 + (32 + 5 + 30) = 109 > 100, found from the lengths, at the field's first octet.
  const block = bytes(0x82, 0x40, 5, "abcde", 30, "v".repeat(30));
  assertDecodeError(() => new HpackDecoder({ maxHeaderListSize: 100 }).decode(block), "HEADER_TOO_LARGE", 1);
  assert.equal(new HpackDecoder({ maxHeaderListSize: 109 }).decode(block).length, 2);
  // A new name alone can exceed it.
  const big = bytes(0x00, 0x7f, ...Array.from(intTail(200 - 127)), "n".repeat(200), 0);
  assertDecodeError(() => new HpackDecoder({ maxHeaderListSize: 100 }).decode(big), "HEADER_TOO_LARGE", 0);
  // Huffman: decided on the decoded length.
  const coded = huffmanEncode(bytes("a".repeat(40)));
  const hb = concat([Uint8Array.of(0x00, 0x80 | coded.length), coded, Uint8Array.of(0)]);
  assert.equal(new HpackDecoder({ maxHeaderListSize: 72 }).decode(hb)[0][0].length, 40);
  assertDecodeError(() => new HpackDecoder({ maxHeaderListSize: 71 }).decode(hb), "HEADER_TOO_LARGE", 0);
});

// --- properties ---

test("property: random input throws nothing but DecodeError, and ends", () => {
  const valid = hex("828684418cf1e3c2e5f23a6ba0ab90f4ff");
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 200 }),
      fc.boolean(),
      fc.integer({ min: 0, max: 8192 }),
      (random, prefixed, tableSize) => {
        const d = new HpackDecoder({ maxTableSize: tableSize, maxHeaderListSize: 4096 });
        for (const block of [prefixed ? concat([valid, random]) : random, random]) {
          try {
            const fields = d.decode(block, 1000);
            for (const [name, value] of fields) assert.ok(typeof name === "string" && typeof value === "string");
          } catch (e) {
            if (!(e instanceof DecodeError)) throw e;
            assert.ok(e.code === "HPACK_INVALID" || e.code === "HEADER_TOO_LARGE", e.code);
            assert.ok(e.offset >= 1000 && e.offset <= 1000 + block.length, `offset ${e.offset}`);
            return;
          }
        }
      },
    ),
    { numRuns: 3000 },
  );
});

/** A test-only Huffman encoder from the same code table: codes MSB first, padded with one-bits (RFC 7541 §5.2). */
function huffmanEncode(octets: Uint8Array): Uint8Array {
  const out: number[] = [];
  let acc = 0; // pending bits, at most 7 + 30 of them: kept as a float-safe number
  let bits = 0;
  for (const o of octets) {
    acc = acc * 2 ** HUFFMAN_CODE_LENGTHS[o] + HUFFMAN_CODES[o];
    bits += HUFFMAN_CODE_LENGTHS[o];
    while (bits >= 8) {
      bits -= 8;
      const top = Math.floor(acc / 2 ** bits);
      out.push(top);
      acc -= top * 2 ** bits;
    }
  }
  if (bits > 0) out.push(acc * 2 ** (8 - bits) + (2 ** (8 - bits) - 1));
  return Uint8Array.from(out);
}

test("Huffman code: canonical, complete, and the RFC's codes", () => {
  assert.equal(HUFFMAN_CODE_LENGTHS.length, 257);
  let kraft = 0;
  for (const n of HUFFMAN_CODE_LENGTHS) kraft += 2 ** -n;
  assert.equal(kraft, 1);
  // A few codes from RFC 7541 Appendix B.
  const known: [number, number, number][] = [
    [0, 0x1ff8, 13],
    [0x20, 0x14, 6],
    [0x30, 0x0, 5],
    [0x61, 0x3, 5],
    [0x7f, 0xffffffc, 28],
    [0x80, 0xfffe6, 20],
    [0xff, 0x3ffffee, 26],
    [10, 0x3ffffffc, 30],
    [EOS, 0x3fffffff, 30],
  ];
  for (const [s, code, length] of known) {
    assert.equal(HUFFMAN_CODES[s], code, `code of ${s}`);
    assert.equal(HUFFMAN_CODE_LENGTHS[s], length, `length of ${s}`);
  }
  assert.deepEqual(huffmanEncode(bytes("www.example.com")), hex("f1e3c2e5f23a6ba0ab90f4ff"));
});

test("property: Huffman round trip of random octets and strings", () => {
  const dst = new Uint8Array(4096);
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 0, max: 1000 }), (octets, base) => {
      const coded = huffmanEncode(octets);
      const n = decodeHuffman(coded, 0, coded.length, dst, base);
      assert.deepEqual(dst.slice(0, n), octets);
    }),
    { numRuns: 1000 },
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 100 }), fc.string({ maxLength: 100 }), (name, value) => {
      const n = Uint8Array.from(name, (c) => c.charCodeAt(0) & 0xff);
      const v = Uint8Array.from(value, (c) => c.charCodeAt(0) & 0xff);
      const cn = huffmanEncode(n);
      const cv = huffmanEncode(v);
      const block = concat([Uint8Array.of(0x40), integer(0x80, 7, cn.length), cn, integer(0x80, 7, cv.length), cv]);
      const d = new HpackDecoder();
      const latin = (b: Uint8Array) => String.fromCharCode(...b);
      assert.deepEqual(d.decode(block), [[latin(n), latin(v)]]);
      assert.deepEqual(d.decode(Uint8Array.of(0x80 | 62)), [[latin(n), latin(v)]]);
    }),
    { numRuns: 500 },
  );
});

test("Huffman strings longer than the decoder's scratch space (grown on demand), then short ones again", () => {
  const latin = (b: Uint8Array) => Array.from(b, (c) => String.fromCharCode(c)).join("");
  const long = bytes("eyJhbGciOiJSUzI1NiJ9.".repeat(600)); // 12 600 octets, a bearer token's alphabet
  const longer = Uint8Array.from({ length: 40_000 }, (_, i) => (i * 7919) % 256); // every octet, codes up to 30 bits
  const d = new HpackDecoder({ maxHeaderListSize: 1 << 20 });
  for (const value of [long, longer, bytes("short"), long]) {
    const coded = huffmanEncode(value);
    // A literal without indexing with a new name, "a" Huffman-coded (00011, padded with ones: 0x1f), then the value.
    const block = concat([Uint8Array.of(0x00, 0x81, 0x1f), integer(0x80, 7, coded.length), coded]);
    assert.deepEqual(d.decode(block), [["a", latin(value)]]);
  }
});
