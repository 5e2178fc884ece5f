import { test } from "node:test";
import assert from "node:assert/strict";
import { gunzipSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { DecodeError } from "../src/errors.ts";
import { type GrpcMessage, GrpcMessageDecoderStream } from "../src/framing/grpc_message_decoder_stream.ts";
import { encodeGrpcMessages } from "../src/framing/encode.ts";
import { parseGrpcStatus } from "../src/framing/grpc_status.ts";
import { assertSplitInvariant, bytewise, concat, drain, endless, splitAt, streamOf, utf8, within } from "./_util.ts";

type Options = ConstructorParameters<typeof GrpcMessageDecoderStream>[0];
const decode = (options: Options = {}) => (source: ReadableStream<Uint8Array>) =>
  source.pipeThrough(new GrpcMessageDecoderStream(options));

/** One gRPC frame built by hand, independently of the encoder under test. */
function frame(flag: number, data: ArrayLike<number>): Uint8Array {
  const n = data.length;
  return Uint8Array.from([flag, (n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255, ...Array.from(data)]);
}

const gz = (data: Uint8Array) => new Uint8Array(gzipSync(data));
const plain = (values: GrpcMessage[]) =>
  values.map(({ compressed, data, offset }) => ({ compressed, data: Array.from(data), offset }));

function assertDecodeError(error: unknown, code: string, offset: number): void {
  assert.ok(error instanceof DecodeError, `expected a DecodeError, got ${error}`);
  assert.equal(error.code, code, error.message);
  assert.equal(error.offset, offset, error.message);
}

test("grpc: hand-made frames with offsets", async () => {
  const input = concat([frame(0, [1, 2, 3]), frame(0, []), frame(0, [0xff])]);
  for (const chunks of [[input], bytewise(input)]) {
    const { values, error } = await drain(decode()(streamOf(chunks)));
    assert.equal(error, undefined);
    assert.deepEqual(plain(values), [
      { compressed: false, data: [1, 2, 3], offset: 0 },
      { compressed: false, data: [], offset: 8 },
      { compressed: false, data: [0xff], offset: 13 },
    ]);
  }
});

test("grpc: round trip over random messages, compressed or not, and random splits (down to single bytes)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ data: fc.uint8Array({ maxLength: 200 }), compressed: fc.boolean() }), { maxLength: 6 }),
      async (messages) => {
        const frames = messages.map((m) => frame(m.compressed ? 1 : 0, m.compressed ? gz(m.data) : m.data));
        const input = concat(frames);
        const { values, error } = await assertSplitInvariant(input, decode({ encoding: "gzip" }), {
          runs: 8,
          normalize: plain,
        });
        assert.equal(error, undefined);
        let offset = 0;
        const expected = messages.map((m, k) => {
          const e = { compressed: false, data: Array.from(m.data), offset };
          offset += frames[k].length;
          return e;
        });
        assert.deepEqual(plain(values), expected);
      },
    ),
    { numRuns: 40 },
  );
});

test("grpc: split invariance of errors", async () => {
  const corrupt = gz(utf8("corrupt me"));
  corrupt[corrupt.length - 8] ^= 0xff; // the CRC-32
  const tails: [Uint8Array, string][] = [
    [Uint8Array.of(2, 0, 0, 0, 0), "MESSAGE_INVALID"],
    [Uint8Array.of(0, 0, 0, 1, 0), "MESSAGE_TOO_LARGE"],
    [Uint8Array.of(1, 0xff, 0xff, 0xff, 0xff), "MESSAGE_TOO_LARGE"],
    [Uint8Array.of(0, 0, 0), "TRUNCATED"],
    [Uint8Array.of(0, 0, 0, 0, 3, 1), "TRUNCATED"],
    [frame(1, corrupt), "DECOMPRESSION_FAILED"],
    [frame(1, gz(new Uint8Array(300))), "MESSAGE_TOO_LARGE"],
  ];
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ data: fc.uint8Array({ maxLength: 40 }), compressed: fc.boolean() }), { maxLength: 4 }),
      fc.constantFrom(...tails),
      async (messages, [tail, code]) => {
        const good = concat(messages.map((m) => frame(m.compressed ? 1 : 0, m.compressed ? gz(m.data) : m.data)));
        const input = concat([good, tail]);
        const { values, error } = await assertSplitInvariant(
          input,
          decode({ encoding: "gzip", maxEventBytes: 255 }),
          {
            runs: 6,
            normalize: plain,
          },
        );
        assertDecodeError(error, code, good.length);
        assert.deepEqual(values.map((v) => Array.from(v.data)), messages.map((m) => Array.from(m.data)));
      },
    ),
    { numRuns: 40 },
  );
});

test("grpc: a message within one chunk is a view of it; a spanning message is exactly its size", async () => {
  const input = concat([frame(0, [1, 2, 3]), frame(0, [4, 5])]);
  const { values } = await drain(decode()(streamOf([input])));
  assert.equal(values.length, 2);
  for (const v of values) assert.equal(v.data.buffer, input.buffer);
  assert.equal(values[1].data.byteOffset, 13);

  const spanning = await drain(decode()(streamOf(splitAt(frame(0, [1, 2, 3, 4, 5, 6]), [3, 6, 8]))));
  assert.deepEqual(plain(spanning.values), [{ compressed: false, data: [1, 2, 3, 4, 5, 6], offset: 0 }]);
  assert.equal(spanning.values[0].data.byteOffset, 0);
  assert.equal(spanning.values[0].data.buffer.byteLength, 6);
});

test("grpc: limits and bad flags fail at once, without waiting for more input", async () => {
  const before = frame(0, [7]);
  const cases: [Uint8Array[], Options, string][] = [
    [[before, Uint8Array.of(0, 0xff, 0xff), Uint8Array.of(0xff, 0xff)], {}, "MESSAGE_TOO_LARGE"],
    [[before, Uint8Array.of(2)], {}, "MESSAGE_INVALID"],
    [[before, Uint8Array.of(0x80)], { encoding: "gzip" }, "MESSAGE_INVALID"],
    [[before, Uint8Array.of(1)], {}, "MESSAGE_INVALID"], // compressed under "identity"
  ];
  for (const [chunks, options, code] of cases) {
    const { values, error } = await within(drain(decode(options)(endless(chunks))), 2000);
    assert.deepEqual(plain(values), [{ compressed: false, data: [7], offset: 0 }]);
    assertDecodeError(error, code, before.length);
  }
});

test("grpc: gzip messages from node:zlib, interleaved with plain ones", async () => {
  const texts = ["hello", "", "x".repeat(100_000), "ünïcödé"];
  const input = concat(texts.map((t, k) => frame(k % 2, k % 2 ? gz(utf8(t)) : utf8(t))));
  for (const chunks of [[input], splitAt(input, [3, 20, 21, 500, 1000])]) {
    const { values, error } = await drain(decode({ encoding: "gzip" })(streamOf(chunks)));
    assert.equal(error, undefined);
    assert.deepEqual(values.map((v) => new TextDecoder().decode(v.data)), texts);
    assert.ok(values.every((v) => !v.compressed));
  }
});

test("grpc: decompress: false passes compressed messages on as received", async () => {
  const packed = gz(utf8("abc"));
  const input = concat([frame(1, packed), frame(0, [1])]);
  const { values, error } = await drain(decode({ encoding: "gzip", decompress: false })(streamOf([input])));
  assert.equal(error, undefined);
  assert.deepEqual(plain(values), [
    { compressed: true, data: Array.from(packed), offset: 0 },
    { compressed: false, data: [1], offset: 5 + packed.length },
  ]);
});

test("grpc: corrupt, truncated, empty and oversized gzip messages", async () => {
  const ok = frame(1, gz(utf8("fine")));
  const good = gz(utf8("some text to compress, some text to compress"));
  const badMagic = good.slice();
  badMagic[0] = 0x1e;
  const badCrc = good.slice();
  badCrc[badCrc.length - 6] ^= 0x55;
  const cut = good.slice(0, good.length - 10);
  const garbage = Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff);
  for (const bad of [badMagic, badCrc, cut, garbage, new Uint8Array(0)]) {
    const input = concat([ok, frame(1, bad), frame(0, [1])]);
    const { values, error } = await drain(decode({ encoding: "gzip" })(streamOf([input])));
    assert.deepEqual(values.map((v) => new TextDecoder().decode(v.data)), ["fine"]);
    assertDecodeError(error, "DECOMPRESSION_FAILED", ok.length);
  }
  // A small message that inflates past the limit (a "zip bomb"); the same at the limit is fine.
  const bomb = frame(1, gz(new Uint8Array(1 << 20)));
  const over = await drain(decode({ encoding: "gzip", maxEventBytes: (1 << 20) - 1 })(streamOf([ok, bomb])));
  assert.equal(over.values.length, 1);
  assertDecodeError(over.error, "MESSAGE_TOO_LARGE", ok.length);
  const at = await drain(decode({ encoding: "gzip", maxEventBytes: 1 << 20 })(streamOf([bomb])));
  assert.equal(at.error, undefined);
  assert.equal(at.values[0].data.length, 1 << 20);
  assert.ok(at.values[0].data.every((b) => b === 0));
});

test("grpc: truncation at every point", async () => {
  const datas = [[1, 2], [], Array.from(gz(utf8("zz"))), [3]];
  const flags = [0, 0, 1, 0];
  const frames = datas.map((d, k) => frame(flags[k], d));
  const input = concat(frames);
  const starts: number[] = [];
  let at = 0;
  for (const f of frames) {
    starts.push(at);
    at += f.length;
  }
  const decoded = [[1, 2], [], Array.from(utf8("zz")), [3]];
  for (let cut = 0; cut <= input.length; cut++) {
    const complete = frames.filter((f, k) => starts[k] + f.length <= cut).length;
    const boundary = cut === input.length || starts.includes(cut);
    for (const chunks of [[input.slice(0, cut)], bytewise(input.slice(0, cut))]) {
      const { values, error } = await drain(decode({ encoding: "gzip" })(streamOf(chunks)));
      assert.deepEqual(values.map((v) => Array.from(v.data)), decoded.slice(0, complete), `cut at ${cut}`);
      if (boundary) assert.equal(error, undefined, `cut at ${cut}`);
      else assertDecodeError(error, "TRUNCATED", starts[complete]);
    }
  }
});

test("grpc: the encoder frames plainly and with gzip that node:zlib reads", async () => {
  const a = utf8("alpha");
  const plainWire = await encodeGrpcMessages([a, { data: Uint8Array.of(9), compressed: true }]);
  assert.deepEqual(Array.from(plainWire), [0, 0, 0, 0, 5, ...a, 1, 0, 0, 0, 1, 9]);
  const packed = await encodeGrpcMessages([a, a], { compress: true });
  assert.equal(packed[0], 1);
  const n = new DataView(packed.buffer).getUint32(1);
  assert.deepEqual(new Uint8Array(gunzipSync(packed.subarray(5, 5 + n))), a);
  const { values, error } = await drain(decode({ encoding: "gzip" })(streamOf([packed])));
  assert.equal(error, undefined);
  assert.deepEqual(plain(values), [
    { compressed: false, data: Array.from(a), offset: 0 },
    { compressed: false, data: Array.from(a), offset: 5 + n },
  ]);
  assert.throws(() => new GrpcMessageDecoderStream({ encoding: "br" as "gzip" }), RangeError);
});

test("grpc-status: codes, names and percent-decoded messages", () => {
  assert.equal(parseGrpcStatus(new Headers()), undefined);
  assert.equal(parseGrpcStatus([["grpc-message", "no status"]]), undefined);
  assert.deepEqual(parseGrpcStatus(new Headers({ "grpc-status": "0" })), { code: 0, name: "OK", message: "" });
  assert.deepEqual(
    parseGrpcStatus(new Headers({ "Grpc-Status": "16", "grpc-message": "token%20expired" })),
    { code: 16, name: "UNAUTHENTICATED", message: "token expired" },
  );
  assert.deepEqual(
    parseGrpcStatus([["grpc-message", "caf%C3%A9 %E2%9C%93 %F0%9F%98%80 100%25"], ["GRPC-STATUS", "14"]]),
    { code: 14, name: "UNAVAILABLE", message: "café ✓ 😀 100%" },
  );
  // Malformed escapes are kept; invalid UTF-8 becomes U+FFFD; nothing throws.
  assert.equal(parseGrpcStatus([["grpc-status", "13"], ["grpc-message", "50% off %zz %4"]])?.message, "50% off %zz %4");
  assert.equal(parseGrpcStatus([["grpc-status", "13"], ["grpc-message", "a%FFb"]])?.message, "a\uFFFDb");
  // Octets sent unencoded (not allowed, sent all the same) are kept as octets, as grpc-go keeps them: a value's
  // characters up to U+00FF are its octets (HPACK, Headers), so raw UTF-8 reads as its text; other characters (only in
  // values built by hand) as themselves.
  const raw = String.fromCharCode(...new TextEncoder().encode("café ✓"));
  assert.equal(parseGrpcStatus([["grpc-status", "13"], ["grpc-message", raw]])?.message, "café ✓");
  assert.equal(parseGrpcStatus([["grpc-status", "13"], ["grpc-message", `${raw}%20ok`]])?.message, "café ✓ ok");
  assert.equal(parseGrpcStatus(new Headers({ "grpc-status": "13", "grpc-message": raw }))?.message, "café ✓");
  assert.equal(parseGrpcStatus([["grpc-status", "13"], ["grpc-message", "✓ 😀%21"]])?.message, "✓ 😀!");
  assert.equal(parseGrpcStatus([["grpc-status", "13"], ["grpc-message", "\xff"]])?.message, "\uFFFD");
  // Codes outside the list, or not numbers, are UNKNOWN; the first of repeated fields counts.
  assert.deepEqual(parseGrpcStatus([["grpc-status", "17"]]), { code: 2, name: "UNKNOWN", message: "" });
  assert.deepEqual(parseGrpcStatus([["grpc-status", "-1"]]), { code: 2, name: "UNKNOWN", message: "" });
  assert.deepEqual(parseGrpcStatus([["grpc-status", "abc"]]), { code: 2, name: "UNKNOWN", message: "" });
  assert.equal(parseGrpcStatus([["grpc-status", "5"], ["grpc-status", "0"]])?.name, "NOT_FOUND");
  const names = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS"];
  names.forEach((name, code) => assert.equal(parseGrpcStatus([["grpc-status", String(code)]])?.name, name));
});
