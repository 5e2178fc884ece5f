/**
 * The generated decoders of meta/v1's `ObjectMeta`, `ListMeta` and `Status` as {@linkcode ObjectDecoder}s: what every
 * set of decoders needs whatever group/versions it has (metadata of unknown kinds, ERROR events). Internal.
 *
 * @module
 */
import { decodeTop } from "./generated_runtime.ts";
import { m_ListMeta, m_ObjectMeta, metaV1 } from "./generated/meta_v1.ts";
import type { ObjectDecoder } from "./registry.ts";

// Metadata alone is decoded for the metadata-only mode and unknown kinds: there `managedFields[].fieldsV1` is parsed
// when first read (see setRawJson), since parsing it is most of the cost of a typical object's metadata.

/** `ObjectMeta` (field 1 of top-level objects), embedded JSON parsed on first read from a copy of its bytes. */
export const objectMetaDecoder: ObjectDecoder = (bytes, start, end, target, baseOffset) =>
  decodeTop(m_ObjectMeta, bytes, start, end, target, baseOffset, true);

/** {@linkcode objectMetaDecoder} for bytes that outlive what it decodes: its embedded JSON keeps views of them. */
const keptObjectMetaDecoder: ObjectDecoder = (bytes, start, end, target, baseOffset) =>
  decodeTop(m_ObjectMeta, bytes, start, end, target, baseOffset, true, true);

/**
 * The decoder to use in place of `decode` on bytes that outlive the metadata it decodes (an object's own bytes, or
 * their copy): for {@linkcode objectMetaDecoder}, the same decoding without a copy of each `fieldsV1` (each copy is a
 * buffer of its own, which costs more than the copying); any other decoder as it is.
 */
export function keptBytesDecoder(decode: ObjectDecoder): ObjectDecoder {
  return decode === objectMetaDecoder ? keptObjectMetaDecoder : decode;
}

/** `ListMeta` (field 1 of lists and of `Status`). */
export const listMetaDecoder: ObjectDecoder = (bytes, start, end, target, baseOffset) =>
  decodeTop(m_ListMeta, bytes, start, end, target, baseOffset, true);

/** `v1` `Status`, the object of ERROR events. */
export const statusDecoder: ObjectDecoder = metaV1.kinds.Status;
