/**
 * SETTINGS applied across directions (RFC 9113 §6.5, §6.5.3; RFC 7541 §4.2): with both directions,
 * decodeHttp2Exchanges applies each peer's SETTINGS_MAX_FRAME_SIZE / SETTINGS_HEADER_TABLE_SIZE to what the other
 * side sends from its SETTINGS ACK on; with one direction the ceilings alone apply. And a real node:http2 recording
 * decodes identically with and without the client's bytes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as http2 from "node:http2";
import { DecodeError } from "../mod.ts";
import { decodeHttp2Exchanges, Http2ConnectionDecoderStream, type Http2Exchange } from "../capture.ts";
import { encodeHttp2Frame } from "../src/transport/http2/frame_encoder.ts";
import type { Http2FrameInit } from "../src/transport/http2/frames.ts";
import { concat, drain, streamOf } from "./_util.ts";
import { recordH2c } from "./peers/h2_client.ts";

const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const MAX_FRAME_SIZE = 0x5;
const HEADER_TABLE_SIZE = 0x1;

/** Frames to bytes, with each frame's offset. */
function wire(frames: Http2FrameInit[], preface = false): { bytes: Uint8Array; offsets: number[] } {
  const parts: Uint8Array[] = preface ? [PREFACE] : [];
  const offsets: number[] = [];
  let at = preface ? PREFACE.length : 0;
  for (const frame of frames) {
    const bytes = encodeHttp2Frame(frame);
    offsets.push(at);
    parts.push(bytes);
    at += bytes.length;
  }
  return { bytes: concat(parts), offsets };
}

const settings = (...parameters: Array<[number, number]>): Http2FrameInit => ({
  type: "SETTINGS",
  streamId: 0,
  parameters,
});
const ACK: Http2FrameInit = { type: "SETTINGS", streamId: 0, ack: true, parameters: [] };
const headers = (streamId: number, fragment: Uint8Array, endStream = false): Http2FrameInit => ({
  type: "HEADERS",
  streamId,
  endHeaders: true,
  endStream,
  fragment,
});
const data = (streamId: number, length: number, endStream = true): Http2FrameInit => ({
  type: "DATA",
  streamId,
  endStream,
  data: new Uint8Array(length).fill(0x61),
});
// HPACK literal bytes: GET / http (static 2, 4, 6); :status 200 (static 8).
const GET = Uint8Array.of(0x82, 0x84, 0x86);
const STATUS_200 = Uint8Array.of(0x88);

/** The input in chunks of `size` bytes (so frame boundaries fall inside chunks and chunks inside frames). */
function chunks(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

interface Outcome {
  exchanges: Array<{ streamId: number; method: string | undefined; status: string | undefined; body: number }>;
  error: DecodeError | undefined;
}

/** Decodes the exchanges, reading every body; the fault (if any) as a DecodeError. */
async function exchangesOf(s2c: Uint8Array[], c2s?: Uint8Array[]): Promise<Outcome> {
  const bodies: Promise<number>[] = [];
  const { values, error } = await drain(
    decodeHttp2Exchanges(streamOf(s2c), c2s === undefined ? undefined : streamOf(c2s)).pipeThrough(
      new TransformStream<Http2Exchange, Http2Exchange>({
        transform(x, controller) {
          bodies.push(
            (async () => {
              let n = 0;
              try {
                for await (const part of x.response.body) n += part.length;
              } catch { /* the connection's fault, reported below */ }
              return n;
            })(),
          );
          controller.enqueue(x);
        },
      }),
    ),
  );
  const lengths = await Promise.all(bodies);
  if (error !== undefined && !(error instanceof DecodeError)) throw error;
  return {
    exchanges: values.map((x, i) => ({
      streamId: x.streamId,
      method: x.request?.method,
      status: x.response.headers?.find(([n]) => n === ":status")?.[1],
      body: lengths[i],
    })),
    error,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// SETTINGS_MAX_FRAME_SIZE

/**
 * The client announces SETTINGS (empty), which the server acknowledges, then SETTINGS(MAX_FRAME_SIZE=32768); the
 * server sends a 20000-byte DATA frame before (or after) its second ACK.
 */
function frameSizeCase(dataAfterAck: boolean) {
  const c2s = wire([
    settings(),
    ACK,
    headers(1, GET, true),
    settings([MAX_FRAME_SIZE, 32768]),
  ], true);
  const s2c = wire([
    settings(),
    ACK,
    headers(1, STATUS_200),
    ...(dataAfterAck ? [ACK, data(1, 20000)] : [data(1, 20000), ACK]),
  ]);
  return { c2s, s2c, dataOffset: s2c.offsets[dataAfterAck ? 4 : 3] };
}

for (const size of [100000, 7, 1000]) {
  test(`http2 settings: a 20000-byte frame before the SETTINGS(MAX_FRAME_SIZE=32768) ACK is a FRAME_SIZE_ERROR (chunks of ${size})`, async () => {
    const { c2s, s2c, dataOffset } = frameSizeCase(false);
    const both = await exchangesOf(chunks(s2c.bytes, size), chunks(c2s.bytes, size));
    assert.ok(both.error instanceof DecodeError);
    assert.equal(both.error.code, "FRAME_SIZE_ERROR");
    assert.equal(both.error.offset, dataOffset);
    assert.deepEqual(both.exchanges.map((x) => [x.streamId, x.method, x.status]), [[1, "GET", "200"]]);

    // One direction: the ceiling alone applies, the frame is accepted.
    const alone = await exchangesOf(chunks(s2c.bytes, size));
    assert.equal(alone.error, undefined);
    assert.deepEqual(alone.exchanges, [{ streamId: 1, method: undefined, status: "200", body: 20000 }]);
    const messages = await drain(
      streamOf(chunks(s2c.bytes, size)).pipeThrough(new Http2ConnectionDecoderStream({ preface: "none" })),
    );
    assert.equal(messages.error, undefined);
    assert.equal(messages.values.length, 1);
    await messages.values[0].body.cancel();
  });

  test(`http2 settings: the same frame after the ACK is accepted (chunks of ${size})`, async () => {
    const { c2s, s2c } = frameSizeCase(true);
    const both = await exchangesOf(chunks(s2c.bytes, size), chunks(c2s.bytes, size));
    assert.equal(both.error, undefined);
    assert.deepEqual(both.exchanges, [{ streamId: 1, method: "GET", status: "200", body: 20000 }]);
  });
}

test("http2 settings: before the first ACK, the larger of 16384 and the first announced value is accepted (lenient)", async () => {
  // The client's first SETTINGS announces 32768: a 20000-byte frame before the server acknowledges it is accepted.
  const c2s = wire([settings([MAX_FRAME_SIZE, 32768]), ACK, headers(1, GET, true)], true);
  const lenient = wire([settings(), headers(1, STATUS_200), data(1, 20000, false), ACK, data(1, 20000)]);
  const ok = await exchangesOf([lenient.bytes], [c2s.bytes]);
  assert.equal(ok.error, undefined);
  assert.deepEqual(ok.exchanges, [{ streamId: 1, method: "GET", status: "200", body: 40000 }]);

  // Without it announced, 16384 applies before the first ACK (and after it: the initial value is kept).
  const plain = wire([settings(), ACK, headers(1, GET, true)], true);
  for (const beforeAck of [true, false]) {
    const s2c = wire([
      settings(),
      headers(1, STATUS_200),
      ...(beforeAck ? [data(1, 16385), ACK] : [ACK, data(1, 16385)]),
    ]);
    const out = await exchangesOf([s2c.bytes], [plain.bytes]);
    assert.equal(out.error?.code, "FRAME_SIZE_ERROR");
    assert.equal(out.error?.offset, s2c.offsets[beforeAck ? 2 : 3]);
  }

  // The configurable ceiling still caps what was announced.
  const capped = await drain(
    decodeHttp2Exchanges(streamOf([lenient.bytes]), streamOf([c2s.bytes]), { maxFrameSizeCeiling: 16384 }),
  );
  assert.equal((capped.error as DecodeError | undefined)?.code, "FRAME_SIZE_ERROR");
  for (const x of capped.values) await x.response.body.cancel().catch(() => {});
});

test("http2 settings: the server's SETTINGS(MAX_FRAME_SIZE) apply to the client's frames from the client's ACK", async () => {
  const c2s = wire([settings(), ACK, headers(1, GET), data(1, 40000)], true);
  const big = wire([settings([MAX_FRAME_SIZE, 65536]), ACK, headers(1, STATUS_200, true)]);
  const ok = await exchangesOf([big.bytes], [c2s.bytes]);
  assert.equal(ok.error, undefined);
  assert.deepEqual(ok.exchanges, [{ streamId: 1, method: "GET", status: "200", body: 0 }]);

  // The server announced nothing: 16384 applies to the client's frames.
  const plain = wire([settings(), ACK, headers(1, STATUS_200, true)]);
  const bad = await exchangesOf([plain.bytes], [c2s.bytes]);
  assert.equal(bad.error?.code, "FRAME_SIZE_ERROR");
  assert.equal(bad.error?.offset, c2s.offsets[3]);
});

// ---------------------------------------------------------------------------------------------------------------
// SETTINGS_HEADER_TABLE_SIZE

test("http2 settings: after an acknowledged SETTINGS_HEADER_TABLE_SIZE=0, a table size update above 0 is HPACK_INVALID", async () => {
  const c2s = wire([settings([HEADER_TABLE_SIZE, 0]), ACK, headers(1, GET, true), headers(3, GET, true)], true);
  // Dynamic table size update to 4096 (0x3f 0xe1 0x1f), then :status 200.
  const update4096 = Uint8Array.of(0x3f, 0xe1, 0x1f, 0x88);
  const update0 = Uint8Array.of(0x20, 0x88);
  const HEADERS_PAYLOAD = 9; // the fragment's offset in a HEADERS frame without padding or priority

  // Before the ACK, 4096 (the initial value, larger than the announced 0) is the maximum: the update is accepted.
  const before = wire([settings(), headers(1, update4096, true), ACK, headers(3, update0, true)]);
  const ok = await exchangesOf([before.bytes], [c2s.bytes]);
  assert.equal(ok.error, undefined);
  assert.deepEqual(ok.exchanges.map((x) => [x.streamId, x.status]), [[1, "200"], [3, "200"]]);

  // After it, 0 is: an update to 4096 is a connection error.
  const after = wire([settings(), ACK, headers(1, update4096, true)]);
  const bad = await exchangesOf([after.bytes], [c2s.bytes]);
  assert.equal(bad.error?.code, "HPACK_INVALID");
  assert.equal(bad.error?.offset, after.offsets[2] + HEADERS_PAYLOAD);
  assert.deepEqual(bad.exchanges, []);

  // The maximum was lowered below the table's (4096): the next block must start with an update (RFC 7541 §4.2).
  const missing = wire([settings(), ACK, headers(1, STATUS_200, true)]);
  const noUpdate = await exchangesOf([missing.bytes], [c2s.bytes]);
  assert.equal(noUpdate.error?.code, "HPACK_INVALID");
  assert.equal(noUpdate.error?.offset, missing.offsets[2] + HEADERS_PAYLOAD);

  // With it, to 0, the blocks decode.
  const good = wire([settings(), ACK, headers(1, update0, true), headers(3, STATUS_200, true)]);
  const fine = await exchangesOf([good.bytes], [c2s.bytes]);
  assert.equal(fine.error, undefined);
  assert.deepEqual(fine.exchanges.map((x) => [x.streamId, x.method, x.status]), [[1, "GET", "200"], [3, "GET", "200"]]);

  // One direction: the ceiling (65536) alone bounds updates.
  const alone = await exchangesOf([after.bytes]);
  assert.equal(alone.error, undefined);
  assert.deepEqual(alone.exchanges.map((x) => [x.streamId, x.status]), [[1, "200"]]);
});

test("http2 settings: a client capture that starts mid-connection leaves the ceilings in force", async () => {
  // The client bytes start at a HEADERS frame: the server's ACKs cannot be matched, so nothing is applied.
  const c2s = wire([headers(1, GET, true), settings([MAX_FRAME_SIZE, 16384])]);
  const s2c = wire([settings(), ACK, headers(1, STATUS_200), data(1, 20000)]);
  const out = await exchangesOf([s2c.bytes], [c2s.bytes]);
  assert.equal(out.error, undefined);
  assert.deepEqual(out.exchanges, [{ streamId: 1, method: "GET", status: "200", body: 20000 }]);
});

// ---------------------------------------------------------------------------------------------------------------
// A real peer

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const runtime = "Deno" in globalThis ? "Deno" : "Bun" in globalThis ? "Bun" : "Node";
const PATHS = ["/api/v1/namespaces/default/pods?watch=1", "/api/v1/namespaces/default/configmaps?watch=1"];
const lineOf = (path: string, i: number) =>
  `{"type":"ADDED","object":{"kind":"X","metadata":{"name":"${path.length}-${i}","resourceVersion":"${i}"}}}\n`;

/** Two concurrent streamed responses over one h2c connection through a recording proxy, with its bytes. */
async function record(): Promise<{ c2s: Uint8Array; s2c: Uint8Array; received: string[] }> {
  const server = http2.createServer();
  server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    const path = String(headers[":path"]);
    stream.on("error", () => {});
    stream.respond({ ":status": 200, "content-type": "application/json;stream=watch" });
    void (async () => {
      for (let i = 0; i < 5; i++) {
        stream.write(lineOf(path, i));
        await sleep(3);
      }
      stream.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  try {
    const { c2s, s2c, results } = await recordH2c((server.address() as { port: number }).port, PATHS);
    return { c2s, s2c, received: results.map((r) => r.body) };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

test(`http2 settings: a real node:http2 recording (${runtime}) decodes identically with both directions`, async () => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("node:http2 exchange took longer than 15 s")), 15000);
  });
  const { c2s, s2c, received } = await Promise.race([record(), deadline]).finally(() => clearTimeout(timer));
  assert.deepEqual(received, PATHS.map((p) => [0, 1, 2, 3, 4].map((i) => lineOf(p, i)).join("")));

  const bodies = async (s2cParts: Uint8Array[], c2sParts?: Uint8Array[]) => {
    const texts: Promise<string>[] = [];
    const { values, error } = await drain(
      decodeHttp2Exchanges(streamOf(s2cParts), c2sParts === undefined ? undefined : streamOf(c2sParts)).pipeThrough(
        new TransformStream<Http2Exchange, Http2Exchange>({
          transform(x, controller) {
            texts.push(new Response(x.response.body).text());
            controller.enqueue(x);
          },
        }),
      ),
    );
    return {
      error,
      exchanges: values.map((x) => ({ streamId: x.streamId, path: x.request?.path, headers: x.response.headers })),
      texts: await Promise.all(texts),
    };
  };
  const alone = await bodies([s2c]);
  assert.equal(alone.error, undefined);
  assert.deepEqual(alone.texts, received);
  for (const size of [1 << 20, 5, 64]) {
    const both = await bodies(chunks(s2c, size), chunks(c2s, size));
    assert.equal(both.error, undefined);
    assert.deepEqual(both.exchanges.map((x) => x.path), PATHS);
    assert.deepEqual(
      both.exchanges.map(({ streamId, headers }) => ({ streamId, headers })),
      alone.exchanges.map(
        ({ streamId, headers }) => ({ streamId, headers }),
      ),
    );
    assert.deepEqual(both.texts, received);
  }
});
