/**
 * {@linkcode checkProtobufDecoders}: `format: "protobuf"` in full needs the decoders of the kinds it reads. Internal.
 *
 * @module
 */
import type { KubernetesProtobufOptions } from "../codec/kubernetes/protobuf_options.ts";
import { ClusterAccessError } from "./errors.ts";

/**
 * Throws a `USAGE` {@linkcode ClusterAccessError} when `format` is `"protobuf"`, objects are to be decoded in full
 * (`mode` not `"metadata"`) and no `decoders` are given: the default decoders know no kind but `Status`, so every
 * object would come as a `KubernetesProtobufObject` (its metadata and its bytes), not as the object asked for. `what`
 * names the call (`informer of pods`).
 */
export function checkProtobufDecoders(
  what: string,
  format: "json" | "protobuf" | "cbor" | undefined,
  protobuf: KubernetesProtobufOptions | undefined,
): void {
  if (format !== "protobuf" || protobuf?.mode === "metadata" || protobuf?.decoders !== undefined) return;
  throw new ClusterAccessError(
    "USAGE",
    `${what}: format "protobuf" decodes objects with the decoders of their kinds, and none were given. Pass them: ` +
      'import { coreV1, createKubernetesDecoders } from "watchwire/kubernetes" and give ' +
      "{ protobuf: { decoders: createKubernetesDecoders([coreV1]) } } (the group/versions you read; builtinDecoders " +
      'for every built-in kind); or decode metadata only: { protobuf: { mode: "metadata" } }; or use format "json"',
  );
}
