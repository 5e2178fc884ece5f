/**
 * Watches over WebSocket in a capture: after a `101 Switching Protocols`, the server's frames are the watch's events
 * and the client's frames are `websocket` items. The connection is built by the test (tests/_capture_build.ts: one
 * plain TCP connection in a pcap), carrying the real kube-apiserver's recorded handshake and frames of
 * fixtures/kubernetes/websocket/; the events must be those of the plain HTTP watch of the same range.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { builtinDecoders } from "../src/codec/kubernetes/generated/all.ts";
import { decodeCapture } from "../src/watch/decode_capture.ts";
import type { CaptureItem } from "../src/watch/capture_item.ts";
import { tcpCapture } from "./_capture_build.ts";
import { runCli } from "../src/cli/main.ts";
import { bytewise, concat, streamOf, utf8 } from "./_util.ts";

const dir = fileURLToPath(new URL("../fixtures/kubernetes/websocket/", import.meta.url));
const read = (name: string) => new Uint8Array(readFileSync(dir + name));
const EXPECTED: unknown[] = new TextDecoder().decode(read("configmaps-http.body.ndjson")).trim().split("\n").map((l) =>
  JSON.parse(l)
);
const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

/** The request head and the 101 head of a recorded handshake. */
function handshake(format: "json" | "protobuf"): { request: Uint8Array; response: Uint8Array } {
  const text = new TextDecoder().decode(read(`configmaps-${format}.handshake.txt`));
  const at = text.indexOf("\r\n\r\n") + 4;
  return { request: utf8(text.slice(0, at)), response: utf8(text.slice(at)) };
}

/** A client frame (masked) with `opcode` and `payload`. */
function clientFrame(opcode: number, payload: Uint8Array, mask = [0x12, 0x34, 0x56, 0x78]): Uint8Array {
  return concat([
    Uint8Array.from([0x80 | opcode, 0x80 | payload.length, ...mask]),
    payload.map((b, i) => b ^ mask[i & 3]),
  ]);
}

/** The server's bytes in packets of at most 1,400 bytes. */
function packets(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += 1400) out.push(bytes.subarray(at, at + 1400));
  return out;
}

async function itemsOf(chunks: Uint8Array[]): Promise<CaptureItem[]> {
  const items: CaptureItem[] = [];
  for await (const item of decodeCapture(streamOf(chunks), { protobuf: { decoders: builtinDecoders } })) {
    items.push(item);
  }
  return items;
}

for (const format of ["json", "protobuf"] as const) {
  test(`capture: a WebSocket watch (${format}) after its 101 gives the HTTP watch's events, in any chunking`, async () => {
    const { request, response } = handshake(format);
    const ping = clientFrame(0x9, utf8("hi"));
    const close = clientFrame(0x8, Uint8Array.from([0x03, 0xe8])); // 1000
    const pcap = tcpCapture(
      [concat([request, ping, close])],
      packets(concat([response, read(`configmaps-${format}.s2c.bin`)])),
      [],
    );
    const items = await itemsOf([pcap]);
    const events = items.flatMap((i) => i.kind === "event" ? [plain(i.event)] : []);
    assert.deepEqual(events, EXPECTED);
    const path = "/api/v1/namespaces/ww-node-ws-uhgn8l/configmaps?watch=true&resourceVersion=628&timeoutSeconds=3";
    assert.ok(items.every((i) => i.kind !== "event" || (i.path === path && i.stream === 0)));
    assert.deepEqual(items.filter((i) => i.kind === "problem"), []);
    const websocket = items.flatMap((i) =>
      i.kind === "websocket"
        ? [
          `${i.direction} ${i.message} ${i.bytes}${
            i.code === undefined ? "" : ` ${i.code} ${JSON.stringify(i.reason)}`
          }`,
        ]
        : []
    );
    // The client's ping and close; the server's close frame (1000) after the events.
    assert.deepEqual(websocket.filter((w) => w.startsWith("client")), ["client ping 2", 'client close 2 1000 ""']);
    assert.ok(websocket.some((w) => /^server close \d+ 1000 /.test(w)), websocket.join(", "));
    const serverClose = items.findIndex((i) => i.kind === "websocket" && i.direction === "server");
    const lastEvent = items.map((i) => i.kind).lastIndexOf("event");
    assert.ok(serverClose > lastEvent, "the close frame after the events");
    const response101 = items.find((i) => i.kind === "response");
    assert.equal(response101?.kind === "response" && response101.status, 101);
    // Any chunking of the file, down to single bytes, gives the same items.
    const timeless = (list: CaptureItem[]) => JSON.stringify(list.map((i) => ({ ...i, time: undefined })));
    assert.equal(timeless(await itemsOf(bytewise(pcap))), timeless(items));
  });
}

test("capture: a server frame a WebSocket forbids (masked) is a problem after the events before it", async () => {
  const { request, response } = handshake("json");
  const wire = read("configmaps-json.s2c.bin");
  // The first frame as a client would send it (masked): RFC 6455 §5.1 forbids a server to mask.
  const masked = clientFrame(0x1, utf8("{}"));
  const pcap = tcpCapture([request], packets(concat([response, masked, wire])), []);
  const items = await itemsOf([pcap]);
  assert.equal(items.filter((i) => i.kind === "event").length, 0);
  const problems = items.flatMap((i) => i.kind === "problem" ? [i.message] : []);
  assert.equal(problems.length, 1);
  assert.match(problems[0], /WebSocket \(server\): .*mask.*\[FRAME_INVALID\]/);
});

test("watchwire decode: a capture of a WebSocket watch prints its events, then the close frames", async () => {
  const { request, response } = handshake("json");
  const close = clientFrame(0x8, Uint8Array.from([0x03, 0xe8]));
  const pcap = tcpCapture(
    [concat([request, close])],
    packets(concat([response, read("configmaps-json.s2c.bin")])),
    [],
  );
  let out = "";
  let err = "";
  const status = await runCli(["decode", "capture.pcap"], {
    open: () => Promise.resolve(streamOf([pcap])),
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    stdoutIsTerminal: false,
    version: "0.0.0",
  });
  assert.equal(status, 0, err);
  const lines = out.trim().split("\n").map((l) => JSON.parse(l));
  const events = lines.filter((l) => l.type !== undefined).map((l) => ({ type: l.type, object: l.object }));
  assert.deepEqual(events, EXPECTED);
  assert.deepEqual(
    lines.filter((l) => l.websocket !== undefined).map((l) => `${l.direction} ${l.websocket} ${l.code}`).sort(),
    ["client close 1000", "server close 1000"],
  );
  assert.match(err, /1 connections, 1 responses, 6 events, 0 gaps/);
});
