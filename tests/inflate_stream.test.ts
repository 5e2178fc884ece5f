/**
 * InflateStream: HTTP `deflate` bodies (zlib streams, and raw DEFLATE as browsers accept) made by real zlib (node:zlib
 * at every level, and each runtime's own `CompressionStream("deflate")`), any cutting, and faults as DecodeErrors at
 * their byte after everything before them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as zlib from "node:zlib";
import fc from "fast-check";
import { DecodeError } from "../mod.ts";
import { InflateStream, removeContentCoding } from "../wire.ts";
import { assertSplitInvariant, concat, drain, errorKey, splitAt, streamOf, utf8 } from "./_util.ts";

const inflate = (source: ReadableStream<Uint8Array>) => source.pipeThrough(new InflateStream());
const joined = (values: Uint8Array[]) => Array.from(concat(values));

/** Text that compresses the way watch bodies do (repeats), with some bytes that do not. */
const sample = (n: number) =>
  utf8(
    Array.from({ length: n }, (_, i) => `{"type":"MODIFIED","object":{"metadata":{"resourceVersion":"${i * 7919}"}}}\n`)
      .join(""),
  );

test("inflate: zlib streams from node:zlib at every level, and raw DEFLATE, decode to their input under any cutting", async () => {
  const data = sample(300);
  for (let level = 0; level <= 9; level++) {
    const z = new Uint8Array(zlib.deflateSync(data, { level }));
    const { values, error } = await assertSplitInvariant(z, inflate, { runs: 15, normalize: joined });
    assert.equal(error, undefined, `level ${level}`);
    assert.deepEqual(concat(values), data, `level ${level}`);
  }
  const raw = new Uint8Array(zlib.deflateRawSync(data));
  const { values, error } = await assertSplitInvariant(raw, inflate, { runs: 15, normalize: joined });
  assert.equal(error, undefined);
  assert.deepEqual(concat(values), data);
  assert.deepEqual((await drain(inflate(streamOf([])))).values, []);
});

test("inflate: random data through the runtime's own CompressionStream('deflate') and node:zlib, random cuts", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(fc.uint8Array({ maxLength: 3000 }), fc.string({ maxLength: 3000 }).map(utf8)),
      fc.array(fc.integer({ min: 1, max: 3000 }), { maxLength: 12 }),
      async (data, cuts) => {
        const own = new Uint8Array(
          await new Response(new Blob([data.slice()]).stream().pipeThrough(new CompressionStream("deflate")))
            .arrayBuffer(),
        );
        for (const z of [own, new Uint8Array(zlib.deflateSync(data)), new Uint8Array(zlib.deflateRawSync(data))]) {
          const { values, error } = await drain(inflate(streamOf(splitAt(z, cuts))));
          assert.equal(error, undefined);
          assert.deepEqual(concat(values), data);
        }
      },
    ),
    { numRuns: 60 },
  );
});

test("inflate: faults are DecodeErrors at their byte, after all output before them", async () => {
  const data = sample(40);
  const z = new Uint8Array(zlib.deflateSync(data));
  const fault = async (input: Uint8Array) => {
    const result = await assertSplitInvariant(input, inflate, { runs: 10, normalize: joined });
    assert.ok(result.error instanceof DecodeError, String(result.error));
    return { key: errorKey(result.error), output: concat(result.values), message: String(result.error) };
  };
  // A wrong Adler-32: the whole output first, then the fault at the trailer.
  const badAdler = z.slice();
  badAdler[badAdler.length - 1] ^= 1;
  const adler = await fault(badAdler);
  assert.equal(adler.key, `DECOMPRESSION_FAILED@${z.length - 4}`);
  assert.deepEqual(adler.output, data);
  assert.match(adler.message, /Adler-32 mismatch/);
  // Bytes after the end.
  const trailing = await fault(concat([z, Uint8Array.of(0x41)]));
  assert.equal(trailing.key, `DECOMPRESSION_FAILED@${z.length}`);
  assert.deepEqual(trailing.output, data);
  // A preset dictionary: 78 BB is the header zlib writes with one (FDICT set, FCHECK valid), then the dictionary id.
  assert.equal(
    (await fault(Uint8Array.of(0x78, 0xbb, 0x12, 0x34, 0x56, 0x78, 0x03, 0x00))).key,
    "DECOMPRESSION_FAILED@1",
  );
  // A reserved block type (BTYPE 11) right after a zlib header: the inflater's fault, at the block's byte.
  assert.equal((await fault(Uint8Array.of(0x78, 0x9c, 0x07))).key, "DECOMPRESSION_FAILED@2");
  // Cut anywhere: TRUNCATED where it ended (or, inside the header, there), never more output than the data's prefix.
  for (let cut = 1; cut < z.length; cut += 7) {
    const r = await drain(inflate(streamOf([z.slice(0, cut)])));
    assert.ok(r.error instanceof DecodeError && r.error.code === "TRUNCATED", `cut ${cut}: ${String(r.error)}`);
    assert.equal(r.error.offset, cut, `cut ${cut}`);
    const out = concat(r.values);
    assert.deepEqual(out, data.subarray(0, out.length));
  }
});

test("removeContentCoding: deflate goes through InflateStream: damaged bodies fail with a DecodeError", async () => {
  const data = sample(20);
  const z = new Uint8Array(zlib.deflateSync(data));
  z[z.length >> 1] ^= 0x55;
  const { body, decoded } = removeContentCoding([["content-encoding", "deflate"]], streamOf([z]));
  assert.equal(decoded, "deflate");
  const r = await drain(body);
  assert.ok(r.error instanceof DecodeError && r.error.code === "DECOMPRESSION_FAILED", String(r.error));
  assert.ok(r.error.offset >= 2 && r.error.offset <= z.length);
});
