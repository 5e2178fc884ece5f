/**
 * The generated decoders of meta/v1's `ObjectMeta`, `ListMeta` and `Status` as {@linkcode ObjectDecoder}s: what every
 * set of decoders needs whatever group/versions it has (metadata of unknown kinds, ERROR events). Internal.
 *
 * @module
 */
import { decodeTop } from "./wire.ts";
import { m_ListMeta, m_ObjectMeta, metaV1 } from "./generated/meta_v1.ts";
import type { ObjectDecoder } from "./registry.ts";

// Metadata alone is decoded for the metadata-only mode and unknown kinds: there `managedFields[].fieldsV1` is parsed
// when first read (see setRawJson), since parsing it is most of the cost of a typical object's metadata.

/** `ObjectMeta` (field 1 of top-level objects), embedded JSON parsed on first read. */
export const objectMetaDecoder: ObjectDecoder = (bytes, start, end, target, baseOffset) =>
  decodeTop(m_ObjectMeta, bytes, start, end, target, baseOffset, true);

/** `ListMeta` (field 1 of lists and of `Status`). */
export const listMetaDecoder: ObjectDecoder = (bytes, start, end, target, baseOffset) =>
  decodeTop(m_ListMeta, bytes, start, end, target, baseOffset, true);

/** `v1` `Status`, the object of ERROR events. */
export const statusDecoder: ObjectDecoder = metaV1.kinds.Status;
