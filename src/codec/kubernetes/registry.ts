/**
 * The decoders of Kubernetes protobuf objects, by `apiVersion` and `kind`: what turns the `raw` bytes of a
 * `runtime.Unknown` envelope into the object the API server's JSON would show.
 *
 * @module
 */

/**
 * A JSON object as `JSON.parse` returns it.
 *
 * @example
 * ```ts
 * import { decodeKubernetesProtobufObject, type JsonObject } from "watchwire/kubernetes";
 *
 * // k8s\0 + Unknown { typeMeta: { apiVersion: "v1", kind: "Status" }, raw: Status { code: 410 } }
 * const bytes = Uint8Array.of(
 *   0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03,
 * );
 * const status: JsonObject = decodeKubernetesProtobufObject(bytes);
 * const code = status.code; // unknown: narrow it before use
 * if (typeof code === "number") console.log(code >= 400, code); // true 410
 * ```
 */
export type JsonObject = Record<string, unknown>;

/**
 * Decodes one protobuf message, `bytes[start..end)`, into `target` (whose existing keys are kept, e.g. `apiVersion` and
 * `kind` set from the envelope) and returns `target`: the object exactly as `JSON.parse` reads the JSON Go's
 * `encoding/json` writes for the Go value `proto.Unmarshal` makes of the same bytes. Throws a `DecodeError` whose
 * offset is `baseOffset + ` the position in `bytes` of the fault.
 *
 * @example
 * ```ts
 * import { createKubernetesDecoders, decodeKubernetesProtobufObject, type ObjectDecoder } from "watchwire/kubernetes";
 *
 * // A custom kind whose message has one field: `replicas` (field 2, a varint below 128 here).
 * const decodeWidget: ObjectDecoder = (bytes, start, end, target) => {
 *   for (let i = start; i + 1 < end; i += 2) if (bytes[i] === 0x10) target.replicas = bytes[i + 1];
 *   return target;
 * };
 * const decoders = createKubernetesDecoders([{ apiVersion: "example.com/v1", kinds: { Widget: decodeWidget } }]);
 * const te = new TextEncoder();
 * const typeMeta = [0x0a, 14, ...te.encode("example.com/v1"), 0x12, 6, ...te.encode("Widget")];
 * const bytes = Uint8Array.of(...te.encode("k8s\0"), 0x0a, typeMeta.length, ...typeMeta, 0x12, 2, 0x10, 3);
 * const widget = decodeKubernetesProtobufObject(bytes, { decoders });
 * console.log(widget.kind, widget.replicas); // Widget 3
 * ```
 */
export type ObjectDecoder = (
  bytes: Uint8Array,
  start: number,
  end: number,
  target: JsonObject,
  baseOffset: number,
) => JsonObject;

/**
 * The decoders of one group/version's top-level kinds (one generated module each).
 *
 * @example
 * ```ts
 * import { appsV1, createKubernetesDecoders, type GroupVersionDecoders } from "watchwire/kubernetes";
 *
 * console.log(appsV1.apiVersion, "Deployment" in appsV1.kinds, appsV1.metadata?.DeploymentList); // apps/v1 true list
 * // Deployments only: a group/version of one kind.
 * const deployments: GroupVersionDecoders = { apiVersion: "apps/v1", kinds: { Deployment: appsV1.kinds.Deployment } };
 * const decoders = createKubernetesDecoders([deployments]);
 * console.log(decoders.decoder("apps/v1", "Deployment") !== undefined); // true
 * console.log(decoders.decoder("apps/v1", "StatefulSet")); // undefined
 * ```
 */
export interface GroupVersionDecoders {
  /** `"v1"`, `"apps/v1"`, ... */
  readonly apiVersion: string;
  /** Decoders by kind. */
  readonly kinds: Readonly<Record<string, ObjectDecoder>>;
  /**
   * The kinds whose field 1 is not `ObjectMeta`: `"list"` where it is `ListMeta` (every `...List` kind, and `Status`),
   * `"none"` where the kind has no metadata (`PodLogOptions`, `DeploymentRollback`, ...).
   */
  readonly metadata?: Readonly<Record<string, "list" | "none">>;
}

/**
 * What the protobuf watch decoder needs: object decoders by `apiVersion`/`kind`, and one for `ObjectMeta`.
 *
 * @example
 * ```ts
 * import type { KubernetesProtobufDecoders } from "watchwire";
 * import { builtinDecoders } from "watchwire/kubernetes";
 *
 * const decoders: KubernetesProtobufDecoders = builtinDecoders;
 * console.log(decoders.decoder("v1", "Pod") !== undefined, decoders.decoder("example.com/v1", "Widget")); // true undefined
 * console.log(decoders.metadataDecoder("v1", "Pod") === decoders.objectMeta); // true
 * console.log(decoders.metadataDecoder("v1", "PodLogOptions")); // null
 * const meta = Uint8Array.of(0x0a, 3, 0x77, 0x65, 0x62); // ObjectMeta { name: "web" }
 * console.log(decoders.objectMeta(meta, 0, meta.length, {}, 0).name); // web
 * ```
 */
export interface KubernetesProtobufDecoders {
  /** The decoder of `apiVersion`/`kind`, or `undefined` when the kind is not known. */
  decoder(apiVersion: string, kind: string): ObjectDecoder | undefined;
  /** The decoder of `ObjectMeta` (field 1 of the top-level objects), for unknown kinds. */
  readonly objectMeta: ObjectDecoder;
  /**
   * The decoder of field 1 (`metadata`) of a known kind: `ObjectMeta`'s, or `ListMeta`'s for lists and `Status`;
   * `null` when the kind has no metadata (options kinds: decode them in full); `undefined` when the kind is not known
   * (then field 1 is taken to be `ObjectMeta`).
   */
  metadataDecoder(apiVersion: string, kind: string): ObjectDecoder | null | undefined;
}
