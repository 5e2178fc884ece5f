/**
 * WebSocket frames (RFC 6455) to messages: frames this file builds by hand (masked and not, 7-, 16- and 64-bit
 * lengths, fragments with control frames between them), random message sequences under random splits down to single
 * bytes, every fault at its offset, and the recorded kube-apiserver connections of fixtures/kubernetes/websocket/.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { DecodeError } from "../src/errors.ts";
import {
  WebSocketFrameDecoder,
  type WebSocketFrameDecoderOptions,
} from "../src/transport/websocket/websocket_frame_decoder.ts";
import { WebSocketFrameDecoderStream } from "../src/transport/websocket/websocket_frame_decoder_stream.ts";
import {
  isWebSocketCloseCodeAllowed,
  type WebSocketMessage,
  type WebSocketSender,
} from "../src/transport/websocket/websocket_message.ts";
import { assertSplitInvariant, bytewise, concat, drain, endless, splitAt, streamOf, utf8, within } from "./_util.ts";

const fixtures = fileURLToPath(new URL("../fixtures/kubernetes/websocket/", import.meta.url));

// ---------------------------------------------------------------------------------------------------------------
// Frames built by hand, independently of the decoder (RFC 6455 §5.2).

const TEXT = 1;
const BINARY = 2;
const CLOSE = 8;
const PING = 9;
const PONG = 10;

interface FrameSpec {
  opcode: number;
  payload?: ArrayLike<number>;
  fin?: boolean;
  /** RSV1-3 as bits 0x40, 0x20, 0x10. */
  rsv?: number;
  /** The masking key: a masked (client) frame. */
  mask?: ArrayLike<number>;
  /** The length's form: the shortest (default), or a longer one on purpose. */
  lengthForm?: 7 | 16 | 64;
  /** A length to announce other than the payload's. */
  length?: number;
}

function frame(spec: FrameSpec): Uint8Array {
  const payload = Array.from(spec.payload ?? []);
  const n = spec.length ?? payload.length;
  const form = spec.lengthForm ?? (n < 126 ? 7 : n < 0x10000 ? 16 : 64);
  const out: number[] = [(spec.fin === false ? 0 : 0x80) | (spec.rsv ?? 0) | spec.opcode];
  const maskBit = spec.mask ? 0x80 : 0;
  if (form === 7) out.push(maskBit | n);
  else if (form === 16) out.push(maskBit | 126, (n >>> 8) & 255, n & 255);
  else {
    const high = Math.floor(n / 2 ** 32);
    out.push(maskBit | 127, (high >>> 24) & 255, (high >>> 16) & 255, (high >>> 8) & 255, high & 255);
    out.push((n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);
  }
  if (spec.mask) {
    out.push(...Array.from(spec.mask));
    for (let i = 0; i < payload.length; i++) payload[i] ^= spec.mask[i & 3];
  }
  return Uint8Array.from([...out, ...payload]);
}

const closePayload = (code: number, reason = "") => [code >>> 8, code & 255, ...utf8(reason)];

/** A message as a comparable plain object. */
function plain(message: WebSocketMessage): Record<string, unknown> {
  return { ...message, bytes: Array.from(message.bytes) };
}
const plainAll = (messages: WebSocketMessage[]) => messages.map(plain);

const decodeWith = (options: WebSocketFrameDecoderOptions) => (source: ReadableStream<Uint8Array>) =>
  source.pipeThrough(new WebSocketFrameDecoderStream(options));

/** The bare decoder (no streams) over `chunks`: the messages and the error, if any. */
function decodeSync(chunks: Uint8Array[], options: WebSocketFrameDecoderOptions) {
  const decoder = new WebSocketFrameDecoder(options);
  const values: WebSocketMessage[] = [];
  try {
    for (const chunk of chunks) decoder.push(chunk, (m) => values.push(m));
    decoder.finish();
    return { values, error: undefined as unknown };
  } catch (error) {
    return { values, error };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Messages

test("websocket frames: text, binary, ping, pong and close from a server, whole and byte by byte", () => {
  const parts = [
    frame({ opcode: TEXT, payload: utf8("héllo") }),
    frame({ opcode: BINARY, payload: [0, 1, 255] }),
    frame({ opcode: BINARY, payload: [] }),
    frame({ opcode: PING, payload: utf8("p") }),
    frame({ opcode: PONG }),
    frame({ opcode: CLOSE, payload: closePayload(1001, "bye ✓") }),
  ];
  const input = concat(parts);
  const offsets = parts.map((_, i) => parts.slice(0, i).reduce((n, p) => n + p.length, 0));
  const expected = [
    { kind: "text", text: "héllo", bytes: Array.from(utf8("héllo")), offset: offsets[0] },
    { kind: "binary", bytes: [0, 1, 255], offset: offsets[1] },
    { kind: "binary", bytes: [], offset: offsets[2] },
    { kind: "ping", bytes: [0x70], offset: offsets[3] },
    { kind: "pong", bytes: [], offset: offsets[4] },
    { kind: "close", code: 1001, reason: "bye ✓", bytes: closePayload(1001, "bye ✓"), offset: offsets[5] },
  ];
  for (const chunks of [[input], bytewise(input)]) {
    const { values, error } = decodeSync(chunks, { sender: "server" });
    assert.equal(error, undefined);
    assert.deepEqual(plainAll(values), expected);
  }
});

test("websocket frames: a close frame without a payload has no code", () => {
  const { values, error } = decodeSync([frame({ opcode: CLOSE })], { sender: "server" });
  assert.equal(error, undefined);
  assert.deepEqual(plainAll(values), [{ kind: "close", code: undefined, reason: "", bytes: [], offset: 0 }]);
});

test("websocket frames: 7-, 16- and 64-bit lengths, at their edges, and longer forms than needed", () => {
  for (const size of [0, 125, 126, 127, 65535, 65536, 70000]) {
    const payload = Uint8Array.from({ length: size }, (_, i) => (i * 7) & 255);
    for (const lengthForm of [undefined, 64] as const) {
      const input = frame({ opcode: BINARY, payload, ...(lengthForm ? { lengthForm } : {}) });
      const { values, error } = decodeSync(splitAt(input, [1, 2, 5, 9, 600]), { sender: "server" });
      assert.equal(error, undefined, `${size}`);
      assert.equal(values.length, 1);
      assert.deepEqual(values[0].bytes, payload, `${size}`);
    }
  }
});

test("websocket frames: client frames are unmasked; the input is not written to", () => {
  const key = [0x37, 0xfa, 0x21, 0x3d];
  const input = concat([
    frame({ opcode: TEXT, payload: utf8("Hello"), mask: key }),
    frame({ opcode: BINARY, payload: new Uint8Array(300).fill(9), mask: key }),
    frame({ opcode: CLOSE, payload: closePayload(1000), mask: key }),
  ]);
  // RFC 6455 §5.7: a masked "Hello".
  assert.deepEqual(Array.from(input.subarray(0, 11)), [
    0x81,
    0x85,
    0x37,
    0xfa,
    0x21,
    0x3d,
    0x7f,
    0x9f,
    0x4d,
    0x51,
    0x58,
  ]);
  const copy = input.slice();
  const { values, error } = decodeSync([input], { sender: "client" });
  assert.equal(error, undefined);
  assert.deepEqual(input, copy);
  assert.equal(values[0].kind === "text" && values[0].text, "Hello");
  assert.deepEqual(values[1].bytes, new Uint8Array(300).fill(9));
  assert.equal(values[2].kind === "close" && values[2].code, 1000);
});

test("websocket frames: fragments are joined, control frames between them handed on in place", () => {
  // "€" (e2 82 ac) split across fragments: only the whole message must be UTF-8.
  const euro = utf8("a€b");
  const input = concat([
    frame({ opcode: TEXT, payload: euro.subarray(0, 2), fin: false }),
    frame({ opcode: PING, payload: [1] }),
    frame({ opcode: 0, payload: euro.subarray(2, 3), fin: false }),
    frame({ opcode: 0, payload: [], fin: false }),
    frame({ opcode: PONG }),
    frame({ opcode: 0, payload: euro.subarray(3) }),
    frame({ opcode: BINARY, payload: [1], fin: false }),
    frame({ opcode: 0, payload: [2, 3] }),
  ]);
  for (const sender of ["server"] as const) {
    const { values, error } = decodeSync(bytewise(input), { sender });
    assert.equal(error, undefined);
    assert.deepEqual(values.map((m) => m.kind), ["ping", "pong", "text", "binary"]);
    assert.equal(values[2].kind === "text" && values[2].text, "a€b");
    assert.equal(values[2].offset, 0);
    assert.deepEqual(Array.from(values[3].bytes), [1, 2, 3]);
  }
});

test("websocket frames: a message within one chunk is a view of it; one that spans chunks has its own buffer", () => {
  const input = concat([frame({ opcode: BINARY, payload: [1, 2, 3] }), frame({ opcode: TEXT, payload: utf8("ok") })]);
  const whole = decodeSync([input], { sender: "server" });
  assert.equal(whole.values[0].bytes.buffer, input.buffer);
  assert.equal(whole.values[0].bytes.byteOffset, 2);
  const split = decodeSync(splitAt(input, [3]), { sender: "server" });
  assert.deepEqual(Array.from(split.values[0].bytes), [1, 2, 3]);
  assert.equal(split.values[0].bytes.buffer.byteLength, 3);
});

// ---------------------------------------------------------------------------------------------------------------
// Random sequences under random splits

interface MessageSpec {
  kind: "text" | "binary";
  payload: Uint8Array;
  /** Where the payload is cut into fragments. */
  cuts: number[];
  /** Control frames after each fragment but the last (pings, by length). */
  between: number[];
}

const messageSpec: fc.Arbitrary<MessageSpec> = fc.record({
  kind: fc.constantFrom("text" as const, "binary" as const),
  text: fc.string({ unit: "grapheme", maxLength: 40 }),
  bin: fc.uint8Array({ maxLength: 300 }),
  cuts: fc.array(fc.nat({ max: 300 }), { maxLength: 3 }),
  between: fc.array(fc.nat({ max: 125 }), { maxLength: 3 }),
}).map(({ kind, text, bin, cuts, between }) => {
  const payload = kind === "text" ? utf8(text) : bin;
  const points = [...new Set(cuts.filter((c) => c > 0 && c < payload.length))].sort((a, b) => a - b);
  return { kind, payload, cuts: points, between };
});

/** The frames of `specs` from `sender` (masked with keys of `seed` for a client) and the messages they decode to. */
function build(specs: MessageSpec[], sender: WebSocketSender, close: number | undefined, seed: number) {
  const parts: Uint8Array[] = [];
  const expected: Record<string, unknown>[] = [];
  let at = 0;
  let k = seed;
  const mask = () => sender === "client" ? [k++ & 255, (k * 31) & 255, (k * 7) & 255, 0x5a] : undefined;
  const add = (f: Uint8Array) => {
    parts.push(f);
    at += f.length;
  };
  for (const spec of specs) {
    const start = at;
    const bounds = [0, ...spec.cuts, spec.payload.length];
    const controls: Record<string, unknown>[] = [];
    for (let i = 0; i + 1 < bounds.length; i++) {
      const last = i + 2 === bounds.length;
      add(frame({
        opcode: i === 0 ? (spec.kind === "text" ? TEXT : BINARY) : 0,
        payload: spec.payload.subarray(bounds[i], bounds[i + 1]),
        fin: last,
        mask: mask(),
      }));
      if (!last && i < spec.between.length) {
        const ping = new Uint8Array(spec.between[i]).fill(0x50);
        controls.push({ kind: "ping", bytes: Array.from(ping), offset: at });
        add(frame({ opcode: PING, payload: ping, mask: mask() }));
      }
    }
    expected.push(...controls);
    expected.push({
      kind: spec.kind,
      ...(spec.kind === "text" ? { text: new TextDecoder().decode(spec.payload) } : {}),
      bytes: Array.from(spec.payload),
      offset: start,
    });
  }
  if (close !== undefined) {
    expected.push({ kind: "close", code: close, reason: "done", bytes: closePayload(close, "done"), offset: at });
    add(frame({ opcode: CLOSE, payload: closePayload(close, "done"), mask: mask() }));
  }
  return { input: concat(parts), expected };
}

test("websocket frames: random messages, fragments and controls, from either end, under random splits", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(messageSpec, { maxLength: 5 }),
      fc.constantFrom("server" as const, "client" as const),
      fc.option(fc.constantFrom(1000, 1001, 1011, 3000, 4999), { nil: undefined }),
      fc.nat(),
      async (specs, sender, close, seed) => {
        const { input, expected } = build(specs, sender, close, seed);
        const { values, error } = await assertSplitInvariant(input, decodeWith({ sender }), {
          runs: 8,
          normalize: plainAll,
        });
        assert.equal(error, undefined);
        // Key order aside (the decoder's own), the same messages.
        assert.deepEqual(
          plainAll(values).map((m) => JSON.stringify(m, Object.keys(m).sort())),
          expected.map((m) => JSON.stringify(m, Object.keys(m).sort())),
        );
      },
    ),
    { numRuns: 60 },
  );
});

// ---------------------------------------------------------------------------------------------------------------
// Faults

interface Damage {
  name: string;
  sender: WebSocketSender;
  /** Bytes after the good messages. */
  bad: Uint8Array;
  code: string;
  /** The fault's offset within `bad` (default 0), or in `bad` and the good frames. */
  at?: number;
  maxEventBytes?: number;
  /** Messages of `bad` before its fault. */
  also?: string[];
}

const KEY = [1, 2, 3, 4];
const DAMAGE: Damage[] = [
  {
    name: "RSV1 set",
    sender: "server",
    bad: frame({ opcode: TEXT, payload: utf8("x"), rsv: 0x40 }),
    code: "FRAME_INVALID",
  },
  { name: "RSV3 set", sender: "server", bad: frame({ opcode: BINARY, rsv: 0x10 }), code: "FRAME_INVALID" },
  { name: "a reserved opcode (3)", sender: "server", bad: frame({ opcode: 3 }), code: "FRAME_INVALID" },
  { name: "a reserved control opcode (0xb)", sender: "server", bad: frame({ opcode: 0xb }), code: "FRAME_INVALID" },
  {
    name: "a masked server frame",
    sender: "server",
    bad: frame({ opcode: TEXT, payload: utf8("x"), mask: KEY }),
    code: "FRAME_INVALID",
  },
  {
    name: "an unmasked client frame",
    sender: "client",
    bad: frame({ opcode: TEXT, payload: utf8("x") }),
    code: "FRAME_INVALID",
  },
  {
    name: "a 64-bit length with its top bit set",
    sender: "server",
    bad: Uint8Array.of(0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1, 0),
    code: "FRAME_INVALID",
  },
  {
    name: "a ping longer than 125 bytes",
    sender: "server",
    bad: frame({ opcode: PING, payload: new Uint8Array(126) }),
    code: "FRAME_INVALID",
  },
  { name: "a fragmented ping", sender: "server", bad: frame({ opcode: PING, fin: false }), code: "FRAME_INVALID" },
  {
    name: "a continuation with nothing to continue",
    sender: "server",
    bad: frame({ opcode: 0, payload: [1] }),
    code: "FRAME_INVALID",
  },
  {
    name: "a new message inside a fragmented one",
    sender: "server",
    bad: concat([frame({ opcode: TEXT, payload: utf8("a"), fin: false }), frame({ opcode: TEXT, payload: utf8("b") })]),
    code: "FRAME_INVALID",
    at: 3,
  },
  {
    name: "a close frame of 1 byte",
    sender: "server",
    bad: frame({ opcode: CLOSE, payload: [3] }),
    code: "FRAME_INVALID",
  },
  ...[1005, 1006, 1015, 1004, 999, 0, 2000, 2999, 5000, 65535].map((code): Damage => ({
    name: `close code ${code}`,
    sender: "server",
    bad: frame({ opcode: CLOSE, payload: closePayload(code) }),
    code: "FRAME_INVALID",
  })),
  {
    name: "a close reason that is not UTF-8",
    sender: "server",
    bad: frame({ opcode: CLOSE, payload: [3, 0xe8, 0xc3, 0x28] }),
    code: "MESSAGE_INVALID",
  },
  {
    name: "a text message that is not UTF-8",
    sender: "server",
    bad: frame({ opcode: TEXT, payload: [0x61, 0xff] }),
    code: "MESSAGE_INVALID",
  },
  {
    name: "a fragmented text message that ends inside a code point",
    sender: "client",
    bad: concat([
      frame({ opcode: TEXT, payload: [0x61], fin: false, mask: KEY }),
      frame({ opcode: 0, payload: [0xe2, 0x82], mask: KEY }),
    ]),
    code: "MESSAGE_INVALID",
  },
  {
    name: "a frame after the close frame",
    sender: "server",
    bad: concat([frame({ opcode: CLOSE, payload: closePayload(1000) }), frame({ opcode: PONG })]),
    code: "TRAILING_DATA",
    at: 4,
    also: ["close"],
  },
  {
    name: "a frame over maxEventBytes",
    sender: "server",
    bad: frame({ opcode: BINARY, payload: new Uint8Array(101) }),
    code: "MESSAGE_TOO_LARGE",
    maxEventBytes: 100,
  },
  {
    name: "fragments over maxEventBytes: at the continuation that goes over",
    sender: "client",
    bad: concat([
      frame({ opcode: BINARY, payload: new Uint8Array(60), fin: false, mask: KEY }),
      frame({ opcode: PING, mask: KEY }),
      frame({ opcode: 0, payload: new Uint8Array(41), mask: KEY }),
    ]),
    code: "MESSAGE_TOO_LARGE",
    at: 66 + 6,
    also: ["ping"],
    maxEventBytes: 100,
  },
  {
    name: "a 64-bit length of 2^53 - 1",
    sender: "server",
    bad: Uint8Array.of(0x82, 127, 0, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
    code: "MESSAGE_TOO_LARGE",
  },
  { name: "input ends inside a header", sender: "server", bad: Uint8Array.of(0x82, 126, 1), code: "TRUNCATED" },
  {
    name: "input ends inside a masking key",
    sender: "client",
    bad: Uint8Array.of(0x82, 0x81, 1, 2),
    code: "TRUNCATED",
  },
  { name: "input ends after one byte", sender: "server", bad: Uint8Array.of(0x81), code: "TRUNCATED" },
  {
    name: "input ends inside a payload",
    sender: "server",
    bad: frame({ opcode: BINARY, payload: [1, 2, 3] }).subarray(0, 4),
    code: "TRUNCATED",
  },
  {
    name: "input ends inside a fragmented message (at its first frame)",
    sender: "server",
    bad: concat([frame({ opcode: TEXT, payload: utf8("a"), fin: false }), frame({ opcode: PING })]),
    code: "TRUNCATED",
    also: ["ping"],
  },
];

test("websocket frames: each fault at its offset, after the messages before it, under any split", async () => {
  for (const damage of DAMAGE) {
    const key = damage.sender === "client" ? KEY : undefined;
    const good = concat([
      frame({ opcode: TEXT, payload: utf8("first"), mask: key }),
      frame({ opcode: BINARY, payload: [9, 8], mask: key }),
    ]);
    const input = concat([good, damage.bad]);
    const { values, error } = await assertSplitInvariant(
      input,
      decodeWith({ sender: damage.sender, ...(damage.maxEventBytes ? { maxEventBytes: damage.maxEventBytes } : {}) }),
      { runs: 20, normalize: plainAll },
    );
    assert.ok(error instanceof DecodeError, `${damage.name}: ${error}`);
    assert.equal(error.code, damage.code, `${damage.name}: ${error.message}`);
    assert.equal(error.offset, good.length + (damage.at ?? 0), `${damage.name}: ${error.message}`);
    assert.deepEqual(values.map((m) => m.kind), ["text", "binary", ...damage.also ?? []], damage.name);
    assert.match(error.message, /^websocket: /, damage.name);
  }
});

test("websocket frames: an oversized or reserved frame fails at once, without waiting for the rest", async () => {
  const before = frame({ opcode: TEXT, payload: utf8("a") });
  for (
    const [bad, code] of [
      [Uint8Array.of(0x82, 127, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), "MESSAGE_TOO_LARGE"],
      [Uint8Array.of(0xc1), "FRAME_INVALID"], // RSV1: known at the first byte
      [Uint8Array.of(0x81, 0x85), "FRAME_INVALID"], // a mask bit from a server: known at the second
    ] as const
  ) {
    for (const chunks of [[before, bad], [before, ...bytewise(bad)]]) {
      const { values, error } = await within(drain(decodeWith({ sender: "server" })(endless(chunks))), 2000);
      assert.equal(values.length, 1);
      assert.ok(error instanceof DecodeError);
      assert.equal(error.code, code);
      assert.equal(error.offset, before.length);
    }
  }
});

test("websocket frames: close codes that may be sent", () => {
  const allowed = [];
  for (let code = 0; code < 6000; code++) if (isWebSocketCloseCodeAllowed(code)) allowed.push(code);
  assert.deepEqual(allowed.filter((c) => c < 3000), [
    1000,
    1001,
    1002,
    1003,
    1007,
    1008,
    1009,
    1010,
    1011,
    1012,
    1013,
    1014,
  ]);
  assert.equal(allowed.filter((c) => c >= 3000).length, 2000);
});

test("websocket frames: options are checked", () => {
  assert.throws(() => new WebSocketFrameDecoder({ sender: "server", maxEventBytes: -1 }), RangeError);
  assert.throws(() => new WebSocketFrameDecoder({ sender: "both" as WebSocketSender }), TypeError);
});

test("websocket frames: an input with no frames, and one that ends between messages, are not faults", async () => {
  assert.deepEqual(await drain(decodeWith({ sender: "server" })(streamOf<Uint8Array>([]))), {
    values: [],
    error: undefined,
  });
  const { error } = decodeSync([frame({ opcode: TEXT, payload: utf8("x") })], { sender: "server" });
  assert.equal(error, undefined);
});

// ---------------------------------------------------------------------------------------------------------------
// Recorded connections

test("websocket frames: the recorded kube-apiserver watches (JSON text frames, protobuf binary frames, close 1000)", async () => {
  for (
    const [file, kind] of [["configmaps-json.s2c.bin", "text"], ["configmaps-protobuf.s2c.bin", "binary"]] as const
  ) {
    const input = new Uint8Array(readFileSync(fixtures + file));
    const { values, error } = await assertSplitInvariant(input, decodeWith({ sender: "server" }), {
      runs: 10,
      normalize: plainAll,
    });
    assert.equal(error, undefined, file);
    const last = values.at(-1)!;
    assert.equal(last.kind, "close", file);
    assert.equal(last.kind === "close" && last.code, 1000, file);
    assert.ok(values.length > 3, file);
    for (const m of values.slice(0, -1)) assert.equal(m.kind, kind, file);
    // Every byte is accounted for: the messages' frames follow one another to the end.
    assert.equal(last.offset + 2 + last.bytes.length, input.length, file);
  }
});
