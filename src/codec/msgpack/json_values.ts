/**
 * JSON values to and from the values handed to msgpackr, so that a round trip keeps everything `JSON.parse` can
 * produce. msgpackr alone does not: it writes `-0` as the integer 0, loses lone surrogates (UTF-8 cannot hold them),
 * renames a `"__proto__"` key to `"__proto_"` when decoding, and its record table breaks on a `"__keys__"` key (the
 * name of its own bookkeeping property). Those few values travel as msgpack `bin` values instead, which JSON never
 * produces, so they cannot be confused with data:
 *
 * - `bin [0x01]`: the number `-0`;
 * - `bin [0x02, UTF-16LE code units...]`: a string that is not well-formed UTF-16 (it has a lone surrogate);
 * - an array whose first element is `bin [0x03]`, then key, value, key, value...: an object with a `"__proto__"`
 *   or `"__keys__"` key or a key with a lone surrogate (such a key is itself a `0x02` bin).
 *
 * The decoding side ({@linkcode fromWire}) also checks that a decoded value holds nothing JSON cannot (`undefined`,
 * `NaN`, binary data other than the forms above, dates, sets...), so a decoder never hands on what a JSON decoder
 * could not have produced.
 *
 * @module
 */

const TAG_NEGATIVE_ZERO = 0x01;
const TAG_STRING = 0x02;
const TAG_OBJECT = 0x03;

/** msgpackr's record table (`structures.transitions`) stores its own data under this property name. */
const RECORD_BOOKKEEPING_KEY = "__keys__";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** `String.prototype.isWellFormed` (ES2024; all three runtimes have it), or a regular expression where it is missing. */
const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function"
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

/** What {@linkcode scan} found: nothing to do, values to rewrite as `bin` forms, or values JSON does not have. */
const PLAIN = 0;
const SPECIAL = 1;
const NOT_JSON = 2;

function isSpecialKey(key: string): boolean {
  return key === "__proto__" || key === RECORD_BOOKKEEPING_KEY || !isWellFormed(key);
}

/** Walks `value` without allocating; stops at the first value JSON does not have. */
function scan(value: unknown): number {
  switch (typeof value) {
    case "string":
      return isWellFormed(value) ? PLAIN : SPECIAL;
    case "number":
      // `value - value` is NaN for NaN and ±Infinity; 1 / -0 is -Infinity.
      if (value - value !== 0) return NOT_JSON;
      return value === 0 && 1 / value < 0 ? SPECIAL : PLAIN;
    case "boolean":
      return PLAIN;
    case "object": {
      if (value === null) return PLAIN;
      let found = PLAIN;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          // A hole reads as undefined: NOT_JSON, as JSON.stringify writes it as null.
          const s = scan(value[i]);
          if (s === NOT_JSON) return s;
          found |= s;
        }
        return found;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return NOT_JSON; // Date, Map, class instances...
      const object = value as Record<string, unknown>;
      for (const key in object) {
        if (isSpecialKey(key)) found = SPECIAL;
        const s = scan(object[key]);
        if (s === NOT_JSON) return s;
        found |= s;
      }
      return found;
    }
    default: // undefined, function, symbol, bigint
      return NOT_JSON;
  }
}

function taggedString(s: string): Uint8Array {
  const bin = new Uint8Array(1 + 2 * s.length);
  bin[0] = TAG_STRING;
  for (let i = 0, at = 1; i < s.length; i++, at += 2) {
    const unit = s.charCodeAt(i);
    bin[at] = unit & 0xff;
    bin[at + 1] = unit >>> 8;
  }
  return bin;
}

/** A copy of `value` with the special values in their `bin` forms (only for the rare values that need it). */
function prepare(value: unknown): unknown {
  switch (typeof value) {
    case "string":
      return isWellFormed(value) ? value : taggedString(value);
    case "number":
      return value === 0 && 1 / value < 0 ? Uint8Array.of(TAG_NEGATIVE_ZERO) : value;
    case "object": {
      if (value === null) return value;
      if (Array.isArray(value)) return value.map(prepare);
      const object = value as Record<string, unknown>;
      const keys = Object.keys(object);
      if (keys.some(isSpecialKey)) {
        const entries: unknown[] = [Uint8Array.of(TAG_OBJECT)];
        for (const key of keys) entries.push(prepare(key), prepare(object[key]));
        return entries;
      }
      const copy: Record<string, unknown> = {};
      for (const key of keys) copy[key] = prepare(object[key]);
      return copy;
    }
    default:
      return value;
  }
}

/**
 * `value` as JSON would carry it, ready for msgpackr: returned as it is when it holds only JSON values msgpackr keeps
 * (the common case: one walk, no copy); copied with the special values in their `bin` forms otherwise. A value that
 * is not JSON (`undefined`, `NaN`, a `Date`...) is first put through `JSON.parse(JSON.stringify(value))`, so it comes
 * out of the decoder as it would through JSON. `check` sees the JSON value before any `bin` form is made. Throws what
 * `JSON.stringify` throws (a cycle, a `BigInt`), and a `TypeError` for a value `JSON.stringify` drops whole.
 */
export function toWire(value: unknown, check?: (json: unknown) => void): unknown {
  let found = scan(value);
  if (found === NOT_JSON) {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`${typeof value} is not a JSON value`);
    value = JSON.parse(text);
    found = scan(value);
  }
  check?.(value);
  return found === PLAIN ? value : prepare(value);
}

/** Thrown by {@linkcode fromWire} for a value JSON does not have. */
export class NotJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NotJsonError";
  }
}

function describe(value: unknown): string {
  if (value instanceof Uint8Array) return `binary data (${value.length} bytes)`;
  if (typeof value === "object" && value !== null) return `an object of class ${value.constructor?.name ?? "?"}`;
  if (typeof value === "number") return String(value);
  return typeof value;
}

function untag(bin: Uint8Array): number | string {
  if (bin.length === 1 && bin[0] === TAG_NEGATIVE_ZERO) return -0;
  if (bin[0] === TAG_STRING && bin.length % 2 === 1) {
    const units = new Uint16Array((bin.length - 1) / 2);
    for (let i = 0, at = 1; i < units.length; i++, at += 2) units[i] = bin[at] | (bin[at + 1] << 8);
    let s = "";
    // In slices: apply() passes every unit as an argument, and engines limit argument counts.
    for (let i = 0; i < units.length; i += 0x2000) {
      s += String.fromCharCode.apply(null, units.subarray(i, i + 0x2000) as unknown as number[]);
    }
    return s;
  }
  throw new NotJsonError(`unexpected ${describe(bin)}`);
}

function isObjectTag(value: unknown): boolean {
  return value instanceof Uint8Array && value.length === 1 && value[0] === TAG_OBJECT;
}

/** An object from its entries form (`[tag, key, value, key, value...]`), with own properties as `JSON.parse` makes. */
function entriesToObject(entries: unknown[]): Record<string, unknown> {
  if (entries.length % 2 === 0) throw new NotJsonError("an object's entries lack a value");
  const object: Record<string, unknown> = {};
  for (let i = 1; i < entries.length; i += 2) {
    let key = entries[i];
    if (key instanceof Uint8Array) key = untag(key);
    if (typeof key !== "string") throw new NotJsonError(`an object key is ${describe(key)}`);
    // defineProperty, not assignment: `object["__proto__"] = v` would set the prototype instead of a property.
    Object.defineProperty(object, key, {
      value: fromWire(entries[i + 1]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return object;
}

/**
 * A value decoded by msgpackr back to the JSON value it stands for: the `bin` forms become `-0`, strings and objects
 * again (arrays and objects are updated in place). Throws {@linkcode NotJsonError} for anything JSON does not have.
 */
export function fromWire(value: unknown): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (value - value !== 0) throw new NotJsonError(`the number ${value} is not JSON`);
      return value;
    case "object":
      if (value === null) return value;
      if (Array.isArray(value)) {
        if (value.length > 0 && isObjectTag(value[0])) return entriesToObject(value);
        for (let i = 0; i < value.length; i++) {
          const item = value[i];
          if (typeof item === "string" || typeof item === "boolean" || item === null) continue;
          const restored = fromWire(item);
          if (restored !== item) value[i] = restored;
        }
        return value;
      }
      if (value instanceof Uint8Array) return untag(value);
      if (Object.getPrototypeOf(value) !== Object.prototype) throw new NotJsonError(`unexpected ${describe(value)}`);
      {
        const object = value as Record<string, unknown>;
        for (const key in object) {
          const item = object[key];
          if (typeof item === "string" || typeof item === "boolean" || item === null) continue;
          const restored = fromWire(item);
          if (restored !== item) object[key] = restored;
        }
        return object;
      }
    default:
      throw new NotJsonError(`unexpected ${describe(value)}`);
  }
}
