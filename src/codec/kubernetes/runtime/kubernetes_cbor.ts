/**
 * Kubernetes' CBOR as the JSON Go prints for it: what `map[string]interface{}` Kubernetes' CBOR decoder
 * (k8s.io/apimachinery `runtime/serializer/cbor/direct`: fxamacker/cbor with Kubernetes' options) makes of the bytes,
 * printed by `encoding/json`. Two places meet it:
 *
 * - A `metav1.FieldsV1` (`managedFields[].fieldsV1`) may hold CBOR rather than JSON, since Kubernetes can store and
 *   serve objects as CBOR, and a protobuf object carries those bytes as they are. The first byte says which: null
 *   (0xf6), a map (0xa0-0xbf) or a tag (0xc6-0xdb) is CBOR, and `FieldsV1.MarshalJSON` then prints it this way.
 * - An object the API server stored in etcd as CBOR (the self-described CBOR tag, then the object), which its CBOR
 *   serializer decodes this way into an `Unstructured`.
 *
 * The rules are those options':
 *
 * - The item must be a map (its JSON object) or null (`null`), after any tags; nothing may follow it.
 * - Map keys are text or byte strings (null is the empty string); duplicate keys are an error.
 * - Values: integers within int64 (as the nearest double, as `JSON.parse` reads Go's digits), floats of any width
 *   (NaN and infinities are an error), text strings (invalid UTF-8, checked chunk by chunk, is an error), byte strings
 *   as Go strings (printed with U+FFFD for invalid UTF-8, as `encoding/json` does), arrays, maps, true, false, null.
 *   Every other simple value, `undefined` included, is an error.
 * - Tags: 0 (an RFC 3339 text, parsed as Go's `time.Parse`) and 1 (epoch seconds) become RFC 3339 strings with
 *   nanoseconds (`time.MarshalText`: years 0-9999 only); 2 and 3 (bignums) are an error; 21, 22 and 23 turn the byte
 *   strings inside them into base64url, base64 and base16 text; any other tag (55799 included) stands for its content.
 *   In a map key, tag 0 gives its text as it is and tag 1 is an error.
 * - Indefinite lengths are allowed; nesting is limited to 10 000 levels (containers, and each tag after the first of a
 *   chain), maps to 2 097 152 pairs.
 *
 * Faults are {@linkcode DecodeError} `MESSAGE_INVALID` at the byte where they are. Internal.
 *
 * @module
 */
import { DecodeError } from "../../../errors.ts";
import { readGoString } from "./go_string.ts";
import { base64Std } from "./base64.ts";
import { formatRfc3339Nano, nanoFraction, TWO_DIGITS } from "./go_time.ts";
import { setKey } from "./set_key.ts";
import { emptyList } from "../../value_constructors.ts";

/** Whether FieldsV1 bytes starting with `byte` are CBOR (else they are JSON). */
export function isCborFieldsV1(byte: number): boolean {
  return byte === 0xf6 || (byte >= 0xa0 && byte <= 0xbf) || (byte >= 0xc6 && byte <= 0xdb);
}

const MAX_DEPTH = 10000;
const MAX_MAP_PAIRS = 2097152;
const MAX_ARRAY_ELEMENTS = 2147483647;
const TWO_32 = 4294967296;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Where an item is read: the top (into a map), a map key (into a string), or a value (into `interface{}`). */
const enum Into {
  Top,
  Key,
  Value,
}

/** An array or map being read. */
interface Container {
  isMap: boolean;
  /** Items still to read (a map's keys and values count one each); -1 for an indefinite length. */
  left: number;
  /** Items read so far. */
  count: number;
  depth: number;
  /** Expected-encoding tags (21-23) that enclose this container, to drop when it ends. */
  encodings: number;
  /** The array's items; the map's entries: [key as Go holds it (bytes as a binary string), key as JSON prints it, value]. */
  items: unknown[];
  /** A map's keys so far, as Go holds them: a duplicate is an error. */
  keys?: Set<string>;
}

/** Returned by `#item` when it opened a container: its value comes when the container ends. */
const OPEN = Symbol("open");

/**
 * The JSON value (`null` or an object) Go prints for FieldsV1 bytes `b[start..end)` that are CBOR (see
 * {@linkcode isCborFieldsV1}). `base` locates `b[0]` in the input, for error offsets.
 */
export function fieldsV1FromCbor(b: Uint8Array, start: number, end: number, base: number): unknown {
  return new CborReader(b, start, end, base, "protobuf: FieldsV1: CBOR").read();
}

/**
 * The JSON value (`null` or an object) of Kubernetes CBOR `b[start..end)` (a stored object: the self-described CBOR
 * tag, then the object's map). `what` starts the message of errors.
 */
export function kubernetesCborValue(b: Uint8Array, start: number, end: number, base: number, what: string): unknown {
  return new CborReader(b, start, end, base, what).read();
}

class CborReader {
  readonly #b: Uint8Array;
  #pos: number;
  readonly #end: number;
  readonly #base: number;
  /** The expected-encoding tags in force (innermost last). */
  readonly #encodings: number[] = [];
  readonly #stack: Container[] = [];
  // The head just read: where it starts, major type, additional information, argument (low and high 32 bits).
  #at = 0;
  #major = 0;
  #ai = 0;
  #lo = 0;
  #hi = 0;
  /** A map key just read, as Go holds it (a binary string of its bytes). */
  #rawKey = "";
  /** Where the item `#item` read last starts (its first tag, if any). */
  #itemAt = 0;

  readonly #what: string;

  constructor(b: Uint8Array, start: number, end: number, base: number, what: string) {
    this.#b = b;
    this.#pos = start;
    this.#end = end;
    this.#base = base;
    this.#what = what;
  }

  #fail(at: number, detail: string): DecodeError {
    return new DecodeError("MESSAGE_INVALID", this.#base + at, `${this.#what}: ${detail}`);
  }

  read(): unknown {
    const stack = this.#stack;
    for (;;) {
      const parent = stack.length === 0 ? undefined : stack[stack.length - 1];
      let value: unknown;
      if (parent !== undefined && this.#ended(parent)) {
        stack.pop();
        this.#encodings.length -= parent.encodings;
        value = parent.isMap ? this.#object(parent.items) : parent.items;
      } else {
        const into = parent === undefined ? Into.Top : parent.isMap && parent.count % 2 === 0 ? Into.Key : Into.Value;
        value = this.#item(into, parent === undefined ? 0 : parent.depth);
        if (value === OPEN) continue;
      }
      const container = stack.length === 0 ? undefined : stack[stack.length - 1];
      if (container === undefined) {
        if (this.#pos !== this.#end) throw this.#fail(this.#pos, `${this.#end - this.#pos} bytes after the data item`);
        return value;
      }
      if (!container.isMap) container.items.push(value);
      else if (container.count % 2 === 0) {
        const keys = container.keys ??= new Set();
        if (keys.has(this.#rawKey)) throw this.#fail(this.#itemAt, `duplicate map key ${JSON.stringify(value)}`);
        keys.add(this.#rawKey);
        container.items.push(this.#rawKey, value);
      } else container.items.push(value);
      container.count++;
      if (container.left > 0) container.left--;
    }
  }

  /** Whether the container has all its items (consuming the break of an indefinite length). */
  #ended(c: Container): boolean {
    if (c.left === 0) return true;
    if (c.left > 0) return false;
    if (this.#pos >= this.#end) throw this.#fail(this.#pos, "the data ends inside an indefinite-length item");
    if (this.#b[this.#pos] !== 0xff) {
      if (c.isMap ? c.count / 2 >= MAX_MAP_PAIRS : c.count >= MAX_ARRAY_ELEMENTS) {
        throw this.#fail(this.#pos, c.isMap ? "more than 2097152 map pairs" : "too many array elements");
      }
      return false;
    }
    if (c.isMap && c.count % 2 === 1) throw this.#fail(this.#pos, "a break where a map value should be");
    this.#pos++;
    return true;
  }

  /** A map's JSON object: keys in Go's order when two of them print alike (the later one wins in `JSON.parse`). */
  #object(items: unknown[]): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const order: number[] = [];
    const seen = new Set<string>();
    let clash = false;
    for (let i = 0; i < items.length; i += 3) {
      const key = items[i + 1] as string;
      if (seen.has(key)) clash = true;
      seen.add(key);
      order.push(i);
    }
    if (clash) order.sort((x, y) => ((items[x] as string) < (items[y] as string) ? -1 : 1));
    for (const i of order) setKey(out, items[i + 1] as string, items[i + 2]);
    return out;
  }

  /**
   * Reads one data item into `into`, at nesting `depth` (of its container): its value, or OPEN when it is an array or
   * map (then pushed on the stack). A map key's value is the key as JSON prints it, with `#rawKey` as Go holds it.
   */
  #item(into: Into, depth: number): unknown {
    this.#itemAt = this.#pos;
    let pushed = 0;
    let first = true;
    for (;;) {
      this.#head();
      if (this.#major !== 6) break;
      const tagAt = this.#at;
      if (!first && ++depth > MAX_DEPTH) throw this.#fail(tagAt, `nested deeper than ${MAX_DEPTH} levels`);
      first = false;
      if (this.#pos >= this.#end) throw this.#fail(this.#pos, "a tag without content");
      const content = this.#b[this.#pos];
      const tag = this.#hi === 0 ? this.#lo : -1;
      if (tag === 0 || tag === 1) {
        const ok = tag === 0 ? content >> 5 === 3 : content >> 5 <= 1 || (content >= 0xf9 && content <= 0xfb);
        if (!ok) {
          throw this.#fail(tagAt, `tag ${tag} must be followed by ${tag === 0 ? "a text string" : "a number"}`);
        }
        if (into === Into.Value) {
          const value = tag === 0 ? this.#rfc3339Tag(tagAt) : this.#epochTag(tagAt);
          this.#encodings.length -= pushed;
          return value;
        }
        if (tag === 1 || into === Into.Top) {
          throw this.#fail(tagAt, `a time (tag ${tag}) where ${what(into)} should be`);
        }
        continue; // a map key: the text itself
      }
      if (tag === 2 || tag === 3) throw this.#fail(tagAt, "bignums (tags 2 and 3) are not accepted");
      if (tag >= 21 && tag <= 23) {
        this.#encodings.push(tag);
        pushed++;
      }
    }
    const at = this.#at;
    const major = this.#major;
    let value: unknown;
    switch (major) {
      case 0:
      case 1: {
        if (into !== Into.Value) throw this.#fail(at, `an integer where ${what(into)} should be`);
        if (this.#hi >= 0x80000000) throw this.#fail(at, "an integer beyond int64");
        value = major === 0 ? this.#hi * TWO_32 + this.#lo : -(this.#hi * TWO_32 + (this.#lo + 1));
        break;
      }
      case 2:
      case 3: {
        if (into === Into.Top) throw this.#fail(at, "a string where a map should be");
        const [start, end, joined] = this.#string(major);
        value = this.#stringValue(major, joined ?? this.#b, start, end, into);
        break;
      }
      case 4:
      case 5: {
        if (into === Into.Key || (major === 4 && into === Into.Top)) {
          throw this.#fail(at, `${major === 4 ? "an array" : "a map"} where ${what(into)} should be`);
        }
        if (++depth > MAX_DEPTH) throw this.#fail(at, `nested deeper than ${MAX_DEPTH} levels`);
        const indefinite = this.#ai === 31;
        const limit = major === 5 ? MAX_MAP_PAIRS : MAX_ARRAY_ELEMENTS;
        if (!indefinite && (this.#hi !== 0 || this.#lo > limit)) {
          throw this.#fail(at, major === 5 ? "more than 2097152 map pairs" : "too many array elements");
        }
        this.#stack.push({
          isMap: major === 5,
          left: indefinite ? -1 : major === 5 ? 2 * this.#lo : this.#lo,
          count: 0,
          depth,
          encodings: pushed,
          // An array's items are the array returned: no literal, so no allocation site to pretenure.
          items: emptyList(),
        });
        return OPEN;
      }
      default:
        value = this.#simple(at, into);
    }
    this.#encodings.length -= pushed;
    return value;
  }

  /** A simple value or float (major type 7). */
  #simple(at: number, into: Into): unknown {
    const ai = this.#ai;
    if (ai === 20 || ai === 21) {
      if (into !== Into.Value) throw this.#fail(at, `a boolean where ${what(into)} should be`);
      return ai === 21;
    }
    if (ai === 22) {
      // null: a nil map at the top, the empty string as a key (Go leaves the string as it is).
      if (into === Into.Key) this.#rawKey = "";
      return into === Into.Key ? "" : null;
    }
    if (ai >= 25 && ai <= 27) {
      const f = ai === 25 ? half(this.#lo) : ai === 26 ? float32(this.#lo) : float64(this.#hi, this.#lo);
      if (!Number.isFinite(f)) throw this.#fail(at, "NaN and infinities are not accepted");
      if (into !== Into.Value) throw this.#fail(at, `a number where ${what(into)} should be`);
      return f;
    }
    if (ai === 31) throw this.#fail(at, "a break outside an indefinite-length item");
    if (ai === 24 && this.#lo < 32) throw this.#fail(at, `simple value ${this.#lo} in two bytes`);
    throw this.#fail(at, `simple value ${ai === 24 ? this.#lo : ai} is not accepted`);
  }

  /**
   * A string's bytes (major type 2 or 3): `[start, end)` of a definite one, or of a copy of the chunks of an
   * indefinite one (each chunk of a text string valid UTF-8 on its own).
   */
  #string(major: number): [number, number, Uint8Array?] {
    if (this.#ai !== 31) {
      const start = this.#pos;
      const end = this.#take();
      if (major === 3) this.#checkUtf8(start, end);
      return [start, end];
    }
    const chunks: [number, number][] = [];
    let total = 0;
    for (;;) {
      if (this.#pos >= this.#end) throw this.#fail(this.#pos, "the data ends inside an indefinite-length string");
      if (this.#b[this.#pos] === 0xff) {
        this.#pos++;
        break;
      }
      this.#head();
      if (this.#major !== major || this.#ai === 31) {
        throw this.#fail(this.#at, "a chunk of an indefinite-length string that is not a definite string of its type");
      }
      const start = this.#pos;
      const end = this.#take();
      if (major === 3) this.#checkUtf8(start, end);
      chunks.push([start, end]);
      total += end - start;
    }
    const joined = new Uint8Array(total);
    let at = 0;
    for (const [start, end] of chunks) {
      joined.set(this.#b.subarray(start, end), at);
      at += end - start;
    }
    return [0, total, joined];
  }

  /** Moves past a definite string's bytes (its length in the head just read); returns their end. */
  #take(): number {
    const left = this.#end - this.#pos;
    if (this.#hi !== 0 || this.#lo > left) {
      throw this.#fail(this.#at, `a string of ${this.#hi * TWO_32 + this.#lo} bytes, ${left} left`);
    }
    this.#pos += this.#lo;
    return this.#pos;
  }

  #checkUtf8(start: number, end: number): void {
    try {
      strictUtf8.decode(this.#b.subarray(start, end));
    } catch {
      throw this.#fail(start, "invalid UTF-8 in a text string");
    }
  }

  /**
   * A string's value as JSON prints the Go string (invalid UTF-8 as U+FFFD); for a key also `#rawKey`. A byte string
   * under tags 21-23 becomes its base64url (unpadded), base64 or base16 text (the innermost tag's).
   */
  #stringValue(major: number, b: Uint8Array, start: number, end: number, into: Into): string {
    const encoding = major === 2 && this.#encodings.length > 0 ? this.#encodings[this.#encodings.length - 1] : 0;
    if (encoding !== 0) {
      const text = encoding === 23 ? hex(b, start, end) : base64Std(b, start, end);
      const value = encoding === 21 ? text.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "") : text;
      if (into === Into.Key) this.#rawKey = value;
      return value;
    }
    if (into === Into.Key) this.#rawKey = binary(b, start, end);
    return readGoString(b, start, end);
  }

  /** Tag 0's RFC 3339 text, as `time.Parse` reads it and `time.MarshalText` prints it. */
  #rfc3339Tag(tagAt: number): string {
    this.#head();
    const [start, end, joined] = this.#string(3);
    const text = strictUtf8.decode((joined ?? this.#b).subarray(start, end));
    const formatted = goRfc3339(text);
    if (formatted === undefined) {
      throw this.#fail(tagAt, `tag 0: ${JSON.stringify(text)} is not an RFC 3339 time Go prints`);
    }
    return formatted;
  }

  /** Tag 1's epoch seconds, as `time.Unix` takes them and `time.MarshalText` prints them (UTC). */
  #epochTag(tagAt: number): string {
    this.#head();
    let seconds: number;
    let nanos = 0;
    if (this.#major <= 1) {
      if (this.#hi >= 0x80000000) throw this.#fail(this.#at, "an integer beyond int64");
      seconds = this.#major === 0 ? this.#hi * TWO_32 + this.#lo : -(this.#hi * TWO_32 + (this.#lo + 1));
    } else {
      const ai = this.#ai;
      const f = ai === 25 ? half(this.#lo) : ai === 26 ? float32(this.#lo) : float64(this.#hi, this.#lo);
      if (!Number.isFinite(f)) throw this.#fail(this.#at, "NaN and infinities are not accepted");
      // math.Modf, then time.Unix(int64(seconds), int64(fractional*1e9)), which carries negative nanoseconds.
      seconds = Math.trunc(f);
      nanos = Math.trunc((f - seconds) * 1e9);
      if (nanos < 0) {
        nanos += 1e9;
        seconds--;
      }
    }
    const formatted = utcRfc3339(seconds, nanos);
    if (formatted === undefined) throw this.#fail(tagAt, "tag 1: a time outside the years 0-9999");
    return formatted;
  }

  /** Reads a head at `#pos`: major type, additional information and argument. */
  #head(): void {
    const b = this.#b;
    const at = this.#pos;
    if (at >= this.#end) throw this.#fail(at, "the data ends where a data item should be");
    const x = b[at];
    const major = x >> 5;
    const ai = x & 31;
    this.#at = at;
    this.#major = major;
    this.#ai = ai;
    this.#hi = 0;
    let p = at + 1;
    if (ai < 24) this.#lo = ai;
    else if (ai <= 27) {
      const n = 1 << (ai - 24);
      if (this.#end - p < n) throw this.#fail(at, "the data ends inside a head");
      if (n === 8) {
        this.#hi = ((b[p] << 24) | (b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]) >>> 0;
        p += 4;
      }
      let lo = 0;
      for (let i = 0; i < Math.min(n, 4); i++) lo = lo * 256 + b[p + i];
      this.#lo = lo;
      p += Math.min(n, 4);
    } else if (ai === 31 && major !== 0 && major !== 1 && major !== 6) {
      this.#lo = 0;
    } else {
      throw this.#fail(at, `invalid additional information ${ai} for major type ${major}`);
    }
    this.#pos = p;
  }
}

/** Bytes as a string of one UTF-16 unit per byte (what a Go string holds, compared as Go compares strings). */
function binary(b: Uint8Array, start: number, end: number): string {
  let out = "";
  for (let i = start; i < end; i += 4096) out += String.fromCharCode(...b.subarray(i, Math.min(end, i + 4096)));
  return out;
}

const HEX = "0123456789abcdef";

function hex(b: Uint8Array, start: number, end: number): string {
  let out = "";
  for (let i = start; i < end; i++) out += HEX[b[i] >> 4] + HEX[b[i] & 15];
  return out;
}

/** `time.Unix(seconds, nanos).UTC().MarshalText()`, or undefined outside the years 0-9999 (where it fails). */
function utcRfc3339(seconds: number, nanos: number): string | undefined {
  if (seconds < -62167219200 || seconds > 253402300799) return undefined;
  return formatRfc3339Nano(seconds, nanos);
}

/**
 * `time.Parse(time.RFC3339, text)` then `MarshalText()`: the normalised text, or undefined where either fails. Parse
 * takes what Go's general layout parser takes for "2006-01-02T15:04:05Z07:00": a one- or two-digit hour, a fraction
 * after `.` or `,` (nanoseconds, truncated), `Z` or an offset of up to 24:60; MarshalText then refuses offsets of 24
 * hours or more.
 */
function goRfc3339(text: string): string | undefined {
  let i = 0;
  const digit = (k: number) => k < text.length && text.charCodeAt(k) >= 48 && text.charCodeAt(k) <= 57;
  const num = (k: number, n: number) => Number(text.slice(k, k + n));
  const literal = (c: string) => text[i] === c && ++i > 0;
  if (!(digit(0) && digit(1) && digit(2) && digit(3))) return undefined;
  const year = num(0, 4);
  i = 4;
  if (!literal("-") || !digit(i) || !digit(i + 1)) return undefined;
  const month = num(i, 2);
  i += 2;
  if (month < 1 || month > 12 || !literal("-") || !digit(i) || !digit(i + 1)) return undefined;
  const day = num(i, 2);
  i += 2;
  if (!literal("T") || !digit(i)) return undefined;
  const hourDigits = digit(i + 1) ? 2 : 1;
  const hour = num(i, hourDigits);
  i += hourDigits;
  if (hour >= 24 || !literal(":") || !digit(i) || !digit(i + 1)) return undefined;
  const minute = num(i, 2);
  i += 2;
  if (minute >= 60 || !literal(":") || !digit(i) || !digit(i + 1)) return undefined;
  const second = num(i, 2);
  i += 2;
  if (second >= 60) return undefined;
  let nanos = 0;
  if ((text[i] === "." || text[i] === ",") && digit(i + 1)) {
    let n = i + 1;
    while (digit(n)) n++;
    nanos = Number(text.slice(i + 1, Math.min(n, i + 10)).padEnd(9, "0"));
    i = n;
  }
  let zone: string;
  if (text[i] === "Z") {
    zone = "Z";
    i++;
  } else {
    const sign = text[i];
    if (
      text.length - i < 6 || text[i + 3] !== ":" || !digit(i + 1) || !digit(i + 2) || !digit(i + 4) || !digit(i + 5)
    ) {
      return undefined;
    }
    const hh = num(i + 1, 2);
    const mm = num(i + 4, 2);
    if (hh > 24 || mm > 60 || (sign !== "+" && sign !== "-")) return undefined;
    const minutes = hh * 60 + mm;
    if (minutes >= 24 * 60) return undefined; // MarshalText: zone hour outside [0,23]
    zone = minutes === 0 ? "Z" : sign + TWO_DIGITS[Math.floor(minutes / 60)] + ":" + TWO_DIGITS[minutes % 60];
    i += 6;
  }
  if (i !== text.length) return undefined;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (day < 1 || day > days) return undefined;
  return String(year).padStart(4, "0") + "-" + TWO_DIGITS[month] + "-" + TWO_DIGITS[day] + "T" + TWO_DIGITS[hour] +
    ":" + TWO_DIGITS[minute] + ":" +
    TWO_DIGITS[second] + nanoFraction(nanos) + zone;
}

function what(into: Into): string {
  return into === Into.Top ? "a map" : "a string key";
}

const view = new DataView(new ArrayBuffer(8));

/** An IEEE 754 half-precision float's value from its 16 bits (CBOR's major type 7, additional information 25). */
export function half(bits: number): number {
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  const sign = bits & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (1024 + mantissa) * 2 ** (exponent - 25);
}

function float32(bits: number): number {
  view.setUint32(0, bits);
  return view.getFloat32(0);
}

function float64(hi: number, lo: number): number {
  view.setUint32(0, hi);
  view.setUint32(4, lo);
  return view.getFloat64(0);
}
