/**
 * Benchmark 8: Kubernetes protobuf watch decoding against the JSON watch of the same objects.
 *
 * Inputs (the same objects in both formats): the hand-written realistic objects of the refgen fixtures
 * (fixtures/kubernetes/streams/v1.{Pod,ConfigMap,Node}.{pb,json}, written by the Kubernetes serializers): each
 * stream's first event (ADDED), repeated into a body of ~6 MB of JSON, and the same number of protobuf frames; both
 * delivered as 64 KiB reads of a pull-based `ReadableStream`.
 *
 * Cases:
 * - `json` (baseline): `JsonWatchEventDecoderStream` (the foundation pipeline), events counted.
 * - `pb`: `KubernetesProtobufWatchBodyDecoderStream` (full decoding to the same plain objects), events counted.
 * - `pb-meta`: the same in `mode: "metadata"` (apiVersion, kind and metadata decoded; the rest kept as bytes).
 * - `pb-meta-views`: the same with `inputViews: "always"` (objects keep views of the reads, never copies), for
 *   reference: not the default, so not judged against the target.
 * - `json-distinct`, `pb-distinct`, `pb-meta-distinct` (reference, not judged): the same three pipelines over copies of
 *   the event that are each a distinct object, as in a real watch: the values that differ from one object to the next
 *   (name or its random suffix, uid, resourceVersion; a Pod's IPs, container IDs and volume suffix; a Node's IPs,
 *   provider, machine, system and boot IDs, pod CIDR) replaced in each copy by values of their own, of the same length
 *   in both encodings (`distinctCopies`; `checkDistinct` decodes both bodies and compares every event, before the
 *   timing: the process's first decoded objects are kept, as an informer keeps its initial list).
 * - distinct objects kept: every event of a run kept until the next run ends, as an informer's store keeps them,
 *   against the same not kept, in rounds of their own after the other cases.
 * - cores, no streams: `JSON.parse` of each line already split vs the generated decoder over each frame's object;
 *   and the whole event decoded in full vs in metadata mode, its object keeping a view of the frame or a copy of its
 *   bytes (what metadata mode does when keeping views of the reads would keep too much alive); and in metadata mode
 *   with `metadata` decoded whole at once (`core-event-meta-whole`: the issue's "decode apiVersion, kind and metadata
 *   now" taken literally, where this mode leaves ObjectMeta's collections and `fieldsV1` to first read); and the
 *   whole event in full with every `fieldsV1` as if never seen before (`core-event-full-new-fieldsv1`).
 * - reference, `framing-only`: the same framing stage and stream delivery with no decoding at all (one small object
 *   per frame): the floor under full mode; `framing-only-meta-copy`: that, and each frame copied into a pool where metadata mode copies its object's bytes: the floor under metadata mode with
 *   the default `inputViews: "bounded"`; `framing-only-meta-copy-accessors`: that, and each item carrying a new object
 *   made as metadata mode makes the event's ObjectMeta, its values already decoded (the scalars set, then the own
 *   accessors of its collections defined): the floor of metadata mode's design (an item per event, the retention
 *   bound, collections decoded on first read).
 *
 * The same object repeats, so the strings the decoder interns (ASCII up to 32 bytes, any up to 128; see
 * src/codec/kubernetes/runtime/go_string.ts) are found again every time: that cache's best case. So is each
 * `managedFields[].fieldsV1`, built again from its recorded keys from its third sighting on
 * (src/codec/kubernetes/runtime/repeated_json.ts); `core-event-full-new-fieldsv1` shows the other end. The
 * distinct-objects rows show a stream in between: the strings of each object's own values are new, the rest repeat.
 *
 * - recorded (`rec-json`, `rec-pb`, `rec-cbor`; not judged): kube-apiserver v1.37.2's own bytes of the same object
 *   (fixtures/kubernetes/cbor/: the kind's fixture object created on a real server with its `CBORServingAndStorage`
 *   gate on, and watched with `Accept: application/json`, protobuf and `application/cbor`), one event repeated into
 *   the same ~6 MB of JSON and the same number of protobuf frames and CBOR data items: the JSON watch, the protobuf
 *   watch in full and the CBOR watch (`KubernetesCborWatchBodyDecoderStream`), all three decoding to the same plain
 *   objects (checked before the timing); and, without streams, `JSON.parse` of the JSON event against
 *   `readKubernetesCborValue` of the CBOR item (`core-rec-json`, `core-rec-cbor`).
 *
 * Targets: pb / json >= 1.0x events/s; pb-meta / pb >= 5x.
 *
 * Run: `node --expose-gc --import tsx bench/kubernetes_protobuf.bench.ts [--quick]` (or `deno run -A`, `bun`).
 */
import { readFileSync } from "node:fs";
import { JsonWatchEventDecoderStream } from "../src/codec/json_watch_event_decoder_stream.ts";
import { KubernetesProtobufWatchBodyDecoder } from "../src/codec/kubernetes/protobuf_watch_body_decoder.ts";
import { KubernetesProtobufWatchBodyDecoderStream } from "../src/codec/kubernetes/protobuf_watch_body_decoder_stream.ts";
import { JsonWatchEventDecoder } from "../src/codec/json_watch_event_decoder.ts";
import { BatchDecoderStream } from "../src/streams/batch_decoder_stream.ts";
import { builtinDecoders } from "../src/codec/kubernetes/generated/all.ts";
import { KubernetesObjectReader, mayKeepViews } from "../src/codec/kubernetes/object_reader.ts";
import type { FrameOwnership } from "../src/codec/kubernetes/protobuf_options.ts";
import { BytePool } from "../src/codec/kubernetes/byte_pool.ts";
import { m_ObjectMeta } from "../src/codec/kubernetes/generated/meta_v1.ts";
import type { KubernetesProtobufDecoders, ObjectDecoder } from "../src/codec/kubernetes/registry.ts";
import { decodeTop } from "../src/codec/kubernetes/generated_runtime.ts";
import { forgetRepeatedJson } from "../src/codec/kubernetes/runtime/repeated_json.ts";
import { lazyDescriptor, type LazyValues, privateSlot } from "../src/codec/kubernetes/runtime/lazy_property.ts";
import { decodeWatchEventFrame } from "../src/codec/kubernetes/watch_event_frame.ts";
import { ProtobufReader } from "../src/codec/protobuf/reader.ts";
import { FrameSplitter } from "../src/framing/frame_splitter.ts";
import { DecoderStream } from "../src/streams/decoder_stream.ts";
import { KubernetesCborWatchBodyDecoderStream } from "../src/codec/kubernetes/cbor_watch_body_decoder_stream.ts";
import { readKubernetesCborValue } from "../src/codec/kubernetes/read_kubernetes_cbor_value.ts";
import { CborSequenceDecoder } from "../src/framing/cbor_sequence_decoder.ts";
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
  type Ratio,
  ratioCheck,
  runtimeInfo,
  type Section,
} from "./harness.ts";

const started = performance.now();
/**
 * Each kind's fixture, and the values in its object that differ from one object of the kind to the next in a real
 * watch (name or its random suffix, uid, resourceVersion, and for Pods and Nodes their IPs, container IDs, volume
 * suffixes, machine IDs): what the distinct-objects rows vary.
 */
const KINDS = [
  {
    name: "Pod",
    file: "v1.Pod",
    // The Pod after its status was written (its ADDED event has none).
    recorded: { file: "pods", event: 1 },
    unique: [
      "x2k9p",
      "375f739d-ecbf-497d-a3c8-2d76740c126a",
      "48213377",
      "9x7vq",
      "10.244.2.17",
      "7e6d5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b3a29180f",
      "b7a6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6",
      "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
      "4f1c0a9e6b3d2c8f7e5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e",
    ],
  },
  {
    name: "ConfigMap (~31 KB of data)",
    file: "v1.ConfigMap",
    recorded: { file: "configmaps", event: 0 },
    unique: ["web-config", "389df50c-9dd9-4f85-bdc1-a5ac07d30793", "48190012"],
  },
  {
    name: "Node",
    file: "v1.Node",
    recorded: { file: "nodes", event: 1 },
    unique: [
      "worker-2",
      "2b01c92f-9e5d-4f73-9a4e-74d4ba5ed0ef",
      "48213290",
      "i-0a1b2c3d4e5f60718",
      "192.168.10.22",
      "192-168-10-22",
      "ec2a1b2c3d4e5f60718293a4b5c6d7e8",
      "ec2a1b2c-3d4e-5f60-7182-93a4b5c6d7e8",
      "5b0f3c1e-8d2a-4f6b-9c7e-1a3d5f7b9e2c",
      "10.244.2.0/24",
    ],
  },
];
const JSON_BYTES = quick ? 1_000_000 : 6_000_000;
const OPTIONS = quick ? { warmup: 1, rounds: 3, minSampleMs: 5 } : { warmup: 3, rounds: 15, minSampleMs: 40 };

const dir = new URL("../fixtures/kubernetes/streams/", import.meta.url);

/** The first frame of a protobuf watch stream (with its 4-byte prefix) and the first line of its JSON stream. */
function firstEvent(file: string): { frame: Uint8Array; line: Uint8Array } {
  const pb = new Uint8Array(readFileSync(new URL(`${file}.pb`, dir)));
  const json = new Uint8Array(readFileSync(new URL(`${file}.json`, dir)));
  const length = new DataView(pb.buffer, pb.byteOffset).getUint32(0);
  return { frame: pb.slice(0, 4 + length), line: json.slice(0, json.indexOf(10) + 1) };
}

const recordedDir = new URL("../fixtures/kubernetes/cbor/", import.meta.url);

/**
 * Event `index` of kube-apiserver's recorded watch `file` (fixtures/kubernetes/cbor/), as its JSON line (with its
 * newline), its protobuf frame (with its prefix) and its CBOR data item: the same event in the three encodings.
 */
function recordedEvent(file: string, index: number): { line: Uint8Array; frame: Uint8Array; item: Uint8Array } {
  const json = new Uint8Array(readFileSync(new URL(`${file}.json`, recordedDir)));
  const pb = new Uint8Array(readFileSync(new URL(`${file}.pb`, recordedDir)));
  const cbor = new Uint8Array(readFileSync(new URL(`${file}.cbor`, recordedDir)));
  let start = 0;
  for (let i = 0; i < index; i++) start = json.indexOf(10, start) + 1;
  const line = json.slice(start, json.indexOf(10, start) + 1);
  let at = 0;
  for (let i = 0; i < index; i++) at += 4 + new DataView(pb.buffer, pb.byteOffset + at, 4).getUint32(0);
  const frame = pb.slice(at, at + 4 + new DataView(pb.buffer, pb.byteOffset + at, 4).getUint32(0));
  const items: Uint8Array[] = [];
  const splitter = new CborSequenceDecoder();
  splitter.push(cbor, (item) => items.push(item.slice()));
  splitter.finish();
  return { line, frame, item: items[index] };
}

/** Throws unless the recorded event decodes to the same object from JSON, protobuf (full) and CBOR. */
async function checkRecorded(recorded: { line: Uint8Array; frame: Uint8Array; item: Uint8Array }): Promise<void> {
  const json = JSON.parse(new TextDecoder().decode(recorded.line));
  const [pb] = await collectAll(
    streamOf([recorded.frame]).pipeThrough(new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders })),
  );
  const [cbor] = await collectAll(streamOf([recorded.item]).pipeThrough(new KubernetesCborWatchBodyDecoderStream()));
  if (!sameJson(pb, json)) throw new Error("recorded: the protobuf event differs from the JSON one");
  if (!sameJson(cbor, json)) throw new Error("recorded: the CBOR event differs from the JSON one");
}

/** Where `pattern` occurs in `bytes`. */
function occurrences(bytes: Uint8Array, pattern: Uint8Array): number[] {
  const at: number[] = [];
  outer: for (let i = 0; i + pattern.length <= bytes.length; i++) {
    for (let j = 0; j < pattern.length; j++) if (bytes[i + j] !== pattern[j]) continue outer;
    at.push(i);
  }
  return at;
}

/**
 * `times` copies of the event `frame` and of the same event's JSON `line`, each copy a distinct object: every value of
 * `unique` (ASCII of the same bytes in both) replaced, wherever it occurs, by one of its length that is the copy's own
 * (digits by digits, `a`-`f` by `a`-`f`, other lowercase letters by lowercase letters, the rest kept). Same-length
 * replacements change no protobuf length and need no JSON escape, so each copy of the frame still encodes the object its
 * JSON line shows (`checkDistinct` decodes both to make sure).
 */
function distinctCopies(
  frame: Uint8Array,
  line: Uint8Array,
  times: number,
  unique: readonly string[],
): { pb: Uint8Array; json: Uint8Array } {
  const patterns = unique.map((u) => {
    const bytes = new TextEncoder().encode(u);
    const inFrame = occurrences(frame, bytes);
    const inLine = occurrences(line, bytes);
    if (inFrame.length === 0 || inFrame.length !== inLine.length) {
      throw new Error(`${u}: ${inFrame.length} times in the frame, ${inLine.length} in the line`);
    }
    // The copy's own value, written anew for each copy.
    return { bytes, inFrame, inLine, value: new Uint8Array(bytes.length) };
  });
  const pb = repeat(frame, times);
  const json = repeat(line, times);
  const rng = new Rng(7);
  for (let i = 0; i < times; i++) {
    for (const { bytes, inFrame, inLine, value } of patterns) {
      for (let j = 0; j < bytes.length; j++) {
        const c = bytes[j];
        if (c >= 0x30 && c <= 0x39) value[j] = 0x30 + rng.int(10);
        else if (c >= 0x61 && c <= 0x66) value[j] = 0x61 + rng.int(6);
        else if (c >= 0x67 && c <= 0x7a) value[j] = 0x61 + rng.int(26);
        else value[j] = c;
      }
      for (const at of inFrame) pb.set(value, i * frame.length + at);
      for (const at of inLine) json.set(value, i * line.length + at);
    }
  }
  return { pb, json };
}

/** Whether `a` and `b` are the same JSON value, key order aside (nothing is copied: no new objects or key orders). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k)) return false;
    if (!sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** Every item of `stream`, in order. */
async function collectAll(stream: ReadableStream<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

/**
 * Throws unless the protobuf body's events decode (in full, and in metadata mode) to the JSON body's events, and the
 * objects' uids are all distinct: the check that {@linkcode distinctCopies} made what it says.
 */
async function checkDistinct(pbReads: Uint8Array[], jsonReads: Uint8Array[], events: number): Promise<void> {
  type Event = { type: string; object: { metadata: Record<string, unknown> } };
  const collect = (stream: ReadableStream<unknown>) => collectAll(stream) as Promise<Event[]>;
  const json = await collect(streamOf(jsonReads).pipeThrough(new JsonWatchEventDecoderStream()));
  const full = await collect(
    streamOf(pbReads).pipeThrough(new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders })),
  );
  const meta = await collect(
    streamOf(pbReads).pipeThrough(
      new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders, mode: "metadata" }),
    ),
  );
  if (json.length !== events || full.length !== events || meta.length !== events) {
    throw new Error(`distinct objects: ${json.length} JSON, ${full.length} and ${meta.length} protobuf events`);
  }
  const uids = new Set(json.map((e) => e.object.metadata.uid));
  if (uids.size !== events) throw new Error(`distinct objects: ${uids.size} distinct uids in ${events} events`);
  for (let i = 0; i < events; i++) {
    if (!sameJson(full[i], json[i])) throw new Error(`distinct objects: event ${i} differs`);
    if (!sameJson(meta[i].object.metadata, json[i].object.metadata)) {
      throw new Error(`distinct objects: event ${i}'s metadata differs in metadata mode`);
    }
  }
}

function repeat(unit: Uint8Array, times: number): Uint8Array {
  const out = new Uint8Array(unit.length * times);
  for (let i = 0; i < times; i++) out.set(unit, i * unit.length);
  return out;
}

/**
 * The framing as `KubernetesProtobufWatchBodyDecoderStream` sets it up and one stream item per frame, nothing decoded.
 */
class FramingOnlyStream extends DecoderStream<Uint8Array, { type: string; bytes: number; metadata?: object }> {
  /**
   * `copy`: each frame's bytes also copied where metadata mode (`inputViews: "bounded"`, the default) copies its
   * object's bytes, into the same kind of pool: a frame in a read too large to keep a view of. The object's bytes are
   * the frame's but for a few dozen bytes of envelope. `shape` (with `copy`): each item also carries a new object made
   * as metadata mode makes the event's ObjectMeta, its values already decoded (see {@linkcode MetadataShape}).
   */
  constructor(copy = false, shape?: MetadataShape) {
    const splitter = new FrameSplitter({ flagged: false });
    const pool = new BytePool();
    // What metadata mode keeps of a frame: a view where it may, else a copy.
    const keep = (frame: Uint8Array) =>
      mayKeepViews(frame.length, frame.buffer.byteLength) ? frame.length : pool.copy(frame, 0, frame.length).length;
    super({
      push(chunk, emit) {
        splitter.push(chunk, (frame) => {
          const bytes = copy ? keep(frame) : frame.length;
          emit(
            shape === undefined ? { type: "ADDED", bytes } : { type: "ADDED", bytes, metadata: objectOfShape(shape) },
          );
        });
      },
      finish() {
        splitter.finish();
      },
    });
  }
}

/**
 * The accessors' state: the row's objects never attach it (never read, their accessors are never called), as the
 * decoder's objects do (that slot is part of what the decoding costs).
 */
const shapeSlot = privateSlot<LazyValues>();

/**
 * How metadata mode makes an event's ObjectMeta, in its key order: the scalars it decodes now (set, with their
 * decoded values), then its collections present, own accessors decoded on first read (defined, each with the
 * decoder's kind of pair, `lazyDescriptor`, on a slot of its own). The descriptors are made once and shared by every
 * object and run, as the decoder's are: made per run, each run's new getters gave V8 new transitions and shapes, and
 * the accessors cost Node 20 about twice as much.
 */
interface MetadataShape {
  scalars: [string, unknown][];
  accessors: [string, PropertyDescriptor][];
}

/** The {@linkcode MetadataShape} of the event's ObjectMeta in metadata mode; throws unless it has accessors last. */
function metadataShape(reader: KubernetesObjectReader, event: Uint8Array): MetadataShape {
  const shape: MetadataShape = { scalars: [], accessors: [] };
  for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(eventMetadata(reader, event)))) {
    if (isAccessor(descriptor)) {
      shape.accessors.push([key, lazyDescriptor(shapeSlot, key, shape.accessors.length, () => undefined)]);
    } else if (shape.accessors.length > 0) throw new Error(`metadata mode: scalar ${key} after an accessor`);
    else shape.scalars.push([key, descriptor.value]);
  }
  return shape;
}

/** A new object made as `shape` says: its scalars set, then its accessors defined. */
function objectOfShape(shape: MetadataShape): object {
  const metadata: Record<string, unknown> = {};
  for (const [key, value] of shape.scalars) metadata[key] = value;
  for (const [key, descriptor] of shape.accessors) Object.defineProperty(metadata, key, descriptor);
  return metadata;
}

/** The `metadata` of the event's object, as `reader` decodes it. */
function eventMetadata(reader: KubernetesObjectReader, event: Uint8Array): Record<string, unknown> {
  return (decodeWatchEventFrame(reader, event, 4, "handed-over").object as { metadata: Record<string, unknown> })
    .metadata;
}

/** Whether a property is an accessor (what metadata mode makes of what it decodes on first read). */
function isAccessor(descriptor: PropertyDescriptor): boolean {
  return !("value" in descriptor);
}

async function count(stream: ReadableStream<unknown>): Promise<number> {
  let n = 0;
  for await (const _ of stream) n++;
  return n;
}

/** The events of a stream of event batches, each looked at as a reader of single events would. */
async function countBatched(stream: ReadableStream<unknown[]>): Promise<number> {
  let n = 0;
  for await (const batch of stream) for (const _ of batch) n++;
  return n;
}

/** The object's bytes inside a frame: WatchEvent.object (2) -> RawExtension.raw (1) -> k8s\0 -> Unknown.raw (2). */
function objectBytes(frame: Uint8Array): { apiVersion: string; kind: string; bytes: Uint8Array } {
  const field = (r: ProtobufReader, n: number): Uint8Array => {
    while (!r.done) {
      const tag = r.tag();
      if (tag === ((n << 3) | 2)) return r.bytes();
      r.skip(tag);
    }
    throw new Error(`no field ${n}`);
  };
  const ext = field(new ProtobufReader(frame, 0, 4), 2);
  const unknown = field(new ProtobufReader(ext), 1).subarray(4);
  const typeMeta = new ProtobufReader(field(new ProtobufReader(unknown), 1));
  let apiVersion = "";
  let kind = "";
  while (!typeMeta.done) {
    const tag = typeMeta.tag();
    if (tag === 10) apiVersion = typeMeta.string();
    else if (tag === 18) kind = typeMeta.string();
    else typeMeta.skip(tag);
  }
  return { apiVersion, kind, bytes: field(new ProtobufReader(unknown), 2) };
}

/**
 * The words for metadata mode, "decode apiVersion, kind and metadata now", taken literally: the built-in
 * decoders, with ObjectMeta decoded whole as full mode decodes it (collections, `managedFields[].fieldsV1` parsed).
 * The reader makes only its own ObjectMeta decoder lazy, so another function that does the same is decoded at once.
 */
const wholeObjectMeta: ObjectDecoder = (bytes, start, end, target, baseOffset) =>
  decodeTop(m_ObjectMeta, bytes, start, end, target, baseOffset);
const wholeMetadataDecoders: KubernetesProtobufDecoders = {
  decoder: (apiVersion, kind) => builtinDecoders.decoder(apiVersion, kind),
  objectMeta: builtinDecoders.objectMeta,
  metadataDecoder(apiVersion, kind) {
    const decoder = builtinDecoders.metadataDecoder(apiVersion, kind);
    return decoder === builtinDecoders.objectMeta ? wholeObjectMeta : decoder;
  },
};

/** Throws unless `reader` decodes the event's metadata whole: collections and fieldsV1 as data properties. */
function checkWholeMetadata(reader: KubernetesObjectReader, event: Uint8Array): void {
  const metadata = eventMetadata(reader, event) as { managedFields?: Record<string, unknown>[] };
  const accessors = Object.entries(Object.getOwnPropertyDescriptors(metadata))
    .concat((metadata.managedFields ?? []).flatMap((entry) => Object.entries(Object.getOwnPropertyDescriptors(entry))))
    .filter(([, descriptor]) => isAccessor(descriptor));
  if (accessors.length > 0) throw new Error(`metadata decoded whole has accessors: ${accessors.map(([k]) => k)}`);
}

const sections: Section[] = [];
const checks: Check[] = [];

for (const k of KINDS) {
  const { frame, line } = firstEvent(k.file);
  const events = Math.max(1, Math.round(JSON_BYTES / line.length));
  const jsonBody = repeat(line, events);
  const pbBody = repeat(frame, events);
  const jsonReads = splitReads(jsonBody);
  const pbReads = splitReads(pbBody);
  const distinct = distinctCopies(frame, line, events, k.unique);
  const distinctJsonReads = splitReads(distinct.json);
  const distinctPbReads = splitReads(distinct.pb);
  const object = objectBytes(frame);
  const decode = builtinDecoders.decoder(object.apiVersion, object.kind)!;
  const lineText = new TextDecoder().decode(line);
  const lines = Array.from({ length: 256 }, () => lineText.slice(0, -1));
  // One frame's event (no prefix), decoded 256 times per run by a whole-event decoder in each mode.
  const eventBytes = frame.subarray(4);
  const fullReader = new KubernetesObjectReader({ decoders: builtinDecoders });
  const metaReader = new KubernetesObjectReader({ decoders: builtinDecoders, mode: "metadata" });
  const wholeMetaReader = new KubernetesObjectReader({ decoders: wholeMetadataDecoders, mode: "metadata" });
  checkWholeMetadata(wholeMetaReader, eventBytes);
  const shape = metadataShape(metaReader, eventBytes);
  // `before`, if given, runs before each event (in the timed loop).
  const coreEvents = (reader: KubernetesObjectReader, ownership: FrameOwnership, before?: () => void) => () => {
    let n = 0;
    for (let i = 0; i < lines.length; i++) {
      before?.();
      if (decodeWatchEventFrame(reader, eventBytes, 4, ownership).object !== undefined) n++;
    }
    return n;
  };
  // Metadata mode keeping a view, then reading what an informer's indexes read: the collections that decode on first
  // read, but managedFields.
  const coreEventsRead = (reader: KubernetesObjectReader) => () => {
    let n = 0;
    for (let i = 0; i < lines.length; i++) {
      const { metadata } = decodeWatchEventFrame(reader, eventBytes, 4, "handed-over").object as {
        metadata: { labels?: unknown; annotations?: unknown; ownerReferences?: unknown };
      };
      if (metadata.labels !== 0 && metadata.annotations !== 0 && metadata.ownerReferences !== 0) n++;
    }
    return n;
  };
  log(`${k.name}: ${events} events; JSON ${line.length} B/event, protobuf ${frame.length} B/event`);
  // kube-apiserver's own bytes of the same object, in the three encodings.
  const recorded = recordedEvent(k.recorded.file, k.recorded.event);
  await checkRecorded(recorded);
  const recEvents = Math.max(1, Math.round(JSON_BYTES / recorded.line.length));
  const recBodies = {
    json: repeat(recorded.line, recEvents),
    pb: repeat(recorded.frame, recEvents),
    cbor: repeat(recorded.item, recEvents),
  };
  const recReads = {
    json: splitReads(recBodies.json),
    pb: splitReads(recBodies.pb),
    cbor: splitReads(recBodies.cbor),
  };
  const recLines = Array.from({ length: 256 }, () => new TextDecoder().decode(recorded.line).slice(0, -1));
  const recItem = recorded.item;
  // The JSON watch, and the protobuf watch in full and in metadata mode, one event per stream item: cases `json`,
  // `pb` and `pb-meta` with `suffix` appended, over `json` and `pb` (the same events' reads in both encodings).
  const watchCases = (suffix: string, json: Uint8Array[], pb: Uint8Array[]): Case[] => [
    {
      name: `json${suffix}`,
      expect: events,
      run: () => count(streamOf(json).pipeThrough(new JsonWatchEventDecoderStream())),
    },
    {
      name: `pb${suffix}`,
      expect: events,
      run: () =>
        count(streamOf(pb).pipeThrough(new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders }))),
    },
    {
      name: `pb-meta${suffix}`,
      expect: events,
      run: () =>
        count(
          streamOf(pb).pipeThrough(
            new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders, mode: "metadata" }),
          ),
        ),
    },
  ];
  const cases: Case[] = [
    ...watchCases("", jsonReads, pbReads),
    {
      name: "pb-meta-views",
      expect: events,
      run: () =>
        count(
          streamOf(pbReads).pipeThrough(
            new KubernetesProtobufWatchBodyDecoderStream({
              decoders: builtinDecoders,
              mode: "metadata",
              inputViews: "always",
            }),
          ),
        ),
    },
    {
      name: "json-batch",
      expect: events,
      run: () => countBatched(streamOf(jsonReads).pipeThrough(new BatchDecoderStream(new JsonWatchEventDecoder()))),
    },
    {
      name: "pb-batch",
      expect: events,
      run: () =>
        countBatched(
          streamOf(pbReads).pipeThrough(
            new BatchDecoderStream(new KubernetesProtobufWatchBodyDecoder({ decoders: builtinDecoders })),
          ),
        ),
    },
    {
      name: "pb-meta-batch",
      expect: events,
      run: () =>
        countBatched(
          streamOf(pbReads).pipeThrough(
            new BatchDecoderStream(
              new KubernetesProtobufWatchBodyDecoder({ decoders: builtinDecoders, mode: "metadata" }),
            ),
          ),
        ),
    },
    ...watchCases("-distinct", distinctJsonReads, distinctPbReads),
    {
      name: "framing-only",
      expect: events,
      run: () => count(streamOf(pbReads).pipeThrough(new FramingOnlyStream())),
    },
    {
      name: "framing-only-meta-copy",
      expect: events,
      run: () => count(streamOf(pbReads).pipeThrough(new FramingOnlyStream(true))),
    },
    {
      name: "framing-only-meta-copy-accessors",
      expect: events,
      run: () => count(streamOf(pbReads).pipeThrough(new FramingOnlyStream(true, shape))),
    },
    {
      name: "core-json",
      expect: lines.length,
      run: () => {
        let n = 0;
        for (const l of lines) if (JSON.parse(l).object !== undefined) n++;
        return n;
      },
    },
    {
      name: "core-pb",
      expect: lines.length,
      run: () => {
        let n = 0;
        for (let i = 0; i < lines.length; i++) {
          const o = decode(
            object.bytes,
            0,
            object.bytes.length,
            { kind: object.kind, apiVersion: object.apiVersion },
            0,
          );
          if (o.metadata !== undefined) n++;
        }
        return n;
      },
    },
    // The event decoders without streams or framing: full, and metadata mode keeping a view of the frame (as for a
    // frame whose reads are small enough to keep) or a copy of its bytes (as for one whose reads are not).
    { name: "core-event-full", expect: lines.length, run: coreEvents(fullReader, "handed-over") },
    // Full mode as if each event's FieldsV1 bytes were new: what was recorded of them forgotten before each event (a
    // generation count bumped: nothing else), so each is parsed and copied as a text seen for the first time.
    {
      name: "core-event-full-new-fieldsv1",
      expect: lines.length,
      run: coreEvents(fullReader, "handed-over", forgetRepeatedJson),
    },
    { name: "core-event-meta-view", expect: lines.length, run: coreEvents(metaReader, "handed-over") },
    { name: "core-event-meta-copy", expect: lines.length, run: coreEvents(metaReader, "borrowed") },
    { name: "core-event-meta-read", expect: lines.length, run: coreEventsRead(metaReader) },
    { name: "core-event-meta-whole", expect: lines.length, run: coreEvents(wholeMetaReader, "handed-over") },
    {
      name: "rec-json",
      expect: recEvents,
      run: () => count(streamOf(recReads.json).pipeThrough(new JsonWatchEventDecoderStream())),
    },
    {
      name: "rec-pb",
      expect: recEvents,
      run: () =>
        count(
          streamOf(recReads.pb).pipeThrough(
            new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders }),
          ),
        ),
    },
    {
      name: "rec-cbor",
      expect: recEvents,
      run: () => count(streamOf(recReads.cbor).pipeThrough(new KubernetesCborWatchBodyDecoderStream())),
    },
    {
      name: "core-rec-json",
      expect: recLines.length,
      run: () => {
        let n = 0;
        for (const l of recLines) if (JSON.parse(l).object !== undefined) n++;
        return n;
      },
    },
    {
      name: "core-rec-cbor",
      expect: recLines.length,
      run: () => {
        let n = 0;
        for (let i = 0; i < recLines.length; i++) {
          const event = readKubernetesCborValue(recItem, 0, recItem.length, 0, "CBOR watch event") as {
            object?: unknown;
          };
          if (event.object !== undefined) n++;
        }
        return n;
      },
    },
  ];
  // The check first, before any timing: it keeps every event of three decodings of the distinct objects until it has
  // compared them, as an informer keeps its initial list, so the process's first decoded objects mostly survive. V8
  // pretenures what an allocation site (a literal) makes once most of it survives, and in Node 20 does not go back:
  // before the decoders made their objects without allocation sites (src/codec/value_constructors.ts), this order left
  // full decoding 2-3x slower in Node 20 and Deno for the rest of the run (it was run after the timing then). It throws
  // before any figure is written.
  await checkDistinct(distinctPbReads, distinctJsonReads, events);
  const t = await measure(cases, OPTIONS);
  // The distinct objects kept as an informer's store keeps them, against the same not kept, in rounds of their own
  // (a store kept alive would change the heap every other case runs in).
  let kept: unknown[] = [];
  const keptTimings = await measure([
    { ...cases.find((c) => c.name === "pb-distinct")!, name: "pb-distinct-not-kept" },
    {
      name: "pb-distinct-kept",
      expect: events,
      run: async () => {
        // Each run's events kept until the end of the next run.
        kept = await collectAll(
          streamOf(distinctPbReads).pipeThrough(
            new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders }),
          ),
        );
        return kept.length;
      },
    },
  ], OPTIONS);
  if (kept.length !== events) throw new Error(`kept ${kept.length} events`);
  const ms = (c: string) => median(t[c]);
  const msKept = (c: string) => median(keptTimings[c]);
  const vsJson = pairedRatio(t, "json", "pb");
  const metaVsPb = pairedRatio(t, "pb", "pb-meta");
  const viewsVsPb = pairedRatio(t, "pb", "pb-meta-views");
  const cores = pairedRatio(t, "core-json", "core-pb");
  const floor = pairedRatio(t, "pb", "framing-only");
  const metaCopyFloor = pairedRatio(t, "pb", "framing-only-meta-copy");
  const designFloor = pairedRatio(t, "pb", "framing-only-meta-copy-accessors");
  const jsonBatched = pairedRatio(t, "json", "json-batch");
  const vsJsonBatched = pairedRatio(t, "json-batch", "pb-batch");
  const metaVsPbBatched = pairedRatio(t, "pb-batch", "pb-meta-batch");
  // A stream case's row (events of `body`), and a core case's row (one event per line).
  const streamRow = (label: string, k: string, body: Uint8Array, ratio: string, target = "", met = ""): string[] => [
    label,
    fmt.mbps(body.length, ms(k)),
    fmt.rate(events, ms(k)),
    fmt.us(ms(k), events),
    ratio,
    target,
    met,
  ];
  // A stream row judged against a target: its ratio vs `vs`, the target, and whether it is met.
  const judgedRow = (label: string, k: string, body: Uint8Array, r: Ratio, vs: string, target: number): string[] =>
    streamRow(
      label,
      k,
      body,
      `${fmt.ratio(r)} vs ${vs}`,
      `≥ ${target === 1 ? "1.0" : target}x`,
      r.median >= target ? "yes" : "**no**",
    );
  const coreRow = (label: string, k: string, ratio: string): string[] => [
    label,
    "",
    fmt.rate(lines.length, ms(k)),
    fmt.us(ms(k), lines.length),
    ratio,
    "",
    "",
  ];
  // A core row of the whole event decoded some other way, against full decoding in the same rounds.
  const coreVsFull = (label: string, key: string): string[] =>
    coreRow(label, key, `${fmt.ratio(pairedRatio(t, "core-event-full", key))} vs full`);
  sections.push({
    title: `${k.name}: ${events} events; ${line.length} B of JSON, ${frame.length} B of protobuf per event`,
    columns: ["case", "MB/s (of its own input)", "events/s", "µs/event", "ratio (IQR)", "target", "met"],
    rows: [
      streamRow("baseline: JSON watch, `JsonWatchEventDecoderStream`", "json", jsonBody, "1.00x"),
      judgedRow("protobuf watch, `KubernetesProtobufWatchBodyDecoderStream` (full)", "pb", pbBody, vsJson, "JSON", 1),
      judgedRow('protobuf watch, `mode: "metadata"`', "pb-meta", pbBody, metaVsPb, "full", 5),
      streamRow(
        'the same with `inputViews: "always"` (views of the reads, never a copy; not the default, so not judged)',
        "pb-meta-views",
        pbBody,
        `${fmt.ratio(viewsVsPb)} vs full`,
      ),
      streamRow(
        "batched: JSON watch, `BatchDecoderStream` of `JsonWatchEventDecoder` (an array of events per read)",
        "json-batch",
        jsonBody,
        `${fmt.ratio(jsonBatched)} vs JSON`,
      ),
      judgedRow(
        "batched: protobuf watch, `BatchDecoderStream` of `KubernetesProtobufWatchBodyDecoder` (full)",
        "pb-batch",
        pbBody,
        vsJsonBatched,
        "batched JSON",
        1,
      ),
      judgedRow('batched: the same, `mode: "metadata"`', "pb-meta-batch", pbBody, metaVsPbBatched, "batched full", 5),
      streamRow(
        "distinct objects (each event's name, uid, resourceVersion, IPs, IDs its own, as in a real watch; not judged): JSON watch",
        "json-distinct",
        distinct.json,
        `${fmt.ratio(pairedRatio(t, "json", "json-distinct"))} vs the repeated object's`,
      ),
      streamRow(
        "distinct objects: protobuf watch (full)",
        "pb-distinct",
        distinct.pb,
        `${fmt.ratio(pairedRatio(t, "json-distinct", "pb-distinct"))} vs their JSON`,
      ),
      streamRow(
        'distinct objects: `mode: "metadata"`',
        "pb-meta-distinct",
        distinct.pb,
        `${fmt.ratio(pairedRatio(t, "pb-distinct", "pb-meta-distinct"))} vs their full`,
      ),
      [
        "distinct objects kept: protobuf watch (full), every event kept until the next run ends (as an informer's store keeps them), in rounds of its own",
        fmt.mbps(distinct.pb.length, msKept("pb-distinct-kept")),
        fmt.rate(events, msKept("pb-distinct-kept")),
        fmt.us(msKept("pb-distinct-kept"), events),
        `${fmt.ratio(pairedRatio(keptTimings, "pb-distinct-not-kept", "pb-distinct-kept"))} vs not kept`,
        "",
        "",
      ],
      streamRow(
        "reference: framing + stream delivery, nothing decoded (the floor under full mode)",
        "framing-only",
        pbBody,
        `${fmt.ratio(floor)} vs full`,
      ),
      streamRow(
        "reference: the same, each frame also copied where metadata mode copies its object's bytes (reads too large to keep a view of): the floor under the default `inputViews`",
        "framing-only-meta-copy",
        pbBody,
        `${fmt.ratio(metaCopyFloor)} vs full`,
      ),
      streamRow(
        `reference: the same, each item also carrying a new object made as metadata mode makes this ObjectMeta, its values already decoded: ${shape.scalars.length} scalars set, then ${shape.accessors.length} own accessors defined (${
          shape.accessors.map(([key]) => key).join(", ")
        }), nothing decoded: the floor of metadata mode's design (an item per event, the retention bound, collections decoded on first read)`,
        "framing-only-meta-copy-accessors",
        pbBody,
        `${fmt.ratio(designFloor)} vs full`,
      ),
      [
        `kube-apiserver v1.37.2's own bytes of this object (fixtures/kubernetes/cbor/${k.recorded.file}, event ${k.recorded.event}: ${recorded.line.length} B of JSON, ${recorded.frame.length} B of protobuf, ${recorded.item.length} B of CBOR per event; ${recEvents} events; not judged): JSON watch, \`JsonWatchEventDecoderStream\``,
        fmt.mbps(recBodies.json.length, ms("rec-json")),
        fmt.rate(recEvents, ms("rec-json")),
        fmt.us(ms("rec-json"), recEvents),
        "1.00x",
        "",
        "",
      ],
      [
        "the same object as kube-apiserver sent it: protobuf watch (full)",
        fmt.mbps(recBodies.pb.length, ms("rec-pb")),
        fmt.rate(recEvents, ms("rec-pb")),
        fmt.us(ms("rec-pb"), recEvents),
        `${fmt.ratio(pairedRatio(t, "rec-json", "rec-pb"))} vs its JSON`,
        "",
        "",
      ],
      [
        "the same object as kube-apiserver sent it: CBOR watch (`application/cbor-seq`), `KubernetesCborWatchBodyDecoderStream`",
        fmt.mbps(recBodies.cbor.length, ms("rec-cbor")),
        fmt.rate(recEvents, ms("rec-cbor")),
        fmt.us(ms("rec-cbor"), recEvents),
        `${fmt.ratio(pairedRatio(t, "rec-json", "rec-cbor"))} vs its JSON, ${
          fmt.ratio(pairedRatio(t, "rec-pb", "rec-cbor"))
        } vs its protobuf`,
        "",
        "",
      ],
      coreRow("core, no streams: `JSON.parse` of each line", "core-json", "1.00x"),
      coreRow("core, no streams: generated decoder of the object", "core-pb", `${fmt.ratio(cores)} vs JSON.parse`),
      coreRow("core, no streams: `JSON.parse` of kube-apiserver's JSON event", "core-rec-json", "1.00x"),
      coreRow(
        "core, no streams: `readKubernetesCborValue` of kube-apiserver's CBOR event (the same object)",
        "core-rec-cbor",
        `${fmt.ratio(pairedRatio(t, "core-rec-json", "core-rec-cbor"))} vs JSON.parse`,
      ),
      coreRow("core, no streams: the whole event (`decodeWatchEventFrame`), full mode", "core-event-full", "1.00x"),
      coreVsFull(
        "core, no streams: full mode, each event's FieldsV1 bytes never seen before (what was recorded of earlier ones forgotten before each event, so none is built again from its shape)",
        "core-event-full-new-fieldsv1",
      ),
      coreVsFull(
        "core, no streams: the same in metadata mode, the object keeping a view of the frame",
        "core-event-meta-view",
      ),
      coreVsFull(
        "core, no streams: the same in metadata mode, the object copying its bytes (reads too large to keep)",
        "core-event-meta-copy",
      ),
      coreVsFull(
        "core, no streams: metadata mode keeping a view, then reading `labels`, `annotations` and `ownerReferences` (decoded on first read)",
        "core-event-meta-read",
      ),
      coreVsFull(
        "core, no streams: metadata mode keeping a view, but `metadata` decoded whole at once, as full mode decodes it (the issue's words taken literally: nothing of it left to first read)",
        "core-event-meta-whole",
      ),
    ],
  });
  checks.push(ratioCheck(`k8s-protobuf/${k.file}/full-vs-json`, `protobuf vs JSON watch, ${k.name}`, vsJson, 1));
  checks.push(ratioCheck(`k8s-protobuf/${k.file}/metadata-vs-full`, `metadata mode vs full, ${k.name}`, metaVsPb, 5));
  checks.push(
    ratioCheck(
      `k8s-protobuf/${k.file}/batched-full-vs-json`,
      `batched (\`BatchDecoderStream\`): protobuf vs JSON watch, ${k.name}`,
      vsJsonBatched,
      1,
    ),
  );
  checks.push(
    ratioCheck(
      `k8s-protobuf/${k.file}/batched-metadata-vs-full`,
      `batched (\`BatchDecoderStream\`): metadata mode vs full, ${k.name}`,
      metaVsPbBatched,
      5,
    ),
  );
}

emit({
  benchmark: "kubernetes_protobuf",
  runtime: runtimeInfo(),
  quick,
  seconds: (performance.now() - started) / 1e3,
  params: { jsonBytesPerKind: JSON_BYTES, readSize: 65536, ...OPTIONS },
  sections,
  checks,
});
