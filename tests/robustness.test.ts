/**
 * Damaged captures: real inputs from fixtures/ with bytes flipped, inserted, deleted or cut off, in random chunks.
 * Whatever the damage, every decoder either decodes or fails with a `DecodeError` whose offset lies inside its input,
 * and never hangs; the CLI (which reports any other error too) always exits 0 or 1 with a typed fault line.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as zlib from "node:zlib";
import fc from "fast-check";
import { DecodeError, KubernetesProtobufObject } from "../mod.ts";
import {
  ChunkedDecoderStream,
  EtcdWatchDecoderStream,
  GrpcMessageDecoderStream,
  InflateStream,
  JsonWatchEventDecoderStream,
  MsgpackEventDecoderStream,
  MsgpackEventEncoderStream,
} from "../wire.ts";
import { builtinDecoders, KubernetesProtobufWatchBodyDecoderStream } from "../kubernetes.ts";
import {
  decodeHttp1Exchanges,
  type Http1Exchange,
  Http1RequestDecoderStream,
  Http1ResponseDecoderStream,
  Http2ConnectionDecoderStream,
} from "../capture.ts";
import { runCli } from "../cli.ts";
import { drain, splitAt, streamOf, utf8, within } from "./_util.ts";

const fixture = (path: string) => new Uint8Array(readFileSync(new URL(`../fixtures/${path}`, import.meta.url)));

type Damage =
  | { op: "flip"; at: number; xor: number }
  | { op: "insert"; at: number; bytes: number[] }
  | { op: "delete"; at: number; length: number }
  | { op: "cut"; at: number };

/** Up to four kinds of damage at positions given as fractions of the input, and the cut points of its delivery. */
const damaged = fc.record({
  damage: fc.array(
    fc.oneof(
      fc.record({
        op: fc.constant("flip" as const),
        at: fc.double({ min: 0, max: 1, noNaN: true }),
        xor: fc.integer({ min: 1, max: 255 }),
      }),
      fc.record({
        op: fc.constant("insert" as const),
        at: fc.double({ min: 0, max: 1, noNaN: true }),
        bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 12 }),
      }),
      fc.record({
        op: fc.constant("delete" as const),
        at: fc.double({ min: 0, max: 1, noNaN: true }),
        length: fc.integer({ min: 1, max: 64 }),
      }),
      fc.record({ op: fc.constant("cut" as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
    ),
    { minLength: 1, maxLength: 4 },
  ),
  cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 24 }),
  // Half the time the damage lands in the first 600 bytes: heads, HTTP/2 SETTINGS and HEADERS (HPACK), envelopes.
  nearStart: fc.boolean(),
});

function applyDamage(input: Uint8Array, damage: Damage[], nearStart: boolean): Uint8Array {
  let bytes = Array.from(input);
  for (const d of damage) {
    const span = nearStart ? Math.min(bytes.length, 600) : bytes.length;
    const at = Math.min(bytes.length, Math.floor(d.at * span));
    if (d.op === "flip" && at < bytes.length) bytes[at] ^= d.xor;
    else if (d.op === "insert") bytes.splice(at, 0, ...d.bytes);
    else if (d.op === "delete") bytes.splice(at, d.length);
    else if (d.op === "cut") bytes = bytes.slice(0, at);
  }
  return Uint8Array.from(bytes);
}

/** Drains `stream`, reading nested bodies and lazy objects too; returns how it ended. */
async function drainDeep(stream: ReadableStream<unknown>): Promise<unknown> {
  const { values, error } = await drain(stream);
  for (const value of values) {
    const body = (value as { body?: unknown }).body;
    if (body instanceof ReadableStream) {
      const nested = await drain(body as ReadableStream<unknown>);
      if (nested.error !== undefined && error === undefined) return nested.error;
    }
    const object = (value as { object?: unknown }).object;
    if (object instanceof KubernetesProtobufObject) {
      try {
        object.decode();
      } catch (e) {
        return e;
      }
    }
  }
  return error;
}

/** The decoders of each kind of input, each a pipeline from bytes to values. */
const PIPELINES: {
  name: string;
  seed: string;
  body?: boolean;
  /** The seed compressed with node:zlib's deflate (a zlib stream), after `prepare`. */
  deflate?: boolean;
  /** Makes the input from the seed file. */
  prepare?: (seed: Uint8Array) => Uint8Array;
  decode: (input: ReadableStream<Uint8Array>) => ReadableStream<unknown>;
}[] = [
  {
    name: "HTTP/1.1 response, chunked JSON watch",
    seed: "node-http-watch.http",
    decode: (s) => s.pipeThrough(new Http1ResponseDecoderStream()),
  },
  {
    name: "HTTP/1.1 response, gzip",
    seed: "node-http-watch-gzip.http",
    decode: (s) => s.pipeThrough(new Http1ResponseDecoderStream()),
  },
  {
    name: "HTTP/1.1 requests (the node:net client's bytes)",
    seed: "node-http-watch.request.http",
    decode: (s) => s.pipeThrough(new Http1RequestDecoderStream()),
  },
  {
    name: "HTTP/1.1 exchanges, the server's bytes damaged",
    seed: "node-http-watch.http",
    decode: (s) => responsesOf(decodeHttp1Exchanges(s, streamOf([fixture("node-http-watch.request.http")]))),
  },
  {
    name: "HTTP/1.1 exchanges, the client's bytes damaged",
    seed: "node-http-watch.request.http",
    decode: (s) => responsesOf(decodeHttp1Exchanges(streamOf([fixture("node-http-watch.http")]), s)),
  },
  {
    name: "chunked body to JSON watch events",
    seed: "node-http-watch.http",
    // The seed's body: what follows its head.
    body: true,
    decode: (s) => s.pipeThrough(new ChunkedDecoderStream()).pipeThrough(new JsonWatchEventDecoderStream()),
  },
  {
    name: "Kubernetes protobuf watch (full)",
    seed: "kubernetes/streams/v1.Pod.pb",
    decode: (s) => s.pipeThrough(new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders })),
  },
  {
    name: "Kubernetes protobuf watch (metadata, then decode())",
    seed: "kubernetes/streams/v1.Node.pb",
    decode: (s) =>
      s.pipeThrough(new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders, mode: "metadata" })),
  },
  {
    name: "HTTP/2 connection (Go h2c, protobuf watch)",
    seed: "kubernetes/captures/go-h2c-pods.s2c.bin",
    decode: (s) => s.pipeThrough(new Http2ConnectionDecoderStream()),
  },
  {
    name: "deflate body (node:zlib over the node:http watch's events) to JSON watch events",
    seed: "node-http-watch.events.ndjson",
    // The events the node:http server sent (one per line of the fixture), as an NDJSON watch body.
    prepare: (seed) =>
      utf8(
        new TextDecoder().decode(seed).split("\n").filter((l) => l !== "")
          .map((l) => JSON.stringify(JSON.parse(l).event) + "\n").join(""),
      ),
    deflate: true,
    decode: (s) => s.pipeThrough(new InflateStream()).pipeThrough(new JsonWatchEventDecoderStream()),
  },
  {
    name: "gRPC messages to etcd watch responses",
    seed: "etcd-watch.s2c.bin",
    decode: (s) =>
      s.pipeThrough(new Http2ConnectionDecoderStream()).pipeThrough(
        new TransformStream<unknown, unknown>({
          async transform(message, controller) {
            const body = (message as { body: ReadableStream<Uint8Array> }).body;
            const { values, error } = await drain(
              body.pipeThrough(new GrpcMessageDecoderStream()).pipeThrough(new EtcdWatchDecoderStream()),
            );
            for (const v of values) controller.enqueue(v);
            if (error !== undefined) throw error;
          },
        }),
      ),
  },
];

/** The responses of exchanges (whose bodies drainDeep then reads). */
function responsesOf(exchanges: ReadableStream<Http1Exchange>): ReadableStream<unknown> {
  return exchanges.pipeThrough(new TransformStream({ transform: (e, controller) => controller.enqueue(e.response) }));
}

/** The chunked body of the first response of an HTTP/1.1 capture: from its head's end to its last chunk. */
function bodyOf(capture: Uint8Array): Uint8Array {
  const text = new TextDecoder("latin1").decode(capture);
  const start = text.indexOf("\r\n\r\n") + 4;
  const end = text.indexOf("\r\n0\r\n\r\n", start) + 7;
  assert.ok(start > 4 && end > start);
  return capture.subarray(start, end);
}

for (const { name, seed, body, deflate, prepare, decode } of PIPELINES) {
  test(`robustness: ${name}: damaged input decodes or fails with a DecodeError inside it, never hangs`, async () => {
    const file = body ? bodyOf(fixture(seed)) : fixture(seed);
    const read = prepare === undefined ? file : prepare(file);
    const original = deflate ? new Uint8Array(zlib.deflateSync(read)) : read;
    assert.equal(await drainDeep(decode(streamOf([original]))), undefined, "the undamaged seed decodes");
    let faults = 0;
    await fc.assert(
      fc.asyncProperty(damaged, async ({ damage, cuts, nearStart }) => {
        const input = applyDamage(original, damage, nearStart);
        const chunks = splitAt(input, cuts.map((c) => Math.floor(c * input.length)));
        const error = await within(drainDeep(decode(streamOf(chunks))), 10_000, name);
        if (error === undefined) return;
        faults++;
        assert.ok(error instanceof DecodeError, `not a DecodeError: ${String(error)}\n${(error as Error).stack}`);
        assert.ok(Number.isSafeInteger(error.offset) && error.offset >= 0, `offset ${error.offset}`);
      }),
      { numRuns: 40 },
    );
    // Damage that changes nothing a decoder checks is possible, but most must be caught (else the test is idle).
    assert.ok(faults >= 10, `only ${faults} of 40 damaged inputs failed`);
  });
}

test("robustness: msgpack event stream: damaged input decodes or fails with a DecodeError, never hangs", async () => {
  const json = new TextDecoder().decode(fixture("node-http-watch.events.ndjson"));
  const events = json.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  const encoded = await drain(streamOf(events).pipeThrough(new MsgpackEventEncoderStream()));
  const original = Uint8Array.from(encoded.values.flatMap((c) => Array.from(c)));
  await fc.assert(
    fc.asyncProperty(damaged, async ({ damage, cuts, nearStart }) => {
      const input = applyDamage(original, damage, nearStart);
      const chunks = splitAt(input, cuts.map((c) => Math.floor(c * input.length)));
      const error = await within(
        drainDeep(streamOf(chunks).pipeThrough(new MsgpackEventDecoderStream())),
        10_000,
        "msgpack",
      );
      if (error === undefined) return;
      assert.ok(error instanceof DecodeError, `not a DecodeError: ${String(error)}\n${(error as Error).stack}`);
      assert.ok(error.offset >= 0 && error.offset <= input.length, `offset ${error.offset} of ${input.length}`);
    }),
    { numRuns: 40 },
  );
});

const CLI_SEEDS = [
  "node-http-watch.http",
  "node-http-watch-gzip.http",
  "kubernetes/captures/go-http1-nodes.s2c.bin",
  "kubernetes/captures/go-h2c-configmaps.s2c.bin",
  "kubernetes/streams/v1.Pod.pb",
  "kubernetes/streams/v1.Pod.json",
];

test("robustness: the CLI on damaged captures exits 0 or 1, a fault always a DecodeError's line, never hangs", async () => {
  for (const seed of CLI_SEEDS) {
    const original = fixture(seed);
    await fc.assert(
      fc.asyncProperty(damaged, fc.constantFrom("ndjson", "table"), async ({ damage, cuts, nearStart }, output) => {
        const input = applyDamage(original, damage, nearStart);
        const chunks = splitAt(input, cuts.map((c) => Math.floor(c * input.length)));
        let stderr = "";
        const status = await within(
          runCli(["decode", "--output", output, "capture"], {
            open: () => Promise.resolve(streamOf(chunks)),
            stdout: () => {},
            stderr: (t) => void (stderr += t),
            stdoutIsTerminal: false,
            version: "0.0.0",
          }),
          10_000,
          seed,
        );
        assert.ok(status === 0 || status === 1, `${seed}: status ${status}: ${stderr}`);
        if (status === 1) {
          // The last line names the fault: a DecodeError's code in brackets, not some other error's message.
          const last = stderr.trimEnd().split("\n").pop()!;
          assert.match(last, /\[[A-Z_0-9]+\]$/, `${seed}: ${stderr}`);
        }
      }),
      { numRuns: 25 },
    );
  }
});
