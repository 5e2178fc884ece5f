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
import type {
  FrameOwnership,
  KubernetesProtobufInputViews,
  KubernetesProtobufMode,
  KubernetesProtobufOptions,
} from "./protobuf_options.ts";
import { keptBytesDecoder, listMetaDecoder, statusDecoder } from "./meta_decoders.ts";
import { BytePool, POOL_BLOCK_BYTES } from "./byte_pool.ts";
import { statusOnlyDecoders } from "./status_only_decoders.ts";
import { lazyObjectMeta } from "./lazy_object_meta.ts";
import { objectOfKind } from "../value_constructors.ts";

const PROTOBUF_TYPE = "application/vnd.kubernetes.protobuf";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Whether an object of `size` bytes may keep its bytes as views that keep `pinned` bytes alive: the bound on what a
 * kept object keeps alive is four times its size plus 32 KiB, whether it keeps a view of an input chunk or a copy (a
 * small copy keeps a {@linkcode BytePool} block of 32 KiB alive). `pinned` counts the views' ArrayBuffers, not their
 * lengths: a read's buffer can be far larger than its bytes (docs/protobuf.md, "What a kept object keeps alive", says
 * what each runtime's `fetch` hands over; `node scripts/read-buffers.mjs` shows it).
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
