/**
 * Benchmark 7: decoding a recorded etcd watch connection against a `node:http2` client consuming the same bytes from a
 * loopback socket.
 *
 * The recording (built here, deterministic): the server-to-client bytes of one etcd `Watch` call as grpc-go sends
 * them: SETTINGS, SETTINGS ACK, the response HEADERS (HPACK literals), then ~20 MB of gRPC-framed `WatchResponse`
 * messages (a `created` response, then responses of 1–128 events, ~1 KB values, some DELETEs with `prev_kv`), each
 * message in its own DATA frames of at most 16384 bytes, and trailers (`grpc-status: 0`) with END_STREAM. The
 * client-to-server side is the preface, SETTINGS and the request HEADERS.
 *
 * Cases:
 * - `nodeh2` (baseline): `http2.connect` to a loopback `node:net` server that reads the client's bytes until the
 *   request's HEADERS frame, then writes the recorded server bytes; the client's response stream is consumed with
 *   `data` events, counting bytes only (no gRPC or protobuf parsing). The client announces a 2^31-1 stream window and
 *   raises its connection window, so no WINDOW_UPDATE round trips are needed (the recording sends no more than that).
 *   In Node that client is nghttp2; Deno and Bun have their own implementations of `node:http2`.
 * - `ww-socket`: a `node:net` client writes the recorded client bytes to the same server and turns its socket into a
 *   `ReadableStream`, then `Http2ConnectionDecoderStream` → `body` → `GrpcMessageDecoderStream` →
 *   `EtcdWatchDecoderStream`, events counted: the same loopback transfer as the baseline plus full decoding.
 * - `ww-memory`: the same pipeline from the recorded bytes as 64 KiB reads of a pull-based `ReadableStream` (no socket).
 * - breakdown, from memory: `Http2ConnectionDecoderStream` alone (body drained) and with `GrpcMessageDecoderStream`
 *   (messages counted).
 * - kept, no streams: `decodeEtcdWatchResponse` of each message with every response kept until the next run ends (as a
 *   cache of etcd's keys keeps them), against the same not kept, in rounds of their own.
 *
 * Before any timing, an initial sync decodes every message and keeps and reads the responses, so that every case is
 * timed in a process whose first decoded objects were kept.
 *
 * Run: `node --expose-gc --import tsx bench/etcd.bench.ts [--quick]` (or `deno run -A`, `bun`).
 */
import http2 from "node:http2";
import net from "node:net";
import { EtcdWatchDecoderStream } from "../src/codec/etcd/etcd_watch_decoder_stream.ts";
import { decodeEtcdWatchResponse, type EtcdWatchResponse } from "../src/codec/etcd/watch_response.ts";
import { GrpcMessageDecoderStream } from "../src/framing/grpc_message_decoder_stream.ts";
import { Http2ConnectionDecoderStream } from "../src/transport/http2/connection_decoder_stream.ts";
import { Http2FrameDecoder } from "../src/transport/http2/frame_decoder.ts";
import { encodeHttp2Frame, encodeHttp2Frames } from "../src/transport/http2/frame_encoder.ts";
import { encodeWatchResponse, type EventSpec } from "../tests/peers/etcd_proto_encode.ts";
import { Rng, splitReads, streamOf } from "./data.ts";
import {
  type Case,
  type Check,
  emit,
  fmt,
  log,
  measure,
  median,
  pairedRatio,
  quick,
  runtimeInfo,
  type Section,
} from "./harness.ts";
import { concat, dataFrames, literalHeaderBlock } from "./http2_data.ts";

const started = performance.now();
const TARGET_BYTES = quick ? 3_000_000 : 20_000_000;
const OPTIONS = quick ? { warmup: 1, rounds: 3, minSampleMs: 5 } : { warmup: 3, rounds: 15, minSampleMs: 60 };
const encoder = new TextEncoder();

// ---- the recording ----

interface Recording {
  s2c: Uint8Array;
  c2s: Uint8Array;
  events: number;
  messages: number;
  grpcBytes: number;
  /** The `WatchResponse` messages, unframed. */
  messageBytes: Uint8Array[];
}

function buildRecording(): Recording {
  const rng = new Rng(7);
  const values: Uint8Array[] = [];
  for (let i = 0; i < 64; i++) {
    // A Kubernetes object in etcd: the "k8s\0" magic, then (here) ~1 KB of bytes standing for the protobuf object.
    values.push(
      encoder.encode(`k8s\u0000${rng.chars("abcdefghijklmnopqrstuvwxyz0123456789-./:", 800 + rng.int(400))}`),
    );
  }
  const header = (revision: number) => ({ clusterId: 0x1234_5678_9abcn, memberId: 0x42n, revision, raftTerm: 3 });
  const messages: Uint8Array[] = [encodeWatchResponse({ header: header(1000), watchId: 0, created: true })];
  let revision = 1000;
  let events = 0;
  let bytes = 0;
  while (bytes < TARGET_BYTES) {
    const n = 1 + rng.int(128);
    const list: EventSpec[] = [];
    for (let i = 0; i < n; i++) {
      revision++;
      const key = encoder.encode(`/registry/pods/ns-${rng.int(20)}/pod-${rng.suffix(5)}`);
      const value = rng.pick(values);
      if (rng.int(10) === 0) {
        list.push({
          type: "DELETE",
          kv: { key, modRevision: revision },
          prevKv: { key, createRevision: revision - 500, modRevision: revision - 1, version: 4, value },
        });
      } else {
        list.push({
          type: "PUT",
          kv: { key, createRevision: revision - rng.int(500), modRevision: revision, version: 1 + rng.int(9), value },
        });
      }
    }
    const message = encodeWatchResponse({ header: header(revision), watchId: 0, events: list });
    messages.push(message);
    events += n;
    bytes += message.length + 5;
  }
  const parts: Uint8Array[] = [
    encodeHttp2Frame({ type: "SETTINGS", streamId: 0, parameters: [[5, 16384]] }),
    encodeHttp2Frame({ type: "SETTINGS", streamId: 0, ack: true, parameters: [] }),
    encodeHttp2Frame({
      type: "HEADERS",
      streamId: 1,
      endHeaders: true,
      fragment: literalHeaderBlock([[":status", "200"], ["content-type", "application/grpc"]]),
    }),
  ];
  let grpcBytes = 0;
  for (const m of messages) {
    const framed = new Uint8Array(5 + m.length); // gRPC framing: flag 0 (not compressed), 4-byte length, message
    new DataView(framed.buffer).setUint32(1, m.length);
    framed.set(m, 5);
    grpcBytes += framed.length;
    parts.push(...dataFrames(1, framed, 16384, false));
  }
  parts.push(encodeHttp2Frame({
    type: "HEADERS",
    streamId: 1,
    endHeaders: true,
    endStream: true,
    fragment: literalHeaderBlock([["grpc-status", "0"], ["grpc-message", ""]]),
  }));
  const c2s = encodeHttp2Frames([
    { type: "SETTINGS", streamId: 0, parameters: [[2, 0], [4, 2 ** 31 - 1]] },
    {
      type: "HEADERS",
      streamId: 1,
      endHeaders: true,
      fragment: literalHeaderBlock([
        [":method", "POST"],
        [":scheme", "http"],
        [":path", "/etcdserverpb.Watch/Watch"],
        [":authority", "127.0.0.1:2379"],
        ["content-type", "application/grpc"],
        ["te", "trailers"],
      ]),
    },
  ], { preface: true });
  return { s2c: concat(parts), c2s, events, messages: messages.length, grpcBytes, messageBytes: messages };
}

const recording = buildRecording();
const reads = splitReads(recording.s2c);
log(
  `recording: ${recording.s2c.length} bytes, ${recording.messages} messages, ${recording.events} events, ` +
    `${reads.length} reads`,
);

// ---- the loopback server ----

/** Writes the recorded server bytes once the client's bytes include a HEADERS frame (its request). */
const server = net.createServer((socket) => {
  const frames = new Http2FrameDecoder({ preface: "expect" });
  let sent = false;
  socket.on("data", (chunk: Uint8Array) => {
    if (sent) return;
    frames.push(chunk, (frame) => {
      if (!sent && frame.type === "HEADERS") {
        sent = true;
        socket.write(recording.s2c);
      }
    });
  });
  socket.on("end", () => socket.end());
  socket.on("error", () => {});
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as net.AddressInfo).port;

function viaNodeHttp2(): Promise<number> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 2 ** 31 - 1 } });
    session.on("error", reject);
    session.on("connect", () => session.setLocalWindowSize(2 ** 31 - 1));
    const request = session.request({
      ":method": "POST",
      ":path": "/etcdserverpb.Watch/Watch",
      "content-type": "application/grpc",
      te: "trailers",
    });
    let n = 0;
    request.on("data", (chunk: Uint8Array) => {
      n += chunk.length;
    });
    request.on("error", reject);
    request.on("end", () => {
      session.close();
      resolve(n);
    });
    request.end();
  });
}

/** The server-to-client bytes of a loopback connection on which the recorded client bytes were sent. */
function socketStream(): ReadableStream<Uint8Array> {
  let socket: net.Socket;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      socket = net.connect(port, "127.0.0.1", () => socket.write(recording.c2s));
      socket.on("data", (chunk: Uint8Array) => {
        controller.enqueue(chunk);
        // The whole response has come once its length is reached; end the connection then.
        received += chunk.length;
        if (received === recording.s2c.length) {
          socket.end();
          controller.close();
        }
      });
      let received = 0;
      socket.on("error", (error) => controller.error(error));
    },
    cancel() {
      socket.destroy();
    },
  });
}

// ---- the pipelines ----

async function countEvents(wire: ReadableStream<Uint8Array>): Promise<number> {
  let events = 0;
  for await (const message of wire.pipeThrough(new Http2ConnectionDecoderStream())) {
    const responses = message.body.pipeThrough(new GrpcMessageDecoderStream()).pipeThrough(
      new EtcdWatchDecoderStream(),
    );
    for await (const response of responses) events += response.events.length;
  }
  return events;
}

async function countMessages(wire: ReadableStream<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const message of wire.pipeThrough(new Http2ConnectionDecoderStream())) {
    for await (const _ of message.body.pipeThrough(new GrpcMessageDecoderStream())) n++;
  }
  return n;
}

/** `decodeEtcdWatchResponse` of every message, no streams; `keep` receives each response. */
function decodeMessages(keep?: (response: EtcdWatchResponse) => void): number {
  let events = 0;
  for (const message of recording.messageBytes) {
    const response = decodeEtcdWatchResponse(message);
    events += response.events.length;
    keep?.(response);
  }
  return events;
}

/**
 * An initial sync: every response decoded and kept, then read, as a cache of etcd's keys keeps and reads them. It runs
 * before any timing, so that the process's first decoded objects survive. V8 pretenures what an allocation site (a
 * literal) makes once most of it survives, and in Node 20 does not go back: before the decoder made its objects without
 * literals (src/codec/value_constructors.ts), this left etcd decoding 1.5-2x slower in Node 20 and 1.6-1.8x in Node 26
 * and Deno afterwards (a probe decoding the messages alone). It throws if the events do not add up.
 */
function initialSync(): void {
  const kept: EtcdWatchResponse[] = [];
  const events = decodeMessages((response) => kept.push(response));
  let revisions = 0;
  let read = 0;
  for (const response of kept) {
    for (const event of response.events) {
      revisions += event.kv.modRevision > 0 ? 1 : 0;
      read += event.kv.key.length + (event.prevKv?.value.length ?? 0);
    }
  }
  if (events !== recording.events || revisions !== recording.events || read === 0) {
    throw new Error(`initial sync: ${events} events, ${revisions} with a revision, expected ${recording.events}`);
  }
}

async function countBodyBytes(wire: ReadableStream<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const message of wire.pipeThrough(new Http2ConnectionDecoderStream())) {
    for await (const chunk of message.body) n += chunk.length;
  }
  return n;
}

// ---- measuring ----

const notes: string[] = [];
const runtime = runtimeInfo();
let baselineWorks = true;
try {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const got = await Promise.race([
    viaNodeHttp2(),
    new Promise<number>((
      _,
      reject,
    ) => (timer = setTimeout(() => reject(new Error("no response within 20 s")), 20_000))),
  ]).finally(() => clearTimeout(timer));
  if (got !== recording.grpcBytes) throw new Error(`received ${got} bytes, expected ${recording.grpcBytes}`);
} catch (error) {
  baselineWorks = false;
  notes.push(`The node:http2 baseline does not work in ${runtime.name} ${runtime.version}: ${error}`);
  log(`node:http2 baseline failed: ${error}`);
}

const cases: Case[] = [
  ...(baselineWorks ? [{ name: "nodeh2", expect: recording.grpcBytes, run: viaNodeHttp2 }] : []),
  { name: "ww-socket", expect: recording.events, run: () => countEvents(socketStream()) },
  { name: "ww-memory", expect: recording.events, run: () => countEvents(streamOf(reads)) },
  { name: "h2-grpc", expect: recording.messages, run: () => countMessages(streamOf(reads)) },
  { name: "h2-only", expect: recording.grpcBytes, run: () => countBodyBytes(streamOf(reads)) },
];
initialSync();
const t = await measure(cases, OPTIONS);
server.close();
// The responses kept as a cache of etcd's keys keeps them, against the same not kept, in rounds of their own (a cache
// kept alive would change the heap every other case runs in).
let kept: EtcdWatchResponse[] = [];
const keptTimings = await measure([
  { name: "core-not-kept", expect: recording.events, run: () => Promise.resolve(decodeMessages()) },
  {
    name: "core-kept",
    expect: recording.events,
    run: () => {
      // Each run's responses kept until the end of the next run.
      const next: EtcdWatchResponse[] = [];
      const events = decodeMessages((response) => next.push(response));
      kept = next;
      return Promise.resolve(events);
    },
  },
], OPTIONS);
if (kept.length !== recording.messages) throw new Error(`kept ${kept.length} responses`);

const ms = (k: string) => median(t[k]);
const baselineName = runtime.name === "node"
  ? "`node:http2` client (nghttp2)"
  : `\`node:http2\` client of ${runtime.name}`;
const row = (text: string, k: string, withEvents: boolean): string[] => {
  const r = baselineWorks && k !== "nodeh2" ? pairedRatio(t, "nodeh2", k) : undefined;
  return [
    text,
    fmt.mbps(recording.s2c.length, ms(k)),
    withEvents ? fmt.rate(recording.events, ms(k)) : "",
    fmt.rate(recording.messages, ms(k)),
    k === "nodeh2" ? "1.00x" : r === undefined ? "n/a" : fmt.ratio(r),
  ];
};
const rows: string[][] = [];
if (baselineWorks) {
  rows.push(row(`baseline: ${baselineName} from a loopback socket, DATA bytes counted`, "nodeh2", false));
}
rows.push(
  row("watchwire from a loopback socket: HTTP/2 → gRPC → etcd `WatchResponse`, events counted", "ww-socket", true),
  row("watchwire from memory (64 KiB reads): HTTP/2 → gRPC → etcd, events counted", "ww-memory", true),
  row("breakdown, from memory: HTTP/2 → gRPC messages counted", "h2-grpc", false),
  row("breakdown, from memory: HTTP/2 only, body bytes counted", "h2-only", false),
);
const sections: Section[] = [{
  title: `${fmt.mb(recording.s2c.length)} MB server-to-client recording: ${recording.messages} messages, ` +
    `${recording.events} events`,
  note: "Throughput counts the recording's bytes; events/s where events are decoded. Ratio = case throughput / " +
    "baseline throughput in the same round.",
  columns: ["case", "MB/s (wire)", "events/s", "messages/s", "ratio vs node:http2 (IQR)"],
  rows,
}, {
  title: "Decoded responses kept: `decodeEtcdWatchResponse` of each message, no streams",
  note: "The recording's messages decoded one by one, after an initial sync of them all was kept and read (before " +
    "any timing), in rounds of their own. Kept: every run's responses kept until the next run ends, as a cache of " +
    "etcd's keys keeps them. Ratio = throughput kept / throughput not kept in the same round.",
  columns: ["case", "MB/s (messages)", "events/s", "µs per event", "ratio vs not kept (IQR)"],
  rows: [["not kept", "core-not-kept"], ["every response kept until the next run ends", "core-kept"]].map((
    [text, k],
  ) => [
    text,
    fmt.mbps(recording.grpcBytes, median(keptTimings[k])),
    fmt.rate(recording.events, median(keptTimings[k])),
    fmt.us(median(keptTimings[k]), recording.events),
    k === "core-not-kept" ? "1.00x" : fmt.ratio(pairedRatio(keptTimings, "core-not-kept", k)),
  ]),
}];
// No target for this comparison: the ratios are in the table only (a check would show as "met").
const checks: Check[] = [];

emit({
  benchmark: "etcd",
  runtime,
  quick,
  seconds: (performance.now() - started) / 1e3,
  params: {
    recordingBytes: recording.s2c.length,
    messages: recording.messages,
    events: recording.events,
    readSize: 65536,
    ...OPTIONS,
  },
  sections,
  checks,
  notes,
});
