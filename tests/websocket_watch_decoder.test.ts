/**
 * Kubernetes watches over WebSocket to typed events: the recorded kube-apiserver connections of
 * fixtures/kubernetes/websocket/ (JSON in text frames, protobuf in binary frames) decode to the events of the plain
 * HTTP watch of the same range, under any split; messages from a stream of them; and damage (a reserved bit, a masked
 * server frame, an oversized message, a cut, bad JSON, bad protobuf, CBOR) at the offending frame's offset, after the
 * events before it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { builtinDecoders } from "../src/codec/kubernetes/generated/all.ts";
import { KubernetesProtobufObject } from "../src/codec/kubernetes/protobuf_object.ts";
import { DecodeError } from "../src/errors.ts";
import type { WatchEvent } from "../src/events.ts";
import { WebSocketFrameDecoder } from "../src/transport/websocket/websocket_frame_decoder.ts";
import { WebSocketFrameDecoderStream } from "../src/transport/websocket/websocket_frame_decoder_stream.ts";
import type { WebSocketMessage } from "../src/transport/websocket/websocket_message.ts";
import { WebSocketWatchDecoder } from "../src/watch/websocket/websocket_watch_decoder.ts";
import {
  WebSocketWatchDecoderStream,
  type WebSocketWatchDecoderStreamOptions,
} from "../src/watch/websocket/websocket_watch_decoder_stream.ts";
import { WebSocketWatchEventDecoder } from "../src/watch/websocket/websocket_watch_event_decoder.ts";
import { WebSocketWatchEventDecoderStream } from "../src/watch/websocket/websocket_watch_event_decoder_stream.ts";
import { assertSplitInvariant, concat, drain, streamOf, utf8 } from "./_util.ts";

const dir = fileURLToPath(new URL("../fixtures/kubernetes/websocket/", import.meta.url));
const read = (name: string) => new Uint8Array(readFileSync(dir + name));
const JSON_WIRE = read("configmaps-json.s2c.bin");
const PROTOBUF_WIRE = read("configmaps-protobuf.s2c.bin");
/** The body of the plain HTTP watch of the same range, as the server sent it, each line parsed: what both must give. */
const EXPECTED: unknown[] = new TextDecoder().decode(read("configmaps-http.body.ndjson")).trim().split("\n").map((l) =>
  JSON.parse(l)
);

const plain = (events: WatchEvent<unknown>[]) => JSON.parse(JSON.stringify(events));
const FULL = { protobuf: { decoders: builtinDecoders } };

const decodeWith = (options: WebSocketWatchDecoderStreamOptions = {}) => (source: ReadableStream<Uint8Array>) =>
  source.pipeThrough(new WebSocketWatchDecoderStream(options));

/** The messages of `wire` (server frames), for their offsets. */
function messagesOf(wire: Uint8Array): WebSocketMessage[] {
  const out: WebSocketMessage[] = [];
  const decoder = new WebSocketFrameDecoder({ sender: "server" });
  decoder.push(wire, (m) => out.push(m));
  decoder.finish();
  return out;
}

/** Builds a server frame (unmasked) or a client one (masked with `mask`). */
function frame(opcode: number, payload: Uint8Array, mask?: number[]): Uint8Array {
  const n = payload.length;
  const head = n < 126 ? [0x80 | opcode, n] : [0x80 | opcode, 126, n >> 8, n & 255];
  if (mask === undefined) return concat([Uint8Array.from(head), payload]);
  head[1] |= 0x80;
  return concat([Uint8Array.from([...head, ...mask]), payload.map((b, i) => b ^ mask[i & 3])]);
}

test("websocket watch: the recorded JSON watch decodes to the HTTP watch's events, under any split", async () => {
  assert.equal(EXPECTED.length, 6);
  const { values, error } = await assertSplitInvariant(JSON_WIRE, decodeWith(), { runs: 20, normalize: plain });
  assert.equal(error, undefined);
  assert.deepEqual(plain(values), EXPECTED);
});

test("websocket watch: the recorded protobuf watch decodes to the same events (built-in kinds in full)", async () => {
  const { values, error } = await assertSplitInvariant(PROTOBUF_WIRE, decodeWith(FULL), { runs: 20, normalize: plain });
  assert.equal(error, undefined);
  assert.deepEqual(plain(values), EXPECTED);
  // Metadata mode: the same metadata, the rest kept as bytes.
  const metadata = await drain(decodeWith({ protobuf: { mode: "metadata" } })(streamOf([PROTOBUF_WIRE])));
  assert.ok(metadata.values.every((e) => e.object instanceof KubernetesProtobufObject));
  assert.deepEqual(
    metadata.values.map((e) => plain([e.object.metadata as WatchEvent])[0]),
    EXPECTED.map((e) => (e as { object: { metadata: unknown } }).object.metadata),
  );
});

test("websocket watch: the close frame and every message are told; the bare decoder gives the same", () => {
  const seen: string[] = [];
  const decoder = new WebSocketWatchDecoder({ ...FULL, onMessage: (m) => seen.push(m.kind) });
  const events: WatchEvent[] = [];
  for (let i = 0; i < PROTOBUF_WIRE.length; i += 100) {
    decoder.push(PROTOBUF_WIRE.slice(i, i + 100), (e) => events.push(e));
  }
  decoder.finish();
  assert.deepEqual(plain(events), EXPECTED);
  assert.deepEqual(seen, [...EXPECTED.map(() => "binary"), "close"]);
  assert.equal(decoder.close?.code, 1000);
  assert.equal(decoder.offset, PROTOBUF_WIRE.length);
});

test("websocket watch: messages from a frame stream, and from a runtime's WebSocket (text and bytes)", async () => {
  const events = await drain(
    streamOf([JSON_WIRE]).pipeThrough(new WebSocketFrameDecoderStream({ sender: "server" })).pipeThrough(
      new WebSocketWatchEventDecoderStream(),
    ),
  );
  assert.deepEqual(plain(events.values), EXPECTED);
  const decoder = new WebSocketWatchEventDecoder(FULL);
  const texts = messagesOf(JSON_WIRE).flatMap((m) => m.kind === "text" ? [m.text] : []);
  const binaries = messagesOf(PROTOBUF_WIRE).flatMap((m) => m.kind === "binary" ? [m.bytes] : []);
  assert.deepEqual(plain(texts.map((t) => decoder.decodeText(t))), EXPECTED);
  assert.deepEqual(plain(binaries.map((b) => decoder.decodeBinary(b))), EXPECTED);
});

test("websocket watch: a client's masked frames decode the same (sender: client)", async () => {
  const messages = messagesOf(JSON_WIRE).filter((m) => m.kind === "text");
  const masked = concat(messages.map((m, i) => frame(1, m.bytes, [i, 0x55, 0xaa, 7])));
  const { values, error } = await assertSplitInvariant(masked, decodeWith({ sender: "client" }), {
    runs: 10,
    normalize: plain,
  });
  assert.equal(error, undefined);
  assert.deepEqual(plain(values), EXPECTED);
});

// ---------------------------------------------------------------------------------------------------------------
// Damage

interface Case {
  name: string;
  wire: Uint8Array;
  options?: WebSocketWatchDecoderStreamOptions;
  code: string;
  offset: number;
  /** Events before the fault. */
  before: number;
}

function damaged(): Case[] {
  const json = messagesOf(JSON_WIRE);
  const pb = messagesOf(PROTOBUF_WIRE);
  const edit = (wire: Uint8Array, at: number, change: (b: number) => number) => {
    const copy = wire.slice();
    copy[at] = change(copy[at]);
    return copy;
  };
  const third = json[2].offset;
  const largest = Math.max(...json.map((m) => m.bytes.length));
  const largestAt = json.findIndex((m) => m.bytes.length === largest);
  const badJson = frame(1, utf8('{"type":"ADDED","object":'));
  const unknownType = frame(1, utf8('{"type":"RENAMED","object":{}}'));
  const cbor = frame(2, Uint8Array.of(0xd9, 0xd9, 0xf7, 0xa0));
  // A protobuf event whose object field is cut: its length says more than there is.
  const badProtobuf = frame(2, Uint8Array.of(0x0a, 5, 0x41, 0x44, 0x44, 0x45, 0x44, 0x12, 9, 0x0a));
  const upTo = (k: number) => JSON_WIRE.subarray(0, json[k].offset);
  return [
    {
      name: "RSV1 set on the third frame",
      wire: edit(JSON_WIRE, third, (b) => b | 0x40),
      code: "FRAME_INVALID",
      offset: third,
      before: 2,
    },
    {
      name: "a masked server frame (the third)",
      wire: edit(JSON_WIRE, third + 1, (b) => b | 0x80),
      code: "FRAME_INVALID",
      offset: third,
      before: 2,
    },
    {
      name: "a message over maxEventBytes",
      wire: JSON_WIRE,
      options: { maxEventBytes: largest - 1 },
      code: "MESSAGE_TOO_LARGE",
      offset: json[largestAt].offset,
      before: largestAt,
    },
    {
      name: "a cut inside the protobuf watch's fourth frame",
      wire: PROTOBUF_WIRE.subarray(0, pb[3].offset + 10),
      options: FULL,
      code: "TRUNCATED",
      offset: pb[3].offset,
      before: 3,
    },
    {
      name: "a text message that is not JSON",
      wire: concat([upTo(3), badJson]),
      code: "JSON_INVALID",
      offset: json[3].offset,
      before: 3,
    },
    {
      name: "an unknown event type",
      wire: concat([upTo(1), unknownType]),
      code: "EVENT_TYPE_UNKNOWN",
      offset: json[1].offset,
      before: 1,
    },
    {
      name: "a CBOR binary message",
      wire: concat([upTo(2), cbor]),
      code: "MESSAGE_INVALID",
      offset: json[2].offset,
      before: 2,
    },
    {
      name: "a protobuf event cut inside",
      wire: concat([upTo(2), badProtobuf]),
      code: "MESSAGE_INVALID",
      offset: json[2].offset,
      before: 2,
    },
    {
      name: "a frame after the close frame",
      wire: concat([JSON_WIRE, frame(1, utf8("{}"))]),
      code: "TRAILING_DATA",
      offset: JSON_WIRE.length,
      before: 6,
    },
  ];
}

test("websocket watch: damage gives a typed error at the offending frame, after the events before it", async () => {
  for (const c of damaged()) {
    const { values, error } = await assertSplitInvariant(c.wire, decodeWith(c.options), { runs: 10, normalize: plain });
    assert.ok(error instanceof DecodeError, `${c.name}: ${error}`);
    assert.equal(error.code, c.code, `${c.name}: ${error.message}`);
    assert.equal(error.offset, c.offset, `${c.name}: ${error.message}`);
    assert.deepEqual(plain(values), EXPECTED.slice(0, c.before), c.name);
  }
});

test("websocket watch: a fault inside a protobuf message names its byte in the payload", () => {
  const decoder = new WebSocketWatchEventDecoder();
  const bad = Uint8Array.of(0x0a, 5, 0x41, 0x44, 0x44, 0x45, 0x44, 0x12, 9, 0x0a);
  assert.throws(
    () => decoder.push({ kind: "binary", bytes: bad, offset: 500 }, () => {}),
    (e) => e instanceof DecodeError && e.offset === 500 && /byte \d+ of the binary message's payload/.test(e.message),
  );
});
