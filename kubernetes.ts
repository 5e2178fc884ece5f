/**
 * watchwire/kubernetes: Kubernetes protobuf and the built-in kinds. The generated protobuf decoders, one module per
 * group/version (`coreV1`, `appsV1`, ...; `builtinDecoders` for every built-in kind), and
 * {@linkcode createKubernetesDecoders} to combine them (with your own, for custom kinds); the protobuf watch decoders
 * (`KubernetesProtobufWatchBodyDecoderStream` and its stages) and `decodeKubernetesProtobufObject` for one object; the
 * `k8s\0` envelope; and the TypeScript types of every built-in kind (k8s.io/api v0.37.2), generated from the Go types
 * by `scripts/gen-kinds.ts`.
 *
 * The decoders decode the kinds of the `decoders` they are given, none but `v1` `Status` by default (other kinds
 * decode as {@linkcode KubernetesProtobufObject}s: `apiVersion`, `kind`, `metadata`, and the bytes). A bundle holds
 * only the group/versions its code names (docs/runtimes-and-bundles.md has their sizes).
 *
 * The types say what Go's `encoding/json` writes, which is what the API server sends and what the protobuf decoders
 * give: the JSON field names; a field is optional only where Go can leave it out (`omitempty`, `omitzero`) and admits
 * `null` where Go can write one (a nil slice, map or pointer without `omitempty`, a zero `Time`); a kind's
 * `apiVersion` and `kind` are literal types, set in what a watch sends, optional inside another object (`Nested`: a
 * List's `items`). `IntOrString` is `number | string`, `Quantity`, `Time` and `MicroTime` are strings, `[]byte` a
 * base64 string, `RawExtension` `unknown`. Types only: importing them adds nothing to a bundle. Every group/version
 * is a namespace named after its Go package (`core_v1`, `apps_v1`, `apps_v1beta1`, ...), and each name is also
 * exported flat from the group/version that ranks first (a kind before a type of the same name that is not one, then
 * GA before beta before alpha, the higher version first, core before the named groups): `Pod` is `core_v1.Pod`,
 * `Deployment` `apps_v1.Deployment`. The names `watchwire` declares for every object (`ObjectMeta`, `ListMeta`,
 * `Status`, ...) are left to their namespace: `meta_v1.ObjectMeta` is the generated one.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse } from "watchwire";
 * import { coreV1, createKubernetesDecoders, type Pod } from "watchwire/kubernetes";
 *
 * // k8s\0 + Unknown { typeMeta: { apiVersion: "v1", kind: "Pod" }, raw: Pod { metadata: { name: "web" } } }
 * const pod = [0x6b, 0x38, 0x73, 0, 0x0a, 9, 0x0a, 2, 0x76, 0x31, 0x12, 3, 0x50, 0x6f, 0x64, 0x12, 7, 0x0a, 5, 0x0a, 3, 0x77, 0x65, 0x62];
 * const frame = [0x0a, 5, 0x41, 0x44, 0x44, 0x45, 0x44, 0x12, pod.length + 2, 0x0a, pod.length, ...pod]; // ADDED
 * const response = new Response(Uint8Array.of(0, 0, 0, frame.length, ...frame), {
 *   headers: { "content-type": "application/vnd.kubernetes.protobuf;stream=watch" },
 * });
 * // Pods, Nodes, ConfigMaps...: core/v1's decoders only, in the bundle and in the decoding.
 * const decoders = createKubernetesDecoders([coreV1]);
 * const [event] = await Array.fromAsync(decodeWatchResponse<Pod>(response, { protobuf: { decoders } }));
 * if (event.type === "ADDED") console.log(event.object.kind, event.object.metadata.name); // Pod web
 * ```
 *
 * @module
 */
// The generated decoders by group/version, and how to combine them.
export * from "./src/codec/kubernetes/generated/index.ts";
export * from "./src/codec/kubernetes/decoders.ts";
export type { GroupVersionDecoders, JsonObject, ObjectDecoder } from "./src/codec/kubernetes/registry.ts";
// Protobuf watches and objects.
export { KUBERNETES_PROTOBUF_MEDIA_TYPE } from "./src/watch/decode_watch_response.ts";
export type { FrameOwnership } from "./src/codec/kubernetes/protobuf_options.ts";
export * from "./src/codec/kubernetes/decode_kubernetes_protobuf_object.ts";
export * from "./src/codec/kubernetes/protobuf_watch_frame_decoder.ts";
export * from "./src/codec/kubernetes/protobuf_watch_body_decoder.ts";
export * from "./src/codec/kubernetes/protobuf_watch_body_decoder_stream.ts";
export * from "./src/codec/kubernetes/protobuf_watch_frame_decoder_stream.ts";
// CBOR watches (application/cbor-seq) and objects (application/cbor).
export * from "./src/codec/kubernetes/cbor_watch_body_decoder.ts";
export * from "./src/codec/kubernetes/cbor_watch_body_decoder_stream.ts";
export {
  decodeKubernetesCborObject,
  hasCborSelfDescribedTag,
} from "./src/codec/kubernetes/decode_kubernetes_cbor_object.ts";
export {
  hasKubernetesProtobufMagic,
  type KubernetesEnvelope,
  parseKubernetesEnvelope,
} from "./src/codec/kubernetes/envelope.ts";
// The types of every built-in kind.
export type * from "./src/kinds/index.ts";
