/**
 * {@linkcode lazyObjectMeta}: an ObjectMeta whose scalars are decoded now and whose collections (`labels`,
 * `annotations`, `ownerReferences`, `finalizers`, `managedFields`) are decoded when first read: metadata mode's
 * `metadata`. Internal.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { ObjectMeta } from "../../events.ts";
import { ProtobufCursor } from "../protobuf/cursor.ts";
import type { ObjectDecoder } from "./registry.ts";
import { keptBytesDecoder } from "./meta_decoders.ts";
import { lazyDescriptor, type LazyValues, privateSlot } from "./runtime/lazy_property.ts";
import { emptyList } from "../value_constructors.ts";

/**
 * ObjectMeta's collections, by field number (`labels` 11, `annotations` 12, `ownerReferences` 13, `finalizers` 14,
 * `managedFields` 17): most of a typical metadata's bytes (managedFields above all), and what the metadata-only mode
 * leaves to first access. Its scalars (fields 1-10) come before them.
 */
const LAZY_OBJECT_META: Readonly<Record<number, string>> = {
  11: "labels",
  12: "annotations",
  13: "ownerReferences",
  14: "finalizers",
  17: "managedFields",
};

/**
 * What a lazily decoded ObjectMeta needs to decode its collections: the bytes, and [field, start, end] triples; and
 * their values read or assigned so far (the `i`-th for the `i`-th of {@linkcode LAZY_OBJECT_META}).
 */
interface LazyCollections extends LazyValues {
  raw: Uint8Array;
  baseOffset: number;
  decode: ObjectDecoder;
  ranges: number[];
}

/** A {@linkcode LazyCollections} made by a constructor: a literal would have an allocation site V8 may pretenure. */
class LazyCollectionsState implements LazyCollections {
  known = 0;
  values: unknown[] | undefined = undefined;
  constructor(
    readonly raw: Uint8Array,
    readonly baseOffset: number,
    readonly decode: ObjectDecoder,
    readonly ranges: number[],
  ) {}
}

/** A lazy ObjectMeta's {@linkcode LazyCollections}, on the metadata object itself. */
const lazyCollections = privateSlot<LazyCollections>();

/** Collection `name` (field number `field`) of a lazy ObjectMeta. */
function decodeCollection(lazy: LazyCollections, field: number, name: string): unknown {
  const { ranges } = lazy;
  let k = 0;
  while (ranges[k] !== field) k += 3;
  try {
    return lazy.decode(lazy.raw, ranges[k + 1], ranges[k + 2], {}, lazy.baseOffset)[name];
  } catch (error) {
    // Go reads a map entry's key and value up to the end of the ObjectMeta, not of the entry: one that runs past
    // the collection here may still be read there. The collections run to the ObjectMeta's end (nothing else may
    // follow them, or it is decoded at once), so decoding all of them gives Go's value, or its error.
    if (!(error instanceof DecodeError)) throw error;
    return lazy.decode(lazy.raw, ranges[1], ranges[ranges.length - 1], {}, lazy.baseOffset)[name];
  }
}

// The accessor pair of each collection, shared by all objects.
const LAZY_DESCRIPTORS: Readonly<Record<number, PropertyDescriptor>> = Object.fromEntries(
  Object.entries(LAZY_OBJECT_META).map(([key, name], i) => [
    key,
    lazyDescriptor(lazyCollections, name, i, (lazy) => decodeCollection(lazy, Number(key), name)),
  ]),
);

/**
 * An ObjectMeta message `raw[start..end)` with its scalars decoded now and its collections when first read: each an
 * own enumerable accessor (in Go's field order) that keeps its value once read, so that the object still compares,
 * copies and serializes as the fully decoded one. This needs the message in Go's order (ascending field numbers, the
 * collections after the scalars); otherwise everything is decoded now. `raw` must outlive the metadata (the object's
 * own bytes, or a copy): the collections, and the `fieldsV1` of their `managedFields`, are read from it later.
 */
export function lazyObjectMeta(
  raw: Uint8Array,
  start: number,
  end: number,
  baseOffset: number,
  decode: ObjectDecoder,
): ObjectMeta {
  decode = keptBytesDecoder(decode);
  const c = new ProtobufCursor(raw, start, baseOffset);
  // The collections present: [field number, start of its first occurrence, end of its last] each.
  const ranges = emptyList<number>();
  let last = 0;
  while (c.pos < end) {
    const at = c.pos;
    const tag = c.tag(end);
    const field = tag >>> 3;
    c.skip(tag, end);
    const collection = field === 11 || field === 12 || field === 13 || field === 14 || field === 17;
    if (field < last || (ranges.length > 0 && !collection)) {
      return decode(raw, start, end, {}, baseOffset) as ObjectMeta; // not in Go's order
    }
    if (field !== last && collection) ranges.push(field, at, c.pos);
    else if (ranges.length > 0) ranges[ranges.length - 1] = c.pos;
    last = field;
  }
  const metadata = decode(raw, start, ranges.length === 0 ? end : ranges[1], {}, baseOffset);
  if (ranges.length === 0) return metadata as ObjectMeta;
  lazyCollections.attach(metadata, new LazyCollectionsState(raw, baseOffset, decode, ranges));
  for (let k = 0; k < ranges.length; k += 3) {
    Object.defineProperty(metadata, LAZY_OBJECT_META[ranges[k]], LAZY_DESCRIPTORS[ranges[k]]);
  }
  return metadata as ObjectMeta;
}
