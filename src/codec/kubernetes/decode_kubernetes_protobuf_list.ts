/**
 * {@linkcode decodeKubernetesProtobufList}: a List in its protobuf serialization to its metadata and items, whether
 * the decoders know its kind or not. Internal: what `list()` reads its pages with.
 *
 * @module
 */
import { ProtobufCursor } from "../protobuf/cursor.ts";
import { parseKubernetesEnvelope } from "./envelope.ts";
import { KubernetesObjectReader } from "./object_reader.ts";
import type { KubernetesProtobufOptions } from "./protobuf_options.ts";
import { listMetaDecoder } from "./meta_decoders.ts";
import type { JsonObject } from "./registry.ts";

const encoder = new TextEncoder();

/** `value` as a protobuf varint. */
function varint(value: number): number[] {
  const out: number[] = [];
  for (; value >= 0x80; value = Math.floor(value / 0x80)) out.push((value % 0x80) | 0x80);
  out.push(value);
  return out;
}

/** Field `number` (wire type LEN) holding `value`. */
const field = (number: number, value: ArrayLike<number>): number[] => [
  (number << 3) | 2,
  ...varint(value.length),
  ...Array.from(value),
];

/**
 * Decodes a List (`k8s\0` + `runtime.Unknown` whose `raw` is a `...List` message: a list request's answer). A List
 * whose kind the decoders know decodes in full, its items whole, whatever `options.mode` says (as
 * `decodeKubernetesProtobufObject` would in `"full"` mode). One whose kind they do not know (`PodList` with the
 * default decoders, which know only `Status`) is read by the shape every List has: `metadata` (field 1, a
 * `ListMeta`) and `items` (field 2, each a message of the List's kind without `List`). Each item then decodes as the
 * object of a watch event of that kind would, in `options.mode`: a `KubernetesProtobufObject` (its metadata, and a
 * copy of its bytes) where its kind is not known too, or in metadata mode. Any other object decodes as
 * `decodeKubernetesProtobufObject` decodes it. Errors are `DecodeError`s at `baseOffset` + their position in `bytes`.
 */
export function decodeKubernetesProtobufList(
  bytes: Uint8Array,
  options: KubernetesProtobufOptions = {},
  baseOffset = 0,
): JsonObject {
  const whole = new KubernetesObjectReader({ ...options, mode: "full" });
  const { kind, apiVersion, rawStart, rawEnd, contentType } = parseKubernetesEnvelope(bytes, baseOffset);
  if (contentType !== "" || !kind.endsWith("List") || whole.decoderOf(apiVersion, kind) !== undefined) {
    return whole.read(bytes, 0, bytes.length, baseOffset, false, "borrowed");
  }
  const reader = options.mode === "metadata" ? new KubernetesObjectReader(options) : whole;
  // Each item is wrapped in the envelope a watch event's object of its kind has: k8s\0, typeMeta, raw.
  const typeMeta = [
    ...field(1, encoder.encode(apiVersion)),
    ...field(2, encoder.encode(kind.slice(0, -"List".length))),
  ];
  const head = [0x6b, 0x38, 0x73, 0, ...field(1, typeMeta)];
  const list: JsonObject = { kind, apiVersion, metadata: {}, items: [] };
  const items = list.items as JsonObject[];
  const c = new ProtobufCursor(bytes, rawStart, baseOffset);
  while (c.pos < rawEnd) {
    const at = c.pos;
    const tag = c.tag(rawEnd);
    const number = tag >>> 3;
    if (number !== 1 && number !== 2) {
      c.skip(tag, rawEnd);
      continue;
    }
    if ((tag & 7) !== 2) throw c.fail(at, `wrong wire type ${tag & 7} for ${number === 1 ? "metadata" : "items"}`);
    const end = c.len(rawEnd);
    const start = c.pos;
    c.pos = end;
    if (number === 1) {
      list.metadata = listMetaDecoder(bytes, start, end, list.metadata as JsonObject, baseOffset);
      continue;
    }
    const prefix = [...head, 0x12, ...varint(end - start)]; // raw (field 2) of the Unknown
    const envelope = new Uint8Array(prefix.length + end - start);
    envelope.set(prefix);
    envelope.set(bytes.subarray(start, end), prefix.length);
    // The envelope is the item's own: it keeps a view of it. Offsets in its bytes are those of `bytes`.
    items.push(reader.read(envelope, 0, envelope.length, baseOffset + start - prefix.length, false, "handed-over"));
  }
  return list;
}
