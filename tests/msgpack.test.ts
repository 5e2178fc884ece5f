/**
 * The msgpack event stream pair: round trips of every fixture's events (decoded by a decoder that shares nothing with
 * the encoder), every kind of JSON value (fast-check), split invariance, bad input with offsets, and the streams
 * where `Function` is forbidden (a child process per runtime). Each test that decodes runs with each decoder: the
 * main entry points' and watchwire/msgpack-no-eval's (msgpackr's decoder built without code generation, which must
 * never try it).
 *
 * Expected values never come from the code under test: events come from fixtures or generators, and the byte layout
 * of the stream (header, 4-byte big-endian frame lengths) and hand-made msgpack follow the format's description and
 * the msgpack specification.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import fc from "fast-check";
import { DecodeError } from "../src/errors.ts";
import type { WatchEvent } from "../src/events.ts";
import { JsonWatchEventDecoderStream } from "../src/codec/json_watch_event_decoder_stream.ts";
import { MsgpackEventEncoderStream } from "../src/codec/msgpack/msgpack_event_encoder_stream.ts";
import { MsgpackEventDecoderStream } from "../src/codec/msgpack/msgpack_event_decoder_stream.ts";
import { MsgpackEventDecoderStream as NoEvalMsgpackEventDecoderStream } from "../msgpack_no_eval.ts";
import { builtinDecoders, KubernetesProtobufWatchBodyDecoderStream } from "../kubernetes.ts";
import {
  assertSplitInvariant,
  bytewise,
  concat,
  currentRuntime,
  drain,
  endless,
  errorKey,
  runWithoutCodegen,
  streamOf,
  text,
  utf8,
} from "./_util.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const fixtures = join(root, "fixtures");

/** The stream's first bytes, from the format description: a 5-byte frame holding `WWMP` and version 1. */
const HEADER = [0, 0, 0, 5, 0x57, 0x57, 0x4d, 0x50, 0x01];

async function encode(events: unknown[], options: { maxEventBytes?: number } = {}): Promise<Uint8Array[]> {
  const { values, error } = await drain(
    streamOf(events as WatchEvent[]).pipeThrough(new MsgpackEventEncoderStream(options)),
  );
  if (error !== undefined) throw error;
  return values;
}

/** Where each frame starts and how long its payload is, read from the 4-byte prefixes by hand. */
function frames(bytes: Uint8Array): { at: number; length: number }[] {
  const out: { at: number; length: number }[] = [];
  for (let at = 0; at + 4 <= bytes.length;) {
    const length = ((bytes[at] << 24) >>> 0) + (bytes[at + 1] << 16) + (bytes[at + 2] << 8) + bytes[at + 3];
    out.push({ at, length });
    at += 4 + length;
  }
  return out;
}

/** A frame around `payload`. */
function frame(payload: number[] | Uint8Array): Uint8Array {
  const n = payload.length;
  return Uint8Array.from([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255, ...payload]);
}

// ---- hand-made msgpack (msgpack spec: fixstr a0-bf, fixmap 80-8f, fixarray 90-9f) ----
function str(s: string): number[] {
  const b = Array.from(utf8(s));
  assert.ok(b.length < 32);
  return [0xa0 | b.length, ...b];
}
function map(...entries: [string, number[]][]): number[] {
  return [0x80 | entries.length, ...entries.flatMap(([k, v]) => [...str(k), ...v])];
}
/** `{"type":"ADDED","object":{"x": value}}` with `value` given as msgpack bytes. */
const eventWithX = (value: number[]) => map(["type", str("ADDED")], ["object", map(["x", value])]);

// ---- fixtures ----

function fixtureEvents(name: string): WatchEvent[] {
  return readFileSync(join(fixtures, name), "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l).event);
}

const eventFixtures = readdirSync(fixtures).filter((f) => f.endsWith(".events.ndjson")).sort();
const streamsDir = join(fixtures, "kubernetes", "streams");
const kubernetesStreams = existsSync(streamsDir)
  ? readdirSync(streamsDir).filter((f) => f.endsWith(".json")).sort()
  : [];

test("msgpack: the fixtures are there (every *.events.ndjson recorded from the test servers)", () => {
  for (const base of ["node-http-watch", "node-http-watch-gzip", "node-http-expired", "deno-serve-watch"]) {
    assert.ok(eventFixtures.includes(`${base}.events.ndjson`), base);
  }
  assert.ok(eventFixtures.length >= 7);
});

/** `bytes` cut into pieces of `size` bytes (copies), as a network delivering small reads. */
function pieces(bytes: Uint8Array, size: number): Uint8Array[] {
  return Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.slice(i * size, (i + 1) * size));
}

// JSON text with escapes only (no literal non-ASCII: Bun rewrites it inside String.raw).
const EDGE_JSON = String.raw`{"type":"MODIFIED","object":{
  "kind":"ConfigMap","metadata":{"name":"edge","resourceVersion":"1"},
  "strings":["", "ascii", "na\u00efve \u2638 \u65e5\u672c \u2014 caf\u00e9 \ud83d\ude80", "\ud800", "a\udc00b",
    "\udbff\udfff", "x\ud83d", "${"long ".repeat(40)}\ud800", "${"\\u00e9".repeat(70)}\udfff", "\u0000\u001f\u2028"],
  "numbers":[0, -0, 1, -1, 31, 32, 127, 128, 255, 256, 65535, 65536, 2147483647, 2147483648, -2147483648,
    -2147483649, 4294967295, 4294967296, 9007199254740991, 9007199254740993, 18446744073709551616, -9007199254740993,
    0.1, -2.5, 1e300, -1e-300, 5e-324, 1.7976931348623157e308, 3.4028234663852886e38],
  "literals":[true, false, null], "empty":{"o":{},"a":[],"s":""}, "nested":[[[[{"a":[{}]}]]]],
  "keys":{"__proto__":{"polluted":true},"__keys__":1,"constructor":2,"toString":3,"hasOwnProperty":4,"":5,
    "0":6,"1":7,"01":8,"-1":9,"4294967295":10,"4294967294":11,"\ud800":12,"k\udc00":13,"valueOf":null},
  "shapes":[{"x":1},{"x":1,"__keys__":2},{"x":3},{"__proto__":4,"x":5},{"x":6}],
  "data":{"big":"${"0123456789".repeat(3000)}"}
}}`;

/** Single UTF-16 code units, lone surrogates included, and a few fixed interesting ones. */
const unit = fc.oneof(
  fc.constantFrom("a", "Z", " ", "\n", '"', "\\", "\u00e9", "\u2638", "\u65e5", "\u0000", "\ud800", "\udc00"),
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
);
const anyText = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit, maxLength: 10 }) },
  { weight: 1, arbitrary: fc.string({ unit, minLength: 60, maxLength: 90 }) }, // msgpackr's other string path
);
const key = fc.oneof(
  anyText,
  fc.constantFrom("__proto__", "__keys__", "constructor", "toString", "", "0", "1", "01", "4294967295", "type"),
);
const number = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, -(2 ** 53) - 2, 2 ** 64, 1e300, 5e-324),
);
const { object: jsonObject } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    number,
    anyText,
    tie("array"),
    tie("object"),
  ),
  array: fc.array(tie("value"), { maxLength: 5 }),
  // Object.fromEntries makes own data properties, as JSON.parse does (a "__proto__" key included).
  object: fc.array(fc.tuple(key, tie("value")), { maxLength: 6 }).map((entries) => Object.fromEntries(entries)),
}));
const watchEvent = fc.oneof(
  // Plain objects, as JSON.parse makes (fc.record's have no prototype).
  fc.tuple(fc.constantFrom("ADDED", "MODIFIED", "DELETED", "ERROR"), jsonObject).map(([type, object]) => ({
    type,
    object,
  })),
  fc.tuple(jsonObject, anyText).map(([extra, rv]) => ({
    type: "BOOKMARK",
    object: { ...extra, metadata: { resourceVersion: rv } },
  })),
);

/** Freezes `value` and everything reachable through its own enumerable properties, each object before its properties. */
function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
}

/**
 * The decoders under test: the one of the main entry points, and the one of watchwire/msgpack-no-eval (msgpackr's
 * decoder built without code generation), which must decode everything to the same events and fail the same way.
 */
const DECODERS = [
  {
    entry: "watchwire",
    Decoder: MsgpackEventDecoderStream,
    module: "src/codec/msgpack/msgpack_event_decoder_stream.ts",
  },
  { entry: "watchwire/msgpack-no-eval", Decoder: NoEvalMsgpackEventDecoderStream, module: "msgpack_no_eval.ts" },
] as const;

for (const { entry, Decoder } of DECODERS) {
  const decoder = (options: { maxEventBytes?: number } = {}) => (source: ReadableStream<Uint8Array>) =>
    source.pipeThrough(new Decoder(options));

  const decodeAll = (bytes: Uint8Array | Uint8Array[], options: { maxEventBytes?: number } = {}) =>
    drain(decoder(options)(streamOf(Array.isArray(bytes) ? bytes : [bytes])));

  for (const name of eventFixtures) {
    test(`msgpack (${entry}): round trip of fixtures/${name}, decoded by a separate decoder, whole, bytewise and split`, async () => {
      const events = fixtureEvents(name);
      const bytes = concat(await encode(events));
      const { values, error } = await assertSplitInvariant(bytes, decoder(), { runs: 40 });
      assert.equal(error, undefined);
      assert.deepStrictEqual(values, events);
      assert.equal(JSON.stringify(values), JSON.stringify(events)); // key order too
    });
  }

  // NDJSON watch streams of every built-in kind (written by tools/refgen), as many as there are. The msgpack pair
  // carries exactly what the JSON decoder accepts: where it rejects an event (e.g. a BOOKMARK without
  // metadata.resourceVersion), the events before it round trip and the msgpack encoder rejects that event too.
  for (const name of kubernetesStreams) {
    test(`msgpack (${entry}): round trip of the events of fixtures/kubernetes/streams/${name}`, async () => {
      const json = new Uint8Array(readFileSync(join(streamsDir, name)));
      const parsed = await drain(streamOf([json]).pipeThrough(new JsonWatchEventDecoderStream()));
      const bytes = concat(await encode(parsed.values));
      for (const input of [[bytes], pieces(bytes, 61)]) {
        const { values, error } = await decodeAll(input);
        assert.equal(errorKey(error), undefined);
        assert.deepStrictEqual(values, parsed.values);
        assert.equal(JSON.stringify(values), JSON.stringify(parsed.values));
      }
      if (parsed.error !== undefined) {
        assert.ok(parsed.error instanceof DecodeError && parsed.error.code.startsWith("EVENT_"), String(parsed.error));
        const line = text(json.subarray(parsed.error.offset)).split("\n")[0];
        await assert.rejects(encode([JSON.parse(line)]), TypeError);
      }
    });
  }

  // Metadata mode's objects (KubernetesProtobufObject, their metadata's collections and managedFields[].fieldsV1
  // decoded on first read) are recorded as their JSON, frozen or not: what a recorder of a metadata-only watch writes.
  test(`msgpack (${entry}): metadata-mode events of every built-in kind's protobuf stream record as their JSON`, async () => {
    let objects = 0;
    for (const name of kubernetesStreams) {
      const pb = new Uint8Array(readFileSync(join(streamsDir, name.replace(/\.json$/, ".pb"))));
      // Each decoding's objects fresh: nothing lazy read before the freeze (the expected JSON from another decoding).
      const decodeStream = async () =>
        (await drain(
          streamOf([pb]).pipeThrough(
            new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders, mode: "metadata" }),
          ),
        ))
          .values;
      // Events up to the first one refused (as the JSON round trip above, a BOOKMARK without a resourceVersion).
      const expected = JSON.parse(JSON.stringify(await decodeStream()));
      for (const freeze of [false, true]) {
        const events = await decodeStream();
        if (freeze) deepFreeze(events);
        const { values, error } = await decodeAll(concat(await encode(events)));
        assert.equal(errorKey(error), undefined, name);
        assert.deepStrictEqual(values, expected, `${name}${freeze ? ", frozen" : ""}`);
        objects += events.length;
      }
    }
    assert.ok(objects > 2 * kubernetesStreams.length, `${objects} events`);
  });

  // ---- the format ----

  test(`msgpack (${entry}): the stream is the header, then one length-prefixed frame per event, one chunk each`, async () => {
    const events = fixtureEvents("node-http-watch.events.ndjson");
    const chunks = await encode(events);
    assert.equal(chunks.length, events.length + 1);
    assert.deepEqual(Array.from(chunks[0]), HEADER);
    for (const chunk of chunks) assert.equal(chunk.constructor, Uint8Array); // not a Node Buffer
    for (const chunk of chunks.slice(1)) assert.deepEqual(frames(chunk), [{ at: 0, length: chunk.length - 4 }]);
    // No events: the header alone, which decodes to no events.
    const empty = await encode([]);
    assert.deepEqual(empty.map((c) => Array.from(c)), [HEADER]);
    assert.deepEqual(await decodeAll(empty), { values: [], error: undefined });
  });

  test(`msgpack (${entry}): records: a shape's keys are written once per stream, then only its values`, async () => {
    const event = fixtureEvents("node-http-watch.events.ndjson")[0];
    const chunks = await encode([event, event, event]);
    const has = (bytes: Uint8Array, s: string) => text(bytes).includes(s);
    for (const key of ["resourceVersion", "creationTimestamp", "terminationMessagePolicy"]) {
      assert.ok(has(chunks[1], key), key);
      assert.ok(!has(chunks[2], key) && !has(chunks[3], key), key);
    }
    assert.ok(chunks[2].length < chunks[1].length * 0.8);
    assert.deepEqual(Array.from(chunks[3]), Array.from(chunks[2]));
    // Much smaller than the JSON, which repeats every key in every event.
    const json = utf8(JSON.stringify(event)).length;
    assert.ok(chunks[2].length < json * 0.6, `${chunks[2].length} vs ${json}`);
  });

  test(`msgpack (${entry}): each encoder has its own record table; concatenated recordings decode to all their events`, async () => {
    const a = fixtureEvents("node-http-watch.events.ndjson");
    const b = fixtureEvents("deno-serve-expired.events.ndjson").concat(a.slice(0, 3));
    const one = concat(await encode(a));
    const two = concat(await encode(b));
    const { values, error } = await assertSplitInvariant(concat([one, two]), decoder(), { runs: 20 });
    assert.equal(error, undefined);
    assert.deepStrictEqual(values, [...a, ...b]);
  });

  test(`msgpack (${entry}): many shapes: two-byte record ids, and a record table that runs full and reuses ids`, async () => {
    // 6000 shapes (one key each, then pairs), more than one stream's table holds, each seen twice, far apart.
    const shapes = Array.from({ length: 6000 }, (_, i) => i < 3000 ? { [`k${i}`]: i } : { [`k${i}`]: i, x: [i] });
    const batch = (from: number) => ({ type: "ADDED", object: { items: shapes.slice(from, from + 500) } });
    const events = [0, 1].flatMap(() => Array.from({ length: 12 }, (_, b) => batch(b * 500)));
    const bytes = concat(await encode(events));
    for (const input of [[bytes], pieces(bytes, 777)]) {
      const { values, error } = await decodeAll(input);
      assert.equal(error, undefined);
      assert.deepStrictEqual(values, events);
    }
  });

  test(`msgpack (${entry}): a plain msgpack map per frame (any writer, no records) decodes`, async () => {
    const wire = concat([
      Uint8Array.from(HEADER),
      frame(
        map(["type", str("DELETED")], ["object", map(["kind", str("Pod")], ["n", [0xcf, 0, 0, 0, 1, 0, 0, 0, 0]])]),
      ),
    ]);
    const { values, error } = await decodeAll(wire);
    assert.equal(error, undefined);
    assert.deepStrictEqual(values, [{ type: "DELETED", object: { kind: "Pod", n: 2 ** 32 } }]);
  });

  // ---- everything JSON carries ----

  test(`msgpack (${entry}): lossless for everything JSON.parse produces (lone surrogates, -0, big integers, __proto__ keys)`, async () => {
    const event = JSON.parse(EDGE_JSON);
    // The same object again later, and one whose shapes come in the other order, share the record table.
    const events = [event, JSON.parse(EDGE_JSON), {
      type: "ADDED",
      object: { shapes: [{ x: 1 }, { x: 1, __keys__: 2 }] },
    }];
    const bytes = concat(await encode(events));
    const { values, error } = await assertSplitInvariant(bytes, decoder(), { runs: 20 });
    assert.equal(error, undefined);
    assert.deepStrictEqual(values, events);
    const out = values[0].object as Record<string, Record<string, unknown> & unknown[]>;
    assert.ok(Object.is(out.numbers[1], -0));
    assert.equal(out.numbers[20], 2 ** 64);
    assert.equal(out.strings[3], "\ud800");
    assert.equal(out.strings[7], "long ".repeat(40) + "\ud800");
    // "__proto__" is an own property, as JSON.parse makes it, and the prototype is untouched.
    assert.ok(Object.hasOwn(out.keys, "__proto__"));
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(out.keys, "__proto__")?.value, { polluted: true });
    assert.equal(Object.getPrototypeOf(out.keys), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepStrictEqual(Object.keys(out.keys), Object.keys(event.object.keys));
    assert.equal(JSON.stringify(values), JSON.stringify(events));
  });

  test(`msgpack (${entry}): lossless for each special value alone`, async () => {
    const cases = [
      String.raw`{"n":-0}`,
      String.raw`{"list":[1,-0.0]}`,
      String.raw`{"s":"\ud800"}`,
      String.raw`{"s":"${"x".repeat(100)}\udc00"}`,
      String.raw`{"\udbff":1}`,
      String.raw`{"__proto__":{"a":1}}`,
      String.raw`{"o":{"__proto__":null}}`,
      String.raw`{"o":[{"x":1},{"x":1,"__keys__":2},{"x":3}]}`,
      String.raw`{"o":[{"x":1,"__keys__":2},{"x":1},{"x":3}]}`,
    ];
    for (const c of cases) {
      const events = [0, 1].map(() => JSON.parse(`{"type":"ADDED","object":${c}}`));
      const { values, error } = await decodeAll(await encode(events));
      assert.equal(error, undefined, c);
      assert.deepStrictEqual(values, events, c);
    }
  });

  test(`msgpack (${entry}): round trip of random JSON values in random event sequences (fast-check)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(watchEvent, { minLength: 1, maxLength: 8 }), async (events) => {
        const chunks = await encode(events);
        const { values, error } = await decodeAll(chunks);
        assert.equal(error, undefined);
        assert.deepStrictEqual(values, events);
        assert.equal(JSON.stringify(values), JSON.stringify(events));
      }),
      { numRuns: 300 },
    );
  });

  test(`msgpack (${entry}): values JSON does not have come out as through JSON.stringify + JSON.parse`, async () => {
    const event = {
      type: "ADDED",
      object: {
        when: new Date(Date.UTC(2025, 0, 15)),
        missing: undefined,
        list: [undefined, NaN, Infinity, () => 1],
        fn: () => 1,
        map: new Map([["a", 1]]),
        withToJSON: { toJSON: () => ({ replaced: -0 }) },
        keep: { __proto__x: "\ud800" },
      },
    };
    const { values, error } = await decodeAll(await encode([event]));
    assert.equal(error, undefined);
    assert.deepStrictEqual(values, [JSON.parse(JSON.stringify(event))]);
  });

  // ---- encoder faults ----

  test(`msgpack (${entry}): the encoder fails on a non-event after delivering the chunks before it`, async () => {
    const good = fixtureEvents("node-http-expired.events.ndjson")[0];
    for (const bad of [{ type: "NOPE", object: {} }, { type: "ADDED" }, [1], 7n]) {
      const { values, error } = await drain(
        streamOf<unknown>([good, bad, good]).pipeThrough(
          new MsgpackEventEncoderStream() as unknown as TransformStream<unknown, Uint8Array>,
        ),
      );
      assert.ok(error instanceof TypeError, String(error));
      assert.equal(values.length, 2); // header and the first event
      assert.deepStrictEqual((await decodeAll(values)).values, [good]);
    }
  });

  test(`msgpack (${entry}): the encoder refuses an event longer than maxEventBytes, as the decoder would`, async () => {
    const events = fixtureEvents("node-http-watch.events.ndjson");
    const sizes = frames(concat(await encode(events))).slice(1).map((f) => f.length);
    const largest = Math.max(...sizes);
    const first = sizes.indexOf(largest);
    const { values, error } = await drain(
      streamOf(events).pipeThrough(new MsgpackEventEncoderStream({ maxEventBytes: largest - 1 })),
    );
    assert.ok(error instanceof RangeError);
    assert.equal(values.length, 1 + first);
    assert.deepStrictEqual((await decodeAll(values)).values, events.slice(0, first));
    assert.throws(() => new MsgpackEventEncoderStream({ maxEventBytes: -1 }), RangeError);
  });

  // ---- bad input ----

  test(`msgpack (${entry}): truncated anywhere: the complete events, then TRUNCATED at the frame cut short`, async () => {
    const events = fixtureEvents("node-http-watch.events.ndjson").slice(0, 4);
    const bytes = concat(await encode(events));
    const layout = frames(bytes);
    const step = Math.max(1, Math.floor(bytes.length / 400));
    for (let cut = 0; cut < bytes.length; cut += cut < 64 ? 1 : step) {
      const { values, error } = await decodeAll(bytes.subarray(0, cut));
      // Frames wholly before the cut are complete; a cut inside a frame is an error at its start (a cut between
      // frames leaves a shorter stream, except before the header is complete).
      const broken = cut === 0 ? layout[0] : layout.find((f) => f.at < cut && f.at + 4 + f.length > cut);
      const complete = layout.filter((f) => f.at + 4 + f.length <= cut).length;
      assert.equal(errorKey(error), broken && `TRUNCATED@${broken.at}`, `cut at ${cut}`);
      assert.deepStrictEqual(values, events.slice(0, Math.max(0, complete - 1)), `cut at ${cut}`);
    }
  });

  test(`msgpack (${entry}): an oversized event fails at its length prefix, before its bytes arrive`, async () => {
    // A small event, then a large one.
    const events = [
      fixtureEvents("node-http-expired.events.ndjson")[0],
      fixtureEvents("node-http-watch.events.ndjson")[0],
    ];
    const bytes = concat(await encode(events));
    const layout = frames(bytes);
    assert.ok(layout[2].length > layout[1].length);
    const at = bytes.length;
    // 16 MiB + 1 announced, nothing after it, and the input never ends.
    const prefix = Uint8Array.of(0x01, 0x00, 0x00, 0x01);
    const { values, error } = await drain(decoder()(endless([bytes, prefix])));
    assert.equal(errorKey(error), `MESSAGE_TOO_LARGE@${at}`);
    assert.deepStrictEqual(values, events);
    // Exactly the limit passes the prefix (and then is cut short).
    const limit = Uint8Array.of(0x01, 0x00, 0x00, 0x00);
    assert.equal(errorKey((await decodeAll([bytes, limit])).error), `TRUNCATED@${at}`);
    // A smaller limit: the second event is over it.
    const small = await assertSplitInvariant(bytes, decoder({ maxEventBytes: layout[1].length }), { runs: 20 });
    assert.equal(errorKey(small.error), `MESSAGE_TOO_LARGE@${layout[2].at}`);
    assert.deepStrictEqual(small.values, events.slice(0, 1));
    assert.throws(() => new Decoder({ maxEventBytes: 2 ** 32 }), RangeError);
  });

  test(`msgpack (${entry}): another format or version fails at the first wrong byte; empty input is truncated`, async () => {
    const json = utf8('{"type":"ADDED","object":{}}\n');
    assert.equal(errorKey((await decodeAll(json)).error), "MESSAGE_INVALID@0");
    for (let i = 0; i < HEADER.length; i++) {
      const wrong = Uint8Array.from(HEADER);
      wrong[i] ^= 0x20;
      const result = await assertSplitInvariant(concat([wrong, new Uint8Array(20)]), decoder(), { runs: 5 });
      assert.equal(errorKey(result.error), `MESSAGE_INVALID@${i}`);
    }
    const v2 = Uint8Array.from(HEADER);
    v2[8] = 2;
    const { error } = await decodeAll(v2);
    assert.match((error as Error).message, /version 2 is not supported/);
    assert.equal(errorKey((await decodeAll([])).error), "TRUNCATED@0");
    assert.equal(errorKey((await decodeAll(Uint8Array.from(HEADER.slice(0, 6)))).error), "TRUNCATED@0");
  });

  test(`msgpack (${entry}): a frame that is not one msgpack JSON value, or not a watch event, fails at that frame`, async () => {
    const good = eventWithX(str("ok"));
    const cases: [string, number[], string][] = [
      ["empty frame", [], "MESSAGE_INVALID"],
      ["never-used byte 0xc1", [0xc1], "MESSAGE_INVALID"],
      ["bytes after the value", [...good, 0xc0], "MESSAGE_INVALID"],
      ["value cut short inside the frame", good.slice(0, -2), "MESSAGE_INVALID"],
      ["binary data", eventWithX([0xc4, 2, 1, 2]), "MESSAGE_INVALID"],
      ["undefined (fixext 1 type 0)", eventWithX([0xd4, 0, 0]), "MESSAGE_INVALID"],
      ["NaN", eventWithX([0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0]), "MESSAGE_INVALID"],
      ["timestamp extension", eventWithX([0xd6, 0xff, 0, 0, 0, 1]), "MESSAGE_INVALID"],
      ["unknown extension", eventWithX([0xd4, 0x31, 0]), "MESSAGE_INVALID"],
      ["reference extension", eventWithX([0xd6, 0x70, 0, 0, 0, 1]), "MESSAGE_INVALID"],
      ["a string", str("ADDED"), "EVENT_INVALID"],
      ["object not an object", map(["type", str("ADDED")], ["object", [0x90]]), "EVENT_INVALID"],
      ["unknown type", map(["type", str("NOPE")], ["object", [0x80]]), "EVENT_TYPE_UNKNOWN"],
    ];
    for (const [what, payload, code] of cases) {
      const first = frame(good);
      const wire = concat([Uint8Array.from(HEADER), first, frame(payload), frame(good)]);
      const { values, error } = await assertSplitInvariant(wire, decoder(), { runs: 10 });
      assert.equal(errorKey(error), `${code}@${HEADER.length + first.length}`, what);
      assert.ok(error instanceof DecodeError && error.message.length > 0);
      assert.deepStrictEqual(values, [{ type: "ADDED", object: { x: "ok" } }], what);
    }
  });

  test(`msgpack (${entry}): random garbage after the header fails with a DecodeError inside the input, never hangs`, async () => {
    const events = fixtureEvents("node-http-watch.events.ndjson").slice(0, 3);
    const good = concat(await encode(events));
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 200 }),
        fc.integer({ min: HEADER.length, max: good.length }),
        async (garbage, at) => {
          // Garbage overwriting part of a good stream, and garbage after the header alone.
          for (const wire of [concat([good.subarray(0, at), garbage]), concat([Uint8Array.from(HEADER), garbage])]) {
            const { error } = await decodeAll(wire.length < 4000 ? bytewise(wire) : [wire]);
            if (error === undefined) continue; // garbage can happen to be valid frames
            assert.ok(error instanceof DecodeError, String(error));
            assert.ok(error.offset >= 0 && error.offset <= wire.length);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
}

// ---- where Function is forbidden ----

// The main entry points' decoder tries `new Function` and falls back; watchwire/msgpack-no-eval's never tries.
for (const { entry, module } of DECODERS) {
  const tries = entry === "watchwire";
  test(
    `msgpack (${entry}): round trips in a fresh process where Function is forbidden (${
      tries ? "msgpackr falls back" : "never tried"
    }, same events)`,
    async () => {
      const runtime = currentRuntime();
      const dir = mkdtempSync(join(tmpdir(), "watchwire-msgpack-"));
      const fixture = join(fixtures, "node-http-watch.events.ndjson");
      const events = fixtureEvents("node-http-watch.events.ndjson");
      const fromParent = join(dir, "parent.wwmp");
      const fromChild = join(dir, "child.wwmp");
      const url = (path: string) => pathToFileURL(join(root, path)).href;
      const child = join(dir, "child.mjs");
      writeFileSync(
        child,
        `import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
const RealFunction = globalThis.Function;
let codegen = "allowed";
try { RealFunction("return 1")(); } catch { codegen = "blocked"; }
// The runtime's own modules that msgpackr imports, loaded first: Bun builds its internal modules with the global
// Function when they first load.
await import("node:stream");
await import("node:module");
// Likewise the fetch classes: Node 26 loads them (undici) on first use, and they read the global Function as they load.
await new Response(new Blob(["x"]).stream()).arrayBuffer();
// Before msgpackr loads: every attempt to compile code from a string fails, as under a CSP or in a Worker.
let attempts = 0;
globalThis.Function = function Function() {
  attempts++;
  throw new EvalError("Code generation from strings disallowed for this context");
};
const { MsgpackEventEncoderStream } = await import(${
          JSON.stringify(url("src/codec/msgpack/msgpack_event_encoder_stream.ts"))
        });
const { MsgpackEventDecoderStream } = await import(${JSON.stringify(url(module))});
const events = readFileSync(${
          JSON.stringify(fixture)
        }, "utf8").split("\\n").filter(Boolean).map((l) => JSON.parse(l).event);
// Twice the events, so that msgpackr reads each shape often enough to try compiling a reader for it.
const twice = [...events, ...events];
const decoded = [];
const input = new Blob([readFileSync(${JSON.stringify(fromParent)})]).stream();
for await (const e of input.pipeThrough(new MsgpackEventDecoderStream())) decoded.push(e);
assert.deepStrictEqual(decoded, twice);
const bytes = ReadableStream.from(twice).pipeThrough(new MsgpackEventEncoderStream());
writeFileSync(${JSON.stringify(fromChild)}, new Uint8Array(await new Response(bytes).arrayBuffer()));
console.log(JSON.stringify({ attempts, codegen, decoded: decoded.length }));
`,
      );
      const twice = [...events, ...events];
      writeFileSync(fromParent, concat(await encode(twice)));
      try {
        const report = runWithoutCodegen(child, root) as { attempts: number; decoded: number; codegen: string };
        assert.equal(report.decoded, twice.length);
        if (tries) assert.ok(report.attempts > 0, "msgpackr never tried new Function: the fallback was not exercised");
        else assert.equal(report.attempts, 0, "watchwire/msgpack-no-eval's decoder tried new Function");
        // Node and Deno run the child with V8's code generation from strings off, as in a Worker; Bun has no such flag.
        assert.equal(report.codegen, runtime === "bun" ? "allowed" : "blocked");
        const back = await drain(
          streamOf([new Uint8Array(readFileSync(fromChild))]).pipeThrough(new MsgpackEventDecoderStream()),
        );
        assert.equal(back.error, undefined);
        assert.deepStrictEqual(back.values, twice);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
