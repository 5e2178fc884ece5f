/**
 * Decoding that goes on after bytes lost from a capture (a TCP gap): TLS at the next record that decrypts, HTTP/2 at
 * the next frame, HTTP/1.1 at the next chunk, watches at their next whole event.
 *
 * The captures with gaps are the real captures of fixtures/captures/ (capture-*.pcap: tcpdump on loopback while curl
 * watched a Node server; see tests/capture_decode.test.ts) with packets removed by this test: it parses the pcap
 * records, drops the chosen ones and writes the file back. Which events a lost packet touches is worked out from the
 * full capture: the bytes of each event in the server's stream (for TLS, the records that carried them).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { decodeCapture } from "../src/watch/decode_capture.ts";
import type { CaptureItem, DecodeCaptureOptions } from "../src/watch/capture_item.ts";
import { builtinDecoders } from "../src/codec/kubernetes/generated/all.ts";
import { KeyLog } from "../src/capture/tls/key_log.ts";
import { TlsConnectionDecryptor } from "../src/capture/tls/tls_connection_decryptor.ts";
import type { TlsEvent } from "../src/capture/tls/tls_events.ts";
import { JsonWatchResync } from "../src/capture/resync/json_watch_resync.ts";
import { ProtobufWatchResync } from "../src/capture/resync/protobuf_watch_resync.ts";
import { Http2FrameResync } from "../src/capture/resync/http2_frame_resync.ts";
import { ChunkedBodyResync } from "../src/capture/resync/chunked_body_resync.ts";
import { encodeHttp2Frames } from "../src/transport/http2/frame_encoder.ts";
import { DecoderStream } from "../src/streams/decoder_stream.ts";
import { runCli } from "../src/cli/main.ts";
import { bytewise, concat, streamOf, utf8 } from "./_util.ts";
import { tcpCapture } from "./_capture_build.ts";

const dir = new URL("../fixtures/captures/", import.meta.url);
const read = (name: string) => new Uint8Array(readFileSync(new URL(name, dir)));
const text = (name: string) => readFileSync(new URL(name, dir), "utf8");
const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

// ---------------------------------------------------------------------------------------------------------------------
// A classic pcap (little-endian, Ethernet, IPv4, TCP), record by record: what the fixtures are.

interface PcapPacket {
  /** The record's bytes (its 16-byte header and the packet). */
  record: Uint8Array;
  sourcePort: number;
  destinationPort: number;
  flags: number;
  sequence: number;
  payload: Uint8Array;
}

function pcapPackets(file: Uint8Array): { header: Uint8Array; packets: PcapPacket[] } {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  assert.equal(view.getUint32(0, true), 0xa1b2c3d4, "a little-endian microsecond pcap");
  assert.equal(view.getUint32(20, true), 1, "Ethernet");
  const packets: PcapPacket[] = [];
  for (let at = 24; at + 16 <= file.length;) {
    const length = view.getUint32(at + 8, true);
    const record = file.subarray(at, at + 16 + length);
    const frame = record.subarray(16);
    assert.equal((frame[12] << 8) | frame[13], 0x0800, "IPv4");
    const ip = frame.subarray(14);
    const tcp = ip.subarray((ip[0] & 15) * 4, (ip[2] << 8) | ip[3]);
    packets.push({
      record,
      sourcePort: (tcp[0] << 8) | tcp[1],
      destinationPort: (tcp[2] << 8) | tcp[3],
      flags: tcp[13],
      sequence: ((tcp[4] << 24) | (tcp[5] << 16) | (tcp[6] << 8) | tcp[7]) >>> 0,
      payload: tcp.subarray((tcp[12] >> 4) * 4),
    });
    at += 16 + length;
  }
  return { header: file.subarray(0, 24), packets };
}

/** The capture without the packets at `drop` (indexes of `pcapPackets`), written back as a pcap. */
function withoutPackets(file: Uint8Array, drop: Iterable<number>): Uint8Array {
  const { header, packets } = pcapPackets(file);
  const dropped = new Set(drop);
  const kept = [header, ...packets.filter((_, i) => !dropped.has(i)).map((p) => p.record)];
  const out = new Uint8Array(kept.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of kept) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

/** The one connection of a capture: its server port, and where each data packet lies in its direction's stream. */
function connectionOf(file: Uint8Array) {
  const { packets } = pcapPackets(file);
  const syn = packets.find((p) => p.flags === 0x02)!;
  const synAck = packets.find((p) => p.flags === 0x12)!;
  const serverPort = syn.destinationPort;
  const start = { client: (syn.sequence + 1) >>> 0, server: (synAck.sequence + 1) >>> 0 };
  const data = packets.map((p, index) => {
    const direction = p.sourcePort === serverPort ? "server" as const : "client" as const;
    const offset = (p.sequence - start[direction]) >>> 0;
    return { index, direction, offset, end: offset + p.payload.length, payload: p.payload };
  }).filter((p) => p.payload.length > 0);
  const stream = (direction: "client" | "server") => {
    const pieces = data.filter((p) => p.direction === direction);
    const out = new Uint8Array(Math.max(...pieces.map((p) => p.end)));
    for (const p of pieces) out.set(p.payload, p.offset);
    return out;
  };
  return { serverPort, data, stream };
}

// ---------------------------------------------------------------------------------------------------------------------
// Where each event of a capture lies in the server's stream.

/** Decrypted bytes and the stream bytes (the record) each came from. */
interface Piece {
  /** A plain connection's bytes: plaintext offsets are stream offsets. */
  identity: boolean;
  plainStart: number;
  plainEnd: number;
  streamStart: number;
  streamEnd: number;
}

/** The server's plaintext of a whole capture, with the record each piece came from (identity for a plain one). */
async function serverPlaintext(file: Uint8Array, keyLog: string | undefined) {
  const c = connectionOf(file);
  const s2c = c.stream("server");
  if (keyLog === undefined) {
    const whole = { identity: true, plainStart: 0, plainEnd: s2c.length, streamStart: 0, streamEnd: s2c.length };
    return { bytes: s2c, pieces: [whole] };
  }
  const decryptor = new TlsConnectionDecryptor(new KeyLog(keyLog));
  const events: TlsEvent[] = [];
  const emit = (e: TlsEvent) => void events.push(e);
  await decryptor.push("client", c.stream("client"), emit);
  await decryptor.push("server", s2c, emit);
  await decryptor.end(emit);
  const pieces: Piece[] = [];
  const parts: Uint8Array[] = [];
  let at = 0;
  for (const e of events) {
    if (e.kind !== "data" || e.direction !== "server") continue;
    const length = (s2c[e.recordOffset + 3] << 8) | s2c[e.recordOffset + 4];
    pieces.push({
      identity: false,
      plainStart: at,
      plainEnd: at + e.bytes.length,
      streamStart: e.recordOffset,
      streamEnd: e.recordOffset + 5 + length,
    });
    parts.push(e.bytes);
    at += e.bytes.length;
  }
  const bytes = new Uint8Array(at);
  at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, pieces };
}

/** Ranges of a decoded stream: [start, end) pairs. */
type Ranges = [number, number][];

/** The plaintext ranges of each event of an HTTP/1.1 chunked JSON watch response. */
function http1JsonEvents(plaintext: Uint8Array): Ranges[] {
  const bodyStart = indexOf(plaintext, utf8("\r\n\r\n"), 0) + 4;
  // Body bytes (in order) and where each lies in the plaintext.
  const where: number[] = [];
  for (let at = bodyStart;;) {
    const lineEnd = indexOf(plaintext, utf8("\r\n"), at);
    const size = parseInt(new TextDecoder().decode(plaintext.subarray(at, lineEnd)), 16);
    if (size === 0) break;
    for (let k = 0; k < size; k++) where.push(lineEnd + 2 + k);
    at = lineEnd + 2 + size + 2;
  }
  const events: Ranges[] = [];
  let start = 0;
  for (let k = 0; k < where.length; k++) {
    if (plaintext[where[k]] !== 0x0a) continue;
    events.push(where.slice(start, k + 1).map((p) => [p, p + 1]));
    start = k + 1;
  }
  return events;
}

/** The plaintext ranges of each event of the HTTP/2 Kubernetes protobuf watch on stream 1. */
function http2ProtobufEvents(plaintext: Uint8Array): Ranges[] {
  const where: number[] = [];
  for (let at = 0; at + 9 <= plaintext.length;) {
    const length = (plaintext[at] << 16) | (plaintext[at + 1] << 8) | plaintext[at + 2];
    const type = plaintext[at + 3];
    const id = ((plaintext[at + 5] & 0x7f) << 24) | (plaintext[at + 6] << 16) | (plaintext[at + 7] << 8) |
      plaintext[at + 8];
    if (type === 0 && id === 1) {
      assert.equal(plaintext[at + 4] & 0x8, 0, "no padding");
      for (let k = 0; k < length; k++) where.push(at + 9 + k);
    }
    at += 9 + length;
  }
  const events: Ranges[] = [];
  for (let k = 0; k + 4 <= where.length;) {
    const length = (plaintext[where[k]] << 24 | plaintext[where[k + 1]] << 16 | plaintext[where[k + 2]] << 8 |
      plaintext[where[k + 3]]) >>> 0;
    events.push(where.slice(k, k + 4 + length).map((p) => [p, p + 1]));
    k += 4 + length;
  }
  return events;
}

function indexOf(bytes: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = from; i + needle.length <= bytes.length; i++) {
    for (let k = 0; k < needle.length; k++) if (bytes[i + k] !== needle[k]) continue outer;
    return i;
  }
  return -1;
}

/** Where plaintext byte `offset` lies in the server's stream: its record (`end`: the record's end), or itself (plain). */
function streamOffsetOf(pieces: Piece[], offset: number, end: boolean): number {
  if (pieces[0].identity) return offset;
  const piece = pieces.find((p) => p.plainEnd > offset) ?? pieces[pieces.length - 1];
  return end ? piece.streamEnd : piece.streamStart;
}

/** The server's data packets after the one that completes the first event and before the one that starts the last. */
function insideWatch(x: { ranges: Ranges[]; pieces: Piece[]; connection: ReturnType<typeof connectionOf> }) {
  const firstEventEnd = streamOffsetOf(x.pieces, Math.max(...x.ranges[0].map(([, e]) => e)) - 1, true);
  const lastEventStart = streamOffsetOf(x.pieces, Math.min(...x.ranges[x.ranges.length - 1].map(([s]) => s)), false);
  return x.connection.data.filter((p) =>
    p.direction === "server" && p.offset >= firstEventEnd && p.end <= lastEventStart
  );
}

/** The indexes of the events whose bytes lie (partly) in the server's stream range [from, to). */
function touchedEvents(events: Ranges[], pieces: Piece[], from: number, to: number): number[] {
  // The plaintext lost: the records the range cut (TLS), or the range itself (plain).
  const lost = pieces[0].identity
    ? [{ plainStart: from, plainEnd: to }]
    : pieces.filter((p) => p.streamStart < to && p.streamEnd > from);
  return events.flatMap((ranges, index) =>
    ranges.some(([s, e]) => lost.some((p) => s < p.plainEnd && e > p.plainStart)) ? [index] : []
  );
}

// ---------------------------------------------------------------------------------------------------------------------

interface Fixture {
  name: string;
  file: string;
  keyLog: string | undefined;
  events: (plaintext: Uint8Array) => Ranges[];
}

const FIXTURES: Fixture[] = [
  { name: "tls13-h2-protobuf", keys: true, events: http2ProtobufEvents },
  { name: "tls12-http1-json", keys: true, events: http1JsonEvents },
  { name: "http1-json", keys: false, events: http1JsonEvents },
].map(({ name, keys, events }) => ({
  name,
  file: `capture-${name}.pcap`,
  keyLog: keys ? text(`capture-${name}.keys.txt`) : undefined,
  events,
}));

async function decode(chunks: Uint8Array[], options: DecodeCaptureOptions = {}) {
  const items: CaptureItem[] = [];
  let error: unknown;
  try {
    for await (const item of decodeCapture(streamOf(chunks), { protobuf: { decoders: builtinDecoders }, ...options })) {
      items.push(item);
    }
  } catch (e) {
    error = e;
  }
  return { items, error };
}

const eventsOf = (items: CaptureItem[]) => items.flatMap((i) => (i.kind === "event" ? [plain(i.event)] : []));

/** Items without capture times, which depend on how far decoders had read when an item came out. */
const timeless = (list: CaptureItem[]) =>
  plain(
    list.map((
      i,
    ) => ("time" in i && (i.kind === "event" || i.kind === "response" || i.kind === "resumed")
      ? { ...i, time: 0 }
      : i)
    ),
  );

/** What a capture with one packet dropped must decode to, worked out from the full capture. */
async function expectation(f: Fixture) {
  const bytes = read(f.file);
  const full = await decode([bytes], { keyLog: f.keyLog });
  assert.equal(full.error, undefined);
  const events = eventsOf(full.items);
  const { bytes: plaintext, pieces } = await serverPlaintext(bytes, f.keyLog);
  const ranges = f.events(plaintext);
  assert.equal(ranges.length, events.length, `${f.name}: the events found in the plaintext`);
  const connection = connectionOf(bytes);
  return { bytes, events, ranges, pieces, connection };
}

for (const [f, which] of [[FIXTURES[0], 2], [FIXTURES[1], 4], [FIXTURES[2], 4]] as const) {
  test(`resync (${f.name}): one server packet dropped inside the watch: the events around it, gap and resumed`, async () => {
    const x = await expectation(f);
    // The `which`-th server packet after the one that completes the first event: inside the watch.
    const lost = insideWatch(x)[which];
    const touched = touchedEvents(x.ranges, x.pieces, lost.offset, lost.end);
    assert.ok(touched.length >= 1 && touched.length < x.events.length - 1, `touched ${touched}`);
    const { items, error } = await decode([withoutPackets(x.bytes, [lost.index])], { keyLog: f.keyLog });
    assert.equal(error, undefined);
    // Nothing invented: the events are those of the full capture but the touched ones, in order.
    assert.deepEqual(eventsOf(items), x.events.filter((_, i) => !touched.includes(i)));
    // Before the gap, the events before it; after the resumption, the ones after it.
    const gap = items.findIndex((i) => i.kind === "gap");
    const resumedAt = items.findIndex((i) => i.kind === "resumed");
    assert.ok(gap > 0 && resumedAt > gap, JSON.stringify(items.map((i) => i.kind)));
    assert.deepEqual(eventsOf(items.slice(0, gap)), x.events.slice(0, touched[0]));
    assert.deepEqual(eventsOf(items.slice(resumedAt)), x.events.slice(touched[touched.length - 1] + 1));
    // The gap where the packet was, its size; decoding resumed in the server's bytes.
    const gaps = items.filter((i) => i.kind === "gap");
    assert.ok(gaps.every((g) => g.kind === "gap" && g.connection === 1 && g.direction === "server"));
    const first = gaps[0];
    assert.ok(first.kind === "gap");
    assert.equal(first.streamOffset, lost.offset);
    assert.equal(gaps.reduce((n, g) => n + (g.kind === "gap" ? g.length : 0), 0), lost.end - lost.offset);
    const resumed = items.filter((i) => i.kind === "resumed");
    assert.ok(resumed.length >= 1);
    const bytesResumed = resumed[0];
    assert.ok(bytesResumed.kind === "resumed");
    assert.equal(bytesResumed.connection, 1);
    assert.equal(bytesResumed.direction, "server");
    assert.equal(bytesResumed.stream, undefined, "first the connection's bytes");
    assert.ok(bytesResumed.skippedBytes >= lost.end - lost.offset, `${bytesResumed.skippedBytes} bytes skipped`);
    // The watch resumed too, unless the gap took its last events.
    const watch = resumed.find((r) => r.kind === "resumed" && r.stream !== undefined);
    if (touched[touched.length - 1] < x.events.length - 1) {
      assert.ok(watch?.kind === "resumed", "the watch resumed");
      assert.ok(watch.path?.includes("watch=1"));
    }
    assert.deepEqual(items.filter((i) => i.kind === "problem"), []);
    const summary = items[items.length - 1];
    assert.ok(summary.kind === "summary");
    assert.equal(summary.gaps, gaps.length);
    assert.equal(summary.resumed, resumed.length);
    assert.equal(summary.events, x.events.length - touched.length);
  });
}

test("resync: every single server data packet dropped inside a watch loses exactly the events it touched", async () => {
  for (const f of FIXTURES) {
    const x = await expectation(f);
    const inside = insideWatch(x);
    assert.ok(inside.length >= 3, `${f.name}: ${inside.length} packets inside the watch`);
    for (const lost of inside) {
      const touched = touchedEvents(x.ranges, x.pieces, lost.offset, lost.end);
      const { items } = await decode([withoutPackets(x.bytes, [lost.index])], { keyLog: f.keyLog });
      assert.deepEqual(
        eventsOf(items),
        x.events.filter((_, i) => !touched.includes(i)),
        `${f.name}: packet ${lost.index} dropped (touching events ${touched})`,
      );
    }
  }
});

test("resync: any chunking of a capture with a gap gives the same items", async () => {
  for (const f of FIXTURES) {
    const x = await expectation(f);
    const server = x.connection.data.filter((p) => p.direction === "server");
    const bytes = withoutPackets(x.bytes, [server[Math.floor(server.length / 2)].index]);
    const expected = timeless((await decode([bytes], { keyLog: f.keyLog })).items);
    assert.ok(expected.some((i: CaptureItem) => i.kind === "resumed"), `${f.name}: resumed`);
    const byteByByte = await decode(bytewise(bytes), { keyLog: f.keyLog });
    assert.deepEqual(timeless(byteByByte.items), expected, `${f.name}: byte by byte`);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), async (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const chunks = [0, ...points].map((at, k) => bytes.slice(at, points[k] ?? bytes.length));
        const got = await decode(chunks, { keyLog: f.keyLog });
        assert.equal(got.error, undefined);
        assert.deepEqual(timeless(got.items), expected);
      }),
      { numRuns: 8 },
    );
  }
});

test("resync: whichever data packet is dropped (either side), no event comes out that the full capture lacks", async () => {
  const all = await Promise.all(FIXTURES.map(async (f) => ({ f, x: await expectation(f) })));
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: all.length - 1 }),
      fc.integer({ min: 0, max: 1000 }),
      async (which, pick) => {
        const { f, x } = all[which];
        const lost = x.connection.data[pick % x.connection.data.length];
        const { items, error } = await decode([withoutPackets(x.bytes, [lost.index])], { keyLog: f.keyLog });
        assert.equal(error, undefined);
        const got = eventsOf(items).map((e) => JSON.stringify(e));
        const full = x.events.map((e) => JSON.stringify(e));
        // A subsequence of the full capture's events: each one of them, in their order.
        let at = 0;
        for (const e of got) {
          while (at < full.length && full[at] !== e) at++;
          assert.ok(at < full.length, `${f.name}, packet ${lost.index} dropped: an event the full capture lacks`);
          at++;
        }
        assert.equal(items[items.length - 1].kind, "summary");
      },
    ),
    { numRuns: 36 },
  );
});

test("resync: two packets dropped in the same watch: it resumes after each", async () => {
  const f = FIXTURES[2];
  const x = await expectation(f);
  const server = x.connection.data.filter((p) => p.direction === "server");
  const lost = [server[3], server[7]];
  const touched = lost.flatMap((p) => touchedEvents(x.ranges, x.pieces, p.offset, p.end));
  const { items } = await decode([withoutPackets(x.bytes, lost.map((p) => p.index))]);
  assert.deepEqual(eventsOf(items), x.events.filter((_, i) => !touched.includes(i)));
  assert.equal(items.filter((i) => i.kind === "resumed" && i.stream !== undefined).length, 2);
  assert.deepEqual(items.filter((i) => i.kind === "problem"), []);
});

test("resync: maxResyncRecords 0 keeps a TLS direction's decoding ended at a gap, as a problem", async () => {
  const f = FIXTURES[1];
  const x = await expectation(f);
  const server = x.connection.data.filter((p) => p.direction === "server");
  const lost = server[Math.floor(server.length / 2)];
  const touched = touchedEvents(x.ranges, x.pieces, lost.offset, lost.end);
  const { items } = await decode([withoutPackets(x.bytes, [lost.index])], { keyLog: f.keyLog, maxResyncRecords: 0 });
  assert.deepEqual(eventsOf(items), x.events.slice(0, touched[0]));
  assert.equal(items.filter((i) => i.kind === "resumed").length, 0);
  const problems = items.filter((i) => i.kind === "problem");
  assert.equal(problems.length, 1);
  assert.match(problems[0].kind === "problem" ? problems[0].message : "", /bytes are missing from the capture/);
});

test("resync: the gap cut the handshake: the direction stays undecryptable, a problem says so", async () => {
  const f = FIXTURES[0];
  const x = await expectation(f);
  // The server's first data packet: its hello and encrypted handshake.
  const lost = x.connection.data.find((p) => p.direction === "server")!;
  const { items } = await decode([withoutPackets(x.bytes, [lost.index])], { keyLog: f.keyLog });
  assert.deepEqual(eventsOf(items), []);
  assert.equal(items.filter((i) => i.kind === "resumed").length, 0);
  assert.ok(items.some((i) => i.kind === "problem" && /cannot be decrypted/.test(i.message)));
});

test("watchwire decode: gaps and resumptions on stderr, counted in the summary", async () => {
  const f = FIXTURES[2];
  const x = await expectation(f);
  const server = x.connection.data.filter((p) => p.direction === "server");
  const files: Record<string, Uint8Array> = { capture: withoutPackets(x.bytes, [server[4].index]) };
  let out = "";
  let err = "";
  const status = await runCli(["decode", "capture"], {
    open: (path) => Promise.resolve(streamOf([files[path]])),
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    stdoutIsTerminal: false,
    version: "0.0.0",
  });
  assert.equal(status, 0, err);
  assert.equal(out.trim().split("\n").length, x.events.length - 1);
  assert.match(err, /connection 1: \d+ bytes of the server's missing from the capture at its byte \d+/);
  assert.match(err, /connection 1: decoding of the server's bytes resumed after the gap \(\d+ bytes skipped\)/);
  assert.match(err, /connection 1, stream 0 \(\/api\/v1\/namespaces\/default\/pods\?watch=1\): the watch resumed/);
  assert.match(err, /1 connections, 1 responses, 10 events, 2 gaps, 2 resumed/);
});

// ---------------------------------------------------------------------------------------------------------------------
// The resync stages on bytes the tests build.

/** What a resync stage passes on of `chunks`, and what it told `found`. */
async function resynced(
  make: (
    found: (skipped: number) => void,
  ) => { push(c: Uint8Array, emit: (b: Uint8Array) => void): void; finish(emit: (b: Uint8Array) => void): void },
  chunks: Uint8Array[],
) {
  let skipped: number | undefined;
  const stage = make((n) => void (skipped = n));
  const parts: Uint8Array[] = [];
  for await (const b of streamOf(chunks).pipeThrough(new DecoderStream(stage))) parts.push(b.slice());
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return { out, skipped };
}

/**
 * A Kubernetes protobuf watch frame (built by the test): its length, the event type, and a v1 Pod in a k8s\0 envelope
 * whose name is `size` bytes of `fill` (resourceVersion "1").
 */
function protobufFrame(type: string, size: number, fill: number): Uint8Array {
  const meta = [0x0a, ...varint(size), ...new Array(size).fill(fill), 0x32, 1, 0x31];
  const pod = [0x0a, ...varint(meta.length), ...meta];
  const unknown = [0x0a, 9, 0x0a, 2, ...utf8("v1"), 0x12, 3, ...utf8("Pod"), 0x12, ...varint(pod.length), ...pod];
  const raw = [0x6b, 0x38, 0x73, 0x00, ...unknown];
  const object = [0x0a, ...varint(raw.length), ...raw];
  const event = [0x0a, type.length, ...utf8(type), 0x12, ...varint(object.length), ...object];
  return Uint8Array.from([...[24, 16, 8, 0].map((s) => (event.length >>> s) & 255), ...event]);
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

test("resync stages: protobuf resumes at the first whole frame after any cut, never inside one", async () => {
  // Objects full of bytes that look like frame starts (length prefixes, 0x0a tags) to tempt the scan.
  const frames = [
    protobufFrame("ADDED", 300, 0x0a),
    protobufFrame("MODIFIED", 40, 0x00),
    protobufFrame("BOOKMARK", 1000, 0x12),
    protobufFrame("DELETED", 5, 0x05),
    protobufFrame("ERROR", 70, 0x0a),
  ];
  const body = concat(frames);
  const starts = frames.map((_, k) => frames.slice(0, k).reduce((n, f) => n + f.length, 0));
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: body.length - 1 }),
      fc.array(fc.integer({ min: 1, max: body.length }), { maxLength: 8 }),
      async (cut, splits) => {
        const rest = body.subarray(cut);
        const points = [...new Set(splits.filter((s) => s < rest.length))].sort((a, b) => a - b);
        const chunks = [0, ...points].map((at, k) => rest.slice(at, points[k] ?? rest.length));
        const { out, skipped } = await resynced((found) => new ProtobufWatchResync(1 << 20, found), chunks);
        const next = starts.findIndex((s) => s >= cut);
        if (next < 0) {
          assert.equal(out.length, 0);
          return;
        }
        assert.equal(skipped, starts[next] - cut);
        assert.deepEqual(out, body.subarray(starts[next]));
      },
    ),
    { numRuns: 200 },
  );
});

test("resync stages: JSON keeps a whole first line, drops a cut one", async () => {
  const lines = [
    '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","annotations":{"x":"{\\"type\\":\\"y\\"}"}}}}\n',
    '{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"b"},"data":{"{":":","type":"{}"}}}\n',
    '{"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"c"}}}\n',
  ];
  const body = utf8(lines.join(""));
  const starts = lines.map((_, k) => utf8(lines.slice(0, k).join("")).length);
  for (let cut = 0; cut < body.length; cut++) {
    const { out, skipped } = await resynced(
      (found) => new JsonWatchResync(1 << 20, found),
      bytewise(body.subarray(cut)),
    );
    const next = starts.findIndex((s) => s >= cut);
    if (next < 0) {
      assert.equal(out.length, 0, `cut at ${cut}`);
      continue;
    }
    assert.equal(skipped, starts[next] - cut, `cut at ${cut}`);
    assert.deepEqual(out, body.subarray(starts[next]), `cut at ${cut}`);
  }
});

test("resync stages: HTTP/1.1 chunks resume at the next chunk-size line that a chunk and another line confirm", () => {
  const chunks = ["1a\r\nabcdefghijklmnopqrstuvwxyz\r\n", "5;x=y\r\n0123\n\r\n", "3\r\nabc\r\n", "0\r\n\r\n"];
  const body = utf8(chunks.join("") + "HTTP/1.1 200 OK\r\n");
  const starts = chunks.map((_, k) => chunks.slice(0, k).join("").length);
  for (let cut = 0; cut < body.length; cut++) {
    let skipped: number | undefined;
    const resync = new ChunkedBodyResync({ maxChunkLineBytes: 64, maxChunkBytes: 1024, found: (n) => (skipped = n) });
    let payload = "";
    let rest: Uint8Array | undefined;
    const take = (p: Uint8Array) => void (payload += new TextDecoder().decode(p));
    for (const b of bytewise(body.subarray(cut))) {
      const after = resync.push(b, take);
      if (after !== undefined) rest = concat([rest ?? new Uint8Array(0), after]);
      else if (resync.done) rest = concat([rest ?? new Uint8Array(0), b]);
    }
    const after = resync.finish(take);
    if (after !== undefined) rest = concat([rest ?? new Uint8Array(0), after]);
    const text = new TextDecoder().decode(body.subarray(cut));
    if (cut <= 0) assert.equal(payload, "abcdefghijklmnopqrstuvwxyz0123\nabc");
    if (skipped !== undefined) {
      // Whatever it found, it was a real chunk boundary, and the payload the rest of the body.
      const at = cut + skipped;
      assert.ok(starts.includes(at), `cut ${cut}: resumed at ${at} (${JSON.stringify(text)})`);
      assert.ok(resync.done);
      assert.equal(new TextDecoder().decode(rest), "HTTP/1.1 200 OK\r\n");
    } else {
      assert.ok(cut > starts[starts.length - 1], `cut ${cut}: not resumed`);
    }
  }
});

test("resync stages: HTTP/2 resumes at a frame an open stream's or a new one's, confirmed by the next header", async () => {
  const frames = encodeHttp2Frames([
    { type: "DATA", streamId: 1, data: utf8("x".repeat(40)) },
    { type: "PING", streamId: 0, ack: false, opaqueData: new Uint8Array(8) },
    { type: "DATA", streamId: 3, data: utf8("\x00\x00\x08\x06\x00\x00\x00\x00\x00".repeat(3)) },
    { type: "HEADERS", streamId: 5, endHeaders: false, fragment: Uint8Array.of(0x88) },
    { type: "CONTINUATION", streamId: 5, endHeaders: true, fragment: Uint8Array.of(0x88) },
    { type: "DATA", streamId: 1, endStream: true, data: utf8("y") },
  ]);
  const sizes = [40, 8, 27, 1, 1, 1].map((n) => 9 + n);
  const boundaries = sizes.map((_, k) => sizes.slice(0, k).reduce((a, b) => a + b, 0));
  for (let cut = 0; cut < frames.length; cut++) {
    const { out, skipped } = await resynced(
      (found) => new Http2FrameResync({ maxFrameSize: 16384, openStreams: new Set([1]), highestStreamId: 3, found }),
      bytewise(frames.subarray(cut)),
    );
    if (skipped === undefined) {
      assert.equal(out.length, 0);
      continue;
    }
    const at = cut + skipped;
    // Stream 3 had ended before the gap: not a place to start; the CONTINUATION neither.
    assert.ok([0, 1, 3, 5].map((k) => boundaries[k]).includes(at), `cut ${cut}: resumed at ${at}`);
    assert.deepEqual(out, frames.subarray(at));
  }
});

// ---------------------------------------------------------------------------------------------------------------------
// Captures this test builds byte by byte.

test("resync (HTTP/2): open streams go on, a header block that needs HPACK entries lost is a problem of its stream", async () => {
  const literal = (index: number, value: string) => [index, value.length, ...utf8(value)]; // without indexing
  const get = (path: string) => Uint8Array.from([0x82, 0x86, ...literal(0x04, path), ...literal(0x01, "k")]); // GET, http, :path, :authority
  const event = (name: string) => utf8(`{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"${name}"}}}\n`);
  // :status 200, then content-type as a literal with incremental indexing (static name 31): dynamic entry 62.
  const indexedType = Uint8Array.from([0x88, 0x5f, 16, ...utf8("application/json")]);
  const client = [
    encodeHttp2Frames([{ type: "SETTINGS", streamId: 0, parameters: [] }], { preface: true }),
    ...[1, 3, 5].map((id) =>
      encodeHttp2Frames([{
        type: "HEADERS",
        streamId: id,
        endHeaders: true,
        endStream: true,
        fragment: get(`/api/v1/pods?watch=1&n=${id}`),
      }])
    ),
  ];
  const frame = (f: Parameters<typeof encodeHttp2Frames>[0] extends Iterable<infer F> ? F : never) =>
    encodeHttp2Frames([f]);
  const server = [
    frame({ type: "SETTINGS", streamId: 0, parameters: [] }),
    frame({ type: "HEADERS", streamId: 1, endHeaders: true, fragment: indexedType }),
    frame({ type: "DATA", streamId: 1, data: event("a") }),
    frame({ type: "DATA", streamId: 1, data: event("b") }), // lost
    frame({ type: "DATA", streamId: 1, data: event("c") }),
    // Stream 3's header block refers to entry 62 (content-type), which the resumed decoder does not hold.
    frame({ type: "HEADERS", streamId: 3, endHeaders: true, fragment: Uint8Array.of(0x88, 0xbe) }),
    frame({ type: "DATA", streamId: 3, data: event("x") }),
    frame({ type: "DATA", streamId: 1, data: event("d") }),
    // Stream 5's adds its own entry: it decodes.
    frame({ type: "HEADERS", streamId: 5, endHeaders: true, fragment: indexedType }),
    frame({ type: "DATA", streamId: 5, endStream: true, data: event("e") }),
    frame({ type: "DATA", streamId: 1, endStream: true, data: event("f") }),
    frame({ type: "DATA", streamId: 3, endStream: true, data: event("y") }),
  ];
  const full = await decode([tcpCapture(client, server, [])]);
  const names = (items: CaptureItem[], stream: number) =>
    items.flatMap((i) =>
      i.kind === "event" && i.stream === stream
        ? [(i.event.object as { metadata: { name: string } }).metadata.name]
        : []
    );
  assert.deepEqual(names(full.items, 1), ["a", "b", "c", "d", "f"]);
  assert.deepEqual(names(full.items, 3), ["x", "y"]);
  const capture = tcpCapture(client, server, [3]);
  const { items, error } = await decode([capture]);
  assert.equal(error, undefined);
  assert.deepEqual(names(items, 1), ["a", "c", "d", "f"], "stream 1 goes on after the gap");
  assert.deepEqual(names(items, 5), ["e"], "a new stream after the gap");
  assert.deepEqual(names(items, 3), [], "stream 3's headers could not be decoded");
  const problems = items.filter((i) => i.kind === "problem");
  assert.equal(problems.length, 1, JSON.stringify(problems));
  assert.match(
    problems[0].kind === "problem" ? problems[0].message : "",
    /^connection 1, stream 3 \(GET \/api\/v1\/pods\?watch=1&n=3\): its header block could not be decoded \(it refers to HPACK/,
  );
  const kinds = items.map((i) => i.kind === "event" ? `event ${i.stream}` : i.kind);
  const gap = kinds.indexOf("gap");
  const resumedAt = kinds.indexOf("resumed");
  assert.ok(gap > 0 && kinds.slice(gap, resumedAt).every((k) => k === "gap"), kinds.join());
  assert.deepEqual(kinds.slice(0, gap).filter((k) => k.startsWith("event")), ["event 1"]);
  const resumed = items.filter((i) => i.kind === "resumed");
  assert.deepEqual(resumed.map((r) => r.kind === "resumed" && [r.direction, r.stream]), [["server", undefined], [
    "server",
    1,
  ]]);
  // The same whatever the chunking.
  const expected = timeless(items);
  assert.deepEqual(timeless((await decode(bytewise(capture))).items), expected);
});

test("resync (TLS): a record damaged after the gap is passed over; what follows decrypts; nothing else comes out", async () => {
  const f = FIXTURES[1];
  const x = await expectation(f);
  const server = insideWatch(x);
  const lost = server[2];
  const next = server[3];
  // The first byte of ciphertext after the record header of the packet after the lost one flipped (in the file).
  const { packets } = pcapPackets(x.bytes);
  const damaged = x.bytes.slice();
  const record = packets[next.index].record;
  const at = record.byteOffset + record.length - next.payload.length + 5 + 8;
  damaged[at] ^= 0x01;
  const touched = [lost, next].flatMap((p) => touchedEvents(x.ranges, x.pieces, p.offset, p.end));
  const { items } = await decode([withoutPackets(damaged, [lost.index])], { keyLog: f.keyLog });
  assert.deepEqual(eventsOf(items), x.events.filter((_, i) => !touched.includes(i)));
  assert.ok(
    items.some((i) => i.kind === "resumed" && i.stream === undefined && i.skippedBytes > next.end - lost.offset - 1),
  );
});

test("resync (TLS decryptor): the next record that opens after a gap, past a header in the ciphertext that is none", async () => {
  // A real TLS 1.3 connection (fixtures/captures/tls-1.3-*: a Node server and client through a relay): its records
  // 8 (16401 bytes) and 9 (3720 bytes) carry the response. Record 8's ciphertext happens to hold, 14962 bytes in, the
  // bytes 17 03 03 37 e6: a plausible header of a 14310-byte record, which is none.
  const name = "tls-1.3-aes128gcm";
  const c2s = read(`${name}.c2s.bin`);
  const s2c = read(`${name}.s2c.bin`);
  const keys = text(`${name}.keys.txt`);
  const expected = new Uint8Array(
    atob(JSON.parse(text(`${name}.expected.json`)).serverPlaintext).split("").map((c) => c.charCodeAt(0)),
  );
  const records: number[] = [];
  for (let at = 0; at < s2c.length; at += 5 + ((s2c[at + 3] << 8) | s2c[at + 4])) records.push(at);
  assert.deepEqual([records[8], records[9]], [1332, 17738]);
  const run = async (after: Uint8Array[], from: number, length: number, end = true) => {
    const decryptor = new TlsConnectionDecryptor(new KeyLog(keys));
    const events: TlsEvent[] = [];
    const emit = (e: TlsEvent) => void events.push(e);
    await decryptor.push("client", c2s, emit);
    await decryptor.push("server", s2c.subarray(0, from), emit);
    await decryptor.gap("server", length, emit);
    for (const chunk of after) await decryptor.push("server", chunk, emit);
    if (end) await decryptor.end(emit);
    return events.filter((e) => e.kind === "handshake" || e.direction === "server");
  };
  // 30 bytes lost inside record 8: decryption resumes at record 9, one record lost.
  const from = records[8] + 7;
  const rest = s2c.subarray(from + 30);
  const events = await run([rest], from, 30);
  const kinds = events.map((e) => e.kind);
  assert.deepEqual(kinds.slice(kinds.indexOf("lost")), ["lost", "resync", "data", "alert"]);
  const resync = events.find((e) => e.kind === "resync")!;
  assert.ok(resync.kind === "resync");
  assert.deepEqual([resync.recordOffset, resync.skippedBytes, resync.skippedRecords], [17738, 17738 - 1332, 1]);
  // Found without waiting for the end: the candidate in record 8 that claims 14310 bytes does not hold it up.
  assert.ok((await run([rest], from, 30, false)).some((e) => e.kind === "resync"));
  const data = events.filter((e) => e.kind === "data");
  const after = data[data.length - 1];
  assert.ok(after.kind === "data");
  assert.deepEqual(after.bytes, expected.subarray(expected.length - after.bytes.length), "the end of the response");
  // Any chunking of the bytes after the gap: the same events.
  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 1, max: rest.length - 1 }), { maxLength: 10 }), async (cuts) => {
      const points = [...new Set(cuts)].sort((a, b) => a - b);
      const chunks = [0, ...points].map((at, k) => rest.slice(at, points[k] ?? rest.length));
      assert.deepEqual(plain(await run(chunks, from, 30)), plain(events));
    }),
    { numRuns: 20 },
  );
  // A whole record lost, at a record boundary: the one after it opens at once.
  const whole = await run([s2c.subarray(records[8])], records[7], records[8] - records[7]);
  const next = whole.find((e) => e.kind === "resync");
  assert.ok(next?.kind === "resync");
  assert.deepEqual([next.recordOffset, next.skippedRecords], [records[8], 1]);
  assert.deepEqual(
    whole.reduce((n, e) => n + (e.kind === "data" ? e.bytes.length : 0), 0),
    expected.length,
  );
});

test("resync (TLS 1.2 decryptor): AES-GCM and ChaCha20-Poly1305 resume at the alert after a lost data record", async () => {
  for (const name of ["tls-1.2-aes128gcm", "tls-1.2-chacha20"]) {
    const c2s = read(`${name}.c2s.bin`);
    const s2c = read(`${name}.s2c.bin`);
    const records: number[] = [];
    for (let at = 0; at < s2c.length; at += 5 + ((s2c[at + 3] << 8) | s2c[at + 4])) records.push(at);
    // Record 7 is the response (application data), record 8 the close_notify alert.
    assert.deepEqual([s2c[records[7]], s2c[records[8]]], [23, 21], name);
    const decryptor = new TlsConnectionDecryptor(new KeyLog(text(`${name}.keys.txt`)));
    const events: TlsEvent[] = [];
    const emit = (e: TlsEvent) => void events.push(e);
    await decryptor.push("client", c2s, emit);
    const from = records[7] + 100;
    await decryptor.push("server", s2c.subarray(0, from), emit);
    await decryptor.gap("server", 50, emit);
    await decryptor.push("server", s2c.subarray(from + 50), emit);
    await decryptor.end(emit);
    const server = events.filter((e) => e.kind !== "handshake" && e.direction === "server");
    assert.deepEqual(server.map((e) => e.kind), ["lost", "resync", "alert"], name);
    const [lost, resync, alert] = server;
    assert.ok(lost.kind === "lost" && resync.kind === "resync" && alert.kind === "alert");
    assert.deepEqual([lost.streamOffset, lost.length], [from, 50]);
    assert.deepEqual([resync.recordOffset, resync.skippedBytes, resync.skippedRecords], [
      records[8],
      records[8] - records[7],
      1,
    ]);
    assert.equal(alert.name, "close_notify");
  }
});

test("resync (HTTP/1.1): a close-delimited JSON watch and a chunked protobuf one go on after a gap", async () => {
  const names = (items: CaptureItem[]) =>
    items.flatMap((i) =>
      i.kind === "event" ? [(i.event.object as { metadata?: { name?: string } }).metadata?.name] : []
    );
  // Close-delimited: the body runs until the connection closes; its bytes go on right after the hole.
  const request = utf8("GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: k\r\n\r\n");
  const line = (name: string) => `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"${name}"}}}\n`;
  const head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
  // "b" and "c" share a packet cut in two: the lost one ends inside "c", so "c" is lost whole.
  const bc = line("b") + line("c");
  const closeDelimited = [head + line("a"), bc.slice(0, 90), bc.slice(90), line("d") + line("e")].map(utf8);
  const close = await decode([tcpCapture([request], closeDelimited, [1])]);
  assert.deepEqual(names(close.items), ["a", "d", "e"]);
  assert.deepEqual(close.items.filter((i) => i.kind === "problem"), []);
  assert.equal(close.items.filter((i) => i.kind === "resumed").length, 2);
  // Chunked protobuf, a frame split over chunks and packets: the frame the gap cut is lost, the next one found.
  const frames = ["ADDED", "MODIFIED", "MODIFIED", "DELETED", "BOOKMARK"].map((t, k) =>
    protobufFrame(t, 200 + k, 0x0a)
  );
  const chunk = (bytes: Uint8Array) => concat([utf8(`${bytes.length.toString(16)}\r\n`), bytes, utf8("\r\n")]);
  const pieces = [
    concat([
      utf8("HTTP/1.1 200 OK\r\nContent-Type: application/vnd.kubernetes.protobuf;stream=watch\r\n"),
      utf8("Transfer-Encoding: chunked\r\n\r\n"),
      chunk(frames[0]),
    ]),
    chunk(frames[1].subarray(0, 100)),
    chunk(frames[1].subarray(100)), // lost
    chunk(concat([frames[2], frames[3].subarray(0, 10)])),
    chunk(frames[3].subarray(10)),
    concat([chunk(frames[4]), utf8("0\r\n\r\n")]),
  ];
  const chunked = await decode([
    tcpCapture([utf8("GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: k\r\n\r\n")], pieces, [2]),
  ]);
  assert.deepEqual(
    chunked.items.flatMap((i) => (i.kind === "event" ? [i.event.type] : [])),
    ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"],
  );
  assert.deepEqual(chunked.items.filter((i) => i.kind === "problem"), []);
  const resumed = chunked.items.filter((i) => i.kind === "resumed");
  assert.deepEqual(resumed.map((r) => r.kind === "resumed" && r.stream), [undefined, 0]);
});
