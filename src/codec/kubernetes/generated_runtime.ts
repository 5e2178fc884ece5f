/**
 * The protobuf wire reader the generated Kubernetes decoders run on ({@link ./generated/}), and the renderings of
 * Kubernetes' special types (`metav1.Time`, `resource.Quantity`, `intstr.IntOrString`, ...) as Go's `encoding/json`
 * prints them after `proto.Unmarshal`.
 *
 * Internal: the generated code is its only user; it is not part of the public API.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import { ProtobufCursor } from "../protobuf/cursor.ts";
import { readGoString } from "./runtime/go_string.ts";
import { base64Std } from "./runtime/base64.ts";
import { formatMicroTime, formatTime } from "./runtime/go_time.ts";
import { formatDuration } from "./runtime/go_duration.ts";
import { canonicalQuantity } from "./runtime/quantity.ts";
import { fieldsV1FromCbor, isCborFieldsV1 } from "./runtime/kubernetes_cbor.ts";
import { parseRepeatedJson } from "./runtime/repeated_json.ts";
import { lazyDescriptor, type LazyValues, privateSlot } from "./runtime/lazy_property.ts";

export { setKey } from "./runtime/set_key.ts";
export { emptyList, listOf } from "../value_constructors.ts";
import { emptyList } from "../value_constructors.ts";
import type { JsonObject } from "./registry.ts";

export type { JsonObject };

const TWO_32 = 4294967296;
/** Strings a cursor reads before it compares interned ones by words (see `Cursor.str`). */
const WORDS_AFTER = 8;
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * The cursor the generated decoders run on: the shared protobuf cursor ({@linkcode ProtobufCursor}: varints, tags,
 * lengths, bounded by the `end` of the message being read) with the Kubernetes renderings of strings and bytes.
 */
export class Cursor extends ProtobufCursor {
  /** Whether embedded JSON (`FieldsV1`, `RawExtension`) is parsed when first read rather than now (see {@linkcode setRawJson}). */
  readonly lazyJson: boolean;
  /** Whether the bytes outlive the decoded values, so that JSON parsed later may be read from them, not from a copy. */
  readonly keptBytes: boolean;

  constructor(bytes: Uint8Array, start: number, baseOffset: number, lazyJson = false, keptBytes = false) {
    super(bytes, start, baseOffset);
    this.lazyJson = lazyJson;
    this.keptBytes = keptBytes;
  }

  /**
   * `b` as a DataView, for comparing interned strings four bytes at a time: made once this cursor has read a few
   * strings (a decoder that reads only a handful, as metadata mode's, would pay more for it than it saves).
   */
  #words: DataView | undefined;
  #strings = 0;

  /** A string as Go's `encoding/json` prints it (invalid UTF-8 bytes become U+FFFD one by one). */
  str(end: number): string {
    const b = this.b;
    const p = this.pos;
    let words = this.#words;
    if (words === undefined && ++this.#strings > WORDS_AFTER) {
      words = this.#words = new DataView(b.buffer, b.byteOffset, b.byteLength);
    }
    // A length of one byte, inline (most strings are shorter than 128 bytes).
    if (p < end) {
      const x = b[p];
      if (x < 0x80 && x < end - p) {
        const e = p + 1 + x;
        this.pos = e;
        return readGoString(b, p + 1, e, words);
      }
    }
    const e = this.len(end);
    const s = readGoString(b, this.pos, e, words);
    this.pos = e;
    return s;
  }

  /** `[]byte` as Go's `encoding/json` prints it: standard base64 with padding. */
  bytes(end: number): string {
    const e = this.len(end);
    const s = base64Std(this.b, this.pos, e);
    this.pos = e;
    return s;
  }

  /**
   * Reads a map entry's tag as Go's generated map code does, and returns its field number: `int32(wire >> 3)`, which
   * may be 0 or negative, and whose wire type is not looked at (fields 1 and 2 are read by the map's types whatever
   * it says). `end` is the end of the message that holds the map: Go bounds the entry's reads by it, not by the
   * entry's own end.
   */
  entryField(end: number): number {
    const lo = this.varint(end);
    return (lo >>> 3) | ((this.hi & 7) << 29);
  }

  /**
   * Skips a map entry's field other than its key and value, whose tag {@linkcode Cursor.entryField} read at `at`, as
   * Go does: reading the tag again for its wire type (an end of group, 6 or 7 are errors), then the value, to no
   * further than the entry's end `e`.
   */
  skipEntryField(at: number, e: number, end: number, where: string): void {
    this.pos = at;
    const lo = this.varint(end);
    const w = lo & 7;
    if (w === 4) throw this.fail(at, `${where}: end of group (wire type 4) in a map entry, outside a group`);
    if (w > 5) throw this.fail(at, `${where}: invalid wire type ${w} in a map entry`);
    if (w === 3) this.skipGroup((lo >>> 3) | ((this.hi & 7) << 29), at, end);
    else this.skip(w, end);
    if (this.pos > e) throw this.fail(at, `${where}: a field of a map entry runs past the entry's end`);
  }

  /** Skips a field that is not part of the message; `known[n]` is 1 for field numbers the message has (a known number with another wire type is an error, as in Go). */
  other(t: number, end: number, known: Uint8Array, where: string): void {
    const n = t >>> 3;
    if (n < known.length && known[n] === 1) {
      throw this.fail(this.tagStart(t), `${where}: field ${n} has the wrong wire type ${t & 7}`);
    }
    this.skip(t, end);
  }
}

/** Reads a `Timestamp {seconds = 1; nanos = 2}` message, `c.pos` to `e`, into [seconds, nanos]. */
function timestamp(c: Cursor, e: number): [number, number] {
  let seconds = 0;
  let nanos = 0;
  while (c.pos < e) {
    const t = c.tag(e);
    if (t === 8) seconds = c.int64(e);
    else if (t === 16) nanos = c.int32(e);
    else c.other(t, e, TIMESTAMP_FIELDS, "Timestamp");
  }
  return [seconds, nanos];
}
const TIMESTAMP_FIELDS = Uint8Array.of(0, 1, 1);

/** `metav1.Time` (a length-delimited Timestamp at `c.pos`): RFC 3339 in UTC, seconds only, `null` for the zero time. */
export function time(c: Cursor, end: number): string | null {
  const e = c.len(end);
  if (e === c.pos) return null;
  const [seconds] = timestamp(c, e);
  return formatTime(seconds);
}

/** `metav1.MicroTime`: RFC 3339 with microseconds in UTC, `null` for the zero time. */
export function microTime(c: Cursor, end: number): string | null {
  const e = c.len(end);
  if (e === c.pos) return null;
  const [seconds, nanos] = timestamp(c, e);
  return formatMicroTime(seconds, nanos);
}

/*
 * A singular field met again in the same message is merged into the value read before, as Go's generated `Unmarshal`
 * does: `previous` is what the field holds so far (undefined the first time). Time and MicroTime are not merged:
 * their `Unmarshal` replaces the whole value, and so do `time` and `microTime` here.
 */

/** `metav1.Duration {duration = 1}`: Go's `time.Duration.String()`; without `duration`, the `previous` value stays. */
export function duration(c: Cursor, end: number, previous?: unknown): string {
  const e = c.len(end);
  let lo = 0;
  let hi = 0;
  let seen = false;
  while (c.pos < e) {
    const t = c.tag(e);
    if (t === 8) {
      lo = c.varint(e);
      hi = c.hi;
      seen = true;
    } else c.other(t, e, DURATION_FIELDS, "Duration");
  }
  if (!seen && typeof previous === "string") return previous;
  return formatDuration((BigInt(hi) << 32n) | BigInt(lo));
}
const DURATION_FIELDS = Uint8Array.of(0, 1);

/**
 * `resource.Quantity {string = 1}`: the canonical form Go's `MarshalJSON` prints after `ParseQuantity`; without
 * `string`, the `previous` value stays.
 */
export function quantity(c: Cursor, end: number, previous?: unknown): string {
  const e = c.len(end);
  let s: string | undefined;
  let at = c.pos;
  while (c.pos < e) {
    const t = c.tag(e);
    if (t === 10) {
      at = c.pos;
      s = c.str(e);
    } else c.other(t, e, QUANTITY_FIELDS, "Quantity");
  }
  if (s === undefined) return typeof previous === "string" ? previous : "0";
  const q = canonicalQuantity(s);
  if (q === undefined) throw c.fail(at, `Quantity: ${JSON.stringify(s)} is not a quantity`);
  return q;
}
const QUANTITY_FIELDS = Uint8Array.of(0, 1);

/**
 * The half of an IntOrString field that its JSON does not show (the `strVal` of an int, the `intVal` of a string),
 * kept only when it is not the zero value, for a later occurrence of the field that changes `type` alone.
 */
const hiddenHalves = new WeakMap<JsonObject, Map<string, number | string>>();

/**
 * `intstr.IntOrString {type = 1, intVal = 2, strVal = 3}`: a number or a string, as its `type` says. With `o` and
 * `key` (a singular field), the value `o[key]` holds so far is merged into, field by field, as Go does.
 */
export function intOrString(c: Cursor, end: number, o?: JsonObject, key?: string): number | string {
  const e = c.len(end);
  const start = c.pos;
  let type = 0;
  let typeHi = 0;
  let intVal = 0;
  let strVal = "";
  const previous = o === undefined ? undefined : o[key!];
  if (previous !== undefined) {
    const hidden = hiddenHalves.get(o!)?.get(key!);
    if (typeof previous === "string") {
      type = 1;
      strVal = previous;
      if (typeof hidden === "number") intVal = hidden;
    } else if (typeof previous === "number") {
      intVal = previous;
      if (typeof hidden === "string") strVal = hidden;
    }
  }
  while (c.pos < e) {
    const t = c.tag(e);
    if (t === 8) {
      type = c.varint(e);
      typeHi = c.hi;
    } else if (t === 16) intVal = c.int32(e);
    else if (t === 26) strVal = c.str(e);
    else c.other(t, e, INT_OR_STRING_FIELDS, "IntOrString");
  }
  if (typeHi !== 0 || type > 1) {
    throw c.fail(start, `IntOrString: type ${typeHi * TWO_32 + type} is neither 0 (int) nor 1 (string)`);
  }
  if (o !== undefined) {
    const hidden = type === 0 ? strVal : intVal;
    if (hidden !== "" && hidden !== 0) {
      let halves = hiddenHalves.get(o);
      if (halves === undefined) hiddenHalves.set(o, halves = new Map());
      halves.set(key!, hidden);
    } else if (previous !== undefined) hiddenHalves.get(o)?.delete(key!);
  }
  return type === 0 ? intVal : strVal;
}
const INT_OR_STRING_FIELDS = Uint8Array.of(0, 1, 1, 1);

/**
 * `runtime.RawExtension {raw = 1}` and `metav1.FieldsV1 {Raw = 1}`: their bytes are JSON, printed as they are
 * (`null` when absent, and for FieldsV1 when empty too: its `MarshalJSON` says so, where RawExtension's prints the
 * empty bytes, which `json.Marshal` refuses). Bytes that are not JSON make Go's `json.Marshal` fail, and are an error
 * here too.
 */
export function rawJson(c: Cursor, end: number, what: string): unknown {
  const raw = rawBounds(c, end, what);
  return raw === undefined || isNullFieldsV1(raw, what) ? null : parseRaw(c.b, raw[0], raw[1], c.base, what);
}

const isNullFieldsV1 = (raw: [number, number], what: string) => raw[0] === raw[1] && what === "FieldsV1";

/** Where the `raw` bytes of a RawExtension/FieldsV1 message at `c.pos` are (the last one wins, as in Go). */
function rawBounds(c: Cursor, end: number, what: string): [number, number] | undefined {
  const e = c.len(end);
  let raw: [number, number] | undefined;
  while (c.pos < e) {
    const t = c.tag(e);
    if (t === 10) {
      const re = c.len(e);
      raw = [c.pos, re];
      c.pos = re;
    } else c.other(t, e, RAW_FIELDS, what);
  }
  return raw;
}

function parseRaw(b: Uint8Array, start: number, end: number, base: number, what: string): unknown {
  const fieldsV1 = what === "FieldsV1";
  // FieldsV1 bytes may be CBOR (objects stored as CBOR): its MarshalJSON turns them into JSON.
  if (fieldsV1 && isCborFieldsV1(b[start])) return fieldsV1FromCbor(b, start, end, base);
  try {
    // FieldsV1 repeats across events and objects: bytes seen before are built again from their recorded shape.
    return fieldsV1 ? parseRepeatedJson(b, start, end, lenient) : JSON.parse(lenient.decode(b.subarray(start, end)));
  } catch (cause) {
    throw new DecodeError("MESSAGE_INVALID", base + start, `protobuf: ${what}: raw bytes are not JSON`, { cause });
  }
}

/**
 * Sets `o[key]` to a RawExtension/FieldsV1 field's JSON. With `c.lazyJson` (the metadata-only decoding of
 * `mode: "metadata"`), the JSON is parsed when the property is first read: an enumerable accessor that keeps the
 * value once read or assigned (see runtime/lazy_property.ts), so `JSON.stringify`, deep equality and spreading see the
 * same value as an eager decode, but an informer that never looks at `managedFields[].fieldsV1` never pays for
 * parsing it (it is most of the cost of a typical `metadata`). It reads the cursor's bytes if they are kept
 * (`c.keptBytes`), else a copy of its own, so that the input is not kept alive; bytes that are not JSON throw the
 * `DecodeError` at each read.
 */
export function setRawJson(o: JsonObject, key: string, c: Cursor, end: number, what: string): void {
  const raw = rawBounds(c, end, what);
  if (raw === undefined) {
    // Met again without `raw`: Go's merge keeps the bytes read before.
    if (!Object.prototype.hasOwnProperty.call(o, key)) o[key] = null;
    return;
  }
  if (isNullFieldsV1(raw, what)) {
    o[key] = null;
    return;
  }
  const lazy = c.lazyJson ? lazyRawJson.of(o) : undefined;
  if (!c.lazyJson || (lazy !== undefined && lazy.key !== key)) {
    o[key] = parseRaw(c.b, raw[0], raw[1], c.base, what);
    return;
  }
  const kept = c.keptBytes;
  const bytes = kept ? c.b : c.b.slice(raw[0], raw[1]);
  const start = kept ? raw[0] : 0;
  const base = kept ? c.base : c.base + raw[0];
  const next: LazyRawJson = {
    key,
    what,
    bytes,
    start,
    end: start + raw[1] - raw[0],
    base,
    known: 0,
    values: undefined,
  };
  if (lazy === undefined) lazyRawJson.attach(o, next);
  else Object.assign(lazy, next); // met again: the later bytes win, as in Go
  Object.defineProperty(o, key, lazyRawJsonDescriptor(key));
}

/** What a lazily parsed RawExtension/FieldsV1 property reads (its value, once read or assigned, is value 0). */
interface LazyRawJson extends LazyValues {
  key: string;
  what: string;
  bytes: Uint8Array;
  start: number;
  end: number;
  base: number;
}

/** A {@linkcode LazyRawJson} on the object that holds the property (one per object). */
const lazyRawJson = privateSlot<LazyRawJson>();

const lazyRawJsonDescriptors = new Map<string, PropertyDescriptor>();

/** The accessor pair of lazily parsed JSON under `key`, shared by all objects. */
function lazyRawJsonDescriptor(key: string): PropertyDescriptor {
  let descriptor = lazyRawJsonDescriptors.get(key);
  if (descriptor === undefined) {
    descriptor = lazyDescriptor(lazyRawJson, key, 0, (l) => parseRaw(l.bytes, l.start, l.end, l.base, l.what));
    lazyRawJsonDescriptors.set(key, descriptor);
  }
  return descriptor;
}
const RAW_FIELDS = Uint8Array.of(0, 1);

/**
 * A named slice Go encodes as `message { repeated T items = 1 }` (authentication/v1 ExtraValue), met as a map value:
 * an array, empty when it has no items (Go's generated code starts from `&ExtraValue{}`, an empty non-nil slice, so
 * its JSON is `[]`, never `null`).
 */
export function wrappedList(
  c: Cursor,
  end: number,
  item: number,
  read: (c: Cursor, end: number) => unknown,
): unknown[] {
  const e = c.len(end);
  const out = emptyList();
  while (c.pos < e) {
    const t = c.tag(e);
    if (t === item) out.push(read(c, e));
    else c.other(t, e, RAW_FIELDS, "items");
  }
  return out;
}

/** Runs a top-level decoder over `bytes[start..end)` (nested reads are bounded by `end`, so it reads exactly that). */
export function decodeTop(
  decode: (c: Cursor, end: number, o: JsonObject) => JsonObject,
  bytes: Uint8Array,
  start: number,
  end: number,
  target: JsonObject,
  baseOffset: number,
  lazyJson = false,
  keptBytes = false,
): JsonObject {
  const c = new Cursor(bytes, start, baseOffset, lazyJson, keptBytes);
  return decode(c, end, target);
}
