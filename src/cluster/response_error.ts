/**
 * {@linkcode responseError}: a non-2xx API response to a {@linkcode ClusterAccessError} that carries the server's
 * `Status` (its message, reason and code). Internal.
 *
 * @module
 */
// Without decoders: a Status decodes, and nothing else is wanted here.
import { decodeKubernetesProtobufObject } from "../codec/kubernetes/decode_kubernetes_protobuf_object.ts";
import { hasKubernetesProtobufMagic } from "../codec/kubernetes/envelope.ts";
import {
  decodeKubernetesCborObject,
  hasCborSelfDescribedTag,
} from "../codec/kubernetes/decode_kubernetes_cbor_object.ts";
import type { Status } from "../events.ts";
import { ClusterAccessError } from "./errors.ts";

const LIMIT = 64 * 1024;

/** The Status of a failed response, read from its body (JSON, protobuf or CBOR), or made from the HTTP status. */
export async function responseStatus(response: Response): Promise<Status> {
  let bytes = new Uint8Array(0);
  try {
    bytes = new Uint8Array(await response.arrayBuffer()).subarray(0, LIMIT);
  } catch {
    // A body that fails: described from the HTTP status below.
  }
  let text = "";
  try {
    if (hasKubernetesProtobufMagic(bytes)) {
      const object = decodeKubernetesProtobufObject(bytes);
      if (object.kind === "Status") return object as Status;
    } else if (hasCborSelfDescribedTag(bytes)) {
      const object = decodeKubernetesCborObject(bytes);
      if (object.kind === "Status") return object as Status;
    } else {
      text = new TextDecoder().decode(bytes);
      const parsed = JSON.parse(text);
      if (parsed !== null && typeof parsed === "object" && parsed.kind === "Status") return parsed as Status;
    }
  } catch {
    // Not a Status.
  }
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: text.trim().slice(0, 1024) || `${response.status} ${response.statusText}`.trim(),
    code: response.status,
  };
}

/** A `ClusterAccessError` for a failed response to `what` (e.g. `list configmaps`). */
export async function responseError(
  response: Response,
  what: string,
): Promise<ClusterAccessError & { statusObject: Status }> {
  const status = await responseStatus(response);
  const code = response.status === 401 ? "UNAUTHORIZED" : response.status === 403 ? "FORBIDDEN" : "STATUS";
  const reason = status.reason ? ` (${status.reason})` : "";
  const hint = response.status === 401
    ? ": the credentials were refused (a wrong or expired token or certificate)"
    : "";
  const error = new ClusterAccessError(
    code,
    `${what}: ${response.status}${reason} ${status.message ?? ""}${hint}`.trim(),
    { status: response.status },
  ) as ClusterAccessError & { statusObject: Status };
  error.statusObject = status;
  return error;
}
