/**
 * The options of the Kubernetes protobuf decoders ({@linkcode KubernetesProtobufOptions}: `decoders`, `mode`,
 * `inputViews`) and {@linkcode FrameOwnership}, which tells a frame decoder who else may use a frame's bytes.
 *
 * @module
 */
import type { KubernetesProtobufDecoders } from "./registry.ts";

/**
 * How objects are decoded: `"full"` (the default) decodes every object of a known kind in full; `"metadata"` decodes
 * `kind`, `apiVersion` and `metadata` only and keeps the rest as bytes ({@linkcode KubernetesProtobufObject}, whose
 * `decode()` decodes it in full on demand); a List's or a `Status`'s `metadata` is its `ListMeta`. Within an
 * `ObjectMeta`, the collections (`labels`, `annotations`, `ownerReferences`, `finalizers`, `managedFields`: most of
 * its bytes) and `managedFields[].fieldsV1` are decoded when first read: own enumerable accessors that keep the value
 * once read or assigned, so the metadata still equals, copies (`structuredClone` too) and serializes as the full
 * decoding's, and reads the same when frozen (a fault in them is thrown at each read; assigning to them throws once
 * the object is frozen, as for a read-only property). Their state is the object's own, out of a Proxy's reach: a
 * Proxy-based store (Vue's `reactive`, MobX) needs a plain copy, `structuredClone(metadata)`. The objects of `ERROR`
 * events (a `Status`) are always decoded in full, and so are the few built-in kinds that have no metadata
 * (`PodLogOptions` and the other subresource options, `SerializedReference`, `DeploymentRollback`).
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
   * - `"always"`: views of the chunks, never a copy of the object's bytes: faster, for a consumer that keeps no object
   *   for long, such as a short-lived function or a tool that prints events, since one kept object keeps alive the
   *   whole chunk that holds it: a 64 KiB read for a 4 KB object.
   *   Kept as an option: metadata mode's headline rows (bench/RESULTS.md §11, "What each optimisation mechanism buys").
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
