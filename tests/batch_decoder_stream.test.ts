/**
 * BatchDecoderStream (of the JSON, Kubernetes protobuf and msgpack decoders) and decodeWatchResponseBatches: the same
 * events as the one-event-per-item streams, grouped by the input chunk that completed them (split invariance of the
 * events, and batches that follow the chunks exactly), the same faults after the same events, and nothing held back for
 * later input.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import {
  DecodeError,
  decodeWatchResponse,
  decodeWatchResponseBatches,
  KubernetesProtobufObject,
  type WatchEvent,
} from "../mod.ts";
import {
  BatchDecoderStream,
  DecoderStream,
  JsonWatchEventDecoder,
  JsonWatchEventDecoderStream,
  MsgpackEventDecoder,
  MsgpackEventEncoderStream,
  type StreamDecoder,
} from "../wire.ts";
import { builtinDecoders, KubernetesProtobufWatchBodyDecoder } from "../kubernetes.ts";
import { metadataView } from "./peers/watch_checks.ts";
import { bytewise, cutsFor, drain, drainSlowly, errorKey, failingAfter, splitAt, streamOf, utf8 } from "./_util.ts";

const streams = new URL("../fixtures/kubernetes/streams/", import.meta.url);
const fixture = (name: string) => new Uint8Array(readFileSync(new URL(name, streams)));

/** A recording of the JSON stream `file`'s events, written by MsgpackEventEncoderStream. */
async function msgpackRecording(file: string): Promise<Uint8Array> {
  const events = streamOf([fixture(file)]).pipeThrough(new JsonWatchEventDecoderStream<unknown>());
  return new Uint8Array(await new Response(events.pipeThrough(new MsgpackEventEncoderStream<unknown>())).arrayBuffer());
}

/** A body decoder of each kind watchwire has (made fresh for each run), and an input for it. */
const DECODERS: {
  name: string;
  input: () => Promise<Uint8Array> | Uint8Array;
  make: () => StreamDecoder<Uint8Array, WatchEvent<unknown>>;
}[] = [
  { name: "JSON", input: () => fixture("v1.Pod.json"), make: () => new JsonWatchEventDecoder<unknown>() },
  {
    name: "protobuf, full",
    input: () => fixture("v1.Pod.pb"),
    make: () => new KubernetesProtobufWatchBodyDecoder<unknown>({ decoders: builtinDecoders }),
  },
  {
    name: "protobuf, metadata mode",
    input: () => fixture("v1.Node.pb"),
    make: () => new KubernetesProtobufWatchBodyDecoder<unknown>({ decoders: builtinDecoders, mode: "metadata" }),
  },
  {
    name: "JSON, ConfigMaps",
    input: () => fixture("v1.ConfigMap.json"),
    make: () => new JsonWatchEventDecoder<unknown>(),
  },
  {
    name: "msgpack",
    input: () => msgpackRecording("v1.Pod.json"),
    make: () => new MsgpackEventDecoder<unknown>(),
  },
];

/** What `make()`'s decoder emits for each chunk, and at the end: the batches a BatchDecoderStream must hand on. */
function perCall<O>(decoder: StreamDecoder<Uint8Array, O>, chunks: Uint8Array[]): { batches: O[][]; error: unknown } {
  const batches: O[][] = [];
  let error: unknown;
  const call = (run: (emit: (value: O) => void) => void) => {
    const batch: O[] = [];
    try {
      run((value) => batch.push(value));
    } catch (e) {
      error = e;
    }
    if (batch.length > 0) batches.push(batch);
  };
  for (const chunk of chunks) {
    call((emit) => decoder.push(chunk, emit) as void);
    if (error !== undefined) return { batches, error };
  }
  call((emit) => decoder.finish(emit) as void);
  return { batches, error };
}

for (const { name, input: read, make } of DECODERS) {
  test(`BatchDecoderStream (${name}): the events of the one-per-item stream, in one batch per chunk that completes any, for any cutting`, async () => {
    const input = await read();
    const single = await drain(streamOf([input]).pipeThrough(new DecoderStream(make())));
    assert.equal(single.error, undefined);
    assert.ok(single.values.length >= 5, `${single.values.length} events`);
    const expected = JSON.stringify(single.values.map(metadataView));
    const check = async (chunks: Uint8Array[]) => {
      const got = await drain(streamOf(chunks).pipeThrough(new BatchDecoderStream(make())));
      assert.equal(got.error, undefined);
      assert.equal(JSON.stringify(got.values.flat().map(metadataView)), expected);
      // Batches follow the chunks: what each push completed, never empty, never merged with the next chunk's.
      const reference = perCall(make(), chunks);
      assert.deepEqual(got.values.map((b) => b.length), reference.batches.map((b) => b.length));
      assert.ok(got.values.length <= chunks.length + 1);
    };
    await check([input.slice()]);
    await check(bytewise(input));
    await fc.assert(fc.asyncProperty(cutsFor(input.length), (cuts) => check(splitAt(input, cuts))), { numRuns: 60 });
  });
}

test("BatchDecoderStream: a whole body in one chunk is one batch; one event per chunk is one batch each", async () => {
  const input = fixture("v1.Pod.pb");
  const whole = await drain(
    streamOf([input]).pipeThrough(
      new BatchDecoderStream(new KubernetesProtobufWatchBodyDecoder({ decoders: builtinDecoders })),
    ),
  );
  assert.equal(whole.values.length, 1);
  const events = whole.values[0];
  // Cut after each frame: each chunk completes exactly one event.
  const cuts: number[] = [];
  for (let at = 0; at < input.length;) {
    at += 4 + new DataView(input.buffer, input.byteOffset + at).getUint32(0);
    cuts.push(at);
  }
  const each = await drain(
    streamOf(splitAt(input, cuts)).pipeThrough(
      new BatchDecoderStream(new KubernetesProtobufWatchBodyDecoder({ decoders: builtinDecoders })),
    ),
  );
  assert.deepEqual(each.values.map((b) => b.length), events.map(() => 1));
  assert.deepEqual(each.values.flat(), events);
});

test("BatchDecoderStream: a fault mid-chunk hands on the chunk's events before it as a last batch, then the same error", async () => {
  const good = (name: string) => `{"type":"ADDED","object":{"metadata":{"name":"${name}"}}}\n`;
  const chunks = [utf8(good("a") + good("b")), utf8(good("c") + good("d") + "{not json}\n" + good("e"))];
  const single = await drain(streamOf(chunks).pipeThrough(new DecoderStream(new JsonWatchEventDecoder())));
  const batched = await drain(streamOf(chunks).pipeThrough(new BatchDecoderStream(new JsonWatchEventDecoder())));
  const names = (events: WatchEvent[]) => events.map((e) => e.type === "ADDED" && e.object.metadata?.name);
  assert.deepEqual(batched.values.map(names), [["a", "b"], ["c", "d"]]);
  assert.deepEqual(batched.values.flat(), single.values);
  assert.ok(batched.error instanceof DecodeError);
  assert.equal(errorKey(batched.error), errorKey(single.error));
  assert.equal(errorKey(batched.error), `JSON_INVALID@${chunks[0].length + 2 * good("c").length}`);
});

test("BatchDecoderStream: finish hands on what the end completes (a last line without a newline) as one more batch", async () => {
  const chunks = [utf8('{"type":"DELETED","object":{"metadata":{"name":"a"}}}\n{"type":"DELETED","object":{}}')];
  const batched = await drain(streamOf(chunks).pipeThrough(new BatchDecoderStream(new JsonWatchEventDecoder())));
  assert.equal(batched.error, undefined);
  assert.deepEqual(batched.values.map((b) => b.length), [1, 1]);
  // A body cut inside a frame: the events before it, then TRUNCATED, as the one-per-item stream has it.
  const pb = fixture("v1.Pod.pb");
  const cut = [pb.slice(0, pb.length - 3)];
  const single = await drain(
    streamOf(cut).pipeThrough(new DecoderStream(new KubernetesProtobufWatchBodyDecoder({ decoders: builtinDecoders }))),
  );
  const got = await drain(
    streamOf(cut).pipeThrough(
      new BatchDecoderStream(new KubernetesProtobufWatchBodyDecoder({ decoders: builtinDecoders })),
    ),
  );
  assert.deepEqual(got.values.flat(), single.values);
  assert.ok(single.values.length > 0);
  assert.equal(errorKey(got.error), errorKey(single.error));
  assert.match(String(errorKey(got.error)), /^TRUNCATED@/);
});

/**
 * MOCK (no decoder of ours emits across awaits in one push but GunzipStream's native engine, which is not a batch
 * user): an asynchronous decoder that emits each value of a chunk after an await, fails on "!", and whose `salvage`
 * hands on the chunk it still holds.
 */
class AsyncWords implements StreamDecoder<string, string> {
  held = "";
  failedWith: unknown;
  async push(chunk: string, emit: (word: string) => void): Promise<void> {
    for (const word of chunk.split(" ")) {
      await Promise.resolve();
      if (word === "!") throw new DecodeError("EVENT_INVALID", 0, "bang");
      if (word.endsWith("…")) this.held = word;
      else emit(word);
    }
  }
  finish(): void {}
  async salvage(emit: (word: string) => void): Promise<void> {
    await Promise.resolve();
    if (this.held !== "") emit(this.held);
  }
  failed(reason: unknown): void {
    this.failedWith = reason;
  }
}

test("BatchDecoderStream: an asynchronous decoder's values of one push are one batch, also when it rejects part way", async () => {
  const ok = await drain(streamOf(["a b", "c"]).pipeThrough(new BatchDecoderStream(new AsyncWords())));
  assert.deepEqual(ok, { values: [["a", "b"], ["c"]], error: undefined });
  const decoder = new AsyncWords();
  const bad = await drain(streamOf(["a b", "c d ! e"]).pipeThrough(new BatchDecoderStream(decoder)));
  assert.deepEqual(bad.values, [["a", "b"], ["c", "d"]]);
  assert.equal(errorKey(bad.error), "EVENT_INVALID@0");
  assert.equal(decoder.failedWith, bad.error, "the decoder is told of the failure");
});

test("BatchDecoderStream: when the input fails, what salvage makes of it is one batch, then the input's error", async () => {
  const reason = new Error("connection reset");
  const decoder = new AsyncWords();
  const got = await drain(failingAfter(["a b", "c d…"], reason).pipeThrough(new BatchDecoderStream(decoder)));
  assert.deepEqual(got.values, [["a", "b"], ["c"], ["d…"]]);
  assert.equal(got.error, reason);
  assert.equal(decoder.failedWith, reason);
  // A decoder without salvage has nothing to add.
  const plainDecoder: StreamDecoder<string, string> = { push: (s, emit) => emit(s), finish() {} };
  const none = await drain(failingAfter(["x"], reason).pipeThrough(new BatchDecoderStream(plainDecoder)));
  assert.deepEqual(none, { values: [["x"]], error: reason });
});

test("BatchDecoderStream: readableHighWaterMark counts batches (backpressure as DecoderStream's)", async () => {
  const stream = new BatchDecoderStream<string, string>({ push: (s, emit) => s.split("").forEach(emit), finish() {} }, {
    readableHighWaterMark: 2,
  });
  const writer = stream.writable.getWriter();
  await writer.write("abc"); // one batch of three values queued: under the mark
  let second = false;
  const pending = writer.write("de").then(() => (second = true)); // a second batch: the queue is at its mark
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(second, false, "the write that fills the queue to its mark waits for the reader");
  const reader = stream.readable.getReader();
  assert.deepEqual((await reader.read()).value, ["a", "b", "c"]);
  await pending;
  assert.deepEqual((await reader.read()).value, ["d", "e"]);
  const closed = writer.close();
  assert.equal((await reader.read()).done, true);
  await closed;
});

test("decodeWatchResponseBatches: the events of decodeWatchResponse for JSON and protobuf bodies, in batches by read", async () => {
  for (
    const [file, type] of [["v1.Pod.json", "application/json;stream=watch"], [
      "v1.Pod.pb",
      "application/vnd.kubernetes.protobuf;stream=watch",
    ]]
  ) {
    const body = fixture(file);
    const chunks = splitAt(body, [1000, 1001, 9000, 20000]);
    const response = () => new Response(streamOf(chunks), { headers: { "content-type": type } });
    const single = await drain(decodeWatchResponse(response()));
    const batched = await drain(decodeWatchResponseBatches(response()));
    assert.equal(batched.error, undefined);
    assert.deepEqual(batched.values.flat(), single.values, file);
    assert.ok(batched.values.length > 1 && batched.values.length < single.values.length, file);
    // Metadata mode, through options.protobuf, as decodeWatchResponse.
    if (file.endsWith(".pb")) {
      const meta = await drain(decodeWatchResponseBatches(response(), { protobuf: { mode: "metadata" } }));
      assert.ok(meta.values.flat().some((e) => (e as { object?: unknown }).object instanceof KubernetesProtobufObject));
      assert.deepEqual(
        meta.values.flat().map((e) => e.type),
        single.values.map((e) => e.type),
      );
    }
  }
});

test("decodeWatchResponseBatches: a non-2xx response, an unknown Content-Type and a codec of options.codecs", async () => {
  const status = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", reason: "Expired", code: 410 };
  const gone = await drain(decodeWatchResponseBatches(new Response(JSON.stringify(status), { status: 410 })));
  assert.deepEqual(gone, { values: [[{ type: "ERROR", object: status }]], error: undefined });
  const yaml = await drain(
    decodeWatchResponseBatches(new Response("a: 1", { headers: { "content-type": "text/yaml" } })),
  );
  assert.deepEqual(yaml.values, []);
  assert.equal((yaml.error as DecodeError).code, "CONTENT_TYPE_UNSUPPORTED");
  // A codec hands on single events: each comes as a batch of one.
  const csv = await drain(
    decodeWatchResponseBatches(new Response("x,y", { headers: { "content-type": "text/csv" } }), {
      codecs: {
        "text/csv": (body) =>
          body.pipeThrough(
            new TransformStream<Uint8Array, WatchEvent<unknown>>({
              transform(chunk, out) {
                for (const name of new TextDecoder().decode(chunk).split(",")) {
                  out.enqueue({ type: "DELETED", object: { metadata: { name } } });
                }
              },
            }),
          ),
      },
    }),
  );
  assert.deepEqual(csv.values.map((b) => b.length), [1, 1]);
});

test("decodeWatchResponseBatches: a codec's events before its stream fails all arrive, to a slow reader too, then the failure", async () => {
  const reason = new DecodeError("TRUNCATED", 12, "the body ended inside an event");
  const event = (name: string): WatchEvent<unknown> => ({ type: "ADDED", object: { metadata: { name } } });
  const codec = () => failingAfter([event("a"), event("b"), event("c")], reason);
  const response = () => new Response("", { headers: { "content-type": "text/csv" } });
  for (const read of [drain, (s: ReadableStream<WatchEvent<unknown>[]>) => drainSlowly(s, 5)]) {
    const got = await read(decodeWatchResponseBatches(response(), { codecs: { "text/csv": codec } }));
    assert.deepEqual(got.values, [[event("a")], [event("b")], [event("c")]]);
    assert.equal(got.error, reason);
  }
});
