/**
 * The public HTTP/2 captures of `../shared/conformance/public-captures/` (or `$WATCHWIRE_CONFORMANCE/public-captures/`):
 * a python-hyper `h2` client and server (pcap_file_ex, many streams sharing the HPACK dynamic table) and Go net/http2
 * peers (nDPI, free5gc). Both directions of each are decoded with decodeHttp2Exchanges and checked stream by stream
 * against two independent sources:
 *
 * - the tshark listing next to each capture (`*.frames.txt`: every frame with its offset, length, flags, the header
 *   fields of each HEADERS frame as tshark decoded them, and each DATA payload);
 * - hpack.js (the npm package used by node-spdy), fed the header blocks cut out of the bytes by a frame walker written
 *   here (no watchwire code).
 *
 * Every request's and response's header list (pseudo-header fields included, in order), trailers, and the body bytes
 * per stream must agree.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import process from "node:process";
import { decodeHttp2Exchanges, Http2ConnectionDecoderStream, type Http2Exchange } from "../capture.ts";
import { concat, drain, streamOf } from "./_util.ts";

type Fields = Array<[string, string]>;

// ---------------------------------------------------------------------------------------------------------------
// The corpus

const conformance = process.env.WATCHWIRE_CONFORMANCE !== undefined
  ? new URL(`file://${process.env.WATCHWIRE_CONFORMANCE.replace(/\/?$/, "/")}`)
  : new URL("../../shared/conformance/", import.meta.url);
const capturesRoot = new URL("public-captures/", conformance);

function read(relative: string): Uint8Array {
  const url = new URL(relative, capturesRoot);
  try {
    return new Uint8Array(readFileSync(url));
  } catch (e) {
    throw new Error(
      `public capture missing: ${url.pathname} (the conformance corpus belongs at ../shared/conformance/ or ` +
        `$WATCHWIRE_CONFORMANCE): ${e}`,
    );
  }
}

const CAPTURES = [
  { name: "pcap_file_ex (python-hyper h2, h2c)", base: "pcap_file_ex/http2_sample-stream0" },
  { name: "nDPI (Go net/http2, free5gc)", base: "nDPI/http2-stream0" },
];

// ---------------------------------------------------------------------------------------------------------------
// Source 1: the tshark listing

interface ListedFrame {
  offset: number;
  type: string;
  streamId: number;
  length: number;
  flags: number;
  fields: Fields;
  /** The DATA payload as tshark printed it (a JSON string literal), if it did. */
  data?: string;
}

function parseListing(text: string): ListedFrame[] {
  const frames: ListedFrame[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (line.startsWith("    ")) {
      const frame = frames.at(-1);
      assert.ok(frame !== undefined, `detail line before any frame: ${line}`);
      const body = line.slice(4);
      if (frame.type === "DATA" && body.startsWith("data: ")) {
        frame.data = JSON.parse(body.slice(6)) as string;
        continue;
      }
      const colon = body.indexOf(": ", body.startsWith(":") ? 1 : 0);
      assert.ok(colon > 0, `field line without ": ": ${line}`);
      frame.fields.push([body.slice(0, colon), body.slice(colon + 2)]);
      continue;
    }
    if (/^@\d+ client preface/.test(line)) continue;
    const m = /^@(\d+) (\S+) stream=(\d+) len=(\d+) flags=0x([0-9a-f]+)/.exec(line);
    assert.ok(m !== null, `unexpected listing line: ${line}`);
    frames.push({
      offset: Number(m[1]),
      type: m[2],
      streamId: Number(m[3]),
      length: Number(m[4]),
      flags: parseInt(m[5], 16),
      fields: [],
    });
  }
  return frames;
}

// ---------------------------------------------------------------------------------------------------------------
// Source 2: an independent frame walker and hpack.js

interface RawFrame {
  offset: number;
  type: number;
  flags: number;
  streamId: number;
  payload: Uint8Array;
}

const PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const FRAME_TYPES = ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY"]
  .concat(["WINDOW_UPDATE", "CONTINUATION"]);

function walkFrames(bytes: Uint8Array): RawFrame[] {
  let at = new TextDecoder("latin1").decode(bytes.subarray(0, 24)) === PREFACE ? 24 : 0;
  const frames: RawFrame[] = [];
  while (at < bytes.length) {
    assert.ok(at + 9 <= bytes.length, `frame header cut at ${at}`);
    const length = (bytes[at] << 16) | (bytes[at + 1] << 8) | bytes[at + 2];
    const streamId = ((bytes[at + 5] & 0x7f) << 24 | bytes[at + 6] << 16 | bytes[at + 7] << 8 | bytes[at + 8]) >>> 0;
    assert.ok(at + 9 + length <= bytes.length, `frame payload cut at ${at}`);
    frames.push({
      offset: at,
      type: bytes[at + 3],
      flags: bytes[at + 4],
      streamId,
      payload: bytes.subarray(at + 9, at + 9 + length),
    });
    at += 9 + length;
  }
  return frames;
}

/** The payload of a HEADERS or DATA frame without padding (and priority fields). */
function content(frame: RawFrame): Uint8Array {
  let p = frame.payload;
  let pad = 0;
  if ((frame.type === 0 || frame.type === 1) && frame.flags & 0x8) {
    pad = p[0];
    p = p.subarray(1);
  }
  if (frame.type === 1 && frame.flags & 0x20) p = p.subarray(5);
  return p.subarray(0, p.length - pad);
}

interface HpackJsDecompressor {
  write(chunk: Uint8Array): boolean;
  execute(): void;
  read(): { name: string; value: string } | null;
}
const require = createRequire(import.meta.url);
const hpackjs = require("hpack.js") as {
  decompressor: { create(options: { table: { maxSize: number } }): HpackJsDecompressor };
};
const { Buffer } = require("node:buffer") as { Buffer: { from(b: Uint8Array): Uint8Array } };

interface Reference {
  /** Per stream: each header block (headers, then trailers) in order. */
  blocks: Map<number, Fields[]>;
  /** Per stream: the DATA payloads concatenated. */
  bodies: Map<number, Uint8Array>;
}

/** One direction decoded without watchwire: frames walked here, header blocks decoded by hpack.js in order. */
function reference(bytes: Uint8Array): Reference {
  const decompressor = hpackjs.decompressor.create({ table: { maxSize: 4096 } });
  const blocks = new Map<number, Fields[]>();
  const data = new Map<number, Uint8Array[]>();
  let open: { streamId: number; parts: Uint8Array[] } | undefined;
  const finish = () => {
    decompressor.write(Buffer.from(concat(open!.parts)));
    decompressor.execute();
    const fields: Fields = [];
    for (let f = decompressor.read(); f !== null; f = decompressor.read()) fields.push([f.name, f.value]);
    blocks.set(open!.streamId, [...blocks.get(open!.streamId) ?? [], fields]);
    open = undefined;
  };
  for (const frame of walkFrames(bytes)) {
    if (frame.type === 1 || frame.type === 9) {
      if (frame.type === 1) open = { streamId: frame.streamId, parts: [] };
      assert.ok(open !== undefined && open.streamId === frame.streamId, `CONTINUATION out of place at ${frame.offset}`);
      open.parts.push(content(frame));
      if (frame.flags & 0x4) finish();
    } else if (frame.type === 5) {
      throw new Error("PUSH_PROMISE: not expected in these captures");
    } else if (frame.type === 0) {
      data.set(frame.streamId, [...data.get(frame.streamId) ?? [], content(frame)]);
    }
  }
  return { blocks, bodies: new Map([...data].map(([id, parts]) => [id, concat(parts)])) };
}

// ---------------------------------------------------------------------------------------------------------------
// The test

interface StreamSummary {
  streamId: number;
  headers: Fields | undefined;
  trailers: Fields;
  status: number;
  body: Uint8Array;
  end: string;
}

/** Both directions decoded by watchwire: the exchanges, each response read in full, and the request bodies. */
async function decodeBoth(c2s: Uint8Array, s2c: Uint8Array) {
  const exchanges = await drain(decodeHttp2Exchanges(streamOf([s2c]), streamOf([c2s])));
  assert.equal(exchanges.error, undefined, `decodeHttp2Exchanges failed: ${exchanges.error}`);
  const responses: StreamSummary[] = [];
  for (const x of exchanges.values as Http2Exchange[]) {
    // Through toResponse(): the status and the body as a fetch Response gives them.
    const response = x.response.toResponse();
    const body = new Uint8Array(await response.arrayBuffer());
    const end = await x.response.end;
    responses.push({
      streamId: x.streamId,
      headers: x.response.headers,
      trailers: await x.response.trailers,
      status: response.status,
      body,
      end: end.reason,
    });
  }
  // The request bodies (decodeHttp2Exchanges drops them): the client bytes alone, one message per stream.
  const requests = await drain(streamOf([c2s]).pipeThrough(new Http2ConnectionDecoderStream({ preface: "expect" })));
  assert.equal(requests.error, undefined, `client bytes failed: ${requests.error}`);
  const requestBodies = new Map<number, Uint8Array>();
  for (const m of requests.values) requestBodies.set(m.streamId, concat((await drain(m.body)).values));
  return { exchanges: exchanges.values as Http2Exchange[], responses, requestBodies };
}

/** What the listing says per stream: header blocks in order and the DATA bytes (or their lengths). */
function listedStreams(frames: ListedFrame[]) {
  const blocks = new Map<number, Fields[]>();
  const data = new Map<number, { text: string; length: number }>();
  for (const f of frames) {
    if (f.type === "HEADERS") {
      assert.ok(f.flags & 0x4, "the captures have no CONTINUATION frames");
      blocks.set(f.streamId, [...blocks.get(f.streamId) ?? [], f.fields]);
    } else if (f.type === "DATA") {
      assert.ok(!(f.flags & 0x8), "the captures have no padded DATA");
      const before = data.get(f.streamId) ?? { text: "", length: 0 };
      data.set(f.streamId, { text: before.text + (f.data ?? ""), length: before.length + f.length });
    }
  }
  return { blocks, data };
}

const latin1 = (bytes: Uint8Array) => new TextDecoder("latin1").decode(bytes);

for (const capture of CAPTURES) {
  test(`public captures: ${capture.name} decodes frame by frame with headers matching tshark and hpack.js`, async () => {
    const c2s = read(`${capture.base}-c2s.bin`);
    const s2c = read(`${capture.base}-s2c.bin`);
    const listed = {
      c2s: parseListing(new TextDecoder().decode(read(`${capture.base}-c2s.frames.txt`))),
      s2c: parseListing(new TextDecoder().decode(read(`${capture.base}-s2c.frames.txt`))),
    };

    // The independent walker agrees with tshark frame by frame (offset, type, stream, length, flags): the listing is
    // of these very bytes.
    for (const [direction, bytes] of [["c2s", c2s], ["s2c", s2c]] as const) {
      const walked = walkFrames(bytes).map((
        f,
      ) => [f.offset, FRAME_TYPES[f.type], f.streamId, f.payload.length, f.flags]);
      const fromListing = listed[direction].map((f) => [f.offset, f.type, f.streamId, f.length, f.flags]);
      assert.deepEqual(walked, fromListing, `${direction}: frames`);
    }

    const tshark = { c2s: listedStreams(listed.c2s), s2c: listedStreams(listed.s2c) };
    const hpack = { c2s: reference(c2s), s2c: reference(s2c) };
    // The two references agree with each other first (tshark listed every HEADERS frame with its fields).
    assert.deepEqual(hpack.c2s.blocks, tshark.c2s.blocks, "c2s: hpack.js vs tshark");
    assert.deepEqual(hpack.s2c.blocks, tshark.s2c.blocks, "s2c: hpack.js vs tshark");

    const { exchanges, responses, requestBodies } = await decodeBoth(c2s, s2c);
    const streamIds = [...tshark.s2c.blocks.keys()];
    assert.ok(streamIds.length > 0);
    assert.deepEqual(exchanges.map((x) => x.streamId), streamIds, "one exchange per response stream, in order");

    for (const [i, x] of exchanges.entries()) {
      const id = x.streamId;
      const where = `${capture.name} stream ${id}`;
      // The request: every field, in order, and the pseudo-header fields picked out.
      const [requestFields, ...requestTrailers] = tshark.c2s.blocks.get(id) ?? [];
      assert.equal(requestTrailers.length, 0, `${where}: no request trailers expected`);
      assert.ok(x.request !== undefined, `${where}: request paired`);
      assert.deepEqual(x.request.headers, requestFields, `${where}: request headers`);
      const field = (fields: Fields, name: string) => fields.find(([n]) => n === name)?.[1];
      assert.equal(x.request.method, field(requestFields, ":method"), `${where}: :method`);
      assert.equal(x.request.path, field(requestFields, ":path"), `${where}: :path`);
      assert.equal(x.request.authority, field(requestFields, ":authority"), `${where}: :authority`);
      assert.ok(x.request.method !== undefined && x.request.path !== undefined);
      const requestData = tshark.c2s.data.get(id) ?? { text: "", length: 0 };
      const requestBody = requestBodies.get(id) ?? new Uint8Array(0);
      assert.equal(requestBody.length, requestData.length, `${where}: request body length`);
      assert.equal(latin1(requestBody), requestData.text, `${where}: request body bytes`);
      assert.deepEqual(requestBody, hpack.c2s.bodies.get(id) ?? new Uint8Array(0), `${where}: request body (walker)`);

      // The response: headers, :status, trailers, body bytes.
      const r = responses[i];
      const [responseFields, ...responseTrailers] = tshark.s2c.blocks.get(id)!;
      assert.deepEqual(r.headers, responseFields, `${where}: response headers`);
      assert.ok(field(responseFields, ":status") !== undefined);
      assert.equal(r.status, Number(field(responseFields, ":status")), `${where}: :status`);
      assert.deepEqual(r.trailers, responseTrailers[0] ?? [], `${where}: trailers`);
      const listedData = tshark.s2c.data.get(id) ?? { text: "", length: 0 };
      assert.equal(r.body.length, listedData.length, `${where}: body length vs the DATA lengths tshark lists`);
      assert.equal(latin1(r.body), listedData.text, `${where}: body bytes vs the DATA payloads tshark prints`);
      assert.deepEqual(r.body, hpack.s2c.bodies.get(id) ?? new Uint8Array(0), `${where}: body vs the frame walker`);
      assert.equal(r.end, "end-stream", `${where}: ends with END_STREAM`);
      // A content-length, where given, is the body length.
      const length = field(responseFields, "content-length");
      if (length !== undefined) assert.equal(r.body.length, Number(length), `${where}: content-length`);
    }
  });
}
