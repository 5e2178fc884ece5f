/**
 * {@linkcode decodeKubernetesCborObject}: a Kubernetes CBOR body that is one object (`application/cbor`: a list, a
 * `Status`, a single object) to its plain JSON value.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { KubernetesObject } from "../../events.ts";
import { CborSequenceDecoder } from "../../framing/cbor_sequence_decoder.ts";
import { readKubernetesCborValue } from "./read_kubernetes_cbor_value.ts";

/**
 * The `maxDepth` the CBOR framing is given for Kubernetes CBOR: Kubernetes' decoder allows 10 000 levels, counting
 * each array and map and each tag after the first of a chain of tags, where the framing counts every tag. So each of
 * those levels may come with one tag the framing counts and Kubernetes does not, and the item with one more: the
 * framing never refuses what Kubernetes' rules accept, which then refuse deeper items themselves. Internal.
 */
export const KUBERNETES_CBOR_SPLIT_DEPTH = 2 * 10_000 + 1;

/**
 * Whether `bytes` start with the self-described CBOR tag (55799: `d9 d9 f7`), as every Kubernetes CBOR body, watch
 * event and stored object does (JSON never starts with the byte 0xd9, nor protobuf with its `k8s\0` magic).
 *
 * @example
 * ```ts
 * import { hasCborSelfDescribedTag } from "watchwire/kubernetes";
 *
 * console.log(hasCborSelfDescribedTag(Uint8Array.of(0xd9, 0xd9, 0xf7, 0xa0)), hasCborSelfDescribedTag(new TextEncoder().encode("{}"))); // true false
 * ```
 */
export function hasCborSelfDescribedTag(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xd9 && bytes[1] === 0xd9 && bytes[2] === 0xf7;
}

/**
 * Decodes a Kubernetes CBOR body that is one object, as the API server answers a list, a get or a failed request
 * with `Accept: application/cbor` (`Content-Type: application/cbor`), to the plain JSON value the same server's JSON
 * gives (every object's keys sorted as Go's JSON sorts a map's), by Kubernetes' CBOR rules (see
 * `KubernetesCborWatchBodyDecoderStream`). Throws a {@linkcode DecodeError}: `TRUNCATED` (at 0) when the bytes end
 * inside the object (a body cut short), `MESSAGE_INVALID` at the offending byte when they are not Kubernetes CBOR of
 * one object (something after it included).
 *
 * @example
 * ```ts
 * import { decodeKubernetesCborObject } from "watchwire/kubernetes";
 *
 * // {"kind": "ConfigMapList", "items": []}, self-described, keys and strings as byte strings.
 * const hex = "d9d9f7a2446b696e644d436f6e6669674d61704c697374456974656d7380";
 * const bytes = Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16));
 * const list = decodeKubernetesCborObject<{ kind: string; items: unknown[] }>(bytes);
 * console.log(list.kind, list.items); // ConfigMapList []
 * ```
 */
export function decodeKubernetesCborObject<T = KubernetesObject>(bytes: Uint8Array): T {
  let value: unknown;
  try {
    value = readKubernetesCborValue(bytes, 0, bytes.length, 0, "CBOR object");
  } catch (error) {
    throw truncation(bytes) ?? error;
  }
  if (value === null) throw new DecodeError("MESSAGE_INVALID", 0, "CBOR object: null, not an object");
  return value as T;
}

/** A `TRUNCATED` error when `bytes` end inside their first data item (a body cut short), else undefined. */
function truncation(bytes: Uint8Array): DecodeError | undefined {
  const items = new CborSequenceDecoder({
    maxEventBytes: Number.MAX_SAFE_INTEGER,
    maxDepth: KUBERNETES_CBOR_SPLIT_DEPTH,
  });
  try {
    items.push(bytes, () => {});
    items.finish();
  } catch (error) {
    if (error instanceof DecodeError && error.code === "TRUNCATED" && error.offset === 0) return error;
  }
  return undefined;
}
