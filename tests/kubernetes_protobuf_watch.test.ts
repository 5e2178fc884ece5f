import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  DecodeError,
  decodeWatchResponse,
  type KubernetesProtobufDecoders,
  type KubernetesProtobufInputViews,
  type KubernetesProtobufMode,
  KubernetesProtobufObject,
  type WatchEvent,
} from "../mod.ts";
import { LengthPrefixedDecoderStream, ProtobufReader } from "../wire.ts";
import {
  builtinDecoders,
  decodeKubernetesProtobufObject,
  type JsonObject,
  KubernetesProtobufWatchBodyDecoderStream,
  KubernetesProtobufWatchFrameDecoder,
  KubernetesProtobufWatchFrameDecoderStream,
  type ObjectDecoder,
} from "../kubernetes.ts";
import { assertSplitInvariant, bytewise, concat, cutsFor, drain, splitAt, streamOf } from "./_util.ts";
import { type Bytes, envelope, framed, int, len, MAGIC, varint, watchEvent } from "./_protobuf.ts";

// ObjectMeta as Kubernetes numbers its fields (name 1, namespace 3, resourceVersion 6, annotations 12).
function meta(name: string, resourceVersion: string, namespace?: string, annotations: Record<string, string> = {}) {
  const out = [...len(1, name), ...(namespace === undefined ? [] : len(3, namespace)), ...len(6, resourceVersion)];
  for (const [k, v] of Object.entries(annotations)) out.push(...len(12, [...len(1, k), ...len(2, v)]));
  return out;
}

// A made-up kind, example.com/v1 Widget {metadata = 1, spec = 2 {size = 1 (varint), color = 2}, status = 3 {ready = 1}}.
function widget(name: string, rv: string, size: number, color: string, ready = false): Bytes {
  return [
    ...len(1, meta(name, rv, "default")),
    ...len(2, [...int(1, size), ...len(2, color)]),
    ...len(3, int(1, ready ? 1 : 0)),
  ];
}
/** What the hand-written Widget decoder below makes of `widget(...)`. */
function widgetJson(name: string, rv: string, size: number, color: string, ready = false) {
  return {
    kind: "Widget",
    apiVersion: "example.com/v1",
    metadata: { name, namespace: "default", resourceVersion: rv },
    spec: { size, color },
    status: { ready },
  };
}

// ---- test decoders ----
// MOCKS: hand-written decoders of a made-up kind and of the ObjectMeta fields above, standing in for the generated
// decoders (which have their own tests against Go's fixtures). They follow the ObjectDecoder contract: decode
// bytes[start..end) into target, errors at baseOffset + position (through ProtobufReader).

let widgetCalls = 0;
let metaCalls = 0;

const objectMeta: ObjectDecoder = (bytes, start, end, target, baseOffset) => {
  metaCalls++;
  const r = new ProtobufReader(bytes, baseOffset, start, end);
  while (!r.done) {
    const tag = r.tag();
    if (tag === ((1 << 3) | 2)) target.name = r.string();
    else if (tag === ((3 << 3) | 2)) target.namespace = r.string();
    else if (tag === ((6 << 3) | 2)) target.resourceVersion = r.string();
    else if (tag === ((12 << 3) | 2)) {
      const entry = r.message();
      let key = "";
      let value = "";
      while (!entry.done) {
        const t = entry.tag();
        if (t === ((1 << 3) | 2)) key = entry.string();
        else if (t === ((2 << 3) | 2)) value = entry.string();
        else entry.skip(t);
      }
      ((target.annotations ??= {}) as Record<string, string>)[key] = value;
    } else r.skip(tag);
  }
  return target;
};

const widgetDecoder: ObjectDecoder = (bytes, start, end, target, baseOffset) => {
  widgetCalls++;
  const r = new ProtobufReader(bytes, baseOffset, start, end);
  while (!r.done) {
    const tag = r.tag();
    if (tag === ((1 << 3) | 2)) {
      const m = r.message();
      target.metadata = objectMeta(bytes, m.pos, m.end, {}, baseOffset);
    } else if (tag === ((2 << 3) | 2)) {
      const s = r.message();
      const spec: JsonObject = {};
      while (!s.done) {
        const t = s.tag();
        if (t === 1 << 3) spec.size = s.int64();
        else if (t === ((2 << 3) | 2)) spec.color = s.string();
        else s.skip(t);
      }
      target.spec = spec;
    } else if (tag === ((3 << 3) | 2)) {
      const s = r.message();
      const status: JsonObject = { ready: false };
      while (!s.done) {
        const t = s.tag();
        if (t === 1 << 3) status.ready = s.bool();
        else s.skip(t);
      }
      target.status = status;
    } else r.skip(tag);
  }
  return target;
};

const decoders: KubernetesProtobufDecoders = {
  decoder: (apiVersion, kind) => apiVersion === "example.com/v1" && kind === "Widget" ? widgetDecoder : undefined,
  objectMeta,
  metadataDecoder: (apiVersion, kind) => apiVersion === "example.com/v1" && kind === "Widget" ? objectMeta : undefined,
};

// metav1.Status {metadata = 1, status = 2, message = 3, reason = 4, code = 6}: the ERROR of a watch.
const expiredStatus = [
  ...len(1, []),
  ...len(2, "Failure"),
  ...len(3, "too old resource version: 1 (5)"),
  ...len(4, "Expired"),
  ...int(6, 410),
];
const expiredJson = {
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: "too old resource version: 1 (5)",
  reason: "Expired",
  code: 410,
};

const sequence: Bytes[] = [
  watchEvent("ADDED", envelope("example.com/v1", "Widget", widget("a", "5", 3, "red"))),
  watchEvent("MODIFIED", envelope("example.com/v1", "Widget", widget("a", "6", 4, "blue", true))),
  watchEvent(
    "BOOKMARK",
    envelope("example.com/v1", "Widget", len(1, meta("", "7", undefined, { "k8s.io/initial-events-end": "true" }))),
  ),
  watchEvent("DELETED", envelope("example.com/v1", "Widget", widget("a", "8", 4, "blue", true))),
  watchEvent("ERROR", envelope("v1", "Status", expiredStatus)),
];
const sequenceJson = [
  { type: "ADDED", object: widgetJson("a", "5", 3, "red") },
  { type: "MODIFIED", object: widgetJson("a", "6", 4, "blue", true) },
  {
    type: "BOOKMARK",
    object: {
      kind: "Widget",
      apiVersion: "example.com/v1",
      metadata: { name: "", resourceVersion: "7", annotations: { "k8s.io/initial-events-end": "true" } },
    },
  },
  { type: "DELETED", object: widgetJson("a", "8", 4, "blue", true) },
  { type: "ERROR", object: expiredJson },
];

const fused = (
  options: { mode?: KubernetesProtobufMode; maxEventBytes?: number; inputViews?: KubernetesProtobufInputViews } = {},
) =>
(source: ReadableStream<Uint8Array>) =>
  source.pipeThrough(new KubernetesProtobufWatchBodyDecoderStream<unknown>({ decoders, ...options }));
const staged = (mode?: KubernetesProtobufMode) => (source: ReadableStream<Uint8Array>) =>
  source.pipeThrough(new LengthPrefixedDecoderStream()).pipeThrough(
    new KubernetesProtobufWatchFrameDecoderStream<unknown>({ decoders, mode }),
  );

/** Events as comparable data: lazy objects as their JSON, their raw bytes and their full decoding. */
function plain(events: WatchEvent<unknown>[]): unknown[] {
  return events.map((e) => {
    const o = e.object;
    if (!(o instanceof KubernetesProtobufObject)) return { type: e.type, object: o };
    return { type: e.type, lazy: JSON.parse(JSON.stringify(o)), raw: Array.from(o.raw), full: o.decode() };
  });
}

// ---- tests ----

test("k8s protobuf watch: hand-made frames of every event type decode to the API server's JSON events", async () => {
  const input = framed(...sequence);
  for (const decode of [fused(), staged()]) {
    for (const chunks of [[input], bytewise(input)]) {
      const { values, error } = await drain(decode(streamOf(chunks)));
      assert.equal(error, undefined);
      assert.deepEqual(values, sequenceJson);
      // Key order as Go's encoding/json writes it: kind, apiVersion, then the object's fields.
      assert.equal(JSON.stringify(values[0]), JSON.stringify(sequenceJson[0]));
      assert.equal(JSON.stringify(values[4]), JSON.stringify(sequenceJson[4]));
    }
  }
  assert.deepEqual((await drain(fused()(streamOf<Uint8Array>([])))).values, []);
});

test("k8s protobuf watch: unknown fields are skipped at every level; later fields replace earlier ones", async () => {
  const fixed64 = [(9 << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8];
  const fixed32 = [(10 << 3) | 5, 1, 2, 3, 4];
  const unknown = [...int(15, 300), ...fixed64, ...fixed32, ...len(99, "x")];
  const object = [
    ...MAGIC,
    ...unknown,
    ...len(1, [...unknown, ...len(1, "example.com/v1"), ...unknown, ...len(2, "Gadget"), ...unknown]),
    // typeMeta again: merges (kind replaced, apiVersion kept)
    ...len(1, len(2, "Widget")),
    ...len(2, [0xff]), // a first raw, replaced by the second
    ...unknown,
    ...len(2, widget("b", "9", 1, "green")),
    ...len(4, "application/vnd.kubernetes.protobuf"),
  ];
  const event = [
    ...unknown,
    ...len(1, "DELETED"),
    ...len(2, [...unknown, ...len(1, [0])]), // a RawExtension whose raw is replaced by the next occurrence's
    ...len(1, "ADDED"),
    ...len(2, [...len(1, object), ...unknown]),
    ...unknown,
  ];
  const { values, error } = await drain(fused()(streamOf([framed(event)])));
  assert.equal(error, undefined);
  assert.deepEqual(values, [{ type: "ADDED", object: widgetJson("b", "9", 1, "green") }]);
});

test("k8s protobuf watch: split invariance over random event sequences and random splits (down to single bytes)", async () => {
  const arbitraryEvent = fc.oneof(
    fc.record({ name: fc.string({ maxLength: 20 }), size: fc.nat(), color: fc.string({ maxLength: 300 }) }).map((w) =>
      watchEvent("MODIFIED", envelope("example.com/v1", "Widget", widget(w.name, "1", w.size, w.color)))
    ),
    fc.string({ maxLength: 40 }).map((m) =>
      watchEvent("ERROR", envelope("v1", "Status", [...len(3, m), ...int(6, 500)]))
    ),
    fc.constant(watchEvent("ADDED", envelope("other.io/v2", "Thing", len(1, meta("t", "2"))))),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(arbitraryEvent, { maxLength: 8 }),
      fc.constantFrom<KubernetesProtobufMode>("full", "metadata"),
      fc.constantFrom<KubernetesProtobufInputViews>("bounded", "always"),
      async (events, mode, inputViews) => {
        await assertSplitInvariant(framed(...events), fused({ mode, inputViews }), { runs: 10, normalize: plain });
      },
    ),
    { numRuns: 30 },
  );
  // And the fixed sequence, with a fault at its end.
  const bad = concat([framed(...sequence), framed(watchEvent("ADDED", [...MAGIC]))]);
  const { values, error } = await assertSplitInvariant(bad, fused({ mode: "metadata" }), {
    runs: 50,
    normalize: plain,
  });
  assert.equal(values.length, 5);
  assert.ok(error instanceof DecodeError && error.code === "MESSAGE_INVALID");
});

/** The single event of `frame` after a good one: its error and that the good event came first. */
async function faultAfterGoodEvent(
  bad: Bytes,
  options: { mode?: KubernetesProtobufMode; maxEventBytes?: number } = {},
) {
  const good = framed(sequence[0]);
  const input = concat([good, framed(bad)]);
  const results = [];
  for (const decode of [fused(options), ...(options.maxEventBytes === undefined ? [staged(options.mode)] : [])]) {
    for (const chunks of [[input], bytewise(input)]) {
      const { values, error } = await drain(decode(streamOf(chunks)));
      assert.equal(values.length, 1, "the event before the fault is delivered");
      assert.ok(error instanceof DecodeError, String(error));
      results.push({ code: error.code, offset: error.offset });
    }
  }
  for (const r of results) assert.deepEqual(r, results[0], "fused and staged, whole and byte by byte agree");
  // The offset in the input: the bad frame starts after the good frame and its own 4-byte prefix.
  return { code: results[0].code, at: results[0].offset - good.length - 4 };
}

test("k8s protobuf watch: bad input fails at the exact byte, after the events before it", async () => {
  const obj = envelope("example.com/v1", "Widget", widget("a", "1", 1, "c"));
  const typeField = len(1, "ADDED");
  // wrong wire type for type (a varint) at 0
  assert.deepEqual(await faultAfterGoodEvent([...int(1, 5), ...len(2, len(1, obj))]), {
    code: "MESSAGE_INVALID",
    at: 0,
  });
  // wrong wire type for object
  assert.deepEqual(await faultAfterGoodEvent([...typeField, ...int(2, 1)]), {
    code: "MESSAGE_INVALID",
    at: typeField.length,
  });
  // wrong wire type for RawExtension.raw (inside object: tag + length of the object field come first)
  assert.deepEqual(await faultAfterGoodEvent([...typeField, ...len(2, int(1, 7))]), {
    code: "MESSAGE_INVALID",
    at: typeField.length + 2,
  });
  // a varint that never ends (tag of an unknown field)
  assert.deepEqual(await faultAfterGoodEvent([...typeField, 0x80, 0x80]), {
    code: "MESSAGE_INVALID",
    at: typeField.length,
  });
  // a length past the end of the frame
  assert.deepEqual(await faultAfterGoodEvent([...typeField, 0x12, 50, 0x0a]), {
    code: "MESSAGE_INVALID",
    at: typeField.length + 1,
  });
  // a group (wire type 3)
  assert.deepEqual(await faultAfterGoodEvent([...typeField, 0x1b]), { code: "MESSAGE_INVALID", at: typeField.length });
  // no type; an unknown type (at its field)
  assert.deepEqual(await faultAfterGoodEvent(len(2, len(1, obj))), { code: "EVENT_INVALID", at: 0 });
  assert.deepEqual(await faultAfterGoodEvent([...int(7, 1), ...len(1, "RENAMED"), ...len(2, len(1, obj))]), {
    code: "EVENT_TYPE_UNKNOWN",
    at: 2,
  });
  assert.deepEqual(await faultAfterGoodEvent(len(1, "added")), { code: "EVENT_TYPE_UNKNOWN", at: 0 });
  // no object at all; an object without raw (at the object field); an empty raw (at the raw's value)
  assert.deepEqual(await faultAfterGoodEvent(typeField), { code: "MESSAGE_INVALID", at: 0 });
  assert.deepEqual(await faultAfterGoodEvent([...typeField, ...len(2, [])]), {
    code: "MESSAGE_INVALID",
    at: typeField.length,
  });
  assert.deepEqual(await faultAfterGoodEvent([...typeField, ...len(2, len(1, []))]), {
    code: "MESSAGE_INVALID",
    at: typeField.length + 4,
  });
  // bad magic: at the first byte of raw
  const badMagic = [0x6b, 0x38, 0x73, 1, ...obj.slice(4)];
  const rawAt = typeField.length + 2 + 1 + varint(badMagic.length).length;
  assert.deepEqual(await faultAfterGoodEvent([...typeField, ...len(2, len(1, badMagic))]), {
    code: "MESSAGE_INVALID",
    at: rawAt,
  });
  // a missing kind, a missing apiVersion: at the runtime.Unknown, right after the magic
  const noKind = [...MAGIC, ...len(1, len(1, "v1")), ...len(2, [])];
  const noVersion = [...MAGIC, ...len(1, len(2, "Pod")), ...len(2, [])];
  const unknownAt = typeField.length + 2 + 1 + 1 + 4;
  assert.deepEqual(await faultAfterGoodEvent([...typeField, ...len(2, len(1, noKind))]), {
    code: "MESSAGE_INVALID",
    at: unknownAt,
  });
  assert.deepEqual(await faultAfterGoodEvent([...typeField, ...len(2, len(1, noVersion))]), {
    code: "MESSAGE_INVALID",
    at: unknownAt,
  });
  // a wrong wire type inside typeMeta
  const badTypeMeta = [...MAGIC, ...len(1, [...int(1, 3)]), ...len(2, [])];
  assert.deepEqual(await faultAfterGoodEvent([...typeField, ...len(2, len(1, badTypeMeta))]), {
    code: "MESSAGE_INVALID",
    at: unknownAt + 2,
  });
  // contentEncoding set: ENCODING_UNSUPPORTED at that field; an unknown contentType: CONTENT_TYPE_UNSUPPORTED
  const encoded = envelope("v1", "Pod", [], len(3, "gzip"));
  const yaml = envelope("v1", "Pod", [], len(4, "application/yaml"));
  const tail = encoded.length - len(3, "gzip").length;
  assert.deepEqual(await faultAfterGoodEvent([...typeField, ...len(2, len(1, encoded))]), {
    code: "ENCODING_UNSUPPORTED",
    at: unknownAt - 4 + tail,
  });
  assert.deepEqual(await faultAfterGoodEvent([...typeField, ...len(2, len(1, yaml))]), {
    code: "CONTENT_TYPE_UNSUPPORTED",
    at: unknownAt - 4 + tail,
  });
  // A fault inside the object, found by the kind's decoder: the offset still counts bytes of the stream.
  const spec = [...int(1, 1), 0x12, 9]; // color's length runs past the spec
  const broken = envelope("example.com/v1", "Widget", [...len(1, meta("a", "1")), ...len(2, spec)]);
  const specAt = typeField.length + 2 + 1 + 1 + broken.length - spec.length;
  assert.deepEqual(await faultAfterGoodEvent([...typeField, ...len(2, len(1, broken))]), {
    code: "MESSAGE_INVALID",
    at: specAt + 3,
  });
});

test("k8s protobuf watch: framing faults: oversized (before buffering), truncated, a single object instead of a watch", async () => {
  // maxEventBytes: the second frame is refused at its prefix, after the first was delivered.
  const good = framed(sequence[0]);
  const big = framed(sequence[1]);
  const limit = sequence[0].length;
  assert.ok(sequence[1].length > limit);
  let r = await drain(fused({ maxEventBytes: limit })(streamOf([concat([good, big.subarray(0, 4)])])));
  assert.equal(r.values.length, 1);
  assert.ok(r.error instanceof DecodeError && r.error.code === "MESSAGE_TOO_LARGE" && r.error.offset === good.length);
  // The input ends inside a frame: TRUNCATED at its prefix.
  r = await drain(fused()(streamOf(bytewise(concat([good, big.subarray(0, 9)])))));
  assert.equal(r.values.length, 1);
  assert.ok(r.error instanceof DecodeError && r.error.code === "TRUNCATED" && r.error.offset === good.length);
  // A body that is one k8s\0 object (a GET, not a watch) is named as such.
  const single = Uint8Array.from(envelope("example.com/v1", "Widget", widget("a", "1", 1, "c")));
  for (const chunks of [[single], bytewise(single)]) {
    r = await drain(fused()(streamOf(chunks)));
    assert.equal(r.values.length, 0);
    assert.ok(r.error instanceof DecodeError && r.error.code === "MESSAGE_INVALID" && r.error.offset === 0);
    assert.match(r.error.message, /single object/);
  }
});

test("k8s protobuf watch: an unknown kind still decodes: kind, apiVersion, metadata, and the raw bytes", async () => {
  const raw = [...len(1, meta("t1", "42", "ns")), ...len(2, [1, 2, 3]), ...int(3, 7)];
  const { values, error } = await drain(
    fused()(streamOf([framed(watchEvent("ADDED", envelope("other.io/v2", "Thing", raw)))])),
  );
  assert.equal(error, undefined);
  const object = values[0].object;
  assert.ok(object instanceof KubernetesProtobufObject);
  assert.equal(
    JSON.stringify(values[0]),
    '{"type":"ADDED","object":{"kind":"Thing","apiVersion":"other.io/v2","metadata":{"name":"t1","namespace":"ns","resourceVersion":"42"}}}',
  );
  assert.deepEqual(Array.from(object.raw), raw);
  assert.equal(object.decodable, false);
  assert.equal(object.decode(), undefined);
  assert.deepEqual(Object.keys(object), ["kind", "apiVersion", "metadata"]);
  // No metadata field: the metadata decoder's empty object.
  const bare = await drain(
    fused()(streamOf([framed(watchEvent("ADDED", envelope("other.io/v2", "Thing", int(3, 7))))])),
  );
  assert.deepEqual(JSON.parse(JSON.stringify(bare.values[0].object)), {
    kind: "Thing",
    apiVersion: "other.io/v2",
    metadata: {},
  });
});

test("k8s protobuf watch: metadata mode decodes metadata only; decode() gives the full object, memoized", async () => {
  const input = framed(...sequence);
  const full = (await drain(fused()(streamOf([input])))).values;
  widgetCalls = 0;
  metaCalls = 0;
  const { values, error } = await drain(fused({ mode: "metadata" })(streamOf([input])));
  assert.equal(error, undefined);
  assert.equal(widgetCalls, 0, "no object decoded in full");
  assert.equal(metaCalls, 4, "one metadata decoding per object (the Status has ListMeta, decoded in full)");
  for (let i = 0; i < 4; i++) {
    const lazy = values[i].object;
    assert.ok(lazy instanceof KubernetesProtobufObject);
    assert.equal(values[i].type, full[i].type);
    assert.deepEqual(lazy.metadata, (full[i].object as JsonObject).metadata);
    assert.equal(lazy.kind, "Widget");
    assert.equal(lazy.apiVersion, "example.com/v1");
    assert.ok(lazy.decodable);
    const decoded = lazy.decode();
    assert.deepEqual(decoded, full[i].object);
    assert.equal(JSON.stringify(decoded), JSON.stringify(full[i].object));
    assert.equal(lazy.decode(), decoded, "memoized");
  }
  assert.equal(widgetCalls, 4);
  // ERROR events carry a Status, decoded in full.
  assert.deepEqual(values[4], sequenceJson[4]);
  assert.ok(!(values[4].object instanceof KubernetesProtobufObject));
});

/** What a kept object may keep alive: four times its size plus 32 KiB (a small copy keeps a 32 KiB block). */
const keptBound = (o: KubernetesProtobufObject) => 4 * o.raw.length + 32 * 1024;

test("k8s protobuf watch: lazy objects keep views of at most four times their size plus 32 KiB, else copies", async () => {
  const input = framed(...sequence);
  // Frames inside one small chunk: each object keeps a view of it (it keeps alive less than the bound).
  const { values } = await drain(fused({ mode: "metadata" })(streamOf([input])));
  for (const event of values.slice(0, 4)) {
    const o = event.object as KubernetesProtobufObject;
    assert.equal(o.raw.buffer, input.buffer, "a view of the chunk");
    assert.ok(o.raw.buffer.byteLength <= keptBound(o));
  }
  // Many objects in one large chunk: each copies its bytes into a shared 32 KiB block, blocks filling up one after
  // another, and every copy stays intact (a block is never written again).
  const many = framed(...Array.from({ length: 2000 }, (_, i) => sequence[i % 4]));
  const kept = await drain(fused({ mode: "metadata" })(streamOf([many])));
  const full = await drain(fused({})(streamOf([many])));
  assert.equal(kept.values.length, 2000);
  const blocks = new Set<ArrayBufferLike>();
  for (let i = 0; i < 2000; i++) {
    const o = kept.values[i].object as KubernetesProtobufObject;
    assert.notEqual(o.raw.buffer, many.buffer);
    assert.equal(o.raw.buffer.byteLength, 32 * 1024, "a shared block");
    blocks.add(o.raw.buffer);
    assert.deepEqual(o.decode(), full.values[i].object, `object ${i}`);
  }
  assert.ok(blocks.size > 1 && blocks.size < 100, `${blocks.size} blocks`);
  // A large object (over 8 KiB) in a chunk larger than the bound gets a buffer of exactly its size.
  const bigLabel = "x".repeat(9000);
  const big = envelope("example.com/v1", "Widget", [...len(1, meta("big", "9")), ...len(2, len(1, bigLabel))]);
  const padding = framed(...Array.from({ length: 40 }, () => watchEvent("ADDED", big)));
  const bigChunk = concat([framed(watchEvent("ADDED", big)), padding]);
  const bigRun = await drain(fused({ mode: "metadata" })(streamOf([bigChunk])));
  const bigObject = bigRun.values[0].object as KubernetesProtobufObject;
  assert.ok(bigChunk.length > keptBound(bigObject));
  assert.equal(bigObject.raw.buffer.byteLength, bigObject.raw.length);
  assert.notEqual(bigObject.raw.buffer, bigChunk.buffer);
  // One whose chunk is within the bound keeps a view of the chunk.
  const quarterChunk = framed(...Array.from({ length: 3 }, () => watchEvent("ADDED", big)));
  const quarterRun = await drain(fused({ mode: "metadata" })(streamOf([quarterChunk])));
  for (const event of quarterRun.values) {
    const o = event.object as KubernetesProtobufObject;
    assert.equal(o.raw.buffer, quarterChunk.buffer, "a view of the chunk");
    assert.ok(o.raw.buffer.byteLength <= keptBound(o));
    assert.deepEqual(o.metadata, { name: "big", resourceVersion: "9" });
  }
  // The same through the frames-to-events stage, and never for bytes a caller lends (decodeKubernetesProtobufObject).
  const staged = await drain(
    streamOf([quarterChunk]).pipeThrough(new LengthPrefixedDecoderStream()).pipeThrough(
      new KubernetesProtobufWatchFrameDecoderStream({ decoders: builtinDecoders, mode: "metadata" }),
    ),
  );
  for (const event of staged.values) {
    assert.equal((event.object as KubernetesProtobufObject).raw.buffer, quarterChunk.buffer);
  }
  const bigBytes = Uint8Array.from(big);
  const lent = decodeKubernetesProtobufObject(bigBytes, {
    decoders: builtinDecoders,
    mode: "metadata",
  }) as unknown as KubernetesProtobufObject;
  assert.notEqual(lent.raw.buffer, bigBytes.buffer);
  assert.equal(lent.raw.buffer.byteLength, lent.raw.length);
  // Frames that span chunks of one byte each: each assembled by the framing in a buffer of its own, of which its
  // object keeps a view (that buffer holds nothing but its event: within the bound). Every object stays intact.
  const reference = (await drain(fused({})(streamOf([framed(...sequence)])))).values;
  const bigEvent = watchEvent("ADDED", big);
  const mixed = framed(...sequence, bigEvent, ...sequence, bigEvent);
  const single = await drain(fused({ mode: "metadata" })(streamOf(bytewise(mixed))));
  assert.equal(single.error, undefined);
  const buffers = new Set<ArrayBufferLike>();
  for (let i = 0; i < single.values.length; i++) {
    const o = single.values[i].object as KubernetesProtobufObject;
    const k = i % (sequence.length + 1);
    if (k === 4) {
      assert.deepEqual(o, reference[4].object, "the ERROR's Status, decoded in full");
      continue;
    }
    assert.ok(!buffers.has(o.raw.buffer), `object ${i}: a buffer of its own`);
    buffers.add(o.raw.buffer);
    assert.ok(o.raw.buffer.byteLength <= keptBound(o));
    if (k < 4) assert.deepEqual(o.decode(), reference[k].object, `object ${i}`);
    else assert.deepEqual(o.metadata, { name: "big", resourceVersion: "9" });
  }
});

/** A copy of `read` inside a 1 MiB buffer: a read whose buffer is too large for its objects to keep by default. */
function inLargeBuffer(read: Uint8Array): Uint8Array {
  const buffer = new Uint8Array(1 << 20);
  buffer.set(read, 100);
  return buffer.subarray(100, 100 + read.length);
}

test("k8s protobuf watch: an object whose frame spans chunks keeps a view of the framing's buffer of its frame", async () => {
  // Two ~20 KB Widgets with annotations (a lazy collection), each frame spanning two reads.
  const annotations = { "example.com/one": "1", "example.com/two": "t".repeat(300) };
  const body = (name: string, fill: string) =>
    envelope("example.com/v1", "Widget", [
      ...len(1, meta(name, "9", "default", annotations)),
      ...len(2, [...int(1, 3), ...len(2, fill.repeat(20_000))]),
    ]);
  const input = framed(watchEvent("ADDED", body("first", "a")), watchEvent("MODIFIED", body("second", "b")));
  const cuts = [10_000, 30_000];
  const reference = (await drain(fused()(streamOf(splitAt(input, cuts))))).values;
  // Each read in a buffer of its own (30 KB at most: within four times 20 KB plus 32 KiB), or inside a 1 MiB buffer.
  const ownBuffers = () => splitAt(input, cuts);
  const inLargeBuffers = () => splitAt(input, cuts).map(inLargeBuffer);
  for (const reads of [ownBuffers, inLargeBuffers]) {
    const chunks = reads();
    const { values, error } = await drain(fused({ mode: "metadata" })(streamOf(chunks)));
    assert.equal(error, undefined);
    assert.equal(values.length, 2);
    const objects = values.map((e) => e.object as KubernetesProtobufObject);
    // The metadata, lazy annotations included.
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(objects[i].metadata, (reference[i].object as JsonObject).metadata, `object ${i}`);
    }
    // Writing to the reads after the fact shows that the objects kept none of them (only a probe: chunks are not to
    // be written once handed over).
    for (const chunk of chunks) chunk.fill(0x55);
    for (let i = 0; i < 2; i++) {
      const raw = objects[i].raw;
      assert.ok(raw.length > 20_000 && raw.some((b) => b !== 0x55), `object ${i}: not a view of the reads`);
      assert.ok(raw.buffer.byteLength <= keptBound(objects[i]), `object ${i}: its frame's buffer`);
    }
  }
  // Untouched reads: decode() gives the full decoding, for views and copies alike.
  for (const reads of [ownBuffers, inLargeBuffers]) {
    const { values } = await drain(fused({ mode: "metadata" })(streamOf(reads())));
    values.forEach((e, i) => assert.deepEqual((e.object as KubernetesProtobufObject).decode(), reference[i].object));
  }
});

test('k8s protobuf watch: inputViews "always": objects keep views of the input chunks whatever their size, never copies', async () => {
  const always = fused({ mode: "metadata", inputViews: "always" });
  // Many small objects in one large chunk (copies into shared blocks by default): each a view of the chunk.
  const many = framed(...Array.from({ length: 2000 }, (_, i) => sequence[i % 4]));
  const full = await drain(fused({})(streamOf([many])));
  const viewed = await drain(always(streamOf([many])));
  assert.equal(viewed.error, undefined);
  assert.equal(viewed.values.length, 2000);
  for (let i = 0; i < 2000; i++) {
    const o = viewed.values[i].object as KubernetesProtobufObject;
    assert.equal(o.raw.buffer, many.buffer, `object ${i}: a view of the chunk`);
    assert.ok(o.raw.buffer.byteLength > keptBound(o), "beyond the bound");
    assert.deepEqual(o.decode(), full.values[i].object, `object ${i}`);
  }
  // The same through the frames-to-events stage.
  const stagedViews = await drain(
    streamOf([many]).pipeThrough(new LengthPrefixedDecoderStream()).pipeThrough(
      new KubernetesProtobufWatchFrameDecoderStream({ decoders, mode: "metadata", inputViews: "always" }),
    ),
  );
  assert.equal(stagedViews.values.length, 2000);
  for (const event of stagedViews.values) {
    assert.equal((event.object as KubernetesProtobufObject).raw.buffer, many.buffer, "staged: a view of the chunk");
  }
  // Frames that span reads held in 1 MiB buffers: views of the framing's buffer of each frame, not of the reads.
  const big = envelope("example.com/v1", "Widget", [
    ...len(1, meta("big", "9", "default", { "example.com/a": "a".repeat(300) })),
    ...len(2, len(1, "x".repeat(20_000))),
  ]);
  const input = framed(watchEvent("ADDED", big), watchEvent("MODIFIED", big));
  const reference = (await drain(fused({})(streamOf([input])))).values;
  const inLargeBuffers = () => splitAt(input, [10_000, 30_000]).map(inLargeBuffer);
  const untouched = await drain(always(streamOf(inLargeBuffers())));
  untouched.values.forEach((e, i) =>
    assert.deepEqual((e.object as KubernetesProtobufObject).decode(), reference[i].object)
  );
  const chunks = inLargeBuffers();
  const probed = await drain(always(streamOf(chunks)));
  assert.equal(probed.values.length, 2);
  for (const chunk of chunks) chunk.fill(0x55); // only a probe: chunks are not to be written once handed over
  for (const e of probed.values) {
    const { raw } = e.object as KubernetesProtobufObject;
    assert.ok(raw.some((b) => b !== 0x55) && !chunks.some((c) => c.buffer === raw.buffer));
  }
  // Frames that span one-byte chunks: every object stays intact. Unknown kinds in full mode keep views as well.
  const thing = envelope("other.io/v2", "Thing", [...len(1, meta("t", "2")), ...len(5, "x".repeat(700))]);
  const mixed = framed(...sequence, watchEvent("ADDED", big), watchEvent("ADDED", thing), ...sequence);
  for (const mode of ["metadata", "full"] as const) {
    const expected = await drain(fused({ mode })(streamOf([mixed])));
    const bytewiseRun = await drain(fused({ mode, inputViews: "always" })(streamOf(bytewise(mixed))));
    assert.equal(bytewiseRun.error, undefined);
    assert.equal(bytewiseRun.values.length, 12);
    assert.deepEqual(plain(bytewiseRun.values), plain(expected.values), mode);
    const lazy = bytewiseRun.values.map((e) => e.object).filter((o) => o instanceof KubernetesProtobufObject);
    assert.equal(lazy.length, mode === "metadata" ? 10 : 1, "all but the Statuses in metadata mode; the Thing in both");
  }
  // Bytes the caller lends are copied whatever inputViews says.
  const bigBytes = Uint8Array.from(big);
  const lent = decodeKubernetesProtobufObject(bigBytes, {
    decoders: builtinDecoders,
    mode: "metadata",
    inputViews: "always",
  });
  assert.notEqual((lent as unknown as KubernetesProtobufObject).raw.buffer, bigBytes.buffer);
  // decodeWatchResponse passes it on: all 2000 objects in views of one buffer, where the default copies them.
  const buffers = async (inputViews?: KubernetesProtobufInputViews) => {
    const response = new Response(streamOf([many]), { headers: { "content-type": PROTOBUF_WATCH } });
    const { values } = await drain(
      decodeWatchResponse(response, { protobuf: { decoders, mode: "metadata", inputViews } }),
    );
    const lazy = values.map((e) => e.object).filter((o) => o instanceof KubernetesProtobufObject);
    assert.equal(lazy.length, 2000);
    return new Set(lazy.map((o) => o.raw.buffer));
  };
  const viewedBuffers = await buffers("always");
  assert.equal(viewedBuffers.size, 1);
  assert.ok([...viewedBuffers][0].byteLength >= many.length);
  assert.ok((await buffers()).size > 1, "the default: copies in 32 KiB blocks");
});

test("k8s protobuf watch: a lazy object's decoding fault has its offset in the stream", async () => {
  const spec = [...int(1, 1), 0x12, 9];
  const broken = envelope("example.com/v1", "Widget", [...len(1, meta("a", "1")), ...len(2, spec)]);
  const good = framed(sequence[0]);
  const input = concat([good, framed(watchEvent("ADDED", broken))]);
  const { values, error } = await drain(fused({ mode: "metadata" })(streamOf([input])));
  assert.equal(error, undefined);
  const lazy = values[1].object as KubernetesProtobufObject;
  assert.deepEqual(lazy.metadata, { name: "a", resourceVersion: "1" });
  const specAt = good.length + 4 + len(1, "ADDED").length + 2 + 1 + 1 + broken.length - spec.length;
  assert.throws(
    () => lazy.decode(),
    (e) => e instanceof DecodeError && e.code === "MESSAGE_INVALID" && e.offset === specAt + 3,
  );
});

test("k8s protobuf watch: an object whose envelope says application/json is parsed as JSON", async () => {
  const json = '{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"j"},"spec":{"size":1}}';
  const object = [
    ...MAGIC,
    ...len(1, [...len(1, "example.com/v1"), ...len(2, "Widget")]),
    ...len(2, json),
    ...len(4, "application/json"),
  ];
  for (const mode of ["full", "metadata"] as const) {
    const { values, error } = await drain(fused({ mode })(streamOf([framed(watchEvent("ADDED", object))])));
    assert.equal(error, undefined);
    assert.deepEqual(values, [{ type: "ADDED", object: JSON.parse(json) }]);
  }
  const notJson = [
    ...MAGIC,
    ...len(1, [...len(1, "v1"), ...len(2, "Pod")]),
    ...len(2, "{oops"),
    ...len(4, "application/json; charset=utf-8"),
  ];
  const rawAt = 4 + len(1, "ADDED").length + 2 + 2 + 4 + len(1, [...len(1, "v1"), ...len(2, "Pod")]).length + 2;
  const { error } = await drain(fused()(streamOf([framed(watchEvent("ADDED", notJson))])));
  assert.ok(error instanceof DecodeError && error.code === "JSON_INVALID" && error.offset === rawAt, String(error));
});

test("k8s protobuf: decodeKubernetesProtobufObject reads one k8s\\0 object", () => {
  const bytes = Uint8Array.from(envelope("example.com/v1", "Widget", widget("a", "5", 3, "red")));
  assert.deepEqual(decodeKubernetesProtobufObject(bytes, { decoders }), widgetJson("a", "5", 3, "red"));
  const lazy = decodeKubernetesProtobufObject(bytes, { decoders, mode: "metadata" });
  assert.ok(lazy instanceof KubernetesProtobufObject);
  assert.deepEqual(lazy.decode(), widgetJson("a", "5", 3, "red"));
  assert.throws(
    () => decodeKubernetesProtobufObject(bytes.subarray(1), { decoders }, 100),
    (e) => e instanceof DecodeError && e.code === "MESSAGE_INVALID" && e.offset === 100,
  );
});

test("k8s protobuf: meta.v1.Status is decoded as Go's JSON writes it, when the decoders lack it", () => {
  const cause = (
    reason: string,
    message: string,
    field: string,
  ) => [...len(1, reason), ...len(2, message), ...len(3, field)];
  const status = [
    ...len(1, [...len(2, "77"), ...len(3, "tok"), ...int(4, 5)]),
    ...len(2, "Failure"),
    ...len(3, "invalid"),
    ...len(4, "Invalid"),
    ...len(5, [
      ...len(1, "web"),
      ...len(3, "Pod"),
      ...len(4, cause("FieldValueRequired", "Required value", "spec.x")),
      ...len(4, []),
      ...int(5, 3),
      ...len(6, "u-1"),
    ]),
    ...int(6, 422),
    ...int(20, 1),
  ];
  const expected = {
    kind: "Status",
    apiVersion: "v1",
    metadata: { resourceVersion: "77", continue: "tok", remainingItemCount: 5 },
    status: "Failure",
    message: "invalid",
    reason: "Invalid",
    details: {
      name: "web",
      kind: "Pod",
      uid: "u-1",
      causes: [{ reason: "FieldValueRequired", message: "Required value", field: "spec.x" }, {}],
      retryAfterSeconds: 3,
    },
    code: 422,
  };
  const object = decodeKubernetesProtobufObject(Uint8Array.from(envelope("v1", "Status", status)), { decoders });
  // Keys come in field-number order, not Go's struct order: equal as JSON.parse values, not as text.
  assert.deepEqual(object, expected);
  // Empty: metadata is still there ({}), the rest is omitted; a negative int32 code arrives as a 10-byte varint.
  const negative = [6 << 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
  assert.deepEqual(decodeKubernetesProtobufObject(Uint8Array.from(envelope("v1", "Status", negative)), { decoders }), {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    code: -1,
  });
  assert.throws(
    () => decodeKubernetesProtobufObject(Uint8Array.from(envelope("v1", "Status", int(3, 1))), { decoders }),
    (e) => e instanceof DecodeError && e.code === "MESSAGE_INVALID" && e.offset === envelope("v1", "Status", []).length,
  );
});

test("k8s protobuf watch: the fused and the two-stage pipelines agree under random splits", async () => {
  const input = framed(...sequence, ...sequence);
  await fc.assert(
    fc.asyncProperty(
      cutsFor(input.length),
      fc.constantFrom<KubernetesProtobufMode>("full", "metadata"),
      async (cuts, mode) => {
        const a = await drain(fused({ mode })(streamOf(splitAt(input, cuts))));
        const b = await drain(staged(mode)(streamOf(splitAt(input, cuts))));
        assert.deepEqual(plain(a.values), plain(b.values));
        assert.equal(a.error, b.error);
      },
    ),
    { numRuns: 50 },
  );
});

test("k8s protobuf watch: options are checked", () => {
  assert.throws(
    () => new KubernetesProtobufWatchBodyDecoderStream({ mode: "lazy" as KubernetesProtobufMode }),
    RangeError,
  );
  assert.throws(() => new KubernetesProtobufWatchBodyDecoderStream({ maxEventBytes: -1 }), RangeError);
  const inputViews = "never" as KubernetesProtobufInputViews;
  assert.throws(() => new KubernetesProtobufWatchBodyDecoderStream({ inputViews }), RangeError);
  assert.throws(() => new KubernetesProtobufWatchFrameDecoderStream({ inputViews }), RangeError);
  assert.throws(() => new KubernetesProtobufWatchFrameDecoder({ inputViews }), RangeError);
  assert.throws(() => decodeKubernetesProtobufObject(Uint8Array.of(), { inputViews }), RangeError);
});

// ---- decodeWatchResponse ----

const PROTOBUF_WATCH = "application/vnd.kubernetes.protobuf;stream=watch";

test("decodeWatchResponse: a protobuf watch by Content-Type; options.protobuf and maxEventBytes are passed on", async () => {
  const body = framed(...sequence);
  const response = () => new Response(streamOf(bytewise(body)), { headers: { "content-type": PROTOBUF_WATCH } });
  let r = await drain(decodeWatchResponse(response(), { protobuf: { decoders } }));
  assert.equal(r.error, undefined);
  assert.deepEqual(r.values, sequenceJson);
  r = await drain(decodeWatchResponse(response(), { protobuf: { decoders, mode: "metadata" } }));
  assert.equal(r.error, undefined);
  assert.ok(r.values[0].object instanceof KubernetesProtobufObject);
  assert.deepEqual(r.values[0].object.decode(), sequenceJson[0].object);
  r = await drain(decodeWatchResponse(response(), { protobuf: { decoders }, maxEventBytes: sequence[0].length }));
  assert.equal(r.values.length, 1);
  assert.ok(r.error instanceof DecodeError && r.error.code === "MESSAGE_TOO_LARGE");
  // Case and parameters do not matter.
  const loose = new Response(streamOf([body]), {
    headers: { "content-type": 'Application/Vnd.Kubernetes.Protobuf; stream="watch"' },
  });
  assert.deepEqual((await drain(decodeWatchResponse(loose, { protobuf: { decoders } }))).values, sequenceJson);
});

test("decodeWatchResponse: a non-2xx protobuf Status body is the ERROR event", async () => {
  const statusBody = Uint8Array.from(envelope("v1", "Status", expiredStatus));
  const headers = { "content-type": "application/vnd.kubernetes.protobuf" };
  // With decoders that lack Status: our own Status decoding.
  let r = await drain(
    decodeWatchResponse(new Response(statusBody, { status: 410, headers }), { protobuf: { decoders } }),
  );
  assert.deepEqual(r.values, [{ type: "ERROR", object: expiredJson }]);
  // With decoders that have one: theirs.
  const withStatus: KubernetesProtobufDecoders = {
    decoder: (apiVersion, kind) =>
      apiVersion === "v1" && kind === "Status"
        ? (_b, _s, _e, target) => Object.assign(target, { theirs: true })
        : undefined,
    objectMeta,
    metadataDecoder: () => undefined,
  };
  r = await drain(
    decodeWatchResponse(new Response(statusBody, { status: 410, headers }), { protobuf: { decoders: withStatus } }),
  );
  assert.deepEqual(r.values, [{ type: "ERROR", object: { kind: "Status", apiVersion: "v1", theirs: true } }]);
  // Not a whole object: a Status made from the HTTP status (not from the bytes).
  r = await drain(
    decodeWatchResponse(new Response(statusBody.subarray(0, 20), { status: 410, statusText: "Gone", headers }), {
      protobuf: { decoders },
    }),
  );
  assert.equal(r.values.length, 1);
  const event = r.values[0];
  assert.ok(event.type === "ERROR");
  assert.equal(event.object.code, 410);
  assert.equal(event.object.reason, "Gone");
  assert.equal(event.object.message, "410 Gone");
});

test("decodeWatchResponse: a protobuf body that is one object, not a watch, is MESSAGE_INVALID", async () => {
  const single = Uint8Array.from(envelope("example.com/v1", "Widget", widget("a", "1", 1, "c")));
  const response = new Response(single, { headers: { "content-type": "application/vnd.kubernetes.protobuf" } });
  const r = await drain(decodeWatchResponse(response, { protobuf: { decoders } }));
  assert.equal(r.values.length, 0);
  assert.ok(r.error instanceof DecodeError && r.error.code === "MESSAGE_INVALID" && r.error.offset === 0);
});

test("k8s protobuf watch: a BOOKMARK without metadata.resourceVersion is EVENT_INVALID at its frame, as in JSON", async () => {
  const noVersion = watchEvent("BOOKMARK", envelope("example.com/v1", "Widget", len(1, len(1, "x"))));
  const noMeta = watchEvent("BOOKMARK", envelope("example.com/v1", "Widget", int(3, 1)));
  for (const bad of [noVersion, noMeta]) {
    for (const mode of ["full", "metadata"] as const) {
      assert.deepEqual(await faultAfterGoodEvent(bad, { mode }), { code: "EVENT_INVALID", at: 0 });
    }
  }
});

test("k8s protobuf: in metadata mode, field 1 is decoded as the registry says: ObjectMeta, ListMeta, or nothing (in full)", () => {
  // ListMeta: selfLink 1, resourceVersion 2, continue 3; items are field 2 of a List.
  const listMeta: ObjectDecoder = (bytes, start, end, target, base) => {
    const r = new ProtobufReader(bytes, base, start, end);
    while (!r.done) {
      const tag = r.tag();
      if (tag === ((2 << 3) | 2)) target.resourceVersion = r.string();
      else if (tag === ((3 << 3) | 2)) target.continue = r.string();
      else r.skip(tag);
    }
    return target;
  };
  const podLogOptions: ObjectDecoder = (bytes, start, end, target, base) => {
    const r = new ProtobufReader(bytes, base, start, end);
    while (!r.done) {
      const tag = r.tag();
      if (tag === ((1 << 3) | 2)) target.container = r.string();
      else r.skip(tag);
    }
    return target;
  };
  const registry: KubernetesProtobufDecoders = {
    decoder: (_apiVersion, kind) =>
      kind === "WidgetList" ? (_b, _s, _e, target) => target : kind === "PodLogOptions" ? podLogOptions : undefined,
    objectMeta,
    metadataDecoder: (apiVersion, kind) =>
      kind === "WidgetList" ? listMeta : apiVersion === "v1" && kind === "PodLogOptions" ? null : undefined,
  };
  const list = envelope("example.com/v1", "WidgetList", [
    ...len(1, [...len(2, "900"), ...len(3, "next")]),
    ...len(2, widget("a", "1", 1, "c")),
  ]);
  const lazy = decodeKubernetesProtobufObject(Uint8Array.from(list), { decoders: registry, mode: "metadata" });
  assert.ok(lazy instanceof KubernetesProtobufObject);
  assert.deepEqual(lazy.metadata, { resourceVersion: "900", continue: "next" });
  // PodLogOptions has no metadata (its field 1 is container): decoded in full even in metadata mode.
  const options = Uint8Array.from(envelope("v1", "PodLogOptions", len(1, "web")));
  assert.deepEqual(decodeKubernetesProtobufObject(options, { decoders: registry, mode: "metadata" }), {
    kind: "PodLogOptions",
    apiVersion: "v1",
    container: "web",
  });
  // A Status the decoders lack, not in an ERROR event: our Status decoder and our ListMeta; the rest on demand.
  const status = decodeKubernetesProtobufObject(
    Uint8Array.from(envelope("v1", "Status", [...len(1, [...len(2, "77"), 0x20, 0]), ...expiredStatus.slice(2)])),
    { decoders, mode: "metadata" },
  );
  assert.ok(status instanceof KubernetesProtobufObject);
  // remainingItemCount (4) is a pointer in Go: sent (even as 0), it is printed.
  assert.deepEqual(status.metadata, { resourceVersion: "77", remainingItemCount: 0 });
  assert.deepEqual(status.decode(), { ...expiredJson, metadata: { resourceVersion: "77", remainingItemCount: 0 } });
});

test("k8s protobuf watch: objects kept as bytes hold their own bytes however their frames span reads", async () => {
  // Objects of kinds the decoders do not know keep their bytes, and ERROR Statuses decode in full: each frame differs,
  // every one spans chunks (bytewise), so a kept view of a buffer used again would show a later frame's bytes.
  const raws = Array.from({ length: 6 }, (_, i) => [...len(1, meta(`t${i}`, String(40 + i), "ns")), ...int(3, i)]);
  const events = raws.map((raw, i) => watchEvent(i % 2 ? "MODIFIED" : "ADDED", envelope("other.io/v2", "Thing", raw)));
  const input = framed(...events, ...sequence);
  const whole = await drain(fused()(streamOf([input])));
  for (const cutting of [bytewise(input), splitAt(input, [3, 40, 41, 200])]) {
    const got = await drain(fused()(streamOf(cutting)));
    assert.equal(got.error, undefined);
    assert.equal(got.values.length, raws.length + sequence.length);
    for (let i = 0; i < raws.length; i++) {
      const object = got.values[i].object as KubernetesProtobufObject;
      assert.deepEqual(Array.from(object.raw), raws[i], `object ${i}'s bytes`);
    }
    assert.deepEqual(JSON.parse(JSON.stringify(got.values)), JSON.parse(JSON.stringify(whole.values)));
  }
});
