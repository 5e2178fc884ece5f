import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { DecodeError } from "../mod.ts";
import { JsonWatchEventDecoderStream, NdjsonDecoderStream, WatchEventDecoderStream } from "../wire.ts";
import { assertSplitInvariant, bytewise, drain, drainSlowly, streamOf, utf8 } from "./_util.ts";

const values = (source: ReadableStream<Uint8Array>, maxEventBytes?: number) =>
  source.pipeThrough(new NdjsonDecoderStream({ maxEventBytes }));
const events = (source: ReadableStream<Uint8Array>, maxEventBytes?: number) =>
  source.pipeThrough(new JsonWatchEventDecoderStream({ maxEventBytes }));

const pod = (name: string, rv: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default", resourceVersion: String(rv), ...extra },
});

test("ndjson: lines, CRLF, blank lines and a last line without a newline", async () => {
  const input = utf8('{"a":1}\r\n\n  \n{"b":[true,null]}\n\r\n"s"\n42');
  const { values: got, error } = await drain(values(streamOf([input])));
  assert.equal(error, undefined);
  assert.deepEqual(got, [{ a: 1 }, { b: [true, null] }, "s", 42]);
});

test("ndjson: UTF-8 split across chunks, every split point", async () => {
  const text = JSON.stringify({ note: "naïve ☸ 日本 🚀 é" }) + "\n";
  const bytes = utf8(text);
  for (let cut = 1; cut < bytes.length; cut++) {
    const { values: got } = await drain(values(streamOf([bytes.slice(0, cut), bytes.slice(cut)])));
    assert.deepEqual(got, [JSON.parse(text)]);
  }
});

test("ndjson: split invariance of random JSON values, down to single bytes", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.jsonValue(), { maxLength: 12 }), fc.boolean(), async (list, crlf) => {
      const input = utf8(list.map((v) => JSON.stringify(v)).join(crlf ? "\r\n" : "\n") + "\n");
      const expected = list.map((v) => JSON.parse(JSON.stringify(v)));
      const { values: got } = await assertSplitInvariant(input, (s) => values(s), { runs: 5 });
      assert.deepEqual(got, expected);
    }),
    { numRuns: 60 },
  );
});

test("ndjson: split invariance of faults", async () => {
  const cases = [
    '{"a":1}\n{"a":\n{"b":2}\n',
    '{"a":1}\n' + "x".repeat(50) + "\n",
    '{"a":1}\n{"a":',
    '{"a":1}\n{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":1}\n{"x":2}\n',
  ];
  for (const c of cases) await assertSplitInvariant(utf8(c), (s) => values(s, 40), { runs: 40 });
});

async function fault(input: string, make: (s: ReadableStream<Uint8Array>) => ReadableStream<unknown>) {
  const results = [];
  for (const chunks of [[utf8(input)], bytewise(utf8(input))]) results.push(await drain(make(streamOf(chunks))));
  assert.deepEqual(results[0].values, results[1].values);
  assert.ok(results[0].error instanceof DecodeError, String(results[0].error));
  assert.ok(results[1].error instanceof DecodeError, String(results[1].error));
  assert.equal(results[0].error.code, results[1].error.code);
  assert.equal(results[0].error.offset, results[1].error.offset);
  return { values: results[0].values, error: results[0].error };
}

test("ndjson: invalid JSON names the line's offset, earlier values delivered", async () => {
  const { values: got, error } = await fault('{"a":1}\n{"b":2}\n{"c":\n{"d":4}\n', (s) => values(s));
  assert.deepEqual(got, [{ a: 1 }, { b: 2 }]);
  assert.equal(error.code, "JSON_INVALID");
  assert.equal(error.offset, 16);
});

test("ndjson: an over-long line is refused at its start, before it is buffered whole", async () => {
  const { values: got, error } = await fault('{"a":1}\n"' + "x".repeat(100) + '"\n', (s) => values(s, 64));
  assert.deepEqual(got, [{ a: 1 }]);
  assert.equal(error.code, "LINE_TOO_LONG");
  assert.equal(error.offset, 8);
  // A line that never ends fails as soon as it passes the limit, not at the end of input.
  let fed = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      fed += 16;
      controller.enqueue(utf8("x".repeat(16)));
    },
  });
  const result = await drain(values(endless, 1024));
  assert.ok(result.error instanceof DecodeError && result.error.code === "LINE_TOO_LONG");
  assert.ok(fed < 2048, `read ${fed} bytes before failing`);
});

test("ndjson: a chunk holding more than maxEventBytes of lines each within it decodes as any cutting does", async () => {
  // A read longer than the limit is split line by line (each line's length checked first): blank and whitespace
  // lines, CRLF, and a last line of whitespace alone (no value, no error) included.
  await fc.assert(
    fc.asyncProperty(fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 2, maxLength: 10 }), async (list) => {
      const lines = list.map((v) => JSON.stringify(v));
      const max = Math.max(...lines.map((l) => utf8(l).length)) + 1;
      const input = utf8(lines.join("\r\n\n \t\n") + "\n  ");
      const { values: got, error } = await drain(values(streamOf([input]), max));
      assert.equal(error, undefined);
      assert.deepEqual(got, list.map((v) => JSON.parse(JSON.stringify(v))));
      await assertSplitInvariant(input, (s) => values(s, max), { runs: 5 });
    }),
    { numRuns: 40 },
  );
});

test("ndjson: an error that map throws, not a DecodeError, passes through unchanged", async () => {
  const failure = new TypeError("not mine");
  const map = (v: unknown) => {
    if ((v as { n: number }).n === 2) throw failure;
    return v;
  };
  // The whole-chunk path, and the line-by-line one (the chunk is longer than maxEventBytes).
  for (const maxEventBytes of [undefined, 8]) {
    const input = streamOf([utf8('{"n":1}\n{"n":2}\n{"n":3}\n')]);
    const { values: got, error } = await drain(input.pipeThrough(new NdjsonDecoderStream({ maxEventBytes, map })));
    assert.deepEqual(got, [{ n: 1 }]);
    assert.equal(error, failure);
  }
});

test("ndjson: input ending mid-line is TRUNCATED at the line's start", async () => {
  const { values: got, error } = await fault('{"a":1}\n{"type":"ADD', (s) => values(s));
  assert.deepEqual(got, [{ a: 1 }]);
  assert.equal(error.code, "TRUNCATED");
  assert.equal(error.offset, 8);
});

test("watch events: types, bookmarks and errors are typed and validated", async () => {
  const stream = [
    { type: "ADDED", object: pod("a", 1) },
    { type: "MODIFIED", object: pod("a", 2) },
    {
      type: "BOOKMARK",
      object: { kind: "Pod", metadata: { resourceVersion: "3", annotations: { "k8s.io/initial-events-end": "true" } } },
    },
    { type: "DELETED", object: pod("a", 4) },
    { type: "ERROR", object: { kind: "Status", apiVersion: "v1", code: 410, reason: "Expired", message: "too old" } },
  ];
  const input = utf8(stream.map((e) => JSON.stringify(e)).join("\n") + "\n");
  const { values: got } = await assertSplitInvariant(input, (s) => events(s), { runs: 30 });
  assert.deepEqual(got, stream);
  const last = got[4];
  assert.ok(last.type === "ERROR" && last.object.code === 410);
});

test("watch events: an unknown type is EVENT_TYPE_UNKNOWN at its line", async () => {
  const input = JSON.stringify({ type: "ADDED", object: pod("a", 1) }) + "\n" + '{"type":"RENAMED","object":{}}\n';
  const { values: got, error } = await fault(input, (s) => events(s));
  assert.equal(got.length, 1);
  assert.equal(error.code, "EVENT_TYPE_UNKNOWN");
  assert.equal(error.offset, input.indexOf("\n") + 1);
});

test("watch events: malformed events are EVENT_INVALID", async () => {
  const cases: [string, string][] = [
    ["[1,2]", "a watch event must be a JSON object, not an array"],
    ['{"type":"ADDED"}', `a watch event's "object" must be an object, not undefined`],
    ['{"type":"ADDED","object":[]}', `a watch event's "object" must be an object, not an array`],
    ['{"type":"ADDED","object":"x"}', `a watch event's "object" must be an object, not a string`],
    ['{"type":7,"object":{}}', `a watch event's "type" must be a string, not a number`],
    ['{"type":"BOOKMARK","object":{}}', "a BOOKMARK's object must carry metadata.resourceVersion"],
    ["null", "a watch event must be a JSON object, not null"],
  ];
  for (const [line, detail] of cases) {
    const { error } = await fault('{"type":"DELETED","object":{}}\n' + line + "\n", (s) => events(s));
    assert.equal(error.code, "EVENT_INVALID", line);
    assert.equal(error.offset, 31, line);
    assert.equal(error.detail, detail, line);
  }
});

test("watch events: the value stage counts values in its offsets", async () => {
  const source = streamOf<unknown>([{ type: "ADDED", object: {} }, { type: "NOPE", object: {} }]);
  const { values: got, error } = await drain(source.pipeThrough(new WatchEventDecoderStream()));
  assert.equal(got.length, 1);
  assert.ok(error instanceof DecodeError && error.code === "EVENT_TYPE_UNKNOWN" && error.offset === 1);
});

test("ndjson: values decoded before a fault in the same chunk reach a slow reader, then the error", async () => {
  const input = utf8(Array.from({ length: 20 }, (_, i) => `{"n":${i}}\n`).join("") + "{bad}\n");
  for (const truncated of [false, true]) {
    const bytes = truncated ? utf8(Array.from({ length: 20 }, (_, i) => `{"n":${i}}\n`).join("") + '{"n":') : input;
    const { values: got, error: failure } = await drainSlowly(
      streamOf([bytes]).pipeThrough(new NdjsonDecoderStream()),
      1,
    );
    assert.equal(got.length, 20);
    assert.ok(failure instanceof DecodeError && failure.code === (truncated ? "TRUNCATED" : "JSON_INVALID"));
  }
});

test("ndjson: a multi-megabyte line split into many chunks, with UTF-8 cut at chunk edges", async () => {
  const big = { type: "ADDED", object: { data: "naïve ☸ 日本 🚀 ".repeat(150_000) } };
  const bytes = utf8(JSON.stringify(big) + "\n" + '{"after":true}\n');
  for (const size of [4093, 65536]) {
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.slice(i, i + size));
    const { values: got, error } = await drain(values(streamOf(chunks)));
    assert.equal(error, undefined);
    assert.equal(got.length, 2);
    assert.ok((got[0] as typeof big).object.data === big.object.data, "the large line decodes exactly");
    assert.deepEqual(got[1], { after: true });
  }
  const { error } = await drain(values(streamOf([bytes.slice(0, 3_000_000)]), 2_000_000));
  assert.ok(error instanceof DecodeError && error.code === "LINE_TOO_LONG" && error.offset === 0);
});

test("ndjson: lines spanning chunks, below and above the reused join buffer's limit, each decoded from its own bytes", async () => {
  // Lines that span chunks are joined in one buffer reused from line to line up to 256 KiB (REUSED_JOIN_BYTES) and
  // in buffers of their own above it. Sizes that grow, shrink, cross the limit both ways and differ in every byte:
  // bytes left over from an earlier, longer line, or a buffer shared where it must not be, would show in the values.
  const sizes = [3000, 70_000, 5000, 262_000, 262_200, 1000, 300_000, 40_000, 262_144, 9];
  const lines = sizes.map((size, i) => {
    const skeleton = JSON.stringify({ i, s: "" });
    const fill = String.fromCharCode(0x61 + i).repeat(Math.max(0, size - skeleton.length));
    return JSON.stringify({ i, s: fill });
  });
  const bytes = utf8(lines.join("\n") + "\n");
  for (const size of [1024, 65536, 100_000]) {
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.slice(at, at + size));
    const { values: got, error } = await drain(values(streamOf(chunks)));
    assert.equal(error, undefined);
    assert.deepEqual(got, lines.map((line) => JSON.parse(line)), `reads of ${size} bytes`);
  }
});
