/**
 * {@linkcode parseRepeatedJson}: `JSON.parse` of embedded JSON bytes (a managedFields entry's `FieldsV1`), built
 * again from a recorded shape when the same bytes were parsed before. Internal.
 *
 * Why: `FieldsV1` is a tree of objects (`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`) whose bytes repeat from
 * event to event and from object to object: every update of a Node by its kubelet carries the same status fields,
 * every Pod of a Deployment the same spec fields. Parsing it is most of the cost of a `metadata`, and parsing many
 * small texts is slow, slower than making the same objects from their recorded keys. So bytes seen before give a new
 * tree of new objects made from their recorded keys, with no decoding and no parsing.
 * Kept: the headline full-mode decode rows (bench/RESULTS.md §11, "What each optimisation mechanism buys").
 *
 * Exactly `JSON.parse`'s result: a shape is recorded from what `JSON.parse` returned (keys in the order
 * `Object.keys` lists them, which assignment in the same order reproduces, integer-like keys included), only for trees
 * of plain objects (each value an object; no arrays or other values, no `__proto__` key, which assignment would not
 * make an own property), and only on the second sighting of the bytes, so that bytes that never repeat cost a copy
 * into a buffer kept for it, not a walk of the tree. Every call returns objects of its own: the caller may change
 * them.
 *
 * Bounds: 256 slots, direct-mapped on a hash of the length and a few bytes, each with a recorded text and one seen
 * once; texts of 16 bytes to 4 KiB (so at most 2 MiB of copies, 128 KiB for texts up to 256 bytes) and trees up to 64
 * deep. Bytes that are not JSON are never recorded: they throw at each call.
 *
 * @module
 */

const SLOT_BITS = 8;
const MIN_BYTES = 16;
const MAX_BYTES = 4096;
const MAX_DEPTH = 64;

import { sameBytes } from "./same_bytes.ts";

/** A tree of objects in preorder: each object's key count, and all keys in order (a key, then its value's object). */
interface Shape {
  counts: Uint32Array;
  keys: string[];
}

/** Recorded bytes that do not make a tree of objects: they are parsed every time. */
const NOT_A_TREE: Shape = { counts: new Uint32Array(0), keys: [] };

/** Bumped by {@linkcode forgetRepeatedJson}: an entry of an earlier generation holds nothing. */
let generation = 0;

/** A text's bytes (a copy in a buffer the entry keeps and reuses) and, once it is the recorded one, its shape. */
class Entry {
  words: Uint32Array;
  bytes: Uint8Array;
  length = 0;
  generation = generation;
  shape: Shape | undefined = undefined;

  constructor(length: number) {
    this.words = new Uint32Array(capacityFor(length) >>> 2);
    this.bytes = new Uint8Array(this.words.buffer);
  }

  /** Whether the entry holds `b[start:start+length]`; compared four bytes at a time. */
  holds(b: Uint8Array, start: number, length: number): boolean {
    if (this.length !== length || this.generation !== generation) return false;
    return sameBytes(this.bytes, this.words, 0, b, start, length, new DataView(b.buffer, b.byteOffset, b.byteLength));
  }

  /** Copies `b[start:start+length]` in (into a larger buffer if the entry's is too small). */
  take(b: Uint8Array, start: number, length: number): void {
    if (length > this.bytes.length) {
      this.words = new Uint32Array(capacityFor(length) >>> 2);
      this.bytes = new Uint8Array(this.words.buffer);
    }
    this.bytes.set(b.subarray(start, start + length));
    this.length = length;
    this.generation = generation;
  }
}

/** A buffer size for `length` bytes: a power of two from 256 to MAX_BYTES. */
const capacityFor = (length: number) => Math.max(256, 2 ** Math.ceil(Math.log2(length)));

// Each slot has a recorded text (seen twice, with its shape) and a candidate (the last other text seen there once).
// A candidate seen again takes the recorded text's place: a text seen once costs a copy into a buffer the slot
// already has, and does not evict the recorded one.
const recorded: (Entry | undefined)[] = new Array<Entry | undefined>(1 << SLOT_BITS).fill(undefined);
const candidates: (Entry | undefined)[] = new Array<Entry | undefined>(1 << SLOT_BITS).fill(undefined);

/**
 * `JSON.parse(decoder.decode(bytes.subarray(start, end)))`, made from a recorded shape when the same bytes were seen
 * before (see the module's comment). Throws what `JSON.parse` throws for bytes that are not JSON.
 *
 * @param bytes The buffer holding the JSON (not retained: recorded bytes are a copy).
 * @param start Offset of the first byte.
 * @param end Offset after the last byte.
 * @param decoder The decoder that turns the bytes into text (its result for given bytes must not change).
 */
export function parseRepeatedJson(bytes: Uint8Array, start: number, end: number, decoder: TextDecoder): unknown {
  const length = end - start;
  if (length < MIN_BYTES || length > MAX_BYTES) return parse(bytes, start, end, decoder);
  const slot = slotOf(bytes, start, length);
  const r = recorded[slot];
  if (r !== undefined && r.holds(bytes, start, length)) {
    return r.shape === NOT_A_TREE ? parse(bytes, start, end, decoder) : build(r.shape!);
  }
  const value = parse(bytes, start, end, decoder);
  // Parsed (bytes that are not JSON have thrown and left no trace).
  let c = candidates[slot];
  if (c !== undefined && c.holds(bytes, start, length)) {
    c.shape = shapeOf(value) ?? NOT_A_TREE;
    recorded[slot] = c;
    candidates[slot] = r; // the text it replaces stays, as the one seen once
  } else {
    if (c === undefined) candidates[slot] = c = new Entry(length);
    c.take(bytes, start, length);
  }
  return value;
}

/** `JSON.parse` of `bytes[start:end)` as `decoder` decodes it. */
function parse(bytes: Uint8Array, start: number, end: number, decoder: TextDecoder): unknown {
  return JSON.parse(decoder.decode(bytes.subarray(start, end)));
}

/**
 * Forgets every recorded text and shape, so that the next call for any bytes is their first sighting (the buffers
 * stay, to be reused). For measuring what bytes that never repeat cost (the benchmark) and for tests; decoding never
 * needs it.
 */
export function forgetRepeatedJson(): void {
  generation++;
}

/**
 * A slot for `length` (>= MIN_BYTES) bytes at `start`: a hash of the length and bytes spread over them. Not the string
 * tables' hash (go_string.ts), which reads the first and last bytes: a JSON object's are always `{` and `}`.
 */
function slotOf(b: Uint8Array, start: number, length: number): number {
  let hash = Math.imul(length ^ b[start + (length >>> 1)], 0x01000193);
  hash = Math.imul(hash ^ b[start + length - 3], 0x01000193);
  hash = Math.imul(hash ^ b[start + (length >>> 2)], 0x01000193);
  hash = Math.imul(hash ^ b[start + ((length * 3) >>> 2)], 0x01000193);
  hash = Math.imul(hash ^ b[start + ((length * 7) >>> 3)], 0x01000193);
  hash = Math.imul(hash ^ b[start + 5], 0x01000193);
  return (hash ^ (hash >>> 15)) & ((1 << SLOT_BITS) - 1);
}

/** The shape of `value` if it is a tree of plain objects no deeper than MAX_DEPTH with no `__proto__` key. */
function shapeOf(value: unknown): Shape | undefined {
  const counts: number[] = [];
  const keys: string[] = [];
  const walk = (v: unknown, depth: number): boolean => {
    if (v === null || typeof v !== "object" || Array.isArray(v) || depth > MAX_DEPTH) return false;
    const own = Object.keys(v);
    counts.push(own.length);
    for (const key of own) {
      if (key === "__proto__") return false;
      keys.push(key);
      if (!walk((v as Record<string, unknown>)[key], depth + 1)) return false;
    }
    return true;
  };
  return walk(value, 1) ? { counts: Uint32Array.from(counts), keys } : undefined;
}

// Where build is in the shape being built (the build is synchronous and never re-entered).
let nextCount = 0;
let nextKey = 0;

/** A new tree of new objects with `shape`'s keys. */
function build(shape: Shape): Record<string, unknown> {
  nextCount = 0;
  nextKey = 0;
  return buildObject(shape.counts, shape.keys);
}

function buildObject(counts: Uint32Array, keys: string[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  const n = counts[nextCount++];
  for (let i = 0; i < n; i++) {
    const key = keys[nextKey++];
    o[key] = buildObject(counts, keys);
  }
  return o;
}
