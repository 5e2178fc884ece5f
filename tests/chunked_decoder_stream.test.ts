import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { DecodeError } from "../mod.ts";
import { ChunkedDecoder, ChunkedDecoderStream } from "../wire.ts";
import { assertSplitInvariant, bytewise, concat, drain, streamOf, text, utf8 } from "./_util.ts";

/** Encodes `parts` as chunked coding (each part one chunk), with optional trailers. */
function chunked(parts: string[], trailer = ""): Uint8Array {
  return utf8(parts.map((p) => `${utf8(p).length.toString(16)}\r\n${p}\r\n`).join("") + `0\r\n${trailer}\r\n`);
}

const decode = (source: ReadableStream<Uint8Array>) => source.pipeThrough(new ChunkedDecoderStream());

test("chunked: payload, extensions and trailers", async () => {
  const wire = utf8('5;name=value;x="q s"\r\nhello\r\n000006\r\n world\r\n0;last\r\nX-Sum: abc \r\nX-Sum: def\r\n\r\n');
  const stream = new ChunkedDecoderStream();
  const { values, error } = await drain(streamOf([wire]).pipeThrough(stream));
  assert.equal(error, undefined);
  assert.equal(text(values), "hello world");
  assert.deepEqual(await stream.trailerFields, [["x-sum", "abc"], ["x-sum", "def"]]);
  assert.equal((await stream.trailers).get("x-sum"), "abc, def");
});

test("chunked: payload is handed on as views of the input, never copied", async () => {
  const wire = chunked(["abc", "defgh"]);
  const { values } = await drain(streamOf([wire]).pipeThrough(new ChunkedDecoderStream()));
  assert.equal(values.length, 2);
  for (const v of values) assert.equal(v.buffer, wire.buffer);
});

test("chunked: split invariance over random bodies", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.string({ minLength: 1, maxLength: 40 }), { maxLength: 8 }),
      fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 20 }),
      async (parts, cuts) => {
        const wire = chunked(parts, "A: b\r\n");
        const whole = await drain(decode(streamOf([wire])));
        const pieces: Uint8Array[] = [];
        let from = 0;
        for (const c of [...new Set(cuts)].sort((a, b) => a - b).filter((c) => c < wire.length)) {
          pieces.push(wire.slice(from, c));
          from = c;
        }
        pieces.push(wire.slice(from));
        const split = await drain(decode(streamOf(pieces)));
        assert.equal(split.error, undefined);
        assert.equal(text(split.values), parts.join(""));
        assert.equal(text(whole.values), parts.join(""));
      },
    ),
    { numRuns: 200 },
  );
});

test("chunked: split invariance of errors down to single bytes", async () => {
  const bad = [
    "5\r\nhello\r\nzz\r\n",
    "5\r\nhelloXY",
    "5\nhello\r\n0\r\n\r\n",
    "5\r\nhello\r\n0\r\nBad Name: x\r\n\r\n",
    "5\r\nhel",
    "20000000000000\r\n",
  ];
  for (const wire of bad) await assertSplitInvariant(utf8(wire), decode, { normalize: (v) => text(v), runs: 30 });
});

/** A test that `wire`, whole and byte by byte, fails with `code` at `offset` (and `message`), after `payload`. */
function expectError(wire: string, code: string, offset: number, payload = "", message?: RegExp) {
  return async () => {
    for (const chunks of [[utf8(wire)], bytewise(utf8(wire))]) {
      const { values, error } = await drain(decode(streamOf(chunks)));
      assert.ok(error instanceof DecodeError, `${JSON.stringify(wire)}: expected a DecodeError, got ${error}`);
      assert.equal(error.code, code, error.message);
      assert.equal(error.offset, offset, `${JSON.stringify(wire)}: ${error.message}`);
      if (message !== undefined) assert.match(error.message, message);
      assert.equal(text(values), payload);
    }
  };
}

test(
  "chunked: a malformed size is CHUNK_SIZE_INVALID at its byte",
  expectError("3\r\nabc\r\nxyz\r\n", "CHUNK_SIZE_INVALID", 8, "abc"),
);
test("chunked: an empty size line is rejected", expectError("\r\n", "CHUNK_SIZE_INVALID", 0));
test("chunked: whitespace then CRLF is rejected", expectError("3 \r\nabc\r\n0\r\n\r\n", "CHUNK_SIZE_INVALID", 2));
test("chunked: a bare LF after the size is CRLF_EXPECTED", expectError("3\nabc", "CRLF_EXPECTED", 1));
test("chunked: data not followed by CRLF", expectError("3\r\nabcd\r\n", "CRLF_EXPECTED", 6, "abc"));
test("chunked: a bare LF after data", expectError("3\r\nabc\n0\r\n\r\n", "CRLF_EXPECTED", 6, "abc"));
test(
  "chunked: a size over 2^53 is CHUNK_SIZE_OVERFLOW",
  expectError("1\r\na\r\n20000000000000\r\n", "CHUNK_SIZE_OVERFLOW", 19, "a"),
);
test("chunked: truncated mid-chunk", expectError("a\r\n01234", "TRUNCATED", 8, "01234"));
test("chunked: truncated before the last chunk", expectError("1\r\nx\r\n", "TRUNCATED", 6, "x"));
test("chunked: truncated in the trailers", expectError("0\r\nA: b\r\n", "TRUNCATED", 9));
test("chunked: a malformed trailer", expectError("0\r\nA b\r\n\r\n", "HEADER_INVALID", 4));
test("chunked: data after the end", expectError("0\r\n\r\nX", "TRAILING_DATA", 5));
test("chunked: whitespace then other than ';' is rejected", expectError("3 x\r\nabc\r\n", "CHUNK_SIZE_INVALID", 2));
test("chunked: a control byte in an extension", expectError("3;a\x01b\r\nabc\r\n", "CHUNK_SIZE_INVALID", 3));
test("chunked: a bare LF ends an extension", expectError("3;a=b\nabc\r\n", "CRLF_EXPECTED", 5));
test("chunked: CR after the size not followed by LF", expectError("3\rabc\r\n", "CRLF_EXPECTED", 2));
test("chunked: CR after data not followed by LF", expectError("3\r\nabc\rX", "CRLF_EXPECTED", 7, "abc"));
test("chunked: a bare LF in the trailer section", expectError("0\r\nA: b\nC: d\r\n\r\n", "CRLF_EXPECTED", 7));
test("chunked: CR in the trailer section not followed by LF", expectError("0\r\nA: b\rC\r\n\r\n", "CRLF_EXPECTED", 8));

test("chunked: whitespace before an extension (RFC 9112 BWS) is accepted", async () => {
  const wire = utf8("3 \t;a=1\r\nabc\r\n2\t; b\r\nde\r\n0 ;end\r\n\r\n");
  for (const chunks of [[wire], bytewise(wire)]) {
    const { values, error } = await drain(decode(streamOf(chunks)));
    assert.equal(error, undefined);
    assert.equal(text(values), "abcde");
  }
});

// RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ), a value a token or a
// quoted-string (qdtext, obs-text, quoted-pairs).
const tokenChar = fc.constantFrom(..."!#$%&'*+-.^_`|~09azAZ");
const token = fc.array(tokenChar, { minLength: 1, maxLength: 6 }).map((cs) => cs.join(""));
const bws = fc.constantFrom("", " ", "\t", " \t ");
const quoted = fc.array(
  fc.constantFrom("a", " ", "\t", ";", "=", "é", '\\"', "\\\\", "\\\t", "\\é", "\x21", "\x7e"),
  { maxLength: 6 },
).map((parts) => `"${parts.join("")}"`);
const extension = fc.tuple(bws, bws, token, fc.option(fc.tuple(bws, bws, fc.oneof(token, quoted)))).map(
  ([before, after, name, value]) =>
    `${before};${after}${name}${value === null ? "" : `${value[0]}=${value[1]}${value[2]}`}`,
);

test("chunked: any well-formed chunk extensions are skipped, under any cutting", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.array(extension, { maxLength: 3 }), { minLength: 3, maxLength: 3 }),
      async ([first, second, last]) => {
        const wire = utf8(`3${first.join("")}\r\nabc\r\n2${second.join("")}\r\nde\r\n0${last.join("")}\r\n\r\n`);
        await assertSplitInvariant(wire, decode, { normalize: (v) => text(v), runs: 5 });
        const { values, error } = await drain(decode(streamOf([wire])));
        assert.equal(error, undefined, JSON.stringify(text(wire)));
        assert.equal(text(values), "abcde");
      },
    ),
    { numRuns: 150 },
  );
});

test("chunked: arbitrary extension bytes decode or fail alike under any cutting, with a DecodeError in the line", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.constantFrom(...'a=;" \t\\é(\x01\x7f\r'), { maxLength: 12 }).map((cs) => cs.join("")),
      async (ext) => {
        const wire = utf8(`2\r\nhi\r\n3;${ext}\r\nabc\r\n0\r\n\r\n`);
        const { error } = await assertSplitInvariant(wire, decode, { normalize: (v) => text(v), runs: 5 });
        if (error === undefined) return;
        assert.ok(error instanceof DecodeError, String(error));
        assert.ok(["CHUNK_SIZE_INVALID", "CRLF_EXPECTED"].includes(error.code), error.message);
        // The line is `3;` + ext + CRLF from offset 7 (no LF in ext: the line cannot end sooner).
        assert.ok(error.offset >= 9 && error.offset <= 9 + utf8(ext).length, error.message);
      },
    ),
    { numRuns: 200 },
  );
});

test("chunked: malformed chunk extensions are CHUNK_SIZE_INVALID at their byte", async () => {
  const cases: Array<[wire: string, offset: number, message: RegExp]> = [
    ["3;\r\n", 2, /without a name/],
    ["3;=x\r\n", 2, /expected a chunk extension name, found '='/],
    ["3; ;a\r\n", 3, /expected a chunk extension name, found ';'/],
    ["3;a\x01b\r\n", 3, /unexpected byte 0x01 in a chunk extension name/],
    ["3;a(b\r\n", 3, /unexpected '\(' in a chunk extension name/],
    ["3;a b\r\n", 4, /expected '=' or ';' after a chunk extension name, found 'b'/],
    ["3;a \r\n", 4, /whitespace at the end of a chunk-size line/],
    ["3;a=\r\n", 4, /'=' without a value/],
    ["3;a= \r\n", 5, /'=' without a value/],
    ["3;a=@\r\n", 4, /expected a chunk extension value \(token or quoted string\), found '@'/],
    ["3;a=b c\r\n", 6, /expected ';' after a chunk extension value, found 'c'/],
    ["3;a=b/c\r\n", 5, /unexpected '\/' in a chunk extension value/],
    ["3;a=b \r\n", 6, /whitespace at the end of a chunk-size line/],
    ['3;a="b\r\n', 6, /quoted string in a chunk extension is not closed/],
    ['3;a="b\\\r\n', 7, /quoted string in a chunk extension is not closed/],
    ['3;a="b\x7f"\r\n', 6, /control byte 0x7f in a quoted string/],
    ['3;a="b\\\x00"\r\n', 7, /control byte 0x00 escaped in a quoted string/],
    ['3;a="b"c\r\n', 7, /expected ';' after a chunk extension value, found 'c'/],
    ['3;a="b" \r\n', 8, /whitespace at the end of a chunk-size line/],
  ];
  for (const [line, offset, message] of cases) {
    await expectError(`2\r\nhi\r\n${line}abc\r\n0\r\n\r\n`, "CHUNK_SIZE_INVALID", 7 + offset, "hi", message)();
  }
});

test("chunked: extension lines and trailers are bounded", async () => {
  const long = utf8("1;" + "x".repeat(5000) + "\r\na\r\n0\r\n\r\n");
  let { error } = await drain(streamOf([long]).pipeThrough(new ChunkedDecoderStream()));
  assert.ok(error instanceof DecodeError && error.code === "HEADER_TOO_LARGE", String(error));
  const trailers = utf8("0\r\n" + "A: b\r\n".repeat(100) + "\r\n");
  ({ error } = await drain(streamOf([trailers]).pipeThrough(new ChunkedDecoderStream({ maxTrailerBytes: 300 }))));
  assert.ok(error instanceof DecodeError && error.code === "HEADER_TOO_LARGE", String(error));
});

test("chunked: the core decoder reports how much it consumed", () => {
  const decoder = new ChunkedDecoder();
  const wire = utf8("2\r\nhi\r\n0\r\n\r\nHTTP/1.1 200 OK");
  const parts: Uint8Array[] = [];
  const used = decoder.push(wire, (p) => parts.push(p));
  assert.equal(used, 12);
  assert.ok(decoder.done);
  assert.equal(text(concat(parts)), "hi");
});

test("chunked: a failed body rejects the trailers promise", async () => {
  const stream = new ChunkedDecoderStream();
  await drain(streamOf([utf8("zz")]).pipeThrough(stream));
  await assert.rejects(stream.trailers, DecodeError);
});
