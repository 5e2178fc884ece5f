/**
 * TCP reassembly: segments to each connection's two byte streams. Every segment here is built by the test (no capture
 * file): the addresses, ports, sequence numbers, flags and payloads below are made up for each case.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  TCP_ACK,
  TCP_FIN,
  TCP_RST,
  TCP_SYN,
  type TcpDirection,
  type TcpSegment,
  type TcpStreamEvent,
} from "../src/capture/records.ts";
import { TcpReassembler, type TcpReassemblerOptions } from "../src/capture/tcp/tcp_reassembler.ts";
import { TcpReassemblerStream } from "../src/capture/tcp/tcp_reassembler_stream.ts";
import { streamOffsetOf } from "../src/capture/tcp/sequence_offset.ts";
import { drain, streamOf, text, utf8 } from "./_util.ts";

/** The two ends of a connection. */
interface Endpoints {
  readonly client: string;
  readonly clientPort: number;
  readonly server: string;
  readonly serverPort: number;
}

const EP: Endpoints = { client: "10.0.0.1", clientPort: 40000, server: "10.0.0.2", serverPort: 443 };
const U32 = 2 ** 32;

/** What a built segment carries; `ack` sets the ACK flag. */
interface SegmentSpec {
  seq: number;
  ack?: number;
  flags?: number;
  data?: Uint8Array | string;
  missing?: number;
  at?: number;
  fileOffset?: number;
}

let nextFileOffset = 0;

/** A segment sent by `from` of `ep`, built here. */
function seg(from: TcpDirection, spec: SegmentSpec, ep: Endpoints = EP): TcpSegment {
  const client = from === "client";
  const data = spec.data === undefined
    ? new Uint8Array(0)
    : typeof spec.data === "string"
    ? utf8(spec.data)
    : spec.data;
  return {
    seconds: spec.at ?? 0,
    nanoseconds: 0,
    source: client ? ep.client : ep.server,
    sourcePort: client ? ep.clientPort : ep.serverPort,
    destination: client ? ep.server : ep.client,
    destinationPort: client ? ep.serverPort : ep.clientPort,
    sequence: spec.seq >>> 0,
    acknowledgment: (spec.ack ?? 0) >>> 0,
    flags: (spec.flags ?? 0) | (spec.ack !== undefined ? TCP_ACK : 0),
    payload: data,
    missingBytes: spec.missing ?? 0,
    fileOffset: spec.fileOffset ?? nextFileOffset++,
  };
}

/** SYN, SYN-ACK and ACK of a connection whose ISNs are `c` (client) and `s` (server). */
function handshake(c: number, s: number, ep: Endpoints = EP): TcpSegment[] {
  return [
    seg("client", { seq: c, flags: TCP_SYN }, ep),
    seg("server", { seq: s, ack: c + 1, flags: TCP_SYN }, ep),
    seg("client", { seq: c + 1, ack: s + 1 }, ep),
  ];
}

function reassemble(segments: TcpSegment[], options: TcpReassemblerOptions = {}): TcpStreamEvent[] {
  const reassembler = new TcpReassembler(options);
  const events: TcpStreamEvent[] = [];
  const emit = (event: TcpStreamEvent) => events.push(event);
  for (const segment of segments) reassembler.push(segment, emit);
  reassembler.finish(emit);
  return events;
}

/** One line per event, for assertions that read as the events do. */
function lines(events: TcpStreamEvent[]): string[] {
  return events.map((e) => {
    switch (e.kind) {
      case "open": {
        const c = e.connection;
        return `open ${c.id} ${c.roles} ${c.client}:${c.clientPort} ${c.server}:${c.serverPort}`;
      }
      case "data":
        return `data ${e.connection} ${e.direction} ${e.streamOffset} ${text(e.bytes)}`;
      case "gap":
        return `gap ${e.connection} ${e.direction} ${e.streamOffset}+${e.length}`;
      case "close":
        return `close ${e.connection} ${e.reason}`;
    }
  });
}

/** A direction's output: data and gaps in order, checked to follow on from offset 0 with no overlap and no hole. */
interface DirectionOutput {
  /** Stream offset -> byte, for the bytes delivered. */
  bytes: Map<number, number>;
  gapBytes: number;
  gaps: number;
  end: number;
}

/** Per connection id and direction, what was delivered; throws if a direction's events do not tile its stream. */
function outputs(events: TcpStreamEvent[]): Map<number, Record<TcpDirection, DirectionOutput>> {
  const result = new Map<number, Record<TcpDirection, DirectionOutput>>();
  const closed = new Set<number>();
  const fresh = (): DirectionOutput => ({ bytes: new Map(), gapBytes: 0, gaps: 0, end: 0 });
  for (const e of events) {
    if (e.kind === "open") {
      assert.ok(!result.has(e.connection.id), `connection ${e.connection.id} opened twice`);
      result.set(e.connection.id, { client: fresh(), server: fresh() });
      continue;
    }
    const id = e.connection;
    assert.ok(result.has(id) && !closed.has(id), `${e.kind} of connection ${id} outside open..close`);
    if (e.kind === "close") {
      closed.add(id);
      continue;
    }
    const out = result.get(id)![e.direction];
    assert.equal(e.streamOffset, out.end, `${e.kind} of ${id} ${e.direction} at ${e.streamOffset}, not ${out.end}`);
    if (e.kind === "data") {
      assert.ok(e.bytes.length > 0, "no empty data event");
      e.bytes.forEach((b, i) => out.bytes.set(e.streamOffset + i, b));
      out.end += e.bytes.length;
    } else {
      assert.ok(e.length > 0, "no empty gap");
      out.gapBytes += e.length;
      out.gaps++;
      out.end += e.length;
    }
  }
  for (const id of result.keys()) assert.ok(closed.has(id), `connection ${id} never closed`);
  return result;
}

/** The bytes of a direction that has no gap. */
function whole(out: DirectionOutput): string {
  assert.equal(out.gapBytes, 0);
  return text(Uint8Array.from(out.bytes.values()));
}

const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

test("tcp: a connection in order, from SYN to both FINs", () => {
  const segments = [
    ...handshake(1000, 5000),
    seg("client", { seq: 1001, ack: 5001, data: "GET / HTTP/1.1\r\n\r\n", at: 1, fileOffset: 100 }),
    seg("server", { seq: 5001, ack: 1019, data: "HTTP/1.1 200 OK\r\n", at: 2 }),
    seg("server", { seq: 5018, ack: 1019, data: "\r\nhi", at: 3 }),
    seg("client", { seq: 1019, ack: 5022, flags: TCP_FIN, at: 4 }),
    seg("server", { seq: 5022, ack: 1020, flags: TCP_FIN, at: 5 }),
    seg("client", { seq: 1020, ack: 5023, at: 6 }), // the last ACK: after the close, it opens nothing
  ];
  const events = reassemble(segments);
  assert.deepEqual(lines(events), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 1 client 0 GET / HTTP/1.1\r\n\r\n",
    "data 1 server 0 HTTP/1.1 200 OK\r\n",
    "data 1 server 17 \r\nhi",
    "close 1 fin",
  ]);
  const [open, first, , , close] = events;
  assert.deepEqual(open, {
    kind: "open",
    connection: {
      id: 1,
      client: "10.0.0.1",
      clientPort: 40000,
      server: "10.0.0.2",
      serverPort: 443,
      roles: "syn",
      seconds: 0,
      nanoseconds: 0,
    },
  });
  assert.ok(first.kind === "data");
  assert.equal(first.bytes, segments[3].payload, "a segment delivered as it came is its payload, not a copy");
  assert.equal(first.fileOffset, 100);
  assert.deepEqual(first.time, { seconds: 1, nanoseconds: 0 });
  assert.deepEqual(close, { kind: "close", connection: 1, reason: "fin", time: { seconds: 5, nanoseconds: 0 } });
});

test("tcp: every permutation of a few segments (with an overlapping retransmission) gives the same bytes", () => {
  const client = [
    seg("client", { seq: 101, data: "ab" }),
    seg("client", { seq: 103, data: "cde" }),
    seg("client", { seq: 106, data: "f" }),
    seg("client", { seq: 107, data: "ghij" }),
    seg("client", { seq: 104, data: "defg" }), // overlaps three of the others
    seg("client", { seq: 111, flags: TCP_FIN }),
  ];
  const permutations = (items: TcpSegment[]): TcpSegment[][] =>
    items.length <= 1
      ? [items]
      : items.flatMap((item, i) =>
        permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((p) => [item, ...p])
      );
  let count = 0;
  for (const order of permutations(client)) {
    const events = reassemble([
      seg("client", { seq: 100, flags: TCP_SYN }),
      seg("server", { seq: 900, ack: 101, flags: TCP_SYN }),
      ...order,
      seg("server", { seq: 901, flags: TCP_FIN }),
    ]);
    const out = outputs(events).get(1)!;
    assert.equal(whole(out.client), "abcdefghij", `order ${order.map((s) => s.sequence).join(" ")}`);
    assert.equal(out.client.end, 10);
    assert.deepEqual(lines(events.slice(-1)), ["close 1 fin"]);
    count++;
  }
  assert.equal(count, 720);
});

test("tcp: held and delivered bytes win over a retransmission that disagrees with them", () => {
  const events = reassemble([
    ...handshake(0, 0),
    seg("client", { seq: 1, data: "aaaa" }),
    seg("client", { seq: 9, data: "cccc" }), // held
    seg("client", { seq: 3, data: "XXXXXXXXXXXXXXXX" }), // 2..18: over delivered, hole, held, and new bytes
  ]);
  assert.deepEqual(lines(events), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 1 client 0 aaaa",
    "data 1 client 4 XXXX",
    "data 1 client 8 cccc",
    "data 1 client 12 XXXXXX",
    "close 1 end",
  ]);
});

test("tcp: sequence numbers wrap around 2^32; stream offsets go on past it", () => {
  // The ISN just below 2^32: the data crosses the wrap, in every order of its three segments.
  const isn = U32 - 6;
  const parts = [
    seg("client", { seq: isn + 1, data: "hel" }),
    seg("client", { seq: isn + 4, data: "lo wo" }), // 2^32 - 2 .. 2^32 + 3
    seg("client", { seq: isn + 9, data: "rld", flags: TCP_FIN }),
  ];
  for (const order of [[0, 1, 2], [2, 1, 0], [1, 0, 2], [0, 2, 1], [2, 0, 1], [1, 2, 0]]) {
    const out = outputs(reassemble([...handshake(isn, U32 - 1), ...order.map((i) => parts[i])])).get(1)!;
    assert.equal(whole(out.client), "hello world");
  }
  // Offsets past 2^32: the server acknowledges 2^30 bytes the capture never saw, five times over.
  const step = 2 ** 30;
  const segments = [...handshake(7, U32 - 100)];
  segments.push(seg("client", { seq: 8, data: "a" }));
  for (let k = 1; k <= 5; k++) segments.push(seg("server", { seq: U32 - 99, ack: 8 + k * step }));
  segments.push(seg("client", { seq: 8 + 5 * step, data: "z", flags: TCP_FIN }));
  segments.push(seg("server", { seq: U32 - 99, ack: 8 + 5 * step + 2, flags: TCP_FIN }));
  const events = reassemble(segments);
  // Each ACK proves all but its last sequence number (maybe a FIN): the gaps lag one byte behind until the "z".
  assert.deepEqual(lines(events), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 1 client 0 a",
    `gap 1 client 1+${step - 2}`,
    ...[1, 2, 3, 4].map((k) => `gap 1 client ${k * step - 1}+${step}`),
    `gap 1 client ${5 * step - 1}+1`,
    `data 1 client ${5 * step} z`,
    "close 1 fin",
  ]);
  assert.equal(outputs(events).get(1)!.client.end, 5 * step + 1);
  // And by snapshot-cut segments, each 2^30 long on the wire, in order.
  const cut = [...handshake(U32 - 1, 0)];
  for (let k = 0; k < 6; k++) cut.push(seg("client", { seq: k * step, data: "x", missing: step - 1 }));
  const out = outputs(reassemble(cut)).get(1)!.client;
  assert.equal(out.end, 6 * step);
  assert.deepEqual([...out.bytes.keys()], [0, 1, 2, 3, 4, 5].map((k) => k * step));
  assert.equal(out.gaps, 6);
});

test("tcp: stream offsets from sequence numbers, near the offset reached", () => {
  assert.equal(streamOffsetOf(5, 5, 0), 0);
  assert.equal(streamOffsetOf(4, 5, 0), -1);
  assert.equal(streamOffsetOf(2, U32 - 3, 0), 5);
  assert.equal(streamOffsetOf(10, 10, 3 * U32), 3 * U32);
  assert.equal(streamOffsetOf(9, 10, 3 * U32), 3 * U32 - 1);
  assert.equal(streamOffsetOf(10 + 2 ** 31 - 1, 10, 5 * U32), 5 * U32 + 2 ** 31 - 1);
  assert.equal(streamOffsetOf(10 + 2 ** 31, 10, 5 * U32), 5 * U32 - 2 ** 31);
});

test("tcp: a capture that starts mid-connection: roles guessed by port, streams from the first byte seen", () => {
  const ep = { client: "fd00::1", clientPort: 51000, server: "fd00::2", serverPort: 2379 };
  const events = reassemble([
    seg("client", { seq: 7000, ack: 9000 }, ep), // a lone ACK opens nothing
    seg("server", { seq: 9000, ack: 7000, data: "pong", at: 3 }, ep),
    seg("client", { seq: 7000, ack: 9004, data: "ping" }, ep),
    seg("client", { seq: 6998, ack: 9004, data: "..pi" }, ep), // before the first byte seen: only "pi" again
    seg("client", { seq: 7004, ack: 9004, flags: TCP_FIN }, ep),
    seg("server", { seq: 9004, ack: 7005, flags: TCP_FIN }, ep),
  ]);
  assert.deepEqual(lines(events), [
    "open 1 guessed fd00::1:51000 fd00::2:2379",
    "data 1 server 0 pong",
    "data 1 client 0 ping",
    "close 1 fin",
  ]);
  assert.ok(events[0].kind === "open");
  assert.equal(events[0].connection.seconds, 3);
  // The side on the lower port is the server, whichever sent first; equal ports: the first destination.
  const low = reassemble([seg("client", { seq: 1, data: "x" }, { ...ep, clientPort: 80, serverPort: 8080 })]);
  assert.deepEqual(lines(low)[0], "open 1 guessed fd00::2:8080 fd00::1:80");
  const equal = reassemble([seg("server", { seq: 1, data: "x" }, { ...ep, clientPort: 7, serverPort: 7 })]);
  assert.deepEqual(lines(equal)[0], "open 1 guessed fd00::2:7 fd00::1:7");
});

test("tcp: a SYN-ACK whose SYN was missed opens the connection, its sender the server", () => {
  const events = reassemble([
    seg("server", { seq: 300, ack: 51, flags: TCP_SYN }),
    seg("client", { seq: 51, ack: 301, data: "hello" }),
    seg("client", { seq: 50, flags: TCP_SYN }), // the SYN, late: a retransmission of this connection's
    seg("server", { seq: 301, ack: 56, data: "world" }),
  ]);
  assert.deepEqual(lines(events), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 1 client 0 hello",
    "data 1 server 0 world",
    "close 1 end",
  ]);
});

test("tcp: TCP Fast Open: a SYN's payload is data at offset 0", () => {
  const events = reassemble([
    seg("client", { seq: 41, flags: TCP_SYN, data: "GET" }),
    seg("server", { seq: 9, ack: 45, flags: TCP_SYN, data: "ok" }),
    seg("client", { seq: 41, flags: TCP_SYN, data: "GET" }), // retransmitted SYN: nothing new
    seg("client", { seq: 45, ack: 12, data: " /" }),
  ]);
  assert.deepEqual(lines(events), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 1 client 0 GET",
    "data 1 server 0 ok",
    "data 1 client 3  /",
    "close 1 end",
  ]);
});

test("tcp: port reuse: a SYN with another ISN closes the old connection ('reused') and opens one", () => {
  const events = reassemble([
    ...handshake(100, 200),
    seg("client", { seq: 101, data: "one" }),
    seg("client", { seq: 106, data: "held" }), // a hole at 3..5: delivered with a gap when the connection ends
    seg("client", { seq: 100, flags: TCP_SYN }), // its own SYN again: no reuse
    seg("client", { seq: 7777, flags: TCP_SYN }),
    seg("server", { seq: 8888, ack: 7778, flags: TCP_SYN }),
    seg("client", { seq: 7778, data: "two" }),
  ]);
  assert.deepEqual(lines(events), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 1 client 0 one",
    "gap 1 client 3+2",
    "data 1 client 5 held",
    "close 1 reused",
    "open 2 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 2 client 0 two",
    "close 2 end",
  ]);
  // A SYN-ACK with another ISN from a server already heard: reuse too (the new SYN was missed).
  const synAck = reassemble([
    ...handshake(100, 200),
    seg("server", { seq: 1234, ack: 4000, flags: TCP_SYN }),
    seg("client", { seq: 4000, data: "x" }),
  ]);
  assert.deepEqual(lines(synAck), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "close 1 reused",
    "open 2 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 2 client 0 x",
    "close 2 end",
  ]);
  // After a close by FIN, a new SYN on the same ports is simply a new connection.
  const after = reassemble([
    ...handshake(100, 200),
    seg("client", { seq: 101, flags: TCP_FIN }),
    seg("server", { seq: 201, flags: TCP_FIN }),
    seg("client", { seq: 500, flags: TCP_SYN }),
  ]);
  assert.deepEqual(lines(after), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "close 1 fin",
    "open 2 syn 10.0.0.1:40000 10.0.0.2:443",
    "close 2 end",
  ]);
});

test("tcp: FIN waits for the bytes before it; RST delivers what it can and closes", () => {
  const fin = reassemble([
    ...handshake(0, 0),
    seg("client", { seq: 1, data: "ab" }),
    seg("client", { seq: 5, data: "ef", flags: TCP_FIN }),
    seg("server", { seq: 1, flags: TCP_FIN }),
    seg("client", { seq: 3, data: "cd", at: 9, fileOffset: 42 }),
    seg("client", { seq: 3, data: "cdef" }), // after the close: opens nothing
  ]);
  assert.deepEqual(lines(fin), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 1 client 0 ab",
    "data 1 client 2 cd",
    "data 1 client 4 ef",
    "close 1 fin",
  ]);
  const released = fin[3];
  assert.ok(released.kind === "data");
  assert.equal(released.fileOffset, 42, "held bytes carry the segment that made them deliverable");
  assert.deepEqual(released.time, { seconds: 9, nanoseconds: 0 });

  const rst = reassemble([
    ...handshake(0, 0),
    seg("client", { seq: 1, data: "ab" }),
    seg("client", { seq: 5, data: "ef" }),
    seg("server", { seq: 1, ack: 3, flags: TCP_RST, data: "reason" }), // an RST's payload is not data
    seg("client", { seq: 7, data: "gh" }), // in flight when the RST went: dropped
    seg("server", { seq: 1, flags: TCP_RST }),
  ]);
  assert.deepEqual(lines(rst), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 1 client 0 ab",
    "gap 1 client 2+2",
    "data 1 client 4 ef",
    "close 1 rst",
  ]);
  // Bytes held past a FIN that comes later are dropped, and none past it are taken.
  const past = reassemble([
    ...handshake(0, 0),
    seg("client", { seq: 2, data: "bcdef" }),
    seg("client", { seq: 9, data: "zz" }),
    seg("client", { seq: 4, flags: TCP_FIN }),
    seg("client", { seq: 1, data: "abcdefgh" }),
    seg("server", { seq: 1, flags: TCP_FIN }),
  ]);
  assert.deepEqual(lines(past).slice(1), ["data 1 client 0 a", "data 1 client 1 bc", "close 1 fin"]);
  // A FIN seen with a hole before it: at the end, the hole is a gap up to the FIN.
  const hole = reassemble([...handshake(0, 0), seg("client", { seq: 4, data: "d", flags: TCP_FIN })]);
  assert.deepEqual(lines(hole).slice(1), ["gap 1 client 0+3", "data 1 client 3 d", "close 1 end"]);
});

test("tcp: a snapshot-cut segment delivers what was captured, and a gap for the rest", () => {
  const events = reassemble([
    ...handshake(0, 0),
    seg("client", { seq: 1, data: "head", missing: 6 }),
    seg("client", { seq: 11, data: "next" }),
    seg("client", { seq: 19, data: "late", missing: 2 }), // out of order: held with its lost part
    seg("client", { seq: 15, data: "more" }),
    seg("client", { seq: 23, data: "XYZ" }), // two bytes over the lost part, which stays lost, then one byte
  ]);
  assert.deepEqual(lines(events), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 1 client 0 head",
    "gap 1 client 4+6",
    "data 1 client 10 next",
    "data 1 client 14 more",
    "data 1 client 18 late",
    "gap 1 client 22+2",
    "data 1 client 24 Z",
    "close 1 end",
  ]);
  // A FIN after a cut payload comes after its lost bytes.
  const fin = reassemble([
    ...handshake(0, 0),
    seg("client", { seq: 1, data: "ab", missing: 3, flags: TCP_FIN }),
    seg("server", { seq: 1, flags: TCP_FIN }),
  ]);
  assert.deepEqual(lines(fin).slice(1), ["data 1 client 0 ab", "gap 1 client 2+3", "close 1 fin"]);
});

test("tcp: an ACK for bytes never seen proves they were sent: a gap, then what follows", () => {
  const events = reassemble([
    ...handshake(1000, 0),
    seg("client", { seq: 1001, data: "aaaa" }),
    seg("client", { seq: 1009, data: "cccc" }),
    seg("client", { seq: 1017, data: "eeee" }),
    seg("server", { seq: 1, ack: 1005 }), // nothing unseen yet
    seg("server", { seq: 1, ack: 1013, at: 7 }), // 1005..1009 never came
    seg("client", { seq: 1005, data: "bbbb" }), // too late: already a gap
    seg("server", { seq: 1, ack: 1030 }), // 1013..1017 and 1021..1029
    seg("client", { seq: 1030, data: "f", flags: TCP_FIN }),
    seg("server", { seq: 1, ack: 1100, flags: TCP_FIN }), // past the FIN: nothing beyond it
  ]);
  assert.deepEqual(lines(events), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 1 client 0 aaaa",
    "gap 1 client 4+4",
    "data 1 client 8 cccc",
    "gap 1 client 12+4",
    "data 1 client 16 eeee",
    "gap 1 client 20+8", // not 28: the last sequence number an ACK covers may be a FIN (here it was not)
    "gap 1 client 28+1",
    "data 1 client 29 f",
    "close 1 fin",
  ]);
  const gap = events[2];
  assert.ok(gap.kind === "gap");
  assert.deepEqual(gap.time, { seconds: 7, nanoseconds: 0 });
  // Before a direction's first segment is seen, the other side's ACKs of it say nothing.
  const guessed = reassemble([
    seg("client", { seq: 50, ack: 7000, data: "q" }),
    seg("server", { seq: 7000, data: "r" }),
  ]);
  assert.deepEqual(lines(guessed).slice(1), ["data 1 client 0 q", "data 1 server 0 r", "close 1 end"]);
});

test("tcp: maxBufferedBytes and maxBufferedSegments: over them, the first hole is given up", () => {
  const segments = [
    ...handshake(0, 0),
    seg("client", { seq: 5, data: "4444" }),
    seg("client", { seq: 9, data: "8888" }),
    seg("client", { seq: 13, data: "cccc" }), // 12 bytes held: over 10
    seg("client", { seq: 1, data: "0000" }), // too late
    seg("client", { seq: 22, data: "l" }),
  ];
  assert.deepEqual(lines(reassemble(segments, { maxBufferedBytes: 10 })).slice(1), [
    "gap 1 client 0+4",
    "data 1 client 4 4444",
    "data 1 client 8 8888",
    "data 1 client 12 cccc",
    "gap 1 client 16+5",
    "data 1 client 21 l",
    "close 1 end",
  ]);
  assert.deepEqual(lines(reassemble(segments, { maxBufferedSegments: 1 })).slice(1, 3), [
    "gap 1 client 0+4",
    "data 1 client 4 4444",
  ]);
  // maxBufferedBytes 0: nothing waits.
  assert.deepEqual(lines(reassemble(segments, { maxBufferedBytes: 0 })).slice(1, 3), [
    "gap 1 client 0+4",
    "data 1 client 4 4444",
  ]);
  // Within the default: everything waits for the first bytes.
  assert.deepEqual(lines(reassemble(segments)).slice(1), [
    "data 1 client 0 0000",
    "data 1 client 4 4444",
    "data 1 client 8 8888",
    "data 1 client 12 cccc",
    "gap 1 client 16+5",
    "data 1 client 21 l",
    "close 1 end",
  ]);
  for (const bad of [-1, 1.5, NaN]) {
    assert.throws(() => new TcpReassembler({ maxBufferedBytes: bad }), RangeError);
    assert.throws(() => new TcpReassembler({ maxBufferedSegments: bad }), RangeError);
  }
  assert.throws(() => new TcpReassembler({ maxConnections: 0 }), RangeError);
});

test("tcp: maxConnections: opening one more closes the least recently active one ('end')", () => {
  const a = { ...EP, clientPort: 1001 };
  const b = { ...EP, clientPort: 1002 };
  const c = { ...EP, clientPort: 1003 };
  const events = reassemble([
    ...handshake(0, 0, a),
    ...handshake(0, 0, b),
    seg("client", { seq: 1, data: "a1" }, a),
    seg("client", { seq: 4, data: "b2", fileOffset: 77 }, b), // held: b is now the most recently active
    seg("client", { seq: 3, data: "a2" }, a), // a is again
    seg("client", { seq: 1, data: "c1", at: 5 }, c), // closes b, delivering what it holds
    seg("client", { seq: 6, data: "b3" }, b), // b again: a new connection, guessed (a is closed for it)
  ], { maxConnections: 2 });
  assert.deepEqual(lines(events), [
    "open 1 syn 10.0.0.1:1001 10.0.0.2:443",
    "open 2 syn 10.0.0.1:1002 10.0.0.2:443",
    "data 1 client 0 a1",
    "data 1 client 2 a2",
    "gap 2 client 0+3",
    "data 2 client 3 b2",
    "close 2 end",
    "open 3 guessed 10.0.0.1:1003 10.0.0.2:443",
    "data 3 client 0 c1",
    "close 1 end",
    "open 4 guessed 10.0.0.1:1002 10.0.0.2:443",
    "data 4 client 0 b3",
    "close 3 end",
    "close 4 end",
  ]);
  const flushed = events[5];
  assert.ok(flushed.kind === "data");
  assert.equal(flushed.fileOffset, 77, "closed for another connection: its bytes keep their own file offset");
  assert.deepEqual(flushed.time, { seconds: 5, nanoseconds: 0 });
});

test("tcp: many connections, interleaved: each as if alone", () => {
  const events = reassemble(
    Array.from({ length: 200 }, (_, k) => {
      const ep = { ...EP, client: `10.1.${k >> 8}.${k & 255}`, clientPort: 30000 + k };
      return [
        ...handshake(k * 1000, U32 - k, ep),
        seg("client", { seq: k * 1000 + 1, data: `request ${k}` }, ep),
        seg("server", { seq: U32 - k + 1, data: `response ${k}`, flags: TCP_FIN }, ep),
        seg("client", { seq: k * 1000 + 1 + `request ${k}`.length, flags: TCP_FIN }, ep),
      ];
    }).flatMap((segments, k) => segments.map((s, i) => ({ s, key: i * 1000 + ((k * 7919) % 1000) })))
      .sort((x, y) => x.key - y.key).map((x) => x.s),
  );
  const out = outputs(events);
  assert.equal(out.size, 200);
  const opens = events.filter((e) => e.kind === "open");
  opens.forEach((e, i) => assert.equal(e.connection.id, i + 1, "numbered in order of first sight"));
  for (const e of opens) {
    const k = e.connection.clientPort - 30000;
    assert.equal(whole(out.get(e.connection.id)!.client), `request ${k}`);
    assert.equal(whole(out.get(e.connection.id)!.server), `response ${k}`);
  }
  assert.equal(events.filter((e) => e.kind === "close" && e.reason === "fin").length, 200);
});

test("tcp: in order, every data event is its segment's payload (no copy, nothing held)", () => {
  const segments = [...handshake(U32 - 1000, 0)];
  const payloads: Uint8Array[] = [];
  let seq = U32 - 999;
  for (let i = 0; i < 20_000; i++) {
    const payload = Uint8Array.of(i & 255, (i >> 8) & 255, 7);
    payloads.push(payload);
    segments.push(seg("client", { seq, ack: 1, data: payload }));
    seq += payload.length;
  }
  const data = reassemble(segments).filter((e) => e.kind === "data");
  assert.equal(data.length, payloads.length);
  data.forEach((e, i) => {
    assert.equal(e.bytes, payloads[i]);
    assert.equal(e.streamOffset, 3 * i);
  });
});

// ---- Random streams -------------------------------------------------------------------------------------------------

/** A small seeded PRNG (mulberry32): values in [0, 1). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / U32;
  };
}

const DIRECTION = fc.record({
  data: fc.uint8Array({ maxLength: 500 }),
  cuts: fc.array(fc.integer({ min: 1, max: 499 }), { maxLength: 24 }),
  retransmissions: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 80 })), { maxLength: 6 }),
  isn: fc.oneof(fc.constant(U32 - 1), fc.constant(U32 - 200), fc.constant(0), fc.nat({ max: U32 - 1 })),
  finApart: fc.boolean(),
});
type DirectionPlan = typeof DIRECTION extends fc.Arbitrary<infer T> ? T : never;

const SCRIPT = fc.record({
  client: DIRECTION,
  server: DIRECTION,
  seed: fc.integer(),
  window: fc.integer({ min: 0, max: 6 }),
  duplicates: fc.integer({ min: 0, max: 6 }),
});
type Script = typeof SCRIPT extends fc.Arbitrary<infer T> ? T : never;

/** One piece of a direction's stream, as a segment will carry it. */
interface Piece {
  from: TcpDirection;
  start: number;
  end: number;
  fin: boolean;
  dropped: boolean;
}

/** A direction's stream cut at `cuts`, plus retransmissions of random ranges (overlapping the cuts), and its FIN. */
function piecesOf(from: TcpDirection, plan: DirectionPlan): Piece[] {
  const n = plan.data.length;
  const points = [...new Set(plan.cuts.filter((c) => c < n))].sort((a, b) => a - b);
  const pieces: Piece[] = [];
  let at = 0;
  for (const p of [...points, n]) {
    if (p > at) pieces.push({ from, start: at, end: p, fin: false, dropped: false });
    at = p;
  }
  if (plan.finApart || pieces.length === 0) pieces.push({ from, start: n, end: n, fin: true, dropped: false });
  else pieces[pieces.length - 1].fin = true;
  for (const [s, length] of plan.retransmissions) {
    const start = s % (n + 1);
    const end = Math.min(n, start + length);
    if (end > start) pieces.push({ from, start, end, fin: false, dropped: false });
  }
  return pieces;
}

/**
 * A connection's segments: the handshake, then both directions' pieces (and duplicates) reordered within `window`,
 * some dropped when `dropRate` > 0. Each segment acknowledges the other direction's bytes seen so far in a row
 * (`acks: "seen"`, so no ACK proves a loss), or those sent so far, dropped ones too (`"sent"`).
 */
function segmentsOf(
  script: Script,
  options: { ep?: Endpoints; dropRate?: number; acks?: "seen" | "sent"; handshake?: boolean } = {},
): { segments: TcpSegment[]; pieces: Piece[] } {
  const { ep = EP, dropRate = 0, acks = "seen" } = options;
  const rng = random(script.seed);
  const pieces = [...piecesOf("client", script.client), ...piecesOf("server", script.server)];
  for (let k = 0; k < script.duplicates && pieces.length > 0; k++) {
    pieces.push({ ...pieces[Math.floor(rng() * pieces.length)] });
  }
  const order = pieces.map((piece, i) => ({ piece, key: i + rng() * script.window }))
    .sort((x, y) => x.key - y.key).map((x) => x.piece);
  for (const piece of order) piece.dropped = rng() < dropRate;
  const plans = { client: script.client, server: script.server };
  // Bytes (and the FIN, one past them) of each direction known to the other side so far.
  const known = {
    client: new Uint8Array(script.client.data.length + 1),
    server: new Uint8Array(script.server.data.length + 1),
  };
  const prefix = { client: 0, server: 0 };
  const segments = options.handshake === false ? [] : [
    seg("client", { seq: script.client.isn, flags: TCP_SYN }, ep),
    seg("server", { seq: script.server.isn, ack: script.client.isn + 1, flags: TCP_SYN }, ep),
  ];
  for (const piece of order) {
    const from = piece.from;
    const other = from === "client" ? "server" : "client";
    if (!piece.dropped || acks === "sent") {
      known[from].fill(1, piece.start, piece.end + (piece.fin ? 1 : 0));
      while (prefix[from] < known[from].length && known[from][prefix[from]] === 1) prefix[from]++;
    }
    if (piece.dropped) continue;
    const plan = plans[from];
    segments.push(
      seg(from, {
        seq: plan.isn + 1 + piece.start,
        ack: plans[other].isn + 1 + prefix[other],
        flags: piece.fin ? TCP_FIN : 0,
        data: plan.data.slice(piece.start, piece.end),
        at: segments.length,
      }, ep),
    );
  }
  return { segments, pieces: order };
}

/** Asserts a direction's output against its stream: the bytes at their offsets, nothing past the end. */
function checkBytes(out: DirectionOutput, data: Uint8Array): void {
  assert.ok(out.end <= data.length, `output to ${out.end}, past the stream's ${data.length} bytes`);
  for (const [offset, byte] of out.bytes) assert.equal(byte, data[offset], `byte ${offset}`);
  assert.equal(out.bytes.size + out.gapBytes, out.end);
}

test("tcp: random streams, cut, duplicated, retransmitted with overlaps, reordered: the same bytes once, in order", () => {
  fc.assert(
    fc.property(SCRIPT, (script) => {
      const { segments } = segmentsOf(script);
      const events = reassemble(segments);
      const out = outputs(events).get(1)!;
      for (const direction of ["client", "server"] as const) {
        assert.equal(out[direction].gapBytes, 0);
        assert.ok(same(Uint8Array.from(out[direction].bytes.values()), script[direction].data));
      }
      assert.deepEqual(lines(events.slice(-1)), ["close 1 fin"]);
    }),
    { numRuns: 400 },
  );
});

/** No bound on bytes held out of order (the default), or a small one (where seen bytes may be given up). */
const BOUND = fc.option(fc.integer({ min: 0, max: 64 }), { nil: undefined });

test("tcp: random streams with segments dropped: the bytes around them, gaps where they were, lengths adding up", () => {
  fc.assert(
    fc.property(SCRIPT, fc.double({ min: 0.05, max: 0.5, noNaN: true }), fc.boolean(), BOUND, (...args) => {
      const [script, dropRate, sent, maxBufferedBytes] = args;
      const { segments, pieces } = segmentsOf(script, { dropRate, acks: sent ? "sent" : "seen" });
      const out = outputs(reassemble(segments, { maxBufferedBytes })).get(1)!;
      for (const direction of ["client", "server"] as const) {
        const data = script[direction].data;
        const o = out[direction];
        checkBytes(o, data);
        const mine = pieces.filter((p) => p.from === direction);
        const kept = new Uint8Array(data.length);
        const lost = new Uint8Array(data.length);
        for (const p of mine) (p.dropped ? lost : kept).fill(1, p.start, p.end);
        const keptEnd = Math.max(0, ...mine.filter((p) => !p.dropped && p.end > p.start).map((p) => p.end));
        if (mine.some((p) => p.fin && !p.dropped)) assert.equal(o.end, data.length, "a FIN seen: up to it");
        else assert.ok(o.end >= keptEnd);
        for (let i = 0; i < o.end; i++) {
          // Bytes no segment seen carried are gaps; bytes only seen segments carried are data. (With ACKs of
          // dropped segments, a byte a dropped and a later seen segment both carried may be a gap already; with a
          // bound on bytes held, a seen byte may come after its hole was given up.)
          if (!kept[i]) assert.ok(!o.bytes.has(i), `byte ${i} never seen, yet delivered`);
          if (kept[i] && (!lost[i] || !sent) && maxBufferedBytes === undefined) {
            assert.ok(o.bytes.has(i), `byte ${i} seen, yet not delivered`);
          }
        }
      }
    }),
    { numRuns: 400 },
  );
});

/** Events with the connection ids replaced by the client's port, and no times (a close at the end has the last). */
function perConnection(events: TcpStreamEvent[]): Map<number, unknown[]> {
  const ports = new Map<number, number>();
  const result = new Map<number, unknown[]>();
  for (const e of events) {
    if (e.kind === "open") {
      assert.ok(!result.has(e.connection.clientPort), "one connection per port in these scripts");
      ports.set(e.connection.id, e.connection.clientPort);
      result.set(e.connection.clientPort, [{ ...e.connection, id: 0, seconds: 0 }]);
      continue;
    }
    const port = ports.get(e.connection)!;
    const { time: _, ...rest } = e;
    result.get(port)!.push({
      ...rest,
      connection: 0,
      ...(e.kind === "data" ? { bytes: Array.from(e.bytes) } : {}),
    });
  }
  return result;
}

test("tcp: split invariance: any interleaving of connections gives each the same output as alone", async () => {
  let streamRuns = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(SCRIPT, fc.boolean(), fc.constantFrom(0, 0.2)), { minLength: 1, maxLength: 5 }),
      fc.array(fc.nat(), { maxLength: 600 }),
      async (scripts, picks) => {
        const alone = new Map<number, unknown[]>();
        const queues = scripts.map(([script, handshake, dropRate], k) => {
          const ep = { ...EP, clientPort: 20000 + k, server: k % 2 === 0 ? "10.0.0.2" : "10.9.9.9" };
          const { segments } = segmentsOf(script, { ep, dropRate, acks: "sent", handshake });
          for (const [port, events] of perConnection(reassemble(segments))) alone.set(port, events);
          return segments;
        });
        const merged: TcpSegment[] = [];
        for (let i = 0; queues.some((q) => q.length > 0); i++) {
          const waiting = queues.filter((q) => q.length > 0);
          merged.push(waiting[(picks[i] ?? 0) % waiting.length].shift()!);
        }
        const events = reassemble(merged);
        outputs(events);
        const together = perConnection(events);
        assert.deepEqual(
          [...together.entries()].sort((a, b) => a[0] - b[0]),
          [...alone.entries()].sort((a, b) => a[0] - b[0]),
        );
        if (streamRuns++ < 20) {
          const piped = await drain(streamOf(merged).pipeThrough(new TcpReassemblerStream()));
          assert.equal(piped.error, undefined);
          assert.deepEqual(piped.values, events);
        }
      },
    ),
    { numRuns: 150 },
  );
});

test("tcp: the stream stage gives what the decoder does", async () => {
  const segments = [...handshake(5, 6), seg("client", { seq: 8, data: "b" }), seg("client", { seq: 6, data: "a" })];
  const { values, error } = await drain(streamOf(segments).pipeThrough(new TcpReassemblerStream()));
  assert.equal(error, undefined);
  assert.deepEqual(lines(values), [
    "open 1 syn 10.0.0.1:40000 10.0.0.2:443",
    "data 1 client 0 a",
    "gap 1 client 1+1",
    "data 1 client 2 b",
    "close 1 end",
  ]);
  assert.throws(() => new TcpReassemblerStream({ maxConnections: -1 }), RangeError);
});
