/**
 * {@linkcode KubernetesProtobufWatchEventDecoder}: one frame of a Kubernetes protobuf watch (a `meta.v1.WatchEvent`
 * message) to a typed watch event, without streams; the stream classes are built on it.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { WatchEvent, WatchEventType } from "../../events.ts";
import { Cursor } from "./wire.ts";
import { KubernetesObjectReader, type KubernetesProtobufOptions } from "./decode_object.ts";
import { readString, StringCache } from "./envelope.ts";

const LEN = 2;
// For skipping unknown fields: no field number is checked for its wire type.
const NO_FIELDS = new Uint8Array(0);

// The type names as bytes, to recognise a frame's type without decoding a string.
const A = 0x41, B = 0x42, D = 0x44, E = 0x45, F = 0x46, I = 0x49, K = 0x4b, M = 0x4d, O = 0x4f, R = 0x52;

/** The event type of `bytes[start..end)`, or `undefined`. */
function eventType(b: Uint8Array, s: number, e: number): WatchEventType | undefined {
  switch (e - s) {
    case 5:
      if (b[s] === A && b[s + 1] === D && b[s + 2] === D && b[s + 3] === E && b[s + 4] === D) return "ADDED";
      if (b[s] === E && b[s + 1] === R && b[s + 2] === R && b[s + 3] === O && b[s + 4] === R) return "ERROR";
      return undefined;
    case 7:
      return b[s] === D && b[s + 1] === E && b[s + 2] === 0x4c && b[s + 3] === E && b[s + 4] === 0x54 &&
          b[s + 5] === E && b[s + 6] === D
        ? "DELETED"
        : undefined;
    case 8:
      if (
        b[s] === M && b[s + 1] === O && b[s + 2] === D && b[s + 3] === I && b[s + 4] === F && b[s + 5] === I &&
        b[s + 6] === E && b[s + 7] === D
      ) return "MODIFIED";
      if (
        b[s] === B && b[s + 1] === O && b[s + 2] === O && b[s + 3] === K && b[s + 4] === M && b[s + 5] === A &&
        b[s + 6] === R && b[s + 7] === K
      ) return "BOOKMARK";
      return undefined;
  }
  return undefined;
}

/**
 * Decodes the frames of a Kubernetes protobuf watch (`application/vnd.kubernetes.protobuf;stream=watch`), each a raw
 * `meta.v1.WatchEvent` message: `type` = 1 (ADDED, MODIFIED, DELETED, BOOKMARK or ERROR), `object` = 2, a
 * `RawExtension` whose `raw` (1) is the object's `k8s\0` + `runtime.Unknown` envelope. The object is decoded as
 * {@linkcode decodeKubernetesProtobufObject} says, in the `mode` of the options (`ERROR` events always in full).
 *
 * Errors are {@linkcode DecodeError}s whose offset is `baseOffset` + the position in the frame: malformed protobuf,
 * a known field with the wrong wire type, bad magic and a missing object are `MESSAGE_INVALID`, a missing `type`
 * `EVENT_INVALID`, an unknown one `EVENT_TYPE_UNKNOWN`, a BOOKMARK whose object has no `metadata.resourceVersion`
 * `EVENT_INVALID` (at the frame's first byte, as the JSON pipeline refuses it). Unknown fields are skipped.
 *
 * @example
 * ```ts
 * import { KubernetesProtobufWatchEventDecoder } from "watchwire";
 *
 * const envelope = [0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03];
 * const frame = Uint8Array.of(0x0a, 5, 0x45, 0x52, 0x52, 0x4f, 0x52, 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope);
 * const event = new KubernetesProtobufWatchEventDecoder().decode(frame, 4);
 * if (event.type === "ERROR") console.log(event.object.kind, event.object.code); // Status 410
 * ```
 */
export class KubernetesProtobufWatchEventDecoder {
  readonly #objects: KubernetesObjectReader;

  constructor(options: KubernetesProtobufOptions = {}) {
    this.#objects = new KubernetesObjectReader(options, new StringCache().read);
  }

  /**
   * The event of one frame (the message without its length prefix). `baseOffset` locates `frame[0]` in the input,
   * for the offsets of errors. `owned`: the frame is a buffer of its own that nothing else uses, so that objects kept
   * as bytes may keep a view of it rather than a copy; by default, when `frame` spans its whole `ArrayBuffer`.
   */
  decode(
    frame: Uint8Array,
    baseOffset = 0,
    owned: boolean = frame.byteOffset === 0 && frame.byteLength === frame.buffer.byteLength,
  ): WatchEvent<unknown> {
    // A Cursor rather than a ProtobufReader: it reads fields in place, without a view or a reader per field.
    const c = new Cursor(frame, 0, baseOffset);
    const end = frame.length;
    let typeAt = -1;
    let typeStart = 0;
    let typeEnd = 0;
    let objectAt = -1;
    let rawStart = -1;
    let rawEnd = -1;
    while (c.pos < end) {
      const at = c.pos;
      const tag = c.tag(end);
      const field = tag >>> 3;
      if (field !== 1 && field !== 2) {
        c.other(tag, end, NO_FIELDS, "WatchEvent");
        continue;
      }
      if ((tag & 7) !== LEN) {
        throw c.fail(
          at,
          `wrong wire type ${tag & 7} for WatchEvent.${field === 1 ? "type" : "object"} (field ${field})`,
        );
      }
      if (field === 1) {
        typeAt = at;
        typeEnd = c.len(end);
        typeStart = c.pos;
        c.pos = typeEnd;
        continue;
      }
      // object: a RawExtension; a later occurrence merges into the earlier one (its raw, if any, replaces).
      objectAt = at;
      const objectEnd = c.len(end);
      while (c.pos < objectEnd) {
        const oat = c.pos;
        const otag = c.tag(objectEnd);
        if (otag >>> 3 !== 1) {
          c.other(otag, objectEnd, NO_FIELDS, "RawExtension");
          continue;
        }
        if ((otag & 7) !== LEN) throw c.fail(oat, `wrong wire type ${otag & 7} for RawExtension.raw (field 1)`);
        rawEnd = c.len(objectEnd);
        rawStart = c.pos;
        c.pos = rawEnd;
      }
    }
    if (typeAt === -1) {
      throw new DecodeError("EVENT_INVALID", baseOffset, "kubernetes protobuf watch: event has no type");
    }
    const type = eventType(frame, typeStart, typeEnd);
    if (type === undefined) {
      const name = readString(frame, typeStart, Math.min(typeEnd, typeStart + 64));
      throw new DecodeError(
        "EVENT_TYPE_UNKNOWN",
        baseOffset + typeAt,
        `kubernetes protobuf watch: unknown event type ${JSON.stringify(name)}`,
      );
    }
    if (rawStart === -1) {
      throw new DecodeError(
        "MESSAGE_INVALID",
        baseOffset + (objectAt === -1 ? 0 : objectAt),
        `kubernetes protobuf watch: ${type} event has no object`,
      );
    }
    const object = this.#objects.read(frame, rawStart, rawEnd, baseOffset, type === "ERROR", owned);
    if (type === "BOOKMARK") {
      // As the JSON pipeline: what a BOOKMARK means is its resourceVersion.
      const metadata = (object as { metadata?: { resourceVersion?: unknown } }).metadata;
      if (typeof metadata !== "object" || metadata === null || typeof metadata.resourceVersion !== "string") {
        throw new DecodeError(
          "EVENT_INVALID",
          baseOffset,
          `kubernetes protobuf watch: a BOOKMARK's object (a ${object.kind}) must carry metadata.resourceVersion`,
        );
      }
    }
    return { type, object } as WatchEvent<unknown>;
  }
}
