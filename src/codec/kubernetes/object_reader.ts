/**
 * {@linkcode KubernetesObjectReader}: Kubernetes objects in their protobuf serialization (`k8s\0` + `runtime.Unknown`)
 * to the objects the API server's JSON shows, for the decoders it is given; shared by the one-object function and the
 * watch decoders.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { ObjectMeta } from "../../events.ts";
import { ProtobufCursor } from "../protobuf/cursor.ts";
import { parseMediaType } from "../media_type.ts";
import { parseKubernetesEnvelope } from "./envelope.ts";
import { KubernetesProtobufObject } from "./protobuf_object.ts";
import type { JsonObject, KubernetesProtobufDecoders, ObjectDecoder } from "./registry.ts";
import { keptBytesDecoder, listMetaDecoder, statusDecoder } from "./meta_decoders.ts";
import { BytePool, POOL_BLOCK_BYTES } from "./byte_pool.ts";
import { statusOnlyDecoders } from "./status_only_decoders.ts";
import { lazyDescriptor, type LazyValues, privateSlot } from "./runtime/lazy_property.ts";
import { emptyList, objectOfKind } from "../value_constructors.ts";

/**
 * How objects are decoded: `"full"` (the default) decodes every object of a known kind in full; `"metadata"` decodes
 * `kind`, `apiVersion` and `metadata` only and keeps the rest as bytes ({@linkcode KubernetesProtobufObject}, whose
 * `decode()` decodes it in full on demand); a List's or a `Status`'s `metadata` is its `ListMeta`. Within an
 * `ObjectMeta`, the collections (`labels`, `annotations`, `ownerReferences`, `finalizers`, `managedFields`: most of
 * its bytes) and `managedFields[].fieldsV1` are decoded when first read: own enumerable accessors that keep the value
 * once read or assigned, so the metadata still equals, copies (`structuredClone` too) and serializes as the full
 * decoding's, and reads the same when frozen (a fault in them is thrown at each read; assigning to them throws once
 * the object is frozen, as for a read-only property). Their state is the object's own, out of a Proxy's reach: a
 * Proxy-based store (Vue's `reactive`, MobX) needs a plain copy, `structuredClone(metadata)`. The
 * objects of `ERROR` events (a `Status`) are always decoded in full, and so are the few built-in kinds that have no
 * metadata (`PodLogOptions` and the other subresource options, `SerializedReference`, `DeploymentRollback`).
 *
 * @example
 * ```ts
 * import { KubernetesProtobufObject, type KubernetesProtobufMode } from "watchwire";
 * import { decodeKubernetesProtobufObject } from "watchwire/kubernetes";
 *
 * // k8s\0 + Unknown { typeMeta: { apiVersion: "v1", kind: "Pod" }, raw: Pod { metadata: { name: "web" } } }
 * const pod = Uint8Array.of(
 *   0x6b, 0x38, 0x73, 0, 0x0a, 9, 0x0a, 2, 0x76, 0x31, 0x12, 3, 0x50, 0x6f, 0x64, 0x12, 7, 0x0a, 5, 0x0a, 3, 0x77, 0x65, 0x62,
 * );
 * const modes: KubernetesProtobufMode[] = ["full", "metadata"];
 * for (const mode of modes) {
 *   const object = decodeKubernetesProtobufObject(pod, { mode });
 *   console.log(mode, object.kind, object instanceof KubernetesProtobufObject); // full Pod false, metadata Pod true
 * }
 * ```
 */
export type KubernetesProtobufMode = "full" | "metadata";

/**
 * Options of the Kubernetes protobuf decoders.
 *
 * @example
 * ```ts
 * import type { KubernetesProtobufOptions } from "watchwire";
 * import { coreV1, createKubernetesDecoders, decodeKubernetesProtobufObject } from "watchwire/kubernetes";
 *
 * // k8s\0 + Unknown { typeMeta: { apiVersion: "v1", kind: "Pod" }, raw: Pod { metadata: { name: "web" } } }
 * const pod = Uint8Array.of(
 *   0x6b, 0x38, 0x73, 0, 0x0a, 9, 0x0a, 2, 0x76, 0x31, 0x12, 3, 0x50, 0x6f, 0x64, 0x12, 7, 0x0a, 5, 0x0a, 3, 0x77, 0x65, 0x62,
 * );
 * const options: KubernetesProtobufOptions = { decoders: createKubernetesDecoders([coreV1]), mode: "metadata" };
 * const object = decodeKubernetesProtobufObject(pod, options);
 * console.log(object.kind, JSON.stringify(object.metadata)); // Pod {"name":"web"}
 * ```
 */
export interface KubernetesProtobufOptions {
  /**
   * The object decoders by `apiVersion` and `kind`, from `watchwire/kubernetes`: `createKubernetesDecoders([coreV1])`
   * for core/v1's kinds, `builtinDecoders` for every built-in kind. Default: none but `v1` `Status` (other kinds
   * decode as {@linkcode KubernetesProtobufObject}s), so that a bundle holds only the group/versions named here.
   */
  decoders?: KubernetesProtobufDecoders;
  /** `"full"` (default) or `"metadata"`: see {@linkcode KubernetesProtobufMode}. */
  mode?: KubernetesProtobufMode;
  /**
   * How an object kept as bytes (`mode: "metadata"`, or a kind the decoders do not know) holds bytes that lie in the
   * input chunks of a watch decoder:
   *
   * - `"bounded"` (the default): views of those chunks only when they keep alive at most four times the object's size
   *   plus 32 KiB, else a copy of its own. Kept objects then cost memory in proportion to their size.
   * - `"always"`: views of the chunks, never a copy of the object's bytes: faster (kept as an option because it buys
   *   more than 10% on metadata mode's headline rows: bench/RESULTS.md, "Mechanisms"), for a
   *   consumer that keeps no object for long, such as a short-lived function or a tool that prints events, since one
   *   kept object keeps alive the whole chunk that holds it: a 64 KiB read for a 4 KB object.
   *
   * Bytes the caller keeps (`decodeKubernetesProtobufObject`, a `"borrowed"` frame) are always copied.
   */
  inputViews?: KubernetesProtobufInputViews;
}

/**
 * What {@linkcode KubernetesProtobufOptions.inputViews} may be: `"bounded"` (the default) or `"always"`.
 *
 * @example
 * ```ts
 * import { KubernetesProtobufObject, type KubernetesProtobufInputViews } from "watchwire";
 * import { KubernetesProtobufWatchBodyDecoder } from "watchwire/kubernetes";
 *
 * // One watch event (ADDED, an unknown kind kept as bytes) in a read of 64 KiB.
 * const text = (s: string) => [...new TextEncoder().encode(s)];
 * const typeMeta = [0x0a, 4, ...text("x/v1"), 0x12, 6, ...text("Widget")];
 * const envelope = [...text("k8s\0"), 0x0a, typeMeta.length, ...typeMeta, 0x12, 5, 0x0a, 3, 0x0a, 1, ...text("w")];
 * const event = [0x0a, 5, ...text("ADDED"), 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope];
 * const read = new Uint8Array(64 * 1024);
 * read.set([0, 0, 0, event.length, ...event]);
 * for (const inputViews of ["bounded", "always"] satisfies KubernetesProtobufInputViews[]) {
 *   const decoder = new KubernetesProtobufWatchBodyDecoder({ inputViews });
 *   decoder.push(read.subarray(0, 4 + event.length), ({ object }) => {
 *     if (object instanceof KubernetesProtobufObject) console.log(inputViews, object.raw.buffer === read.buffer);
 *   });
 * } // bounded false (a copy: the read is too large to keep for 5 bytes), then always true
 * ```
 */
export type KubernetesProtobufInputViews = "bounded" | "always";

const PROTOBUF_TYPE = "application/vnd.kubernetes.protobuf";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * ObjectMeta's collections, by field number (`labels` 11, `annotations` 12, `ownerReferences` 13, `finalizers` 14,
 * `managedFields` 17): most of a typical metadata's bytes (managedFields above all), and what the metadata-only mode
 * leaves to first access. Its scalars (fields 1-10) come before them.
 */
const LAZY_OBJECT_META: Readonly<Record<number, string>> = {
  11: "labels",
  12: "annotations",
  13: "ownerReferences",
  14: "finalizers",
  17: "managedFields",
};

/**
 * What a lazily decoded ObjectMeta needs to decode its collections: the bytes, and [field, start, end] triples; and
 * their values read or assigned so far (the `i`-th for the `i`-th of {@linkcode LAZY_OBJECT_META}).
 */
interface LazyCollections extends LazyValues {
  raw: Uint8Array;
  baseOffset: number;
  decode: ObjectDecoder;
  ranges: number[];
}

/** A {@linkcode LazyCollections} made by a constructor: a literal would have an allocation site V8 may pretenure. */
class LazyCollectionsState implements LazyCollections {
  known = 0;
  values: unknown[] | undefined = undefined;
  constructor(
    readonly raw: Uint8Array,
    readonly baseOffset: number,
    readonly decode: ObjectDecoder,
    readonly ranges: number[],
  ) {}
}

/** A lazy ObjectMeta's {@linkcode LazyCollections}, on the metadata object itself. */
const lazyCollections = privateSlot<LazyCollections>();

/** Collection `name` (field number `field`) of a lazy ObjectMeta. */
function decodeCollection(lazy: LazyCollections, field: number, name: string): unknown {
  const { ranges } = lazy;
  let k = 0;
  while (ranges[k] !== field) k += 3;
  try {
    return lazy.decode(lazy.raw, ranges[k + 1], ranges[k + 2], {}, lazy.baseOffset)[name];
  } catch (error) {
    // Go reads a map entry's key and value up to the end of the ObjectMeta, not of the entry: one that runs past
    // the collection here may still be read there. The collections run to the ObjectMeta's end (nothing else may
    // follow them, or it is decoded at once), so decoding all of them gives Go's value, or its error.
    if (!(error instanceof DecodeError)) throw error;
    return lazy.decode(lazy.raw, ranges[1], ranges[ranges.length - 1], {}, lazy.baseOffset)[name];
  }
}

// The accessor pair of each collection, shared by all objects.
const LAZY_DESCRIPTORS: Readonly<Record<number, PropertyDescriptor>> = Object.fromEntries(
  Object.entries(LAZY_OBJECT_META).map(([key, name], i) => [
    key,
    lazyDescriptor(lazyCollections, name, i, (lazy) => decodeCollection(lazy, Number(key), name)),
  ]),
);

/**
 * An ObjectMeta message `raw[start..end)` with its scalars decoded now and its collections when first read: each an
 * own enumerable accessor (in Go's field order) that keeps its value once read, so that the object still compares,
 * copies and serializes as the fully decoded one. This needs the message in Go's order (ascending field numbers, the
 * collections after the scalars); otherwise everything is decoded now. `raw` must outlive the metadata (the object's
 * own bytes, or a copy): the collections, and the `fieldsV1` of their `managedFields`, are read from it later.
 */
export function lazyObjectMeta(
  raw: Uint8Array,
  start: number,
  end: number,
  baseOffset: number,
  decode: ObjectDecoder,
): ObjectMeta {
  decode = keptBytesDecoder(decode);
  const c = new ProtobufCursor(raw, start, baseOffset);
  // The collections present: [field number, start of its first occurrence, end of its last] each.
  const ranges = emptyList<number>();
  let last = 0;
  while (c.pos < end) {
    const at = c.pos;
    const tag = c.tag(end);
    const field = tag >>> 3;
    c.skip(tag, end);
    const collection = field === 11 || field === 12 || field === 13 || field === 14 || field === 17;
    if (field < last || (ranges.length > 0 && !collection)) {
      return decode(raw, start, end, {}, baseOffset) as ObjectMeta; // not in Go's order
    }
    if (field !== last && collection) ranges.push(field, at, c.pos);
    else if (ranges.length > 0) ranges[ranges.length - 1] = c.pos;
    last = field;
  }
  const metadata = decode(raw, start, ranges.length === 0 ? end : ranges[1], {}, baseOffset);
  if (ranges.length === 0) return metadata as ObjectMeta;
  lazyCollections.attach(metadata, new LazyCollectionsState(raw, baseOffset, decode, ranges));
  for (let k = 0; k < ranges.length; k += 3) {
    Object.defineProperty(metadata, LAZY_OBJECT_META[ranges[k]], LAZY_DESCRIPTORS[ranges[k]]);
  }
  return metadata as ObjectMeta;
}

/**
 * Who else may use the bytes a frame decoder reads, which decides what an object kept as bytes (metadata mode, a kind
 * the decoders do not know) may hold on to:
 * - `"handed-over"`: nothing writes them again (a Web Streams chunk, or a buffer of the frame's own): a kept object
 *   may take a view of them, within the bound of `inputViews`;
 * - `"borrowed"`: the caller may reuse them once the decoder returns: what an object keeps is copied.
 *
 * @example
 * ```ts
 * import { KubernetesProtobufObject } from "watchwire";
 * import { type FrameOwnership, KubernetesProtobufWatchFrameDecoder } from "watchwire/kubernetes";
 *
 * const text = (s: string) => [...new TextEncoder().encode(s)];
 * const typeMeta = [0x0a, 4, ...text("x/v1"), 0x12, 6, ...text("Widget")]; // a kind the decoders do not know
 * const envelope = [...text("k8s\0"), 0x0a, typeMeta.length, ...typeMeta, 0x12, 5, 0x0a, 3, 0x0a, 1, ...text("w")];
 * const frame = Uint8Array.of(0x0a, 5, ...text("ADDED"), 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope);
 * const decoder = new KubernetesProtobufWatchFrameDecoder();
 * for (const ownership of ["handed-over", "borrowed"] satisfies FrameOwnership[]) {
 *   const { object } = decoder.decode(frame, 0, ownership);
 *   if (object instanceof KubernetesProtobufObject) console.log(ownership, object.raw.buffer === frame.buffer);
 * } // handed-over true, then borrowed false
 * ```
 */
export type FrameOwnership = "handed-over" | "borrowed";

/**
 * Whether an object of `size` bytes may keep its bytes as views that keep `pinned` bytes alive: the bound on what a
 * kept object keeps alive is four times its size plus 32 KiB, whether it keeps a view of an input chunk or a copy (a
 * small copy keeps a {@linkcode BytePool} block of 32 KiB alive). `pinned` counts
 * the views' ArrayBuffers, not their lengths: a read's buffer can be far larger than its bytes (Deno's fetch hands every
 * read over as a view of a 64 KiB buffer; `node scripts/read-buffers.mjs` shows each runtime's).
 */
export function mayKeepViews(size: number, pinned: number): boolean {
  return pinned <= size * 4 + POOL_BLOCK_BYTES;
}

/** `mode`, checked (`"full"` when undefined); a RangeError for anything but `"full"` and `"metadata"`. */
function checkMode(mode: KubernetesProtobufMode | undefined): KubernetesProtobufMode {
  const m = mode ?? "full";
  if (m !== "full" && m !== "metadata") throw new RangeError(`mode must be "full" or "metadata", not ${m}`);
  return m;
}

/** `inputViews`, checked (`"bounded"` when undefined); a RangeError for anything but `"bounded"` and `"always"`. */
function checkInputViews(inputViews: KubernetesProtobufInputViews | undefined): KubernetesProtobufInputViews {
  const v = inputViews ?? "bounded";
  if (v !== "bounded" && v !== "always") throw new RangeError(`inputViews must be "bounded" or "always", not ${v}`);
  return v;
}

/**
 * Turns envelopes into objects for one decoding run (a watch stream, or one object): the decoders, the mode, and the
 * pool that kept copies come from.
 */
export class KubernetesObjectReader {
  readonly decoders: KubernetesProtobufDecoders;
  readonly mode: KubernetesProtobufMode;
  /** Whether views of input chunks are held to {@linkcode mayKeepViews}' bound (`inputViews: "bounded"`). */
  readonly #boundedViews: boolean;
  readonly #pool = new BytePool();

  /**
   * The options of every decoder of this format, checked here for all of them. Without `decoders`, only `Status`'s
   * (never the built-in ones, so that this module does not pull them into bundles).
   */
  constructor(options: KubernetesProtobufOptions) {
    this.decoders = options.decoders ?? statusOnlyDecoders();
    this.mode = checkMode(options.mode);
    this.#boundedViews = checkInputViews(options.inputViews) === "bounded";
  }

  /** The decoder of a kind: the decoders', else the generated one for `meta.v1.Status` (ERROR events always decode). */
  decoderOf(apiVersion: string, kind: string): ObjectDecoder | undefined {
    const decoder = this.decoders.decoder(apiVersion, kind);
    if (decoder !== undefined) return decoder;
    return kind === "Status" && (apiVersion === "v1" || apiVersion === "meta.k8s.io/v1") ? statusDecoder : undefined;
  }

  /**
   * The object whose envelope (magic included) is `bytes[start..end)`; `baseOffset` locates `bytes[0]` in the input.
   * `full`: decode in full even in metadata mode (ERROR events). `bytes`: who else may use them (see
   * {@linkcode FrameOwnership}), which decides whether an object kept as bytes keeps a view of them or a copy.
   */
  read(
    bytes: Uint8Array,
    start: number,
    end: number,
    baseOffset: number,
    full: boolean,
    ownership: FrameOwnership,
  ): JsonObject {
    const envelope = parseKubernetesEnvelope(bytes, baseOffset, start, end);
    const { kind, apiVersion, rawStart, rawEnd, contentType } = envelope;
    if (contentType !== "") {
      const type = parseMediaType(contentType).essence;
      if (type === "application/json") return this.#readJson(bytes, rawStart, rawEnd, baseOffset, kind, apiVersion);
      if (type !== PROTOBUF_TYPE) {
        throw new DecodeError(
          "CONTENT_TYPE_UNSUPPORTED",
          envelope.contentTypeOffset,
          `kubernetes protobuf: the ${kind} is in ${JSON.stringify(contentType.slice(0, 64))}`,
        );
      }
    }
    const decoder = this.decoderOf(apiVersion, kind);
    if (decoder !== undefined && (this.mode === "full" || full)) {
      return decoder(bytes, rawStart, rawEnd, objectOfKind(kind, apiVersion), baseOffset);
    }
    // What field 1 is: the registry says for known kinds (null: no metadata); by convention ListMeta for an unknown
    // ...List kind (what a list request answers) and ObjectMeta otherwise.
    const objectMeta = this.decoders.objectMeta;
    let metadataDecoder: ObjectDecoder | null = objectMeta;
    if (decoder === statusDecoder) metadataDecoder = listMetaDecoder;
    else if (decoder !== undefined) metadataDecoder = this.decoders.metadataDecoder(apiVersion, kind) ?? null;
    else if (kind.endsWith("List")) metadataDecoder = listMetaDecoder;
    if (decoder !== undefined && metadataDecoder === null) {
      return decoder(bytes, rawStart, rawEnd, objectOfKind(kind, apiVersion), baseOffset);
    }
    // Partial: metadata now, the bytes for later. A view keeps its whole buffer alive (other events too) for as long
    // as the object lives: taken only within the bound of mayKeepViews (a 31 KB ConfigMap in a 64 KiB read), else a
    // copy keeps just those bytes (small ones in a shared 32 KiB block).
    const raw = ownership === "handed-over" &&
        (!this.#boundedViews || mayKeepViews(rawEnd - rawStart, bytes.buffer.byteLength))
      ? bytes.subarray(rawStart, rawEnd)
      : this.#pool.copy(bytes, rawStart, rawEnd);
    const rawOffset = baseOffset + rawStart;
    const lazy = this.mode === "metadata" && metadataDecoder === objectMeta;
    const metadata = this.#metadata(raw, rawOffset, metadataDecoder ?? objectMeta, lazy);
    return new KubernetesProtobufObject({
      kind,
      apiVersion,
      metadata,
      raw,
      rawOffset,
      decoder,
    }) as unknown as JsonObject;
  }

  /**
   * `metadata` (field 1) of a top-level object's message `raw`; every other field skipped without being decoded.
   * `lazy`: an ObjectMeta whose collections decode on first access (see {@linkcode lazyObjectMeta}).
   */
  #metadata(raw: Uint8Array, baseOffset: number, decode: ObjectDecoder, lazy: boolean): ObjectMeta {
    const c = new ProtobufCursor(raw, 0, baseOffset);
    const rawEnd = raw.length;
    let metadata: JsonObject | undefined;
    let start = -1;
    let end = -1;
    while (c.pos < rawEnd) {
      const at = c.pos;
      const tag = c.tag(rawEnd);
      if (tag >>> 3 !== 1) {
        c.skip(tag, rawEnd);
        continue;
      }
      if ((tag & 7) !== 2) throw c.fail(at, `wrong wire type ${tag & 7} for metadata (field 1)`);
      const valueEnd = c.len(rawEnd);
      if (start !== -1) {
        // A repeated embedded message merges into the first, as in Go (rare: no laziness then).
        metadata = decode(raw, start, end, metadata ?? {}, baseOffset);
        lazy = false;
      }
      start = c.pos;
      end = valueEnd;
      c.pos = valueEnd;
    }
    // Absent: what the full decoding makes of an empty one.
    if (start === -1) return decode(raw, raw.length, raw.length, {}, baseOffset) as ObjectMeta;
    // Its embedded JSON (managedFields[].fieldsV1) is parsed when first read, from views of `raw`, which is kept.
    if (!lazy) return keptBytesDecoder(decode)(raw, start, end, metadata ?? {}, baseOffset) as ObjectMeta;
    return lazyObjectMeta(raw, start, end, baseOffset, decode);
  }

  #readJson(
    bytes: Uint8Array,
    start: number,
    end: number,
    baseOffset: number,
    kind: string,
    apiVersion: string,
  ): JsonObject {
    let value: unknown;
    try {
      value = JSON.parse(strictUtf8.decode(bytes.subarray(start, end)));
    } catch (error) {
      throw new DecodeError("JSON_INVALID", baseOffset + start, `kubernetes protobuf: the ${kind}'s JSON is invalid`, {
        cause: error,
      });
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new DecodeError(
        "JSON_INVALID",
        baseOffset + start,
        `kubernetes protobuf: the ${kind}'s JSON is not an object`,
      );
    }
    // The envelope's type first (as the API server writes kind and apiVersion first); the JSON's own win.
    return Object.assign(objectOfKind(kind, apiVersion), value);
  }
}
