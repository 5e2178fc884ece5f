/**
 * {@linkcode readSpanningMetadataEvent}: metadata mode's reading of a watch event whose frame spans input chunks,
 * from the views of those chunks, without assembling the frame. Internal: {@link ./watch_event_frame.ts} uses it.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { WatchEvent } from "../../events.ts";
import { type KubernetesObjectReader, lazyObjectMeta } from "./object_reader.ts";
import { KubernetesProtobufObject } from "./protobuf_object.ts";
import type { JsonObject } from "./registry.ts";
import { readGoString } from "./runtime/go_string.ts";
import { watchEventOf } from "../value_constructors.ts";

/** The bytes of a frame held in pieces, read at frame positions (`pos`), the piece last read cached. */
class PiecesReader {
  /** The position in the frame of the next byte to read. */
  pos = 0;
  readonly #pieces: readonly Uint8Array[];
  /** The cached piece, and the frame positions it spans: `[#start..#end)`. */
  #k = 0;
  #piece: Uint8Array;
  #start = 0;
  #end: number;

  constructor(pieces: readonly Uint8Array[]) {
    this.#pieces = pieces;
    this.#piece = pieces[0];
    this.#end = pieces[0].length;
  }

  /** Makes the piece that holds frame position `p` (< the frame's length) the cached one. */
  #seek(p: number): void {
    const pieces = this.#pieces;
    let k = p < this.#start ? 0 : this.#k;
    let start = p < this.#start ? 0 : this.#start;
    while (p >= start + pieces[k].length) start += pieces[k++].length;
    this.#k = k;
    this.#piece = pieces[k];
    this.#start = start;
    this.#end = start + pieces[k].length;
  }

  /** The byte at frame position `p` (< the frame's length). */
  byte(p: number): number {
    if (p < this.#start || p >= this.#end) this.#seek(p);
    return this.#piece[p - this.#start];
  }

  /** A varint of at most 5 bytes at `pos`, before `end`, then `pos` after it; -1 if it is not one. */
  uint(end: number): number {
    let value = 0;
    let scale = 1;
    for (let p = this.pos; p < end && p < this.pos + 5; p++) {
      const b = this.byte(p);
      value += (b & 0x7f) * scale;
      if (b < 0x80) {
        this.pos = p + 1;
        return value;
      }
      scale *= 128;
    }
    return -1;
  }

  /** The length varint of a length-delimited field at `pos`, then `pos` after it; -1 if it is not one or overruns `end`. */
  length(end: number): number {
    const n = this.uint(end);
    return n > end - this.pos ? -1 : n;
  }

  /** Skips a varint value of at most 10 bytes at `pos`, before `end`; false if there is none. */
  skipVarint(end: number): boolean {
    for (let p = this.pos; p < end && p < this.pos + 10; p++) {
      if (this.byte(p) < 0x80) {
        this.pos = p + 1;
        return true;
      }
    }
    return false;
  }

  /**
   * The piece that holds all of the frame's bytes `[start..end)` and where it starts in the frame, or `undefined` if
   * they span pieces.
   */
  within(start: number, end: number): [piece: Uint8Array, at: number] | undefined {
    if (start < this.#start || start >= this.#end) this.#seek(start);
    return end <= this.#end ? [this.#piece, this.#start] : undefined;
  }

  /** The string of bytes `[start..end)` when they lie in one piece, else `undefined`. */
  string(start: number, end: number): string | undefined {
    if (start === end) return "";
    const where = this.within(start, end);
    return where === undefined ? undefined : readGoString(where[0], start - where[1], end - where[1]);
  }
}

/** A field's tag (field number << 3 | wire type), for the fields read here, all length-delimited. */
const FIELD_1 = (1 << 3) | 2;
const FIELD_2 = (2 << 3) | 2;
const FIELD_3 = (3 << 3) | 2;
const FIELD_4 = (4 << 3) | 2;

/**
 * Metadata mode's event for a frame of `length` bytes held in `pieces` (views of the input chunks it spans, in order;
 * `baseOffset` locates the frame's first byte in the input), read from the pieces themselves: the walk over the
 * frame's fields touches only their tags and lengths, the event's type, the envelope's `typeMeta` and the
 * `metadata`, so the frame's bytes need not be copied into one buffer (most of a large object's frame is data that
 * metadata mode does not read). The object keeps views of the pieces (`KubernetesObjectReader.keptPieces`).
 *
 * Only the common shape is read this way: an ADDED, MODIFIED or DELETED event, one `type` and one `object` field, an
 * envelope with one `typeMeta` and one `raw` and no content type or encoding, a kind whose `metadata` is an
 * ObjectMeta met once and within one piece, views the reader may keep (`inputViews`), nothing malformed. Anything else gives
 * `undefined`, and the caller decodes the assembled frame, which gives the same result or error for every input.
 */
export function readSpanningMetadataEvent(
  objects: KubernetesObjectReader,
  pieces: readonly Uint8Array[],
  length: number,
  baseOffset: number,
): WatchEvent<unknown> | undefined {
  if (pieces.length === 0) return undefined;
  const r = new PiecesReader(pieces);
  // WatchEvent {type = 1, object = 2}.
  let typeStart = -1;
  let typeEnd = -1;
  let objectStart = -1;
  let objectEnd = -1;
  while (r.pos < length) {
    const tag = r.uint(length);
    if ((tag !== FIELD_1 || typeStart !== -1) && (tag !== FIELD_2 || objectStart !== -1)) return undefined;
    const n = r.length(length);
    if (n < 0) return undefined;
    if (tag === FIELD_1) typeStart = r.pos;
    else objectStart = r.pos;
    r.pos += n;
    if (tag === FIELD_1) typeEnd = r.pos;
    else objectEnd = r.pos;
  }
  if (typeStart === -1 || objectStart === -1) return undefined;
  const type = r.string(typeStart, typeEnd);
  // ERROR's Status decodes in full, a BOOKMARK's object is checked: the assembled frame's path does those.
  if (type !== "ADDED" && type !== "MODIFIED" && type !== "DELETED") return undefined;
  // RawExtension {raw = 1}, the envelope: exactly the object field.
  r.pos = objectStart;
  if (r.uint(objectEnd) !== FIELD_1 || r.length(objectEnd) !== objectEnd - r.pos) return undefined;
  const envelopeStart = r.pos;
  if (
    objectEnd - envelopeStart < 4 || r.byte(envelopeStart) !== 0x6b || r.byte(envelopeStart + 1) !== 0x38 ||
    r.byte(envelopeStart + 2) !== 0x73 || r.byte(envelopeStart + 3) !== 0
  ) return undefined;
  // runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3, contentType = 4}.
  r.pos = envelopeStart + 4;
  let apiVersion = "";
  let kind = "";
  let typeMetaSeen = false;
  let rawStart = -1;
  let rawEnd = -1;
  while (r.pos < objectEnd) {
    const tag = r.uint(objectEnd);
    const n = r.length(objectEnd);
    if (n < 0) return undefined;
    const start = r.pos;
    const end = r.pos = start + n;
    if (tag === FIELD_1 && !typeMetaSeen) {
      typeMetaSeen = true;
      r.pos = start;
      while (r.pos < end) {
        const t = r.uint(end);
        if (t !== FIELD_1 && t !== FIELD_2) return undefined;
        const m = r.length(end);
        if (m < 0) return undefined;
        const text = r.string(r.pos, r.pos + m);
        if (text === undefined) return undefined;
        if (t === FIELD_1) apiVersion = text;
        else kind = text;
        r.pos += m;
      }
    } else if (tag === FIELD_2 && rawStart === -1) {
      rawStart = start;
      rawEnd = end;
    } else if ((tag !== FIELD_3 && tag !== FIELD_4) || n !== 0) return undefined;
  }
  if (apiVersion === "" || kind === "" || rawStart === -1) return undefined;
  // Kinds whose metadata is an ObjectMeta (read lazily, as metadata mode does); not Status or metadata-less kinds.
  const decoder = objects.decoderOf(apiVersion, kind);
  const objectMeta = objects.decoders.objectMeta;
  if (decoder !== undefined && objects.decoders.metadataDecoder(apiVersion, kind) !== objectMeta) return undefined;
  // The object's top-level fields: where its metadata (field 1) is, every other field skipped unread.
  let metaStart = -1;
  let metaEnd = -1;
  r.pos = rawStart;
  while (r.pos < rawEnd) {
    const tag = r.uint(rawEnd);
    if (tag < 8 || tag > 0xffff_ffff) return undefined;
    const wireType = tag & 7;
    if (wireType === 2) {
      const n = r.length(rawEnd);
      if (n < 0) return undefined;
      if (tag === FIELD_1) {
        if (metaStart !== -1) return undefined; // met again: merged, as the assembled path does
        metaStart = r.pos;
        metaEnd = r.pos + n;
      }
      r.pos += n;
    } else if (tag >>> 3 === 1) return undefined;
    else if (wireType === 0) {
      if (!r.skipVarint(rawEnd)) return undefined;
    } else if (wireType === 1 || wireType === 5) {
      r.pos += wireType === 1 ? 8 : 4;
      if (r.pos > rawEnd) return undefined;
    } else return undefined;
  }
  if (metaStart === metaEnd) return undefined; // absent or empty: rare, left to the assembled path
  const where = r.within(metaStart, metaEnd);
  if (where === undefined) return undefined;
  const raw = objects.keptPieces(pieces, rawStart, rawEnd);
  if (raw === undefined) return undefined;
  let metadata;
  try {
    const [piece, at] = where;
    metadata = lazyObjectMeta(piece, metaStart - at, metaEnd - at, baseOffset + at, objectMeta);
  } catch (error) {
    // The assembled frame's path throws it (after any fault it finds first).
    if (error instanceof DecodeError) return undefined;
    throw error;
  }
  const object = new KubernetesProtobufObject({
    kind,
    apiVersion,
    metadata,
    raw: raw.length === 1 ? raw[0] : raw,
    rawOffset: baseOffset + rawStart,
    decoder,
  }) as unknown as JsonObject;
  return watchEventOf(type, object);
}
