/**
 * The envelope of Kubernetes' protobuf serialization: the `k8s\0` magic, then a `runtime.Unknown` message naming the
 * object's `apiVersion` and `kind` and carrying the object's own protobuf message (`raw`).
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import { ProtobufCursor } from "../protobuf/cursor.ts";
import { readGoString } from "./runtime/go_string.ts";

/** Wire types of the schema's fields (`LEN` for strings, bytes and messages). */
const LEN = 2;

/**
 * Whether `bytes[start..]` begins with `k8s\0`, the magic every Kubernetes protobuf serialization of an object starts
 * with (an object in a watch event, a response body, a value the API server stores in etcd).
 *
 * @example
 * ```ts
 * import { hasKubernetesProtobufMagic } from "watchwire/kubernetes";
 *
 * console.log(hasKubernetesProtobufMagic(new TextEncoder().encode("k8s\0\x0a\x00"))); // true
 * console.log(hasKubernetesProtobufMagic(new TextEncoder().encode('{"kind":"Pod"}'))); // false
 * ```
 */
export function hasKubernetesProtobufMagic(bytes: Uint8Array, start = 0): boolean {
  return magicAt(bytes, start, bytes.length);
}

function magicAt(bytes: Uint8Array, start: number, end: number): boolean {
  return end - start >= 4 && bytes[start] === 0x6b && bytes[start + 1] === 0x38 && bytes[start + 2] === 0x73 &&
    bytes[start + 3] === 0;
}

/**
 * A parsed `k8s\0` + `runtime.Unknown` envelope (see {@linkcode parseKubernetesEnvelope}).
 *
 * @example
 * ```ts
 * import { type KubernetesEnvelope, parseKubernetesEnvelope } from "watchwire/kubernetes";
 *
 * // k8s\0 + Unknown { typeMeta: { apiVersion: "v1", kind: "Pod" }, raw: Pod { metadata: { name: "web" } } }
 * const pod = Uint8Array.of(
 *   0x6b, 0x38, 0x73, 0, 0x0a, 9, 0x0a, 2, 0x76, 0x31, 0x12, 3, 0x50, 0x6f, 0x64, 0x12, 7, 0x0a, 5, 0x0a, 3, 0x77, 0x65, 0x62,
 * );
 * const envelope: KubernetesEnvelope = parseKubernetesEnvelope(pod);
 * console.log(envelope.apiVersion, envelope.kind, envelope.contentType === ""); // v1 Pod true
 * console.log(envelope.rawStart, envelope.rawEnd); // 17 24
 * ```
 */
export interface KubernetesEnvelope {
  /** `typeMeta.apiVersion` (never empty). */
  apiVersion: string;
  /** `typeMeta.kind` (never empty). */
  kind: string;
  /** The object's own message (`raw`) is `bytes[rawStart..rawEnd)` of the bytes parsed. */
  rawStart: number;
  /** See `rawStart`. */
  rawEnd: number;
  /** `contentType`: empty or `application/vnd.kubernetes.protobuf` for protobuf; `application/json` for JSON. */
  contentType: string;
  /** Offset (`baseOffset` + position) of the `contentType` field, for errors about it; -1 when absent. */
  contentTypeOffset: number;
}

/** The error for a known field of `message` that came with the wrong wire type, at its tag. */
export function wrongWireType(c: ProtobufCursor, at: number, tag: number, message: string, field: string): DecodeError {
  return c.fail(at, `wrong wire type ${tag & 7} for ${message}.${field} (field ${tag >>> 3})`);
}

/**
 * Parses the envelope of one Kubernetes protobuf object in `bytes[start..end)`: the `k8s\0` magic, then a
 * `runtime.Unknown` (`typeMeta` = 1 {`apiVersion` = 1, `kind` = 2}, `raw` = 2, `contentEncoding` = 3,
 * `contentType` = 4). As Go's generated code: unknown fields are skipped, a later occurrence of a field replaces an
 * earlier one (`typeMeta` merges), a known field with the wrong wire type is an error. Errors are
 * {@linkcode DecodeError} `MESSAGE_INVALID` at `baseOffset` + their position in `bytes`: bad magic, bad varints,
 * truncation, and a missing `kind` or `apiVersion` (Go's decoder refuses those too). A non-empty `contentEncoding` is
 * `ENCODING_UNSUPPORTED`: Kubernetes defines no encoding of `raw` and the API server never sets one (Go ignores the
 * field, so it would misread an encoded `raw`). Does not look at `raw`.
 *
 * @example
 * ```ts
 * import { parseKubernetesEnvelope } from "watchwire/kubernetes";
 *
 * // k8s\0, typeMeta {apiVersion "v1", kind "Pod"}, raw [0x0a, 0x00]
 * const bytes = Uint8Array.of(0x6b, 0x38, 0x73, 0, 0x0a, 9, 0x0a, 2, 0x76, 0x31, 0x12, 3, 0x50, 0x6f, 0x64, 0x12, 2, 0x0a, 0);
 * const envelope = parseKubernetesEnvelope(bytes);
 * console.log(envelope.apiVersion, envelope.kind, bytes.subarray(envelope.rawStart, envelope.rawEnd)); // v1 Pod Uint8Array(2) [ 10, 0 ]
 * ```
 */
export function parseKubernetesEnvelope(
  bytes: Uint8Array,
  baseOffset = 0,
  start = 0,
  end: number = bytes.length,
): KubernetesEnvelope {
  if (!magicAt(bytes, start, end)) {
    throw new DecodeError(
      "MESSAGE_INVALID",
      baseOffset + start,
      end - start === 0
        ? "kubernetes protobuf: empty object (no k8s\\0 envelope)"
        : "kubernetes protobuf: object does not start with the k8s\\0 magic",
    );
  }
  // A cursor reads the fields in place (no view or reader per field: this runs once per event).
  const c = new ProtobufCursor(bytes, start + 4, baseOffset);
  let apiVersion = "";
  let kind = "";
  let rawStart = c.pos;
  let rawEnd = c.pos;
  let contentEncoding = "";
  let contentType = "";
  let contentEncodingAt = -1;
  let contentTypeAt = -1;
  while (c.pos < end) {
    const at = c.pos;
    const tag = c.tag(end);
    const field = tag >>> 3;
    if (field > 4) {
      c.skip(tag, end);
      continue;
    }
    if ((tag & 7) !== LEN) {
      throw wrongWireType(
        c,
        at,
        tag,
        "runtime.Unknown",
        ["typeMeta", "raw", "contentEncoding", "contentType"][field - 1],
      );
    }
    const ve = c.len(end);
    const vs = c.pos;
    c.pos = ve;
    switch (field) {
      case 1: {
        // typeMeta: an embedded message; a second occurrence merges into the first, as Go's Unmarshal does.
        const t = new ProtobufCursor(bytes, vs, baseOffset);
        while (t.pos < ve) {
          const tat = t.pos;
          const ttag = t.tag(ve);
          const tfield = ttag >>> 3;
          if (tfield !== 1 && tfield !== 2) {
            t.skip(ttag, ve);
            continue;
          }
          if ((ttag & 7) !== LEN) {
            throw wrongWireType(t, tat, ttag, "runtime.TypeMeta", tfield === 1 ? "apiVersion" : "kind");
          }
          const se = t.len(ve);
          const text = readGoString(bytes, t.pos, se);
          t.pos = se;
          if (tfield === 1) apiVersion = text;
          else kind = text;
        }
        break;
      }
      case 2:
        rawStart = vs;
        rawEnd = ve;
        break;
      case 3:
        contentEncoding = readGoString(bytes, vs, ve);
        contentEncodingAt = at;
        break;
      case 4:
        contentType = readGoString(bytes, vs, ve);
        contentTypeAt = at;
        break;
    }
  }
  if (kind === "") {
    throw new DecodeError("MESSAGE_INVALID", baseOffset + start + 4, "kubernetes protobuf: the object has no kind");
  }
  if (apiVersion === "") {
    throw new DecodeError(
      "MESSAGE_INVALID",
      baseOffset + start + 4,
      `kubernetes protobuf: the ${kind} has no apiVersion`,
    );
  }
  if (contentEncoding !== "") {
    // Kubernetes defines no encoding of raw; Go ignores the field and would misread an encoded raw as protobuf.
    throw new DecodeError(
      "ENCODING_UNSUPPORTED",
      baseOffset + contentEncodingAt,
      `kubernetes protobuf: the ${kind} has contentEncoding ${JSON.stringify(contentEncoding.slice(0, 64))}`,
    );
  }
  return {
    apiVersion,
    kind,
    rawStart,
    rawEnd,
    contentType,
    contentTypeOffset: contentTypeAt < 0 ? -1 : baseOffset + contentTypeAt,
  };
}
