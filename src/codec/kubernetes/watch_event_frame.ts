/**
 * {@linkcode KubernetesProtobufWatchEventDecoder}: one frame of a Kubernetes protobuf watch (a `meta.v1.WatchEvent`
 * message) to a typed watch event, without streams; the stream classes are built on it.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { WatchEvent, WatchEventType } from "../../events.ts";
import { ProtobufCursor } from "../protobuf/cursor.ts";
import { KubernetesObjectReader, type KubernetesProtobufOptions } from "./decode_object.ts";
import { readGoString } from "./runtime/go_string.ts";

const LEN = 2;

const EVENT_TYPES: ReadonlySet<string> = new Set<WatchEventType>(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

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
    this.#objects = new KubernetesObjectReader(options);
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
    // A cursor rather than a ProtobufReader: it reads fields in place, without a view or a reader per field.
    const c = new ProtobufCursor(frame, 0, baseOffset);
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
        c.skip(tag, end);
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
          c.skip(otag, objectEnd);
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
    // Short ASCII strings are interned by readGoString: the type names cost no allocation.
    const type = readGoString(frame, typeStart, typeEnd) as WatchEventType;
    if (!EVENT_TYPES.has(type)) {
      const name = type.slice(0, 64);
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
