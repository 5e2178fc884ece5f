/**
 * decodeCapture and `watchwire decode` on real capture files (fixtures/captures/capture-*: tcpdump on loopback while
 * curl watched a Node server; scripts/record-captures.ts): the events decoded from the capture equal those of the body
 * curl itself received; any chunking of the file gives the same items; damage gives a fault at its place.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import process from "node:process";
import { decodeWatchResponse } from "../src/watch/decode_watch_response.ts";
import { decodeCapture } from "../src/watch/decode_capture.ts";
import type { CaptureItem, DecodeCaptureOptions } from "../src/watch/capture_item.ts";
import { builtinDecoders } from "../src/codec/kubernetes/generated/all.ts";
import { DecodeError } from "../src/errors.ts";
import { runCli } from "../src/cli/main.ts";
import { bytewise, collectGarbage, streamOf } from "./_util.ts";
import { PCAP_HEADER, tcpCapture, TcpPackets } from "./_capture_build.ts";

const dir = new URL("../fixtures/captures/", import.meta.url);
const read = (name: string) => new Uint8Array(readFileSync(new URL(name, dir)));
const text = (name: string) => readFileSync(new URL(name, dir), "utf8");

interface Fixture {
  name: string;
  file: string;
  keyLog: string | undefined;
  meta: { path: string; contentType: string; http: "1.1" | "2"; tls: "1.2" | "1.3" | null };
}

const FIXTURES: Fixture[] = [
  { name: "http1-json", file: "capture-http1-json.pcap", keys: false },
  { name: "tls12-http1-json", file: "capture-tls12-http1-json.pcap", keys: true },
  { name: "tls13-h2-protobuf", file: "capture-tls13-h2-protobuf.pcap", keys: true },
  { name: "tls13-h2-json-dsb", file: "capture-tls13-h2-json-dsb.pcapng", keys: false },
].map(({ name, file, keys }) => ({
  name,
  file,
  keyLog: keys ? text(`capture-${name}.keys.txt`) : undefined,
  meta: JSON.parse(text(`capture-${name}.json`)),
}));

const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

async function items(chunks: Uint8Array[], options: DecodeCaptureOptions = {}) {
  const got: CaptureItem[] = [];
  let error: unknown;
  try {
    for await (const item of decodeCapture(streamOf(chunks), { protobuf: { decoders: builtinDecoders }, ...options })) {
      got.push(item);
    }
  } catch (e) {
    error = e;
  }
  return { items: got, error };
}

/** The events curl received: its body file decoded as the response's content type says. */
async function clientEvents(f: Fixture) {
  const response = new Response(read(`capture-${f.name}.body`), { headers: { "content-type": f.meta.contentType } });
  const events: unknown[] = [];
  for await (const e of decodeWatchResponse(response, { protobuf: { decoders: builtinDecoders } })) events.push(e);
  return plain(events);
}

for (const f of FIXTURES) {
  test(`decodeCapture (${f.name}): the events equal those curl received; the connection, TLS and request`, async () => {
    const { items: got, error } = await items([read(f.file)], { keyLog: f.keyLog });
    assert.equal(error, undefined);
    const events = got.filter((i) => i.kind === "event");
    assert.deepEqual(plain(events.map((e) => e.event)), await clientEvents(f));
    assert.ok(events.length >= 5);
    const connection = got.find((i) => i.kind === "connection")!;
    assert.equal(connection.kind === "connection" && connection.transport, f.meta.tls === null ? "plain" : "tls");
    const tls = got.filter((i) => i.kind === "tls");
    if (f.meta.tls === null) assert.equal(tls.length, 0);
    else {
      assert.equal(tls.length, 1);
      assert.equal(tls[0].kind === "tls" && tls[0].version, f.meta.tls);
      if (f.meta.http === "2") assert.equal(tls[0].kind === "tls" && tls[0].alpn, "h2");
    }
    const responses = got.filter((i) => i.kind === "response");
    assert.equal(responses.length, 1);
    const r = responses[0];
    assert.ok(r.kind === "response");
    assert.equal(r.method, "GET");
    assert.equal(r.path, f.meta.path);
    assert.equal(r.http, f.meta.http);
    assert.equal(r.status, 200);
    assert.equal(r.watch, true);
    for (const e of events) {
      assert.equal(e.connection, 1);
      assert.equal(e.path, f.meta.path);
    }
    // Times: from the capture, in order, no earlier than the connection's first packet.
    const times = events.map((e) => e.time.seconds * 1e9 + e.time.nanoseconds);
    const start = connection.kind === "connection" ? connection.time.seconds * 1e9 + connection.time.nanoseconds : 0;
    assert.ok(times.every((t, i) => t >= start && (i === 0 || t >= times[i - 1])), "times in order");
    assert.ok(times[times.length - 1] - start < 60e9);
    const summary = got[got.length - 1];
    assert.ok(summary.kind === "summary");
    assert.equal(summary.connections, 1);
    assert.equal(summary.events, events.length);
    assert.equal(summary.gaps, 0);
    assert.deepEqual(got.filter((i) => i.kind === "problem"), []);
  });
}

/** Items without capture times, which depend on how far decoders had read when an event came out. */
const timeless = (list: CaptureItem[]) =>
  plain(list.map((i) => ("time" in i && (i.kind === "event" || i.kind === "response") ? { ...i, time: 0 } : i)));

test("decodeCapture: any chunking of the capture file gives the same items", async () => {
  for (const f of FIXTURES) {
    const bytes = read(f.file);
    const expected = timeless((await items([bytes], { keyLog: f.keyLog })).items);
    const byteByByte = await items(bytewise(bytes), { keyLog: f.keyLog });
    assert.deepEqual(timeless(byteByByte.items), expected, `${f.name}: byte by byte`);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), async (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const chunks = [0, ...points].map((at, k) => bytes.slice(at, points[k] ?? bytes.length));
        const got = await items(chunks, { keyLog: f.keyLog });
        assert.equal(got.error, undefined);
        assert.deepEqual(timeless(got.items), expected);
      }),
      { numRuns: 15 },
    );
  }
});

test("decodeCapture: without the key log, a TLS connection is a problem naming it; its file's key log is enough", async () => {
  const f = FIXTURES.find((x) => x.name === "tls13-h2-protobuf")!;
  const { items: got, error } = await items([read(f.file)]);
  assert.equal(error, undefined);
  const problems = got.filter((i) => i.kind === "problem");
  assert.equal(problems.length, 1);
  assert.ok(problems[0].kind === "problem");
  assert.equal(problems[0].connection, 1);
  assert.match(problems[0].message, /connection 1: TLS: .*no TLS 1\.3 traffic secrets for client random [0-9a-f]{64}/);
  assert.equal(got.filter((i) => i.kind === "event").length, 0, "nothing decoded without keys");
  // A wrong key log (another connection's): a problem, no garbage.
  const other = FIXTURES.find((x) => x.name === "tls12-http1-json")!;
  const wrong = await items([read(f.file)], { keyLog: other.keyLog });
  assert.equal(wrong.items.filter((i) => i.kind === "event").length, 0);
  assert.equal(wrong.items.filter((i) => i.kind === "problem").length, 1);
});

test("decodeCapture: a damaged TLS record is a problem; the events before it are delivered", async () => {
  const f = FIXTURES.find((x) => x.name === "tls12-http1-json")!;
  const bytes = read(f.file);
  const all = (await items([bytes], { keyLog: f.keyLog })).items.filter((i) => i.kind === "event");
  // A byte of ciphertext flipped: 100 bytes before the end of the largest packet in the second half of the file (a
  // classic pcap: a 24-byte header, then a 16-byte header before each packet; the largest carry TLS records).
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  let at = 24;
  let target = 0;
  let largest = 0;
  while (at + 16 <= bytes.length) {
    const length = view.getUint32(at + 8, true);
    if (at > bytes.length / 2 && length > largest) [largest, target] = [length, at + 16 + length - 100];
    at += 16 + length;
  }
  assert.ok(largest > 1000, `a packet of ${largest} bytes`);
  const damaged = bytes.slice();
  damaged[target] ^= 0x40;
  const { items: got, error } = await items([damaged], { keyLog: f.keyLog });
  assert.equal(error, undefined);
  const events = got.filter((i) => i.kind === "event");
  assert.ok(events.length < all.length, `${events.length} of ${all.length}`);
  assert.deepEqual(plain(events.map((e) => e.event)), plain(all.slice(0, events.length).map((e) => e.event)));
  const problems = got.filter((i) => i.kind === "problem");
  assert.ok(problems.length >= 1);
  assert.ok(
    problems.some((p) => p.kind === "problem" && /authentication|TLS/.test(p.message)),
    JSON.stringify(problems),
  );
});

/** The records of a little-endian classic pcap file: [file offset, length with its 16-byte header]. */
function pcapRecords(bytes: Uint8Array): [number, number][] {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const out: [number, number][] = [];
  for (let at = 24; at + 16 <= bytes.length;) {
    const length = 16 + view.getUint32(at + 8, true);
    out.push([at, length]);
    at += length;
  }
  return out;
}

test("decodeCapture: maxRecordBytes bounds the file's records, maxTlsRecordBytes TLS records, each alone", async () => {
  // A recorded capture whose largest pcap record holds TLS records: a TLS limit under them leaves the file's alone.
  const f = FIXTURES.find((x) => x.name === "tls12-http1-json")!;
  const recorded = read(f.file);
  const largestPcap = Math.max(...pcapRecords(recorded).map(([, n]) => n));
  const tlsOnly = await items([recorded], { keyLog: f.keyLog, maxTlsRecordBytes: 16407 });
  assert.equal(tlsOnly.error, undefined, `the pcap record of ${largestPcap} bytes passes`);
  assert.ok(largestPcap > 16407);
  const tooLong = /TLS record of (\d+) bytes is longer than maxTlsRecordBytes \(16407\)/;
  const refused = tlsOnly.items.flatMap((i) => i.kind === "problem" ? [tooLong.exec(i.message)] : [])
    .find((m): m is RegExpExecArray => m !== null);
  assert.ok(refused !== undefined && Number(refused[1]) > 16407, JSON.stringify(tlsOnly.items));
  const packets = (got: CaptureItem[]) => got.flatMap((i) => i.kind === "summary" ? [i.packets] : []);
  assert.deepEqual(packets(tlsOnly.items), [pcapRecords(recorded).length], "every packet read");

  // Bytes this test builds: the recorded TLS 1.3 connection of fixtures/captures/tls-1.3-aes128gcm.*.bin (its server
  // sends a TLS record of 16401 bytes) in packets of at most 1024 payload bytes: pcap records of at most 1080 bytes.
  const slices = (b: Uint8Array) =>
    Array.from({ length: Math.ceil(b.length / 1024) }, (_, k) => b.subarray(k * 1024, (k + 1) * 1024));
  const tls = tcpCapture(slices(read("tls-1.3-aes128gcm.c2s.bin")), slices(read("tls-1.3-aes128gcm.s2c.bin")), []);
  const keyLog = text("tls-1.3-aes128gcm.keys.txt");
  const records = pcapRecords(tls);
  const limit = Math.max(...records.map(([, n]) => n));
  assert.equal(limit, 16 + 20 + 20 + 1024);
  const reference = await items([tls], { keyLog });
  assert.equal(reference.error, undefined);
  assert.ok(reference.items.some((i) => i.kind === "tls"));
  assert.deepEqual(reference.items.filter((i) => i.kind === "problem"), []);
  // The file's limit at its largest record: the TLS records over it decrypt all the same.
  const fileLimit = await items([tls], { keyLog, maxRecordBytes: limit });
  assert.equal(fileLimit.error, undefined);
  assert.deepEqual(plain(fileLimit.items), plain(reference.items));
  // The TLS limit at that value: the 16401-byte TLS record is refused, while the pcap records of that size pass.
  const tlsLimit = await items([tls], { keyLog, maxTlsRecordBytes: limit });
  assert.equal(tlsLimit.error, undefined);
  const problems = tlsLimit.items.flatMap((i) => i.kind === "problem" ? [i.message] : []);
  assert.ok(
    problems.some((m) => m.includes(`TLS record of 16401 bytes is longer than maxTlsRecordBytes (${limit})`)),
    JSON.stringify(problems),
  );
  assert.deepEqual(packets(tlsLimit.items), [records.length], "every packet read");
  // One byte under the file's largest record: the file fails there, with MESSAGE_TOO_LARGE at that record.
  const fileUnder = await items([tls], { keyLog, maxRecordBytes: limit - 1 });
  assert.ok(fileUnder.error instanceof DecodeError, String(fileUnder.error));
  assert.equal(fileUnder.error.code, "MESSAGE_TOO_LARGE");
  assert.equal(fileUnder.error.offset, records.find(([, n]) => n === limit)![0]);
  const over = new RegExp(`pcap record of ${limit} bytes .* is over maxRecordBytes \\(${limit - 1} bytes\\)`);
  assert.match(fileUnder.error.message, over);
});

test("decodeCapture: a capture file cut short fails with TRUNCATED at the record, after the events before it", async () => {
  const f = FIXTURES[0];
  const bytes = read(f.file);
  const all = (await items([bytes])).items.filter((i) => i.kind === "event").length;
  const cut = bytes.subarray(0, Math.floor(bytes.length * 0.6));
  const { items: got, error } = await items([cut]);
  assert.ok(error instanceof DecodeError, String(error));
  assert.equal(error.code, "TRUNCATED");
  assert.ok(error.offset < cut.length && error.offset > 24);
  const events = got.filter((i) => i.kind === "event").length;
  assert.ok(events > 0 && events < all, `${events} of ${all}`);
  // Not a capture at all: CAPTURE_INVALID at 0.
  const notCapture = await items([new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n")]);
  assert.ok(notCapture.error instanceof DecodeError);
  assert.equal(notCapture.error.code, "CAPTURE_INVALID");
  assert.equal(notCapture.error.offset, 0);
});

test("watchwire decode: a capture file with --keylog prints its events with time and connection", async () => {
  const f = FIXTURES.find((x) => x.name === "tls13-h2-protobuf")!;
  const files: Record<string, Uint8Array> = { capture: read(f.file), keys: new TextEncoder().encode(f.keyLog!) };
  const run = async (args: string[]) => {
    let out = "";
    let err = "";
    const status = await runCli(args, {
      open: (path) => Promise.resolve(streamOf([files[path]])),
      stdout: (t) => void (out += t),
      stderr: (t) => void (err += t),
      stdoutIsTerminal: false,
      version: "0.0.0",
    });
    return { status, out, err };
  };
  const { status, out, err } = await run(["decode", "--keylog", "keys", "capture"]);
  assert.equal(status, 0, err);
  const lines = out.trim().split("\n").map((l) => JSON.parse(l));
  const expected = await clientEvents(f);
  assert.deepEqual(lines.map((l) => ({ type: l.type, object: l.object })), expected);
  for (const l of lines) {
    assert.equal(l.connection, 1);
    assert.equal(l.path, f.meta.path);
    assert.match(l.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
  }
  assert.match(err, /1 connections, 1 responses, 5 events, 0 gaps/);
  // Without keys: the problem on stderr, exit status 1; --connection 2 prints nothing.
  const keyless = await run(["decode", "capture"]);
  assert.equal(keyless.status, 1);
  assert.match(keyless.err, /connection 1: TLS: /);
  const other = await run(["decode", "--keylog", "keys", "--connection", "2", "capture"]);
  assert.equal(other.status, 0);
  assert.equal(other.out, "");
  const table = await run(["decode", "--keylog", "keys", "-o", "table", "capture"]);
  assert.match(table.out.split("\n")[0], /^TIME\s+CONN\s+TYPE/);
  assert.match(table.out, /GET \/api\/v1\/namespaces\/default\/pods\?watch=1 \(HTTP\/2, stream 1\): 200/);
});

test("decodeCapture: events come as their packets are read, before the capture ends (a live pipe)", async () => {
  const f = FIXTURES.find((x) => x.name === "tls13-h2-protobuf")!;
  const bytes = read(f.file);
  let feed!: ReadableStreamDefaultController<Uint8Array>;
  const live = new ReadableStream<Uint8Array>({ start: (c) => void (feed = c) });
  const reader = decodeCapture(live, { keyLog: f.keyLog, protobuf: { decoders: builtinDecoders } }).getReader();
  // Most of the file, then a pause: an event must come while the capture is still open.
  const half = Math.floor(bytes.length * 0.7);
  feed.enqueue(bytes.slice(0, half));
  const firstEvent = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return undefined;
      if (value.kind === "event") return value;
    }
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), 5000)));
  const got = await Promise.race([firstEvent, timeout]);
  clearTimeout(timer);
  if (got === "timeout" || got === undefined) assert.fail("no event before the capture ended");
  assert.equal(got.event.type, "ADDED");
  feed.enqueue(bytes.slice(half));
  feed.close();
  let rest = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (value.kind === "event") rest++;
  }
  assert.equal(rest + 1, (await clientEvents(f)).length);
});

test("watchwire decode --proto: a file that cannot be found is a usage error (2) naming it", async () => {
  let err = "";
  const status = await runCli(["decode", "--proto", "missing.proto", "capture"], {
    open: (path) =>
      path === "capture" ? Promise.resolve(streamOf([read(FIXTURES[0].file)])) : Promise.reject(new Error("ENOENT")),
    stdout: () => {},
    stderr: (t) => void (err += t),
    stdoutIsTerminal: false,
    version: "0.0.0",
  });
  assert.equal(status, 2);
  assert.match(err, /--proto: missing\.proto: not found/);
});

/**
 * An endless pcap (link type raw IPv4, built by this test byte by byte): one TCP connection on which a client asks for
 * a watch and the server answers with chunked JSON events without end.
 */
function endlessWatchCapture(): { source: ReadableStream<Uint8Array>; eventsPerPeriod: number } {
  const tcp = new TcpPackets(6443);
  const packet = (from: "client" | "server", flags: number, payload: number[]) => tcp.packet(from, flags, payload);
  const text = (s: string) => [...new TextEncoder().encode(s)];
  const start = [
    ...PCAP_HEADER,
    ...packet("client", 0x02, []),
    ...packet("server", 0x12, []),
    ...packet("client", 0x18, text("GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: k\r\n\r\n")),
    ...packet(
      "server",
      0x18,
      text("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"),
    ),
  ];
  const eventsPerPeriod = 50;
  let n = 0;
  const period = () => {
    const out: number[] = [];
    for (let i = 0; i < eventsPerPeriod; i++) {
      const line =
        `{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"p${n++}","resourceVersion":"${n}"}}}\n`;
      out.push(...packet("server", 0x18, text(`${line.length.toString(16)}\r\n${line}\r\n`)));
    }
    return Uint8Array.from(out);
  };
  let first = true;
  const source = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(first ? Uint8Array.from(start) : period());
      first = false;
    },
  }, { highWaterMark: 0 });
  return { source, eventsPerPeriod };
}

test("decodeCapture: an endless capture of a watch runs in bounded memory, its events coming as it is read", async () => {
  const { source } = endlessWatchCapture();
  const reader = decodeCapture(source).getReader();
  const heap: number[] = [];
  let events = 0;
  for (let round = 0; round < 6; round++) {
    for (let k = 0; k < 10_000;) {
      const { value } = await reader.read();
      assert.ok(value !== undefined);
      if (value.kind === "event") {
        k++;
        events++;
      }
    }
    collectGarbage();
    heap.push(process.memoryUsage().heapUsed);
  }
  await reader.cancel();
  assert.equal(events, 60_000);
  const growth = heap[heap.length - 1] - heap[1];
  assert.ok(growth < 16 * 1024 * 1024, `heap grew by ${growth} bytes (${heap.join(", ")})`);
});
