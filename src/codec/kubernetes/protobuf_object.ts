/**
 * {@linkcode KubernetesProtobufObject}: an object of which only `apiVersion`, `kind` and `metadata` are decoded (an
 * unknown kind, or the metadata-only mode), its own protobuf message kept for decoding in full on demand.
 *
 * @module
 */
import type { ObjectMeta } from "../../events.ts";
import type { JsonObject, ObjectDecoder } from "./registry.ts";
import { objectOfKind } from "../value_constructors.ts";

/**
 * What a {@linkcode KubernetesProtobufObject} is made of.
 *
 * @example
 * ```ts
 * import { KubernetesProtobufObject, type KubernetesProtobufObjectInit } from "watchwire";
 *
 * const init: KubernetesProtobufObjectInit = {
 *   kind: "Widget",
 *   apiVersion: "example.com/v1",
 *   metadata: { name: "w", namespace: "default" },
 *   raw: Uint8Array.of(0x0a, 3, 0x12, 1, 0x77), // the message, kept as it is
 * };
 * const widget = new KubernetesProtobufObject(init);
 * console.log(widget.metadata.name, widget.raw.length, widget.decodable, widget.decode()); // w 5 false undefined
 * ```
 */
export interface KubernetesProtobufObjectInit {
  kind: string;
  apiVersion: string;
  metadata: ObjectMeta;
  /**
   * The object's own protobuf message (`runtime.Unknown.raw`, without the `k8s\0` envelope). Not copied (as for any
   * view: do not modify it afterwards).
   */
  raw: Uint8Array;
  /** Offset of `raw[0]` in the input it came from, for the offsets of errors of {@linkcode KubernetesProtobufObject.decode}. */
  rawOffset?: number;
  /** The decoder of the kind, if known. */
  decoder?: ObjectDecoder | undefined;
}

/**
 * A Kubernetes object decoded only as far as `kind`, `apiVersion` and `metadata`, the rest kept as its protobuf bytes:
 *
 * - what a watch event carries for a kind its decoders do not know (an aggregated API, a kind newer than the
 *   decoders): {@linkcode KubernetesProtobufObject.decodable} is `false`, {@linkcode KubernetesProtobufObject.raw}
 *   holds the bytes;
 * - what every object of a metadata-only watch is (`mode: "metadata"`): `metadata` is decoded now, the rest on
 *   demand with {@linkcode KubernetesProtobufObject.decode} (memoized).
 *
 * Its own enumerable properties are `kind`, `apiVersion` and `metadata`, so `JSON.stringify` gives
 * `{"kind":...,"apiVersion":...,"metadata":{...}}`; `raw` and `decode()` are on the prototype.
 *
 * @example
 * ```ts
 * import { KubernetesProtobufObject } from "watchwire";
 *
 * const raw = Uint8Array.of(0x12, 2, 0x08, 3); // field 1 (metadata) skipped here; field 2: a spec with x = 3
 * const object = new KubernetesProtobufObject({
 *   kind: "Widget",
 *   apiVersion: "example.com/v1",
 *   metadata: { name: "w" },
 *   raw,
 *   decoder: (bytes, start, end, target) => ({ ...target, spec: { x: bytes[end - 1] } }),
 * });
 * console.log(JSON.stringify(object)); // {"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w"}}
 * console.log(object.decode()); // { kind: "Widget", apiVersion: "example.com/v1", spec: { x: 3 } }
 * console.log(object.decode() === object.decode()); // true
 * ```
 */
export class KubernetesProtobufObject {
  /** The object's kind (`typeMeta.kind` of its envelope). */
  kind: string;
  /** The object's apiVersion (`typeMeta.apiVersion` of its envelope). */
  apiVersion: string;
  /** The object's `metadata` (field 1 of every top-level object), decoded as the full decoding would. */
  metadata: ObjectMeta;
  /** The message. */
  readonly #raw: Uint8Array;
  readonly #rawOffset: number;
  readonly #decoder: ObjectDecoder | undefined;
  #decoded: JsonObject | undefined;

  constructor(init: KubernetesProtobufObjectInit) {
    this.kind = init.kind;
    this.apiVersion = init.apiVersion;
    this.metadata = init.metadata;
    this.#raw = init.raw;
    this.#rawOffset = init.rawOffset ?? 0;
    this.#decoder = init.decoder;
  }

  /**
   * The object's own protobuf message (`runtime.Unknown.raw`): a copy of its bytes (up to 8 KiB in a 32 KiB block
   * shared with other small copies of the same stream), or (in a watch stream) a view of the input chunk or of the
   * framing's buffer that holds it; a view only when that buffer is at most four times its size plus 32 KiB, so that
   * keeping the object keeps alive at most that (unless the decoder's `inputViews` is `"always"`). Do not modify it.
   */
  get raw(): Uint8Array {
    return this.#raw;
  }

  /** Whether the decoders know the kind, so that {@linkcode KubernetesProtobufObject.decode} can decode it. */
  get decodable(): boolean {
    return this.#decoder !== undefined;
  }

  /**
   * The whole object, decoded from {@linkcode KubernetesProtobufObject.raw} by the decoder of its kind (the same
   * plain object the full mode gives), or `undefined` if the kind is not known. Decoded on the first call, the same
   * object returned after. Throws a `DecodeError` for malformed bytes, its offset counted in the original input.
   */
  decode(): JsonObject | undefined {
    if (this.#decoded !== undefined || this.#decoder === undefined) return this.#decoded;
    const target = objectOfKind(this.kind, this.apiVersion);
    const raw = this.raw;
    this.#decoded = this.#decoder(raw, 0, raw.length, target, this.#rawOffset);
    return this.#decoded;
  }
}
