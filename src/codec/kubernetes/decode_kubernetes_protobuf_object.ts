/**
 * {@linkcode decodeKubernetesProtobufObject}: one Kubernetes object in its protobuf serialization (`k8s\0` +
 * `runtime.Unknown`) to the object the API server's JSON shows.
 *
 * @module
 */
import { KubernetesObjectReader } from "./object_reader.ts";
import type { KubernetesProtobufOptions } from "./protobuf_options.ts";
import type { JsonObject } from "./registry.ts";

/**
 * Decodes one Kubernetes object in its protobuf serialization (the `k8s\0` magic, then a `runtime.Unknown`: what
 * the API server sends for `Accept: application/vnd.kubernetes.protobuf` and stores in etcd) into the object its JSON
 * would show, with `kind` and `apiVersion` first. A kind the decoders do not know gives a
 * {@linkcode KubernetesProtobufObject} (`kind`, `apiVersion`, `metadata`, and the bytes), as does every kind but
 * `Status` in `mode: "metadata"`. The envelope's `contentType` may say `application/json` (then `raw` is JSON, parsed
 * as such); any other type but protobuf is `CONTENT_TYPE_UNSUPPORTED`. Errors are {@linkcode DecodeError}s at
 * `baseOffset` + their position in `bytes`. The kinds known are those of `options.decoders`
 * (`createKubernetesDecoders([coreV1])`, `builtinDecoders`), none but `Status` by default.
 *
 * @example
 * ```ts
 * import { decodeKubernetesProtobufObject } from "watchwire/kubernetes";
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
  return new KubernetesObjectReader(options)
    .read(bytes, 0, bytes.length, baseOffset, false, "borrowed");
}
