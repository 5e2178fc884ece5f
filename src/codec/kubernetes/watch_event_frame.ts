/**
 * {@linkcode decodeWatchEventFrame}: one frame of a Kubernetes protobuf watch (a `meta.v1.WatchEvent` message) to a
 * typed watch event, for a given object reader. Internal: the public decoder and the stream classes are built on it.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import { WATCH_EVENT_TYPES, type WatchEvent, type WatchEventType } from "../../events.ts";
import { ProtobufCursor } from "../protobuf/cursor.ts";
import type { KubernetesObjectReader } from "./object_reader.ts";
import type { FrameOwnership } from "./protobuf_options.ts";
import { wrongWireType } from "./envelope.ts";
import { readGoString } from "./runtime/go_string.ts";
import { watchEventOf } from "../value_constructors.ts";

const LEN = 2;

const EVENT_TYPES: ReadonlySet<string> = new Set<WatchEventType>(WATCH_EVENT_TYPES);

/**
 * The event of one frame (the message without its length prefix), its object read by `objects` (see
 * {@linkcode KubernetesProtobufWatchFrameDecoder} for the rules). `baseOffset` locates `frame[0]` in the input, for the
 * offsets of errors; `ownership` says who else may use the frame's bytes.
 */
export function decodeWatchEventFrame(
  objects: KubernetesObjectReader,
  frame: Uint8Array,
  baseOffset: number,
  ownership: FrameOwnership,
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
      throw wrongWireType(c, at, tag, "WatchEvent", field === 1 ? "type" : "object");
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
      if ((otag & 7) !== LEN) throw wrongWireType(c, oat, otag, "RawExtension", "raw");
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
  const object = objects.read(frame, rawStart, rawEnd, baseOffset, type === "ERROR", ownership);
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
  return watchEventOf(type, object);
}
