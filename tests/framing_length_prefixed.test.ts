import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { DecodeError } from "../src/errors.ts";
import { LengthPrefixedDecoderStream } from "../src/framing/length_prefixed_decoder_stream.ts";
import { encodeLengthPrefixed } from "../src/framing/encode.ts";
import { FrameSplitter } from "../src/framing/frame_splitter.ts";
import { assertSplitInvariant, bytewise, concat, drain, endless, splitAt, streamOf, within } from "./_util.ts";

const decode = (options: { maxEventBytes?: number } = {}) => (source: ReadableStream<Uint8Array>) =>
  source.pipeThrough(new LengthPrefixedDecoderStream(options));

/** Frames built by hand, independently of the encoder under test. */
function wire(...frames: number[][]): Uint8Array {
  const out: number[] = [];
  for (const f of frames) {
    out.push((f.length >>> 24) & 255, (f.length >>> 16) & 255, (f.length >>> 8) & 255, f.length & 255, ...f);
  }
  return Uint8Array.from(out);
}

const plain = (values: Uint8Array[]) => values.map((v) => Array.from(v));

test("length-prefixed: hand-made frames, incl. empty ones", async () => {
  const input = wire([0x61, 0x62, 0x63], [], [0xff], []);
  for (const chunks of [[input], bytewise(input)]) {
    const { values, error } = await drain(decode()(streamOf(chunks)));
    assert.equal(error, undefined);
    assert.deepEqual(plain(values), [[0x61, 0x62, 0x63], [], [0xff], []]);
  }
  assert.deepEqual((await drain(decode()(streamOf<Uint8Array>([])))).values, []);
});

test("length-prefixed: the encoder writes big-endian lengths", () => {
  const big = new Uint8Array(0x01_02_03);
  const out = encodeLengthPrefixed([big, Uint8Array.of(9)]);
  assert.deepEqual(Array.from(out.subarray(0, 4)), [0, 1, 2, 3]);
  assert.deepEqual(Array.from(out.subarray(4 + big.length)), [0, 0, 0, 1, 9]);
});

test("length-prefixed: round trip over random messages and random splits (down to single bytes)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 8 }),
      async (messages) => {
        const input = encodeLengthPrefixed(messages);
        const { values, error } = await assertSplitInvariant(input, decode(), { runs: 10, normalize: plain });
        assert.equal(error, undefined);
        assert.deepEqual(plain(values), plain(messages));
      },
    ),
    { numRuns: 60 },
  );
});

test("length-prefixed: split invariance of errors", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.uint8Array({ maxLength: 60 }), { maxLength: 5 }),
      fc.oneof(
        fc.constant(Uint8Array.of(0, 0, 1, 0)), // 256 bytes: over the limit below
        fc.constant(Uint8Array.of(0xff, 0xff, 0xff, 0xff)),
        fc.uint8Array({ minLength: 1, maxLength: 3 }), // a truncated prefix
        fc.constant(Uint8Array.of(0, 0, 0, 9, 1, 2)), // a truncated frame
      ),
      async (messages, tail) => {
        const good = encodeLengthPrefixed(messages);
        const input = concat([good, tail]);
        const { values, error } = await assertSplitInvariant(input, decode({ maxEventBytes: 100 }), {
          runs: 10,
          normalize: plain,
        });
        assert.ok(error instanceof DecodeError);
        assert.equal(error.offset, good.length);
        assert.equal(error.code, tail.length === 4 ? "MESSAGE_TOO_LARGE" : "TRUNCATED");
        assert.deepEqual(plain(values), plain(messages));
      },
    ),
    { numRuns: 60 },
  );
});

test("length-prefixed: a frame within one chunk is a view of it; a spanning frame is exactly its size", async () => {
  const input = wire([1, 2, 3], [4, 5], []);
  const { values } = await drain(decode()(streamOf([input])));
  assert.equal(values.length, 3);
  for (const v of values) assert.equal(v.buffer, input.buffer);
  assert.equal(values[0].byteOffset, 4);
  assert.equal(values[1].byteOffset, 11);

  const spanning = await drain(decode()(streamOf(splitAt(wire([1, 2, 3, 4, 5, 6]), [2, 5, 7]))));
  assert.equal(spanning.error, undefined);
  assert.deepEqual(plain(spanning.values), [[1, 2, 3, 4, 5, 6]]);
  assert.equal(spanning.values[0].byteOffset, 0);
  assert.equal(spanning.values[0].buffer.byteLength, 6);
});

test("length-prefixed: a prefix announcing 4 GiB - 1 fails at once, without waiting for more input", async () => {
  const before = wire([7]);
  const { values, error } = await within(
    drain(decode()(endless([before, Uint8Array.of(0xff, 0xff), Uint8Array.of(0xff, 0xff)]))),
    2000,
  );
  assert.deepEqual(plain(values), [[7]]);
  assert.ok(error instanceof DecodeError);
  assert.equal(error.code, "MESSAGE_TOO_LARGE");
  assert.equal(error.offset, before.length);
  assert.match(error.message, /4294967295/);
});

test("length-prefixed: lengths use all four bytes, big-endian, whether the prefix is split or not", async () => {
  // 2^24 + 1 and 2^32 - 1: one over the default limit of 16 MiB, and the largest a prefix holds.
  for (const prefix of [[1, 0, 0, 1], [0xff, 0xff, 0xff, 0xff]]) {
    const length = ((prefix[0] << 24) >>> 0) + (prefix[1] << 16) + (prefix[2] << 8) + prefix[3];
    for (const chunks of [[Uint8Array.from(prefix)], bytewise(Uint8Array.from(prefix))]) {
      const { error } = await within(drain(decode()(endless(chunks))), 2000);
      assert.ok(error instanceof DecodeError);
      assert.equal(error.code, "MESSAGE_TOO_LARGE");
      assert.equal(error.offset, 0);
      assert.ok(error.message.includes(`message of ${length} bytes`), error.message);
    }
  }
  // Just within a limit set to 2^24 + 0x020304: the low bytes count too.
  const at = await drain(decode({ maxEventBytes: 0x01_02_03_04 })(streamOf([Uint8Array.of(1, 2, 3, 5)])));
  assert.ok(at.error instanceof DecodeError);
  assert.equal(at.error.code, "MESSAGE_TOO_LARGE");
  assert.match(at.error.message, /message of 16909061 bytes/);
});

test("length-prefixed: maxEventBytes is inclusive", async () => {
  const at = await drain(decode({ maxEventBytes: 3 })(streamOf([wire([1, 2, 3])])));
  assert.equal(at.error, undefined);
  const over = await drain(decode({ maxEventBytes: 3 })(streamOf([wire([1], [1, 2, 3, 4])])));
  assert.deepEqual(plain(over.values), [[1]]);
  assert.ok(over.error instanceof DecodeError);
  assert.equal(over.error.code, "MESSAGE_TOO_LARGE");
  assert.equal(over.error.offset, 5);
  const zero = await drain(decode({ maxEventBytes: 0 })(streamOf([wire([], [1])])));
  assert.deepEqual(plain(zero.values), [[]]);
  assert.equal((zero.error as DecodeError).code, "MESSAGE_TOO_LARGE");
  assert.throws(() => new LengthPrefixedDecoderStream({ maxEventBytes: -1 }), RangeError);
  assert.throws(() => new LengthPrefixedDecoderStream({ maxEventBytes: 1.5 }), RangeError);
});

test("length-prefixed: truncation at every point", async () => {
  const messages = [[1, 2, 3], [], [4], [5, 6, 7, 8, 9]];
  const input = wire(...messages);
  // Frame starts, computed from the message lengths.
  const starts: number[] = [];
  let at = 0;
  for (const m of messages) {
    starts.push(at);
    at += 4 + m.length;
  }
  for (let cut = 0; cut <= input.length; cut++) {
    const complete = starts.map((s, k) => s + 4 + messages[k].length).filter((end) => end <= cut).length;
    const boundary = cut === input.length || starts.includes(cut);
    for (const chunks of [[input.slice(0, cut)], bytewise(input.slice(0, cut))]) {
      const { values, error } = await drain(decode()(streamOf(chunks)));
      assert.deepEqual(plain(values), messages.slice(0, complete), `cut at ${cut}`);
      if (boundary) {
        assert.equal(error, undefined, `cut at ${cut}`);
      } else {
        assert.ok(error instanceof DecodeError, `cut at ${cut}`);
        assert.equal(error.code, "TRUNCATED");
        assert.equal(error.offset, starts[complete], `cut at ${cut}`);
      }
    }
  }
});

/** `input` cut into chunks of `sizes[0]`, `sizes[1]`, ... (cycling), each a copy of its own, or (`views`) a view. */
function cutInto(input: Uint8Array, sizes: number[], views: boolean): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let at = 0, k = 0; at < input.length; k++) {
    const n = sizes[k % sizes.length];
    chunks.push(views ? input.subarray(at, at + n) : input.slice(at, at + n));
    at += n;
  }
  return chunks;
}

// The splitter property's inputs: message lengths and chunk sizes; and the messages of those lengths.
const LENGTHS = fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 12 });
const CHUNK_SIZES = fc.array(fc.integer({ min: 1, max: 120 }), { minLength: 1, maxLength: 40 });
const messagesOf = (lengths: number[]) =>
  lengths.map((n, k) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + k * 31) & 255));

test("frame splitter: a frame is a view of its chunk, or a buffer of exactly its length when it spans chunks", () => {
  fc.assert(
    fc.property(LENGTHS, CHUNK_SIZES, fc.boolean(), (lengths, sizes, shared) => {
      const messages = messagesOf(lengths);
      const chunks = cutInto(encodeLengthPrefixed(messages), sizes, shared);
      const splitter = new FrameSplitter({ flagged: false });
      const got: Uint8Array[] = [];
      for (const chunk of chunks) {
        splitter.push(chunk, (data) => {
          if (data.buffer === chunk.buffer) {
            assert.ok(
              data.byteOffset >= chunk.byteOffset && data.byteOffset + data.length <= chunk.byteOffset + chunk.length,
            );
          } else {
            assert.equal(data.buffer.byteLength, data.length, "a spanning frame: a buffer of its own, of its length");
            assert.ok(!chunks.some((c) => c.buffer === data.buffer));
          }
          got.push(data);
        });
      }
      splitter.finish();
      // Frames are kept after the splitter has gone on: none was written again (one rule: the sink may keep them).
      assert.deepEqual(got.map((g) => Array.from(g)), messages.map((m) => Array.from(m)));
    }),
    { numRuns: 300 },
  );
});
