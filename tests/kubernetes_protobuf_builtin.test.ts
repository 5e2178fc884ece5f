/**
 * The protobuf watch pipeline with the generated decoders (builtinDecoders) on the refgen fixtures: the expected values
 * are Go's (the JSON stream of the same objects, written by encoding/json; see fixtures/README.md).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { decodeWatchResponse, KubernetesProtobufObject, type WatchEvent } from "../mod.ts";
import { ProtobufReader } from "../wire.ts";
import {
  builtinDecoders,
  createKubernetesDecoders,
  decodeKubernetesProtobufObject,
  KubernetesProtobufWatchBodyDecoderStream,
} from "../kubernetes.ts";
import { drain, streamOf } from "./_util.ts";
import { framed, framesOf, len, MAGIC, watchEvent } from "./_protobuf.ts";

const fixture = (path: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/kubernetes/streams/${path}`, import.meta.url)));
const goEvents = (name: string) =>
  new TextDecoder().decode(fixture(`${name}.json`)).trimEnd().split("\n").map((line) => JSON.parse(line));

/** The messages of a protobuf watch stream (each frame without its 4-byte length). */
const frames = (stream: Uint8Array): Uint8Array[] => framesOf(stream).map((frame) => frame.subarray(4));

/** Field `number` (length-delimited) of a message, every occurrence, as views. */
function fields(message: Uint8Array, number: number): Uint8Array[] {
  const r = new ProtobufReader(message);
  const out: Uint8Array[] = [];
  while (!r.done) {
    const tag = r.tag();
    if (tag === ((number << 3) | 2)) out.push(r.bytes());
    else r.skip(tag);
  }
  return out;
}

/** The k8s\0 envelope (RawExtension.raw) of a watch event frame. */
const envelopeOf = (frame: Uint8Array) => fields(fields(frame, 2)[0], 1)[0];

async function decodeAll(
  bytes: Uint8Array | Uint8Array[],
  options: ConstructorParameters<typeof KubernetesProtobufWatchBodyDecoderStream>[0],
) {
  const { values, error } = await drain(
    streamOf(Array.isArray(bytes) ? bytes : [bytes]).pipeThrough(
      new KubernetesProtobufWatchBodyDecoderStream<unknown>({ decoders: builtinDecoders, ...options }),
    ),
  );
  assert.equal(error, undefined);
  return values as WatchEvent<unknown>[];
}

test("k8s protobuf, generated decoders: metadata mode leaves ObjectMeta's collections to first access, then equals Go's", async () => {
  const go = goEvents("v1.Pod");
  const events = await decodeAll(fixture("v1.Pod.pb"), { mode: "metadata" });
  const pod = events[0].object as KubernetesProtobufObject;
  assert.ok(pod instanceof KubernetesProtobufObject);
  const meta = pod.metadata as Record<string, unknown>;
  assert.ok(go[0].object.metadata.managedFields.length > 0, "the realistic Pod has managedFields");
  const collections = ["labels", "annotations", "ownerReferences", "managedFields"];
  for (const name of collections) {
    assert.ok(name in go[0].object.metadata, `the realistic Pod has ${name}`);
    assert.equal(typeof Object.getOwnPropertyDescriptor(meta, name)?.get, "function", `${name} not decoded yet`);
  }
  assert.equal(Object.getOwnPropertyDescriptor(meta, "name")?.value, go[0].object.metadata.name, "scalars decoded");
  assert.deepEqual(Object.keys(meta), Object.keys(go[0].object.metadata));
  assert.deepEqual(meta.managedFields, go[0].object.metadata.managedFields);
  // Decoded once: the accessor stays (a data property would turn the object into a slow dictionary in V8) and keeps it.
  assert.equal(typeof Object.getOwnPropertyDescriptor(meta, "managedFields")?.get, "function");
  assert.equal(meta.managedFields, meta.managedFields, "the same value at every read");
  assert.deepEqual(JSON.parse(JSON.stringify(meta)), go[0].object.metadata);
  for (const name of collections) assert.equal(meta[name], meta[name], name);
  assert.deepEqual(pod.decode(), go[0].object);
  // Assignable, as a plain property, before and after the first read; deletable.
  const other = (events[3].object as KubernetesProtobufObject).metadata as Record<string, unknown>;
  other.managedFields = [];
  assert.deepEqual(other.managedFields, []);
  assert.deepEqual(other.labels, go[3].object.metadata.labels);
  other.labels = { replaced: "yes" };
  assert.deepEqual(other.labels, { replaced: "yes" });
  assert.equal(delete other.annotations, true);
  assert.equal("annotations" in other, false);
  assert.deepEqual(Object.keys(other), Object.keys(go[3].object.metadata).filter((k) => k !== "annotations"));
});

/** Freezes `value` and everything reachable from it, the object before its properties (as Immer's auto-freeze does). */
function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
}

test("k8s protobuf, generated decoders: metadata mode's lazy properties read frozen, clone and compare as Go's values", async () => {
  const go = goEvents("v1.Pod");
  const expected = go[0].object.metadata;
  const fresh = async () =>
    ((await decodeAll(fixture("v1.Pod.pb"), { mode: "metadata" }))[0].object as KubernetesProtobufObject)
      .metadata as Record<string, unknown>;
  // Frozen before anything lazy was read: collections and managedFields[].fieldsV1 still decode.
  const frozen = await fresh();
  deepFreeze(frozen);
  assert.ok(Object.isFrozen(frozen));
  assert.ok(Object.isFrozen((frozen.managedFields as object[])[0]), "the entries were frozen before their fieldsV1");
  assert.deepEqual(frozen, expected);
  assert.deepEqual(JSON.parse(JSON.stringify(frozen)), expected);
  // Read-only once frozen, as a data property is (modules are strict code).
  assert.throws(() => (frozen.labels = {}), TypeError);
  const entry = (frozen.managedFields as Record<string, unknown>[])[0];
  assert.throws(() => (entry.fieldsV1 = {}), TypeError);
  assert.deepEqual(frozen.labels, expected.labels);
  assert.deepEqual(entry.fieldsV1, expected.managedFields[0].fieldsV1);
  // Sealed, not frozen: still assignable.
  const sealed = await fresh();
  Object.seal(sealed);
  sealed.labels = { sealed: "yes" };
  assert.deepEqual(sealed.labels, { sealed: "yes" });
  // structuredClone (postMessage to a Worker) and spreading copy the values.
  assert.deepEqual(structuredClone(await fresh()), expected);
  assert.deepEqual({ ...(await fresh()) }, expected);
  // Through a Proxy (Vue's reactive, MobX) the accessors do not reach the object's own state: a TypeError that says
  // what to do; a Proxy of a structuredClone reads as any plain object.
  const proxied = new Proxy(await fresh(), {});
  assert.throws(() => proxied.labels, /structuredClone/);
  const cloneEntries = new Proxy(structuredClone(await fresh()), {}).managedFields as unknown[];
  assert.deepEqual(new Proxy(cloneEntries[0] as object, {}), expected.managedFields[0]);
  // fieldsV1: decoded once, assignable like the collections.
  const entries = (await fresh()).managedFields as Record<string, unknown>[];
  assert.equal(typeof Object.getOwnPropertyDescriptor(entries[0], "fieldsV1")?.get, "function");
  assert.equal(entries[0].fieldsV1, entries[0].fieldsV1);
  entries[0].fieldsV1 = { replaced: {} };
  assert.deepEqual(entries[0].fieldsV1, { replaced: {} });
  assert.deepEqual(entries.slice(1), expected.managedFields.slice(1));
});

test("k8s protobuf, generated decoders: managedFields[].fieldsV1 read later never reads bytes the decoder does not keep", async () => {
  const go = goEvents("v1.Pod");
  const stream = fixture("v1.Pod.pb");
  const envelopes = frames(stream).map(envelopeOf);
  const unknownKinds = createKubernetesDecoders([]);
  const fieldsV1Of = (metadata: unknown) =>
    (metadata as { managedFields: { fieldsV1: unknown }[] }).managedFields.map((e) => e.fieldsV1);
  const expected = (i: number) => go[i].object.metadata.managedFields.map((e: { fieldsV1: unknown }) => e.fieldsV1);
  // One object from bytes the caller keeps (and may overwrite): metadata mode, and an unknown kind in full mode.
  for (const options of [{ decoders: builtinDecoders, mode: "metadata" as const }, { decoders: unknownKinds }]) {
    const bytes = envelopes[0].slice();
    const object = decodeKubernetesProtobufObject(bytes, options);
    assert.ok(object instanceof KubernetesProtobufObject);
    bytes.fill(0x55);
    assert.deepEqual(fieldsV1Of(object.metadata), expected(0), JSON.stringify(Object.keys(options)));
  }
  // A watch whose frames span reads: objects keep views of the framing's buffer of their frame; the reads, written
  // to afterwards (only a probe: reads are not to be written once handed over), change nothing of them.
  for (const options of [{ mode: "metadata" as const }, { decoders: unknownKinds }]) {
    const reads: Uint8Array[] = [];
    for (let at = 0; at < stream.length; at += 1000) reads.push(stream.slice(at, at + 1000));
    const events = await decodeAll(reads, options);
    assert.equal(events.length, go.length);
    const what = JSON.stringify(Object.keys(options));
    for (const read of reads) read.fill(0x55);
    for (const i of [0, 1, 3]) {
      const object = events[i].object as KubernetesProtobufObject;
      assert.ok(object instanceof KubernetesProtobufObject);
      assert.deepEqual(fieldsV1Of(object.metadata), expected(i), `event ${i}, ${what}`);
    }
  }
});

test("k8s protobuf, generated decoders: ObjectMeta fields after managedFields (not as Go writes): decoded at once", async () => {
  const go = goEvents("v1.Pod");
  const frame = frames(fixture("v1.Pod.pb"))[0];
  const envelope = envelopeOf(frame);
  const raw = fields(envelope.subarray(4), 2)[0];
  const meta = fields(raw, 1)[0];
  // ObjectMeta + a later name (field 1): the later scalar wins, as in Go.
  const metaAfter = [...Array.from(meta), ...len(1, "renamed")];
  const rest = Array.from(raw.subarray(len(1, meta).length)); // Go writes metadata (field 1) first
  assert.deepEqual(Array.from(raw.subarray(0, len(1, meta).length)), len(1, meta));
  const newRaw = [...len(1, metaAfter), ...rest];
  const typeMeta = fields(envelope.subarray(4), 1)[0];
  const newEnvelope = [...MAGIC, ...len(1, typeMeta), ...len(2, newRaw)];
  const event = watchEvent("ADDED", newEnvelope);
  const [lazy] = await decodeAll(framed(event), { mode: "metadata" });
  const metadata = (lazy.object as KubernetesProtobufObject).metadata as Record<string, unknown>;
  assert.equal(Object.getOwnPropertyDescriptor(metadata, "managedFields")?.get, undefined, "decoded at once");
  assert.deepEqual(metadata, { ...go[0].object.metadata, name: "renamed" });
  const [full] = await decodeAll(framed(event), {});
  assert.deepEqual(full.object, { ...go[0].object, metadata: { ...go[0].object.metadata, name: "renamed" } });
});

test("k8s protobuf, generated decoders: a kind the decoders lack gives Go's metadata and the bytes", async () => {
  const go = goEvents("apps_v1.Deployment");
  const events = await decodeAll(fixture("apps_v1.Deployment.pb"), { decoders: createKubernetesDecoders([]) });
  assert.deepEqual(events.map((e) => e.type), go.map((e) => e.type));
  for (let i = 0; i < 4; i++) {
    const object = events[i].object;
    assert.ok(object instanceof KubernetesProtobufObject);
    const { kind, apiVersion, metadata } = go[i].object;
    assert.deepEqual(JSON.parse(JSON.stringify(events[i])), {
      type: go[i].type,
      object: { kind, apiVersion, metadata },
    });
    assert.equal(object.decodable, false);
  }
  // The ERROR event's Status is decoded all the same (watchwire's own Status decoder).
  assert.deepEqual(events[4], go[4]);
  // The raw bytes are the object's message: the full decoders read them as Go's object.
  const full = createKubernetesDecoders([]);
  assert.equal(full.decoder("apps/v1", "Deployment"), undefined);
  const raw = (events[0].object as KubernetesProtobufObject).raw;
  const all = await decodeAll(fixture("apps_v1.Deployment.pb"), {});
  assert.deepEqual(
    decodeKubernetesProtobufObject(Uint8Array.from([...envelopeOf(frames(fixture("apps_v1.Deployment.pb"))[0])]), {
      decoders: builtinDecoders,
    }),
    all[0].object,
  );
  assert.deepEqual(
    Array.from(raw),
    Array.from(fields(envelopeOf(frames(fixture("apps_v1.Deployment.pb"))[0]).subarray(4), 2)[0]),
  );
});

test("k8s protobuf, generated decoders: a 410 response with a protobuf Status body is Go's ERROR event", async () => {
  const go = goEvents("v1.Pod");
  const streamFrames = frames(fixture("v1.Pod.pb"));
  const status = envelopeOf(streamFrames[streamFrames.length - 1]);
  const response = new Response(streamOf([status]), {
    status: 410,
    headers: { "content-type": "application/vnd.kubernetes.protobuf" },
  });
  const { values, error } = await drain(decodeWatchResponse(response));
  assert.equal(error, undefined);
  assert.deepEqual(values, [go[go.length - 1]]);
  assert.equal(go[go.length - 1].type, "ERROR");
});
