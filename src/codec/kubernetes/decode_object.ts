/**
 * {@linkcode decodeKubernetesProtobufObject}: one Kubernetes object in its protobuf serialization (`k8s\0` +
 * `runtime.Unknown`) to the object the API server's JSON shows; and the object reader the watch decoders share.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { ObjectMeta } from "../../events.ts";
import { builtinDecoders } from "./generated/all.ts";
import { ProtobufCursor } from "../protobuf/cursor.ts";
import { parseKubernetesEnvelope } from "./envelope.ts";
import { KubernetesProtobufObject } from "./protobuf_object.ts";
import type { JsonObject, KubernetesProtobufDecoders, ObjectDecoder } from "./registry.ts";
import { listMetaDecoder, statusDecoder } from "./meta_decoders.ts";
import { BytePool } from "./byte_pool.ts";

/**
 * How objects are decoded: `"full"` (the default) decodes every object of a known kind in full; `"metadata"` decodes
 * `kind`, `apiVersion` and `metadata` only and keeps the rest as bytes ({@linkcode KubernetesProtobufObject}, whose
 * `decode()` decodes it in full on demand); a List's or a `Status`'s `metadata` is its `ListMeta`. Within an
 * `ObjectMeta`, the collections (`labels`, `annotations`, `ownerReferences`, `finalizers`, `managedFields`: most of
 * its bytes) are decoded when first read: own enumerable accessors that then become plain values, so the metadata
 * still equals, copies and serializes as the full decoding's (a fault in them is thrown at that first read). The
 * objects of `ERROR` events (a `Status`) are always decoded in full, and so are the few built-in kinds that have no
 * metadata (`PodLogOptions` and the other subresource options, `SerializedReference`, `DeploymentRollback`).
 */
export type KubernetesProtobufMode = "full" | "metadata";

/** Options of the Kubernetes protobuf decoders. */
export interface KubernetesProtobufOptions {
  /** The object decoders by `apiVersion` and `kind`. Default `builtinDecoders` (every built-in kind). */
  decoders?: KubernetesProtobufDecoders;
  /** `"full"` (default) or `"metadata"`: see {@linkcode KubernetesProtobufMode}. */
  mode?: KubernetesProtobufMode;
}

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

/** What a lazily decoded ObjectMeta needs to decode its collections: the bytes, and [field, start, end] triples. */
interface LazyCollections {
  raw: Uint8Array;
  baseOffset: number;
  decode: ObjectDecoder;
  ranges: number[];
}

const lazyCollections = new WeakMap<object, LazyCollections>();

/** Sets a collection's property to a plain value (on first read, or when assigned). */
function settle(metadata: object, name: string, value: unknown): void {
  Object.defineProperty(metadata, name, { value, writable: true, enumerable: true, configurable: true });
}

// One accessor pair per collection, shared by all objects (no closures per object).
const LAZY_DESCRIPTORS: Readonly<Record<number, PropertyDescriptor>> = Object.fromEntries(
  Object.entries(LAZY_OBJECT_META).map(([field, name]) => [field, {
    get(this: object) {
      const lazy = lazyCollections.get(this)!;
      const { ranges } = lazy;
      let k = 0;
      while (ranges[k] !== Number(field)) k += 3;
      const value = lazy.decode(lazy.raw, ranges[k + 1], ranges[k + 2], {}, lazy.baseOffset)[name];
      settle(this, name, value);
      return value;
    },
    set(this: object, value: unknown) {
      settle(this, name, value);
    },
    enumerable: true,
    configurable: true,
  }]),
);

/**
 * An ObjectMeta message `raw[start..end)` with its scalars decoded now and its collections when first read: each an
 * own enumerable property (in Go's field order) that turns into a plain value on first access, so that the object
 * still compares, copies and serializes as the fully decoded one. This needs the message in Go's order (ascending
 * field numbers, the collections after the scalars); otherwise everything is decoded now.
 */
function lazyObjectMeta(
  raw: Uint8Array,
  start: number,
  end: number,
  baseOffset: number,
  decode: ObjectDecoder,
): ObjectMeta {
  const c = new ProtobufCursor(raw, start, baseOffset);
  // The collections present: [field number, start of its first occurrence, end of its last] each.
  const ranges: number[] = [];
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
  lazyCollections.set(metadata, { raw, baseOffset, decode, ranges });
  for (let k = 0; k < ranges.length; k += 3) {
    Object.defineProperty(metadata, LAZY_OBJECT_META[ranges[k]], LAZY_DESCRIPTORS[ranges[k]]);
  }
  return metadata as ObjectMeta;
}

/** The essence (`type/subtype`, lower case) of a media type. */
function essence(contentType: string): string {
  const semicolon = contentType.indexOf(";");
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/**
 * Turns envelopes into objects for one decoding run (a watch stream, or one object): the decoders, the mode, and the
 * pool that kept copies come from.
 */
export class KubernetesObjectReader {
  readonly decoders: KubernetesProtobufDecoders;
  readonly metadataOnly: boolean;
  readonly #pool = new BytePool();

  constructor(options: KubernetesProtobufOptions = {}) {
    this.decoders = options.decoders ?? builtinDecoders;
    const mode = options.mode ?? "full";
    if (mode !== "full" && mode !== "metadata") throw new RangeError(`mode must be "full" or "metadata", not ${mode}`);
    this.metadataOnly = mode === "metadata";
  }

  /** The decoder of a kind: the decoders', else the generated one for `meta.v1.Status` (ERROR events always decode). */
  decoderOf(apiVersion: string, kind: string): ObjectDecoder | undefined {
    const decoder = this.decoders.decoder(apiVersion, kind);
    if (decoder !== undefined) return decoder;
    return kind === "Status" && (apiVersion === "v1" || apiVersion === "meta.k8s.io/v1") ? statusDecoder : undefined;
  }

  /**
   * The object whose envelope (magic included) is `bytes[start..end)`; `baseOffset` locates `bytes[0]` in the input.
   * `full`: decode in full even in metadata mode (ERROR events). `owned`: `bytes` is a buffer of its own that nothing
   * else needs (a lazy object may keep a view of it instead of copying its bytes).
   */
  read(bytes: Uint8Array, start: number, end: number, baseOffset: number, full: boolean, owned: boolean): JsonObject {
    const envelope = parseKubernetesEnvelope(bytes, baseOffset, start, end);
    const { kind, apiVersion, rawStart, rawEnd, contentType } = envelope;
    if (contentType !== "") {
      const type = essence(contentType);
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
    // What field 1 is: the registry says for known kinds (null: no metadata); by convention ObjectMeta otherwise.
    const objectMeta = this.decoders.objectMeta;
    let metadataDecoder: ObjectDecoder | null = objectMeta;
    if (decoder === statusDecoder) metadataDecoder = listMetaDecoder;
    else if (decoder !== undefined) metadataDecoder = this.decoders.metadataDecoder(apiVersion, kind) ?? null;
    if (decoder !== undefined && (!this.metadataOnly || full || metadataDecoder === null)) {
      return decoder(bytes, rawStart, rawEnd, { kind, apiVersion }, baseOffset);
    }
    // Partial: metadata now, the bytes for later. A view of a chunk would keep the whole chunk alive (other events
    // too) for as long as the object lives; a copy keeps just those (small ones in a shared 32 KiB block: BytePool).
    const raw = owned ? bytes.subarray(rawStart, rawEnd) : this.#pool.copy(bytes, rawStart, rawEnd);
    const rawOffset = baseOffset + rawStart;
    const lazy = this.metadataOnly && metadataDecoder === objectMeta;
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
    if (!lazy) return decode(raw, start, end, metadata ?? {}, baseOffset) as ObjectMeta;
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
    return Object.assign({ kind, apiVersion }, value);
  }
}

/**
 * Decodes one Kubernetes object in its protobuf serialization (the `k8s\0` magic, then a `runtime.Unknown`: what
 * the API server sends for `Accept: application/vnd.kubernetes.protobuf` and stores in etcd) into the object its JSON
 * would show, with `kind` and `apiVersion` first. A kind the decoders do not know gives a
 * {@linkcode KubernetesProtobufObject} (`kind`, `apiVersion`, `metadata`, and the bytes), as does every kind but
 * `Status` in `mode: "metadata"`. The envelope's `contentType` may say `application/json` (then `raw` is JSON, parsed
 * as such); any other type but protobuf is `CONTENT_TYPE_UNSUPPORTED`. Errors are {@linkcode DecodeError}s at
 * `baseOffset` + their position in `bytes`.
 *
 * @example
 * ```ts
 * import { decodeKubernetesProtobufObject } from "watchwire";
 *
 * // k8s\0 + Unknown { typeMeta: { apiVersion: "v1", kind: "Status" }, raw: Status { code: 410 } }
 * const bytes = Uint8Array.of(
 *   0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03,
 * );
 * const status = decodeKubernetesProtobufObject(bytes);
 * console.log(status.kind, status.apiVersion, status.code, status.metadata); // Status v1 410 {}
 * ```
 */
export function decodeKubernetesProtobufObject(
  bytes: Uint8Array,
  options: KubernetesProtobufOptions = {},
  baseOffset = 0,
): JsonObject {
  // The caller keeps `bytes`, so a partial object copies its part rather than holding on to them.
  return new KubernetesObjectReader(options).read(bytes, 0, bytes.length, baseOffset, false, false);
}
