/**
 * HTTP/2 frames (RFC 9113): encoder/decoder round trips of every frame type with random splits, the public captures
 * of ../shared/conformance/public-captures against the frame lists tshark wrote, a real node:http2 connection recorded
 * by a loopback proxy, and every fault the decoder reports, with its offset.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as http2 from "node:http2";
import process from "node:process";
import fc from "fast-check";
import { DecodeError } from "../mod.ts";
import {
  HTTP2_CLIENT_PREFACE,
  type Http2Frame,
  type Http2FrameInit,
  Http2FrameType,
  Http2SettingId,
} from "../src/transport/http2/frames.ts";
import { Http2FrameDecoder, type Http2FrameDecoderOptions } from "../src/transport/http2/frame_decoder.ts";
import { Http2FrameDecoderStream } from "../src/transport/http2/frame_decoder_stream.ts";
import { encodeHttp2Frame, encodeHttp2Frames } from "../src/transport/http2/frame_encoder.ts";
import { assertSplitInvariant, bytewise, concat, drain, errorKey, splitAt, streamOf, text, utf8 } from "./_util.ts";
import { startRecordingProxy } from "./peers/recording_proxy.ts";

// ---------------------------------------------------------------------------------------------------------------
// Helpers

/** A frame with every byte array copied to a plain array, for comparisons (views of different buffers compare equal). */
function normalize(frame: Http2Frame): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(frame)) out[key] = value instanceof Uint8Array ? Array.from(value) : value;
  return out;
}
const normalizeAll = (frames: Http2Frame[]) => frames.map(normalize);

const decodeWith = (options: Http2FrameDecoderOptions = {}) => (source: ReadableStream<Uint8Array>) =>
  source.pipeThrough(new Http2FrameDecoderStream(options));

/** Decodes `chunks` with the bare decoder (no streams): the frames and the error, if any. */
function decodeSync(chunks: Uint8Array[], options: Http2FrameDecoderOptions = {}) {
  const decoder = new Http2FrameDecoder(options);
  const values: Http2Frame[] = [];
  try {
    for (const chunk of chunks) decoder.push(chunk, (f) => values.push(f));
    decoder.finish();
    return { values, error: undefined as unknown };
  } catch (error) {
    return { values, error };
  }
}

/** A raw frame, with no checks: for faults the encoder will not write. */
function raw(type: number, flags: number, streamId: number, payload: ArrayLike<number> = [], length?: number) {
  const n = length ?? payload.length;
  return Uint8Array.of(
    n >>> 16 & 255,
    n >>> 8 & 255,
    n & 255,
    type,
    flags,
    streamId >>> 24 & 255,
    streamId >>> 16 & 255,
    streamId >>> 8 & 255,
    streamId & 255,
    ...Array.from(payload),
  );
}

const PREFACE = utf8(HTTP2_CLIENT_PREFACE);
const SETTINGS_EMPTY = raw(Http2FrameType.SETTINGS, 0, 0);
const PING = raw(Http2FrameType.PING, 0, 0, [1, 2, 3, 4, 5, 6, 7, 8]);

// ---------------------------------------------------------------------------------------------------------------
// Random frames

const streamId = fc.integer({ min: 1, max: 0x7fffffff });
const anyStreamId = fc.integer({ min: 0, max: 0x7fffffff });
const bytes = fc.uint8Array({ maxLength: 48 });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const extraFlags = fc.option(fc.integer({ min: 0, max: 255 }), { nil: undefined });
const padding = fc.option(fc.integer({ min: 0, max: 255 }), { nil: undefined });
const priority = (id: number) =>
  fc.record({
    exclusive: fc.boolean(),
    streamDependency: fc.integer({ min: 0, max: 0x7fffffff }).filter((d) => d !== id),
    weight: fc.integer({ min: 1, max: 256 }),
  });

const setting: fc.Arbitrary<[number, number]> = fc.oneof(
  fc.tuple(fc.constantFrom(1, 3, 6), u32),
  fc.tuple(fc.constantFrom(2, 8, 9), fc.integer({ min: 0, max: 1 })),
  fc.tuple(fc.constant(4), fc.integer({ min: 0, max: 0x7fffffff })),
  fc.tuple(fc.constant(5), fc.integer({ min: 16384, max: 16777215 })),
  fc.tuple(fc.integer({ min: 0, max: 0xffff }).filter((id) => !(id >= 1 && id <= 9)), u32),
);

/** A frame that is not part of a field block. */
const singleFrame: fc.Arbitrary<Http2FrameInit> = fc.oneof(
  fc.record({
    type: fc.constant("DATA" as const),
    streamId,
    flags: extraFlags,
    endStream: fc.boolean(),
    padLength: padding,
    data: bytes,
  }).map(({ padLength, ...f }) => (padLength === undefined ? f : { ...f, padded: true, padLength })),
  fc.record({
    type: fc.constant("HEADERS" as const),
    streamId,
    flags: extraFlags,
    endStream: fc.boolean(),
    padLength: padding,
    fragment: bytes,
    withPriority: fc.boolean(),
  }).chain(({ padLength, withPriority, ...f }) =>
    priority(f.streamId).map((p): Http2FrameInit => ({
      ...f,
      endHeaders: true,
      ...(withPriority ? { priority: p } : {}),
      ...(padLength === undefined ? {} : { padded: true, padLength }),
    }))
  ),
  streamId.chain((id) => priority(id).map((p) => ({ type: "PRIORITY" as const, streamId: id, priority: p }))),
  fc.record({ type: fc.constant("RST_STREAM" as const), streamId, errorCode: u32 }),
  fc.record({
    type: fc.constant("SETTINGS" as const),
    streamId: fc.constant(0),
    ack: fc.constant(false),
    parameters: fc.array(setting, { maxLength: 8 }),
  }),
  fc.constant<Http2FrameInit>({ type: "SETTINGS", streamId: 0, ack: true, parameters: [] }),
  fc.record({
    type: fc.constant("PUSH_PROMISE" as const),
    streamId,
    endHeaders: fc.constant(true),
    promisedStreamId: streamId,
    padLength: padding,
    fragment: bytes,
  }).map(({ padLength, ...f }) => (padLength === undefined ? f : { ...f, padded: true, padLength })),
  fc.record({
    type: fc.constant("PING" as const),
    streamId: fc.constant(0),
    ack: fc.boolean(),
    opaqueData: fc.uint8Array({ minLength: 8, maxLength: 8 }),
  }),
  fc.record({
    type: fc.constant("GOAWAY" as const),
    streamId: fc.constant(0),
    lastStreamId: anyStreamId,
    errorCode: u32,
    debugData: bytes,
  }),
  fc.record({
    type: fc.constant("WINDOW_UPDATE" as const),
    streamId: anyStreamId,
    increment: fc.integer({ min: 1, max: 0x7fffffff }),
  }),
  fc.record({
    type: fc.constant("UNKNOWN" as const),
    streamId: anyStreamId,
    flags: fc.integer({ min: 0, max: 255 }),
    frameType: fc.integer({ min: 0x0a, max: 0xff }),
    payload: bytes,
  }),
);

/** A field block: HEADERS or PUSH_PROMISE without END_HEADERS, then 1 to 3 CONTINUATION frames of its stream. */
const fieldBlock: fc.Arbitrary<Http2FrameInit[]> = fc.tuple(
  streamId,
  fc.boolean(),
  fc.array(bytes, { minLength: 2, maxLength: 4 }),
  streamId,
).map(([id, push, fragments, promised]) => {
  const first: Http2FrameInit = push
    ? { type: "PUSH_PROMISE", streamId: id, promisedStreamId: promised, fragment: fragments[0] }
    : { type: "HEADERS", streamId: id, endStream: true, fragment: fragments[0] };
  return [
    first,
    ...fragments.slice(1).map((fragment, k): Http2FrameInit => ({
      type: "CONTINUATION",
      streamId: id,
      endHeaders: k === fragments.length - 2,
      fragment,
    })),
  ];
});

const connection = fc.record({
  preface: fc.boolean(),
  detect: fc.boolean(),
  frames: fc.array(fc.oneof({ weight: 4, arbitrary: singleFrame.map((f) => [f]) }, fieldBlock), { maxLength: 10 })
    .map((units) => units.flat()),
  cuts: fc.array(fc.integer({ min: 1, max: 3000 }), { maxLength: 40 }),
});

/** What decoding `init` must give, apart from `flags`, `length` and `offset`. */
function expectedFields(init: Http2FrameInit): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(init)) {
    if (key === "flags") continue;
    // fast-check records have no prototype: compare as plain objects.
    out[key] = value instanceof Uint8Array ? Array.from(value) : key === "priority" ? { ...value } : value;
  }
  if (init.type === "DATA" || init.type === "HEADERS") out.endStream ??= false;
  if (init.type === "HEADERS" || init.type === "PUSH_PROMISE" || init.type === "CONTINUATION") {
    out.endHeaders ??= false;
  }
  if (init.type === "DATA" || init.type === "HEADERS" || init.type === "PUSH_PROMISE") {
    out.padded ??= false;
    out.padLength ??= 0;
  }
  if (init.type === "HEADERS") out.priority ??= undefined;
  if (init.type === "SETTINGS" || init.type === "PING") out.ack ??= false;
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Round trips

test("http2 frames: encode/decode round trip of every frame type, split invariant down to single bytes", async () => {
  await fc.assert(
    fc.asyncProperty(connection, async ({ preface, detect, frames, cuts }) => {
      const wire = encodeHttp2Frames(frames, { preface });
      const options: Http2FrameDecoderOptions = { preface: detect ? "detect" : preface ? "expect" : "none" };
      const whole = await drain(decodeWith(options)(streamOf([wire])));
      assert.equal(whole.error, undefined);
      assert.equal(whole.values.length, frames.length);
      let offset = preface ? 24 : 0;
      whole.values.forEach((frame, k) => {
        // Fields as given, offsets in order, and the frame re-encodes to its own bytes.
        const got = normalize(frame);
        for (const [key, value] of Object.entries(expectedFields(frames[k]))) {
          assert.deepEqual(got[key], value, `frame ${k} (${frame.type}) field ${key}`);
        }
        assert.equal(frame.offset, offset);
        const encoded = encodeHttp2Frame(frame);
        assert.deepEqual(encoded, wire.subarray(offset, offset + 9 + frame.length));
        offset += 9 + frame.length;
      });
      assert.equal(offset, wire.length);
      const expected = JSON.stringify(normalizeAll(whole.values));
      const split = await drain(decodeWith(options)(streamOf(splitAt(wire, cuts))));
      assert.equal(split.error, undefined);
      assert.equal(JSON.stringify(normalizeAll(split.values)), expected);
      const single = decodeSync(bytewise(wire), options);
      assert.equal(single.error, undefined);
      assert.equal(JSON.stringify(normalizeAll(single.values)), expected);
    }),
    { numRuns: 300 },
  );
});

test("http2 frames: SETTINGS known parameters by name, the last value winning", () => {
  const wire = encodeHttp2Frame({
    type: "SETTINGS",
    streamId: 0,
    parameters: [[1, 4096], [2, 0], [3, 100], [4, 65535], [5, 16384], [6, 8192], [8, 1], [9, 1], [0x99, 7], [3, 5]],
  });
  const { values, error } = decodeSync([wire]);
  assert.equal(error, undefined);
  assert.equal(values[0].type, "SETTINGS");
  if (values[0].type !== "SETTINGS") return;
  assert.equal(values[0].parameters.length, 10);
  assert.deepEqual(values[0].settings, {
    headerTableSize: 4096,
    enablePush: false,
    maxConcurrentStreams: 5,
    initialWindowSize: 65535,
    maxFrameSize: 16384,
    maxHeaderListSize: 8192,
    enableConnectProtocol: true,
    noRfc7540Priorities: true,
  });
});

test("http2 frames: a payload within one chunk is a view of it; one across chunks is copied once, exactly", () => {
  const data = utf8("hello, frames");
  const wire = encodeHttp2Frames([
    { type: "DATA", streamId: 1, data },
    { type: "DATA", streamId: 1, padLength: 3, data, endStream: true },
  ]);
  const whole = decodeSync([wire]).values;
  for (const f of whole) {
    assert.equal(f.type, "DATA");
    if (f.type === "DATA") {
      assert.equal(f.data.buffer, wire.buffer);
      assert.equal(text(f.data), "hello, frames");
    }
  }
  const split = decodeSync([wire.slice(0, 12), wire.slice(12)]).values;
  assert.equal(split[0].type, "DATA");
  if (split[0].type === "DATA") {
    assert.notEqual(split[0].data.buffer, wire.buffer);
    assert.equal(split[0].data.buffer.byteLength, split[0].length); // a buffer of exactly the payload's length
    assert.equal(text(split[0].data), "hello, frames");
  }
});

test("http2 frames: dataInPieces hands on DATA frames that span chunks as views, as their bytes arrive", () => {
  // Frames of any kind, DATA ones (padded or not, empty or not) among them, and any cutting of the wire into chunks:
  // with dataInPieces the frames are those of the whole decoding but that each DATA frame may come in pieces: views of
  // the input chunks, `more` on all but the last, END_STREAM only on the last, their data joined the frame's.
  fc.assert(
    fc.property(
      fc.array(singleFrame, { minLength: 1, maxLength: 8 }),
      fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 12 }),
      (inits, cuts) => {
        const wire = encodeHttp2Frames(inits);
        const whole = decodeSync([wire]).values;
        const chunks = splitAt(wire, cuts).map((c) => c.slice()); // each chunk a buffer of its own
        const pieces = decodeSync(chunks, { dataInPieces: true });
        assert.equal(pieces.error, undefined);
        const buffers = new Set<ArrayBufferLike>(chunks.map((c) => c.buffer));
        let k = 0;
        for (const frame of whole) {
          if (frame.type !== "DATA") {
            assert.deepEqual(normalize(pieces.values[k++]), normalize(frame));
            continue;
          }
          const parts: Uint8Array[] = [];
          for (;;) {
            const piece = pieces.values[k++];
            assert.equal(piece.type, "DATA");
            if (piece.type !== "DATA") return;
            if (piece.data.length > 0) assert.ok(buffers.has(piece.data.buffer), "a view of an input chunk");
            parts.push(piece.data);
            const { data: _d, more, flags, endStream, ...rest } = piece;
            const { data: _w, flags: _f, endStream: _e, ...wholeRest } = frame;
            const wholeFlags: number = frame.flags;
            const wholeEnd: boolean = frame.endStream;
            assert.deepEqual(rest, wholeRest);
            if (more === true) {
              assert.equal(endStream, false);
              assert.equal(flags, wholeFlags & ~0x1);
              continue;
            }
            assert.equal(endStream, wholeEnd);
            assert.equal(flags, wholeFlags);
            break;
          }
          assert.deepEqual(Array.from(concat(parts)), Array.from(frame.data));
        }
        assert.equal(k, pieces.values.length);
      },
    ),
    { numRuns: 300 },
  );
  // Faults are where they are without pieces: bad padding at the payload's first byte, truncation at the end.
  const badPad = raw(Http2FrameType.DATA, 0x8, 1, [9, 1, 2, 3]);
  for (const cut of [9, 10, 11]) {
    const plain = decodeSync([badPad.slice(0, cut), badPad.slice(cut)]);
    const inPieces = decodeSync([badPad.slice(0, cut), badPad.slice(cut)], { dataInPieces: true });
    assert.equal(errorKey(inPieces.error), errorKey(plain.error));
    assert.equal(errorKey(plain.error), "FRAME_INVALID@9");
  }
  const data = encodeHttp2Frame({ type: "DATA", streamId: 1, data: utf8("abcdef") });
  const truncated = decodeSync([data.slice(0, 12)], { dataInPieces: true });
  assert.equal(errorKey(truncated.error), "TRUNCATED@12");
  assert.equal(truncated.values.length, 1, "the bytes that arrived were handed on");
  assert.equal(truncated.values[0].type === "DATA" && text(truncated.values[0].data), "abc");
});

test("http2 frames: preface detection, and empty input", () => {
  const body = concat([SETTINGS_EMPTY, PING]);
  for (const [input, mode] of [[concat([PREFACE, body]), "detect"], [body, "detect"], [body, "none"]] as const) {
    const { values, error } = decodeSync(bytewise(input), { preface: mode });
    assert.equal(error, undefined);
    assert.deepEqual(values.map((f) => [f.type, f.offset]), [
      ["SETTINGS", input.length - 26],
      ["PING", input.length - 17],
    ]);
  }
  for (const mode of ["expect", "none", "detect"] as const) {
    assert.equal(decodeSync([], { preface: mode }).error, undefined);
  }
});

test("http2 frames: encoder range checks", () => {
  assert.throws(() => encodeHttp2Frame({ type: "DATA", streamId: 2 ** 31, data: new Uint8Array() }), RangeError);
  assert.throws(() => encodeHttp2Frame({ type: "PING", streamId: 0, opaqueData: new Uint8Array(7) }), RangeError);
  assert.throws(() => encodeHttp2Frame({ type: "UNKNOWN", streamId: 0, frameType: 9, payload: new Uint8Array() }));
  assert.throws(
    () => encodeHttp2Frame({ type: "DATA", streamId: 1, padded: false, padLength: 2, data: new Uint8Array() }),
    RangeError,
  );
  assert.throws(
    () =>
      encodeHttp2Frame({
        type: "PRIORITY",
        streamId: 1,
        priority: { exclusive: false, streamDependency: 0, weight: 0 },
      }),
    RangeError,
  );
});

// ---------------------------------------------------------------------------------------------------------------
// Public captures

/** The conformance corpus folder: $WATCHWIRE_CONFORMANCE, else ../shared/conformance/ beside the project. */
function conformanceDir(): string {
  const fromEnv = process.env.WATCHWIRE_CONFORMANCE;
  const dir = fromEnv !== undefined && fromEnv !== ""
    ? (fromEnv.endsWith("/") ? fromEnv : `${fromEnv}/`)
    : fileURLToPath(new URL("../../shared/conformance/", import.meta.url));
  if (!existsSync(`${dir}public-captures/README.md`)) {
    assert.fail(
      `the conformance corpus is missing: no ${dir}public-captures/README.md. Put the corpus at ../shared/conformance/ ` +
        "beside the project, or point WATCHWIRE_CONFORMANCE at it.",
    );
  }
  return dir;
}

interface ListedFrame {
  offset: number;
  type: string;
  streamId: number;
  length: number;
  flags: number;
  extra: string;
  data?: string;
}

/** Parses a `*.frames.txt` listing: `@OFFSET TYPE stream=N len=N flags=0xN ...` lines (and the preface line). */
function parseListing(listing: string): { preface: boolean; frames: ListedFrame[] } {
  let preface = false;
  const frames: ListedFrame[] = [];
  for (const line of listing.split("\n")) {
    if (/^@0 client preface/.test(line)) {
      preface = true;
      continue;
    }
    const m = /^@(\d+) ([A-Z_]+) stream=(\d+) len=(\d+) flags=0x([0-9a-f]+)(.*)$/.exec(line);
    if (m !== null) {
      frames.push({
        offset: Number(m[1]),
        type: m[2],
        streamId: Number(m[3]),
        length: Number(m[4]),
        flags: parseInt(m[5], 16),
        extra: m[6].trim(),
      });
      continue;
    }
    const data = /^\s+data: (".*")$/.exec(line);
    if (data !== null) frames[frames.length - 1].data = JSON.parse(data[1]) as string;
    else if (line.startsWith("@")) throw new Error(`unparsed listing line: ${line}`);
  }
  return { preface, frames };
}

const captures = [
  "pcap_file_ex/http2_sample-stream0-c2s",
  "pcap_file_ex/http2_sample-stream0-s2c",
  "nDPI/http2-stream0-c2s",
  "nDPI/http2-stream0-s2c",
];

for (const name of captures) {
  test(`http2 frames: public capture ${name} decodes to the frames tshark lists`, async () => {
    const dir = `${conformanceDir()}public-captures/`;
    const wire = new Uint8Array(readFileSync(`${dir}${name}.bin`));
    const listing = parseListing(readFileSync(`${dir}${name}.frames.txt`, "utf8"));
    assert.ok(listing.frames.length > 0);
    assert.equal(listing.preface, name.endsWith("c2s"));
    const { values, error } = await assertSplitInvariant(
      wire,
      decodeWith({ preface: listing.preface ? "expect" : "none" }),
      { runs: 50, normalize: normalizeAll },
    );
    assert.equal(error, undefined);
    assert.deepEqual(
      values.map((f) => ({ offset: f.offset, type: f.type, streamId: f.streamId, length: f.length, flags: f.flags })),
      listing.frames.map(({ offset, type, streamId, length, flags }) => ({ offset, type, streamId, length, flags })),
    );
    // The decoded contents tshark also shows.
    values.forEach((frame, k) => {
      const listed = listing.frames[k];
      if (frame.type === "DATA" && listed.data !== undefined) assert.equal(text(frame.data), listed.data);
      if (frame.type === "SETTINGS") {
        const named = JSON.parse(listed.extra.replace(/^\[ACK\] /, "")) as Array<[string, number]>;
        assert.deepEqual(
          frame.parameters,
          named.map(([id, value]) => [Http2SettingId[id as keyof typeof Http2SettingId], value]),
        );
      }
      if (frame.type === "WINDOW_UPDATE") assert.equal(listed.extra, `increment=${frame.increment}`);
      if (frame.type === "GOAWAY") {
        assert.equal(listed.extra, `error=${frame.errorCode} lastStream=${frame.lastStreamId}`);
      }
      // No padding in these captures: every frame re-encodes to its own bytes.
      assert.deepEqual(encodeHttp2Frame(frame), wire.subarray(frame.offset, frame.offset + 9 + frame.length));
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// A real peer: node:http2 (nghttp2 in Node) through a recording proxy

const WATCH_LINES = [
  '{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","resourceVersion":"101"}}}\n',
  '{"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","resourceVersion":"102"}}}\n',
  `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"big","resourceVersion":"103"},"data":{"x":"${
    "é".repeat(20000)
  }"}}}\n`,
  '{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"104"}}}\n',
  '{"type":"DELETED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","resourceVersion":"105"}}}\n',
];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs an h2c watch through a recording proxy; returns both directions and the body the client received. */
async function recordH2cWatch(): Promise<{ c2s: Uint8Array; s2c: Uint8Array; received: string }> {
  const server = http2.createServer();
  server.on("stream", (stream: http2.ServerHttp2Stream) => {
    stream.respond({ ":status": 200, "content-type": "application/json;stream=watch" });
    void (async () => {
      for (const line of WATCH_LINES) {
        stream.write(line);
        await sleep(15); // separate writes, separate DATA frames
      }
      stream.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  const proxy = await startRecordingProxy(port);
  let client: http2.ClientHttp2Session | undefined;
  try {
    client = http2.connect(`http://127.0.0.1:${proxy.port}`);
    client.on("error", () => {});
    const request = client.request({ ":path": "/api/v1/pods?watch=1", ":method": "GET" });
    const parts: Uint8Array[] = [];
    request.on("data", (chunk: Uint8Array) => parts.push(new Uint8Array(chunk)));
    await new Promise<void>((resolve, reject) => {
      request.on("end", () => resolve());
      request.on("error", reject);
    });
    await new Promise<void>((resolve) => client!.close(() => resolve()));
    await sleep(50); // let the proxy see the last bytes
    const [connection] = proxy.connections();
    return { c2s: connection.clientToServer, s2c: connection.serverToClient, received: text(parts) };
  } finally {
    client?.destroy();
    await proxy.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const runtime = "Deno" in globalThis ? "Deno" : "Bun" in globalThis ? "Bun" : "Node";

test(`http2 frames: a real node:http2 h2c watch (${runtime}), both directions recorded and decoded`, async () => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("node:http2 exchange took longer than 10 s")), 10000);
  });
  const { c2s, s2c, received } = await Promise.race([recordH2cWatch(), deadline]).finally(() => clearTimeout(timer));
  const written = WATCH_LINES.join("");
  assert.equal(received, written);

  const client = await drain(streamOf([c2s]).pipeThrough(new Http2FrameDecoderStream({ preface: "expect" })));
  assert.equal(client.error, undefined);
  const server = await drain(streamOf([s2c]).pipeThrough(new Http2FrameDecoderStream({ preface: "none" })));
  assert.equal(server.error, undefined);
  const summary = (frames: Http2Frame[]) =>
    frames.map((f) => `${f.type}${f.streamId === 0 ? "" : `@${f.streamId}`}(${f.length},0x${f.flags.toString(16)})`)
      .join(" ");
  if (process.env.WATCHWIRE_VERBOSE) {
    console.log(`${runtime} c2s: ${summary(client.values)}\n${runtime} s2c: ${summary(server.values)}`);
  }

  for (const frames of [client.values, server.values]) {
    assert.equal(frames[0].type, "SETTINGS");
    if (frames[0].type === "SETTINGS") assert.equal(frames[0].ack, false);
    // Everything decoded re-encodes to the very bytes the peer wrote (no padding used).
    const wire = frames === client.values ? c2s : s2c;
    for (const f of frames) assert.deepEqual(encodeHttp2Frame(f), wire.subarray(f.offset, f.offset + 9 + f.length));
    const last = frames[frames.length - 1];
    assert.equal(last.offset + 9 + last.length, wire.length);
  }
  const request = client.values.find((f) => f.type === "HEADERS");
  assert.ok(request !== undefined && request.type === "HEADERS");
  assert.equal(request.streamId, 1);
  assert.equal(request.endStream, true);

  const stream1 = server.values.filter((f) => f.streamId === 1);
  assert.equal(stream1[0].type, "HEADERS");
  const data = stream1.flatMap((f) => (f.type === "DATA" ? [f] : []));
  assert.ok(data.length >= WATCH_LINES.length, `${data.length} DATA frames`);
  assert.equal(text(data.map((f) => f.data)), written);
  const end = stream1[stream1.length - 1];
  assert.ok(end.type === "DATA" || end.type === "HEADERS");
  assert.equal(end.endStream, true);
  assert.equal(stream1.filter((f) => (f.type === "DATA" || f.type === "HEADERS") && f.endStream).length, 1);
});

// ---------------------------------------------------------------------------------------------------------------
// Faults

interface Fault {
  name: string;
  input: Uint8Array;
  options?: Http2FrameDecoderOptions;
  code: DecodeError["code"];
  offset: number;
  before: number; // frames delivered before the fault
}

const H = Http2FrameType;
const NAMES = Object.fromEntries(Object.entries(H).map(([name, code]) => [code, name])) as Record<number, string>;
const block = raw(H.HEADERS, 0, 1, [0x82]); // a field block left open on stream 1
const faults: Fault[] = [
  {
    name: "frame over the default limit",
    input: concat([SETTINGS_EMPTY, raw(H.DATA, 0, 1, [], 16385)]),
    code: "FRAME_SIZE_ERROR",
    offset: 9,
    before: 1,
  },
  {
    name: "frame over a raised limit",
    input: concat([SETTINGS_EMPTY, raw(H.DATA, 0, 1, [], 70000)]),
    options: { maxFrameSize: 65536 },
    code: "FRAME_SIZE_ERROR",
    offset: 9,
    before: 1,
  },
  {
    name: "frame over the ceiling",
    input: concat([PING, raw(0x42, 0, 0, [], 20000)]),
    options: { maxFrameSize: 1 << 20, maxFrameSizeCeiling: 16384 },
    code: "FRAME_SIZE_ERROR",
    offset: 17,
    before: 1,
  },
  {
    name: "DATA pad length = payload length",
    input: concat([PING, raw(H.DATA, 0x8, 1, [4, 1, 2, 3])]),
    code: "FRAME_INVALID",
    offset: 26,
    before: 1,
  },
  {
    name: "HEADERS pad length runs into the priority fields",
    input: raw(H.HEADERS, 0x2c, 3, [1, 0, 0, 0, 1, 15]),
    code: "FRAME_INVALID",
    offset: 9,
    before: 0,
  },
  {
    name: "PUSH_PROMISE pad length over its content",
    input: raw(H.PUSH_PROMISE, 0x0c, 1, [2, 0, 0, 0, 2, 9]),
    code: "FRAME_INVALID",
    offset: 9,
    before: 0,
  },
  {
    name: "padded DATA with no payload",
    input: raw(H.DATA, 0x8, 1),
    code: "FRAME_INVALID",
    offset: 0,
    before: 0,
  },
  ...([[H.PRIORITY, 4, 1], [H.RST_STREAM, 5, 1], [H.PING, 7, 0], [H.WINDOW_UPDATE, 3, 0], [H.SETTINGS, 7, 0], [
    H.GOAWAY,
    7,
    0,
  ]] as const).map(([type, length, id]): Fault => ({
    name: `${NAMES[type]} with ${length} bytes`,
    input: concat([PING, raw(type, 0, id, new Uint8Array(length))]),
    code: "FRAME_INVALID",
    offset: 17,
    before: 1,
  })),
  {
    name: "SETTINGS ACK with a payload",
    input: concat([SETTINGS_EMPTY, raw(H.SETTINGS, 0x1, 0, [0, 3, 0, 0, 0, 1])]),
    code: "FRAME_INVALID",
    offset: 9,
    before: 1,
  },
  ...[H.DATA, H.HEADERS, H.PRIORITY, H.RST_STREAM, H.PUSH_PROMISE].map((type): Fault => ({
    name: `${NAMES[type]} on stream 0`,
    input: concat([PING, raw(type, 0, 0, new Uint8Array(5))]),
    code: "FRAME_INVALID",
    offset: 22,
    before: 1,
  })),
  {
    name: "CONTINUATION on stream 0 (no field block open)",
    input: concat([PING, raw(H.CONTINUATION, 0x4, 0, [0x82])]),
    code: "FRAME_INVALID",
    offset: 20,
    before: 1,
  },
  ...[H.SETTINGS, H.PING, H.GOAWAY].map((type): Fault => ({
    name: `${NAMES[type]} on stream 1`,
    input: concat([SETTINGS_EMPTY, raw(type, 0, 1, new Uint8Array(8))]),
    code: "FRAME_INVALID",
    offset: 14,
    before: 1,
  })),
  {
    name: "stream id 0 with the reserved bit set is still 0",
    input: raw(H.DATA, 0, 0x80000000, [1]),
    code: "FRAME_INVALID",
    offset: 5,
    before: 0,
  },
  {
    name: "CONTINUATION without a field block",
    input: concat([raw(H.HEADERS, 0x4, 1, [0x82]), raw(H.CONTINUATION, 0x4, 1, [0x84])]),
    code: "FRAME_INVALID",
    offset: 13,
    before: 1,
  },
  {
    name: "another frame inside a field block",
    input: concat([block, PING]),
    code: "FRAME_INVALID",
    offset: 13,
    before: 1,
  },
  {
    name: "an unknown frame inside a field block",
    input: concat([block, raw(0x42, 0, 0, [])]),
    code: "FRAME_INVALID",
    offset: 13,
    before: 1,
  },
  {
    name: "CONTINUATION of another stream",
    input: concat([block, raw(H.CONTINUATION, 0x4, 3, [0x84])]),
    code: "FRAME_INVALID",
    offset: 15,
    before: 1,
  },
  {
    name: "CONTINUATION flood: 65 frames",
    input: concat([block, ...Array.from({ length: 65 }, () => raw(H.CONTINUATION, 0, 1, []))]),
    code: "HEADER_TOO_LARGE",
    offset: 10 + 64 * 9,
    before: 65,
  },
  {
    name: "CONTINUATION flood: a custom count",
    input: concat([block, ...Array.from({ length: 4 }, () => raw(H.CONTINUATION, 0, 1, []))]),
    options: { maxContinuationFrames: 3 },
    code: "HEADER_TOO_LARGE",
    offset: 10 + 3 * 9,
    before: 4,
  },
  {
    name: "field block bytes over a custom limit",
    input: concat([raw(H.HEADERS, 0, 1, new Uint8Array(60)), raw(H.CONTINUATION, 0, 1, new Uint8Array(40))]),
    options: { maxHeaderBlockBytes: 99 },
    code: "HEADER_TOO_LARGE",
    offset: 69,
    before: 1,
  },
  {
    name: "HEADERS fragment alone over the limit",
    input: raw(H.HEADERS, 0x4, 1, new Uint8Array(100)),
    options: { maxHeaderBlockBytes: 99 },
    code: "HEADER_TOO_LARGE",
    offset: 0,
    before: 0,
  },
  {
    name: "wrong preface (last byte)",
    input: concat([PREFACE.subarray(0, 23), Uint8Array.of(0x20), SETTINGS_EMPTY]),
    options: { preface: "expect" },
    code: "PREFACE_INVALID",
    offset: 23,
    before: 0,
  },
  {
    name: "preface expected, frames found",
    input: SETTINGS_EMPTY,
    options: { preface: "expect" },
    code: "PREFACE_INVALID",
    offset: 0,
    before: 0,
  },
  {
    name: "detected preface that goes wrong",
    input: utf8("PRI * HTTP/1.1\r\n\r\n"),
    options: { preface: "detect" },
    code: "PREFACE_INVALID",
    offset: 11,
    before: 0,
  },
  {
    name: "preface where none is allowed",
    input: concat([PREFACE, SETTINGS_EMPTY]),
    options: { preface: "none" },
    code: "FRAME_SIZE_ERROR",
    offset: 0,
    before: 0,
  },
  {
    name: "input ends inside the preface",
    input: PREFACE.subarray(0, 10),
    options: { preface: "expect" },
    code: "TRUNCATED",
    offset: 10,
    before: 0,
  },
  {
    name: "input ends inside a frame header",
    input: concat([SETTINGS_EMPTY, PING.subarray(0, 5)]),
    code: "TRUNCATED",
    offset: 14,
    before: 1,
  },
  {
    name: "input ends inside a payload",
    input: concat([SETTINGS_EMPTY, PING.subarray(0, 13)]),
    code: "TRUNCATED",
    offset: 22,
    before: 1,
  },
  {
    name: "input ends inside a field block",
    input: block,
    code: "TRUNCATED",
    offset: 10,
    before: 1,
  },
  {
    name: "WINDOW_UPDATE of 0",
    input: concat([PING, raw(H.WINDOW_UPDATE, 0, 5, [0x80, 0, 0, 0])]),
    code: "FRAME_INVALID",
    offset: 26,
    before: 1,
  },
  {
    name: "SETTINGS value out of range",
    input: raw(H.SETTINGS, 0, 0, [0, 3, 0, 0, 0, 1, 0, 5, 0, 0, 0x10, 0]),
    code: "FRAME_INVALID",
    offset: 15,
    before: 0,
  },
  // RFC 9113 §6.5.2 (and RFC 8441 §3, RFC 9218 §2.1 for 0x8 and 0x9): the second parameter of each is out of range.
  ...([[0x2, 2, "ENABLE_PUSH"], [0x4, 0x8000_0000, "INITIAL_WINDOW_SIZE"], [0x5, 16383, "MAX_FRAME_SIZE"], [
    0x8,
    2,
    "ENABLE_CONNECT_PROTOCOL",
  ], [0x9, 2, "NO_RFC7540_PRIORITIES"]] as const).map(([id, value, name]): Fault => ({
    name: `SETTINGS ${name} = ${value}`,
    input: concat([
      PING,
      raw(H.SETTINGS, 0, 0, [
        0,
        3,
        0,
        0,
        0,
        1,
        0,
        id,
        value >>> 24,
        (value >>> 16) & 255,
        (value >>> 8) & 255,
        value & 255,
      ]),
    ]),
    code: "FRAME_INVALID",
    offset: 17 + 9 + 6,
    before: 1,
  })),
  ...([[0x8, 0, "PADDED"], [0x20, 4, "PRIORITY"], [0x28, 5, "PADDED and PRIORITY"]] as const).map((
    [flags, length, name],
  ): Fault => ({
    name: `HEADERS with ${name} in ${length} bytes`,
    input: concat([PING, raw(H.HEADERS, flags | 0x4, 1, new Uint8Array(length))]),
    code: "FRAME_INVALID",
    offset: 17,
    before: 1,
  })),
  ...([[0, 3], [0x8, 4]] as const).map(([flags, length]): Fault => ({
    name: `PUSH_PROMISE${flags ? " with PADDED" : ""} in ${length} bytes`,
    input: concat([PING, raw(H.PUSH_PROMISE, flags | 0x4, 1, new Uint8Array(length))]),
    code: "FRAME_INVALID",
    offset: 17,
    before: 1,
  })),
  {
    name: "stream depending on itself",
    input: raw(H.PRIORITY, 0, 7, [0, 0, 0, 7, 16]),
    code: "FRAME_INVALID",
    offset: 9,
    before: 0,
  },
  {
    name: "PUSH_PROMISE of stream 0",
    input: raw(H.PUSH_PROMISE, 0x4, 1, [0, 0, 0, 0, 0x82]),
    code: "FRAME_INVALID",
    offset: 9,
    before: 0,
  },
];

for (const fault of faults) {
  test(`http2 frames: fault: ${fault.name} -> ${fault.code}@${fault.offset}`, async () => {
    const { values, error } = await assertSplitInvariant(fault.input, decodeWith(fault.options), {
      runs: 30,
      normalize: normalizeAll,
    });
    assert.ok(error instanceof DecodeError, String(error));
    assert.equal(errorKey(error), `${fault.code}@${fault.offset}`, error.message);
    assert.equal(values.length, fault.before);
    // The bare decoder agrees, and keeps failing once failed.
    const decoder = new Http2FrameDecoder(fault.options);
    const sync = decodeSync(bytewise(fault.input), fault.options);
    assert.equal(errorKey(sync.error), `${fault.code}@${fault.offset}`);
    assert.throws(() => {
      decoder.push(fault.input, () => {});
      decoder.finish();
    }, DecodeError);
    assert.throws(
      () => decoder.push(new Uint8Array(1), () => {}),
      (e) => e instanceof DecodeError && e.code === fault.code,
    );
  });
}

/** Runs `body` with `Uint8Array` construction watched; returns the largest length allocated by number. */
function largestAllocation(body: () => void): number {
  const original = globalThis.Uint8Array;
  let largest = 0;
  globalThis.Uint8Array = new Proxy(original, {
    construct(target, args, newTarget) {
      if (typeof args[0] === "number") largest = Math.max(largest, args[0]);
      return Reflect.construct(target, args, newTarget);
    },
  });
  try {
    body();
  } finally {
    globalThis.Uint8Array = original;
  }
  return largest;
}

test("http2 frames: a 16 MiB frame header fails at the header, before any payload is buffered", () => {
  const header = raw(Http2FrameType.DATA, 0, 1, [], 0xffffff);
  const input = concat([header, new Uint8Array(1000)]); // the payload has started to arrive
  const decoders = [new Http2FrameDecoder(), new Http2FrameDecoder({ maxFrameSize: 16777215 })];
  const errors: unknown[] = [];
  const largest = largestAllocation(() => {
    try {
      decoders[0].push(input, () => {});
    } catch (error) {
      errors.push(error);
    }
  });
  assert.equal(errorKey(errors[0]), "FRAME_SIZE_ERROR@0");
  assert.ok(largest < 1024, `allocated ${largest} bytes`);
  // With the limit raised to the protocol's maximum, the same input allocates exactly the frame's length, once.
  assert.equal(largestAllocation(() => decoders[1].push(input, () => {})), 0xffffff);
  const decoder = new Http2FrameDecoder();
  assert.throws(
    () => decoder.push(header, () => {}),
    (e) => e instanceof DecodeError && e.code === "FRAME_SIZE_ERROR" && e.offset === 0,
  );
  // Even byte by byte: the ninth header byte is the fault.
  const byByte = new Http2FrameDecoder();
  for (let k = 0; k < 8; k++) byByte.push(header.subarray(k, k + 1), () => {});
  assert.throws(() => byByte.push(header.subarray(8, 9), () => {}), DecodeError);
  // With the limit raised, the same header is accepted and waits for its payload.
  const raised = new Http2FrameDecoder({ maxFrameSize: 16777215 });
  raised.push(header, () => {});
  assert.throws(() => raised.finish(), (e) => e instanceof DecodeError && e.code === "TRUNCATED" && e.offset === 9);
});

test("http2 frames: setMaxFrameSize applies to later frames and checks its range", () => {
  const decoder = new Http2FrameDecoder({ preface: "none" });
  const frames: Http2Frame[] = [];
  decoder.push(encodeHttp2Frame({ type: "DATA", streamId: 1, data: new Uint8Array(16384) }), (f) => frames.push(f));
  assert.throws(() => decoder.push(raw(H.DATA, 0, 1, [], 16385), () => {}), DecodeError);
  const next = new Http2FrameDecoder({ preface: "none", maxFrameSizeCeiling: 100000 });
  next.setMaxFrameSize(1 << 20);
  assert.equal(next.maxFrameSize, 100000);
  next.push(encodeHttp2Frame({ type: "DATA", streamId: 1, data: new Uint8Array(50000) }), (f) => frames.push(f));
  assert.equal(frames.length, 2);
  assert.throws(() => next.setMaxFrameSize(16383), RangeError);
  assert.throws(() => next.setMaxFrameSize(1 << 24), RangeError);
  assert.throws(() => new Http2FrameDecoder({ maxFrameSize: 1000 }), RangeError);
  const stream = new Http2FrameDecoderStream();
  stream.setMaxFrameSize(32768);
  assert.equal(stream.maxFrameSize, 32768);
});

test("http2 frames: default header block limit is 256 KiB (16 full frames), the next byte fails", () => {
  const full = (type: number, flags: number) => raw(type, flags, 1, new Uint8Array(16384));
  const ok = concat([
    full(H.HEADERS, 0),
    ...Array.from({ length: 15 }, (_, k) => full(H.CONTINUATION, k === 14 ? 4 : 0)),
  ]);
  assert.equal(decodeSync([ok]).error, undefined);
  const over = concat([
    full(H.HEADERS, 0),
    ...Array.from({ length: 15 }, () => full(H.CONTINUATION, 0)),
    raw(H.CONTINUATION, 4, 1, [0]),
  ]);
  const { values, error } = decodeSync([over]);
  assert.equal(errorKey(error), `HEADER_TOO_LARGE@${16 * (9 + 16384)}`);
  assert.equal(values.length, 16);
});
