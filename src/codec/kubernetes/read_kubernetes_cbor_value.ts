/**
 * {@linkcode readKubernetesCborValue}: one Kubernetes CBOR data item (a watch event, an object, a list) to the JSON
 * value the same server's JSON gives, fast. Internal.
 *
 * Why not a CBOR library. Kubernetes' CBOR (k8s.io/apimachinery `runtime/serializer/cbor`, fxamacker/cbor with its
 * options) writes every Go string and map key as a CBOR byte string, `[]byte` as a byte string under tag 22, times
 * as text; its decoder refuses duplicate keys, limits depth and size, and turns byte strings into Go strings (invalid
 * UTF-8 printed as U+FFFD). Of the two well-kept JavaScript libraries, neither decodes that as it is:
 * - cbor-x compiles object readers at run time with the Function constructor (forbidden in this library and in many
 *   Workers and browsers with a CSP), cannot use byte strings as object keys ("Invalid property name type object"), keeps no limits on
 *   depth (it recurses) and accepts duplicate keys.
 * - cborg rejects duplicate keys (`rejectDuplicateMapKeys`) and runs without code generation, but takes byte-string
 *   keys only into `Map`s (`useMaps`), returns byte strings as `Uint8Array`s (so each object needs a second pass to
 *   become JSON values) and recurses without a depth limit (a deep item overflows the stack rather than failing).
 *   Held to these rules (`useMaps`, `rejectDuplicateMapKeys`, tag decoders for 22 and 55799, then a pass to JSON
 *   values) it was slower than this reader (bench/RESULTS.md §13 has this reader beside `JSON.parse`).
 *
 * So: a recursive descent over the common forms the API server writes (definite lengths; integers within int64;
 * floats; byte and text strings; tag 55799 and tag 22 over a byte string; true, false, null; nesting up to
 * {@linkcode FAST_DEPTH} levels), and for anything else, or any fault, the complete reader of these rules
 * (`kubernetesCborValue`, iterative, with exact errors) decodes the item again from its start. So the values and every
 * error are that reader's, and its rules (see its module) are the ones that hold.
 *
 * Key order. The API server writes CBOR for serving with fxamacker/cbor's `SortFastShuffle`: each struct's fields in
 * their declared order from a random one on (a "deck cut"), each Go map in Go's random iteration order, anew for every
 * event. Objects made in the order of the bytes would take a new order (a new hidden class in V8 and JavaScriptCore)
 * from event to event, which costs every later property access, and would print differently each time. So every
 * object's keys are put in the order `encoding/json` gives a Go map's: sorted by their bytes (code point order). A
 * map's object then has the key order of the JSON twin; a struct's, sorted rather than declared. Duplicate keys then
 * stand side by side, which is how they are found.
 *
 * @module
 */
import { readGoString } from "./runtime/go_string.ts";
import { base64Std } from "./runtime/base64.ts";
import { half, kubernetesCborValue } from "./runtime/kubernetes_cbor.ts";
import { emptyList } from "../value_constructors.ts";
import { setKey } from "./runtime/set_key.ts";

/** Nesting the fast path takes (containers and tags) before it leaves the item to the complete reader. */
export const FAST_DEPTH = 200;

/** Thrown inside the fast path: the complete reader takes the item. */
const SLOW = new Error("slow path");

const TWO_32 = 4294967296;

// The item being read: module state, as the reading is synchronous and never re-entered.
let b: Uint8Array = new Uint8Array(0);
let view: DataView = new DataView(new ArrayBuffer(0));
let p = 0;
let end = 0;

// The entries of the maps being read: each map's on top of those of the maps around it, from `base` to `top`.
const keys: string[] = [];
const values: unknown[] = [];
/** Whether the key is ASCII (its UTF-16 length is its length in bytes): `<` then orders it as Go does. */
const asciiKeys: boolean[] = [];
let top = 0;
/** How far the entries ever reached: what to clear after a fault. */
let reached = 0;
/** Whether the key `mapKey` read last is ASCII. */
let keyIsAscii = true;

/**
 * The JSON value (an object, or `null`) of the Kubernetes CBOR data item `bytes[start..end)` (nothing may follow it):
 * as the API server's JSON prints the same object, every object's keys sorted (see the module). `base` locates `bytes[0]` in the
 * input, and `what` starts error messages: faults are `DecodeError` `MESSAGE_INVALID` at their byte.
 */
export function readKubernetesCborValue(
  bytes: Uint8Array,
  start: number,
  stop: number,
  base: number,
  what: string,
): unknown {
  b = bytes;
  view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  p = start;
  end = stop;
  top = 0;
  try {
    const value = item();
    if (p === end) return value;
  } catch (e) {
    if (e !== SLOW) throw e;
  } finally {
    // Nothing of the item stays reachable from here.
    b = EMPTY;
    view = EMPTY_VIEW;
    if (top !== 0) {
      values.fill(undefined, 0, reached);
      top = 0;
    }
  }
  return withSortedKeys(kubernetesCborValue(bytes, start, stop, base, what));
}

const EMPTY = new Uint8Array(0);
const EMPTY_VIEW = new DataView(new ArrayBuffer(0));

/** The item at the top: a map (or null), after tag 55799s. */
function item(): unknown {
  let depth = 0;
  for (;;) {
    if (p + 3 <= end && b[p] === 0xd9 && b[p + 1] === 0xd9 && b[p + 2] === 0xf7) {
      p += 3;
      if (++depth > FAST_DEPTH) throw SLOW;
      continue;
    }
    if (p >= end) throw SLOW;
    const x = b[p];
    if (x === 0xf6) {
      p++;
      return null;
    }
    if (x < 0xa0 || x > 0xbb) throw SLOW;
    return value(depth);
  }
}

/** The argument of a head whose additional information is `ai` (24-27), its bytes at `p` (moved past). */
function argument(ai: number): number {
  switch (ai) {
    case 24:
      if (p + 1 > end) throw SLOW;
      return b[p++];
    case 25: {
      if (p + 2 > end) throw SLOW;
      const v = (b[p] << 8) | b[p + 1];
      p += 2;
      return v;
    }
    case 26: {
      if (p + 4 > end) throw SLOW;
      const v = view.getUint32(p);
      p += 4;
      return v;
    }
    case 27: {
      if (p + 8 > end) throw SLOW;
      const hi = view.getUint32(p);
      // Lengths and counts beyond 2^32 cannot be whole in the item; integers beyond int64 are refused.
      if (hi >= 0x80000000) throw SLOW;
      const v = hi * TWO_32 + view.getUint32(p + 4);
      p += 8;
      return v;
    }
    default:
      throw SLOW;
  }
}

/** A string's bytes (definite length `n` at `p`): moves past them and returns where they start. */
function take(n: number): number {
  const at = p;
  if (n > end - p) throw SLOW;
  p += n;
  return at;
}

/** The data item at `p`, at nesting `depth` (of its container). */
function value(depth: number): unknown {
  if (p >= end) throw SLOW;
  const x = b[p++];
  const ai = x & 31;
  switch (x >> 5) {
    case 0:
      return ai < 24 ? ai : argument(ai);
    case 1: {
      if (ai < 24) return -1 - ai;
      if (ai !== 27) return -1 - argument(ai);
      // As the complete reader computes it, with one rounding: -(n + 1) of a 64-bit n.
      if (p + 8 > end) throw SLOW;
      const hi = view.getUint32(p);
      if (hi >= 0x80000000) throw SLOW;
      const lo = view.getUint32(p + 4);
      p += 8;
      return -(hi * TWO_32 + (lo + 1));
    }
    case 2: {
      const n = ai < 24 ? ai : argument(ai);
      const at = take(n);
      return readGoString(b, at, at + n, view);
    }
    case 3: {
      const n = ai < 24 ? ai : argument(ai);
      const at = take(n);
      const s = readGoString(b, at, at + n, view);
      // Invalid UTF-8 in a text string is an error (and a text holding U+FFFD is rare): the complete reader decides.
      if (s.indexOf("\uFFFD") !== -1) throw SLOW;
      return s;
    }
    case 4: {
      const n = ai < 24 ? ai : argument(ai);
      if (++depth > FAST_DEPTH || n > end - p) throw SLOW;
      const list = emptyList();
      for (let i = 0; i < n; i++) list.push(value(depth));
      return list;
    }
    case 5: {
      const n = ai < 24 ? ai : argument(ai);
      if (++depth > FAST_DEPTH || n > end - p) throw SLOW;
      const base = top;
      for (let i = 0; i < n; i++) {
        // The entry's place, taken before its value is read (maps in it take theirs above it).
        const at = top++;
        if (top > reached) reached = top;
        keys[at] = mapKey();
        asciiKeys[at] = keyIsAscii;
        values[at] = value(depth);
      }
      return objectOfEntries(base);
    }
    case 6:
      return tagged(x, depth);
    default:
      return simple(x);
  }
}

/** A map key: a definite byte or text string (null, tags and the rest: the complete reader). */
function mapKey(): string {
  if (p >= end) throw SLOW;
  const x = b[p++];
  const major = x >> 5;
  if (major !== 2 && major !== 3) throw SLOW;
  const ai = x & 31;
  const n = ai < 24 ? ai : argument(ai);
  const at = take(n);
  const s = readGoString(b, at, at + n, view);
  if (major === 3 && s.indexOf("\uFFFD") !== -1) throw SLOW;
  // `__proto__` is a key JSON.parse makes an own property of: the complete reader's to set.
  if (s === "__proto__") throw SLOW;
  keyIsAscii = s.length === n;
  return s;
}

/**
 * The object of the map whose entries are those from `base` to `top` (then dropped): its keys sorted, as Go's JSON
 * sorts a map's. The order found for a sequence of keys is kept (see {@linkcode ORDERS}), as the same structs and
 * maps come again and again, cut at the same few places. Two keys alike (a duplicate, or two byte strings that print
 * alike) are the complete reader's.
 */
function objectOfEntries(base: number): Record<string, unknown> {
  const stop = top;
  const n = stop - base;
  const object: Record<string, unknown> = {};
  if (n === 1) {
    object[keys[base]] = values[base];
    values[base] = undefined;
  } else if (n > 1) {
    const order = orderOf(base, stop);
    for (let j = 0; j < n; j++) {
      const i = base + order[j];
      object[keys[i]] = values[i];
      values[i] = undefined;
    }
  }
  top = base;
  return object;
}

/** Entries of {@linkcode ORDERS}: a sequence of keys and where each of its keys goes. */
interface KeyOrder {
  keys: string[];
  /** The entries' positions (from the map's first) in sorted order. */
  order: number[];
}

const ORDER_BITS = 10;
/**
 * Sorted orders of key sequences seen, in a direct-mapped table keyed by a hash of each key's length and first and
 * last characters: a hit costs that hash and a comparison of the keys (the same interned strings as a rule), not a
 * sort. A colliding sequence replaces the entry.
 */
const ORDERS: (KeyOrder | undefined)[] = new Array<KeyOrder | undefined>(1 << ORDER_BITS).fill(undefined);

/** The sorted order of the keys from `base` to `stop` (at least two): from {@linkcode ORDERS}, or sorted and kept. */
function orderOf(base: number, stop: number): number[] {
  const n = stop - base;
  let hash = n;
  for (let i = base; i < stop; i++) {
    const key = keys[i];
    const length = key.length;
    hash = Math.imul(hash ^ length ^ (key.charCodeAt(0) << 8) ^ (key.charCodeAt(length - 1) << 16), 0x01000193);
  }
  const slot = (hash ^ (hash >>> 15)) & ((1 << ORDER_BITS) - 1);
  const known = ORDERS[slot];
  if (known !== undefined && known.keys.length === n) {
    const seen = known.keys;
    let same = true;
    for (let j = 0; j < n; j++) {
      if (seen[j] !== keys[base + j]) {
        same = false;
        break;
      }
    }
    if (same) return known.order;
  }
  const order = emptyList<number>();
  for (let j = 0; j < n; j++) order.push(j);
  order.sort((x, y) => {
    const kx = keys[base + x];
    const ky = keys[base + y];
    return before(kx, asciiKeys[base + x], ky, asciiKeys[base + y]) ? -1 : kx === ky ? 0 : 1;
  });
  for (let j = 1; j < n; j++) if (keys[base + order[j]] === keys[base + order[j - 1]]) throw SLOW;
  ORDERS[slot] = { keys: keys.slice(base, stop), order };
  return order;
}

/**
 * Whether key `x` sorts before key `y` as Go sorts strings (by their UTF-8 bytes: code point order). `<` compares
 * UTF-16 code units, which is the same order unless both hold code units from U+D800 up: an ASCII key settles it.
 */
function before(x: string, xAscii: boolean, y: string, yAscii: boolean): boolean {
  if (!xAscii && !yAscii) return codePointLess(x, y);
  // Most keys differ in their first character: settled without the engine's string comparison.
  const cx = x.length === 0 ? -1 : x.charCodeAt(0);
  const cy = y.length === 0 ? -1 : y.charCodeAt(0);
  return cx !== cy ? cx < cy : x < y;
}

/** `x < y` in code point order. */
function codePointLess(x: string, y: string): boolean {
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    let cx = x.charCodeAt(i);
    let cy = y.charCodeAt(i);
    if (cx === cy) continue;
    // Surrogates (U+D800-DFFF, the code points from U+10000) after U+E000-FFFF.
    if (cx >= 0xd800) cx = cx >= 0xe000 ? cx - 0x800 : cx + 0x2000;
    if (cy >= 0xd800) cy = cy >= 0xe000 ? cy - 0x800 : cy + 0x2000;
    return cx < cy;
  }
  return x.length < y.length;
}

/**
 * `value` (what the complete reader made, keys in the order of the bytes) with every object's keys sorted as the fast
 * path sorts them: the same objects whichever path read them. Iterative, as deep as that reader reads.
 */
function withSortedKeys(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  // Each container with its children still to do; a child done replaces itself in its parent.
  const stack: { node: Record<string, unknown> | unknown[]; names: string[]; next: number }[] = [];
  const open = (node: Record<string, unknown> | unknown[]) =>
    stack.push({ node, names: Array.isArray(node) ? [] : Object.keys(node), next: 0 });
  let result: unknown = value;
  open(value as Record<string, unknown>);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1];
    const { node } = frame;
    const length = Array.isArray(node) ? node.length : frame.names.length;
    if (frame.next < length) {
      const i = frame.next++;
      const child = Array.isArray(node) ? node[i] : node[frame.names[i]];
      if (typeof child === "object" && child !== null) open(child as Record<string, unknown>);
      continue;
    }
    stack.pop();
    let done: unknown = node;
    if (!Array.isArray(node)) {
      const names = frame.names;
      // No code unit from U+D800 up: `<` orders it as Go does (what `before` needs to know).
      const ascii = names.map((k) => !/[\uD800-\uFFFF]/.test(k));
      const order = names.map((_, i) => i).sort((x, y) =>
        before(names[x], ascii[x], names[y], ascii[y]) ? -1 : names[x] === names[y] ? 0 : 1
      );
      const sorted: Record<string, unknown> = {};
      for (const i of order) setKey(sorted, names[i], node[names[i]]);
      done = sorted;
    }
    if (stack.length === 0) {
      result = done;
      break;
    }
    const parent = stack[stack.length - 1];
    const at = parent.next - 1;
    if (Array.isArray(parent.node)) parent.node[at] = done;
    else setKey(parent.node, parent.names[at], done);
  }
  return result;
}

/** A tagged item (its head's initial byte `x`): 55799 stands for its content; 22 over a byte string is base64. */
function tagged(x: number, depth: number): unknown {
  if (x === 0xd6) {
    // Tag 22: a byte string (the encoding of a Go []byte) as standard base64.
    if (p >= end) throw SLOW;
    const y = b[p];
    if (y < 0x40 || y > 0x5b) throw SLOW;
    p++;
    const ai = y & 31;
    const n = ai < 24 ? ai : argument(ai);
    const at = take(n);
    return base64Std(b, at, at + n);
  }
  if (x === 0xd9 && p + 2 <= end && b[p] === 0xd9 && b[p + 1] === 0xf7) {
    p += 2;
    if (++depth > FAST_DEPTH) throw SLOW;
    return value(depth);
  }
  throw SLOW;
}

/** Major type 7: false, true, null and floats (NaN and infinities: the complete reader refuses them). */
function simple(x: number): unknown {
  switch (x) {
    case 0xf4:
      return false;
    case 0xf5:
      return true;
    case 0xf6:
      return null;
    case 0xf9: {
      if (p + 2 > end) throw SLOW;
      const f = half((b[p] << 8) | b[p + 1]);
      p += 2;
      if (!Number.isFinite(f)) throw SLOW;
      return f;
    }
    case 0xfa: {
      if (p + 4 > end) throw SLOW;
      const f = view.getFloat32(p);
      p += 4;
      if (!Number.isFinite(f)) throw SLOW;
      return f;
    }
    case 0xfb: {
      if (p + 8 > end) throw SLOW;
      const f = view.getFloat64(p);
      p += 8;
      if (!Number.isFinite(f)) throw SLOW;
      return f;
    }
    default:
      throw SLOW;
  }
}
