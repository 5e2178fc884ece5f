/**
 * {@linkcode messageToJson}: a protobuf message to the value its type's canonical JSON mapping gives, by reflection over
 * a {@linkcode MessageSchema} (no generated code, nothing evaluated). Internal.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { FieldSchema, MessageSchema, ProtobufScalarType, ProtobufValueType } from "./message_schema.ts";
import { ProtobufReader, ProtobufWireType } from "./reader.ts";
import { base64Std } from "../kubernetes/runtime/base64.ts";

/** The deepest nesting of messages decoded, against a stack overflow on hostile input. */
const MAX_DEPTH = 100;

/** The wire type a single value of `scalar` comes as. */
function wireTypeOf(scalar: ProtobufScalarType): number {
  switch (scalar) {
    case "double":
    case "fixed64":
    case "sfixed64":
      return ProtobufWireType.I64;
    case "float":
    case "fixed32":
    case "sfixed32":
      return ProtobufWireType.I32;
    case "string":
    case "bytes":
      return ProtobufWireType.LEN;
    default:
      return ProtobufWireType.VARINT;
  }
}

/** A float as the JSON mapping writes it: a number, or `"NaN"`, `"Infinity"`, `"-Infinity"`. */
const floatJson = (x: number): number | string =>
  Number.isFinite(x) ? x : Number.isNaN(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity";

function readScalar(r: ProtobufReader, scalar: ProtobufScalarType): unknown {
  switch (scalar) {
    case "double":
      return floatJson(r.double());
    case "float":
      return floatJson(r.float());
    case "int32":
      return r.int32();
    case "uint32":
      return r.uint32();
    case "sint32":
      return r.sint32();
    case "fixed32":
      return r.fixed32();
    case "sfixed32":
      return r.sfixed32();
    // 64-bit integers are strings in the JSON mapping: exact, from bigints.
    case "int64":
      return r.int64BigInt().toString();
    case "uint64":
      return r.uint64BigInt().toString();
    case "sint64": {
      const n = r.uint64BigInt();
      return ((n >> 1n) ^ -(n & 1n)).toString();
    }
    case "fixed64": {
      const lo = BigInt(r.fixed32());
      return ((BigInt(r.fixed32()) << 32n) | lo).toString();
    }
    case "sfixed64": {
      const lo = BigInt(r.fixed32());
      return BigInt.asIntN(64, (BigInt(r.fixed32()) << 32n) | lo).toString();
    }
    case "bool":
      return r.bool();
    case "string":
      return r.string();
    case "bytes": {
      const bytes = r.bytes();
      return base64Std(bytes, 0, bytes.length);
    }
  }
}

/** One value of `type` at `r` (its tag just read). */
function readValue(r: ProtobufReader, type: ProtobufValueType, depth: number): unknown {
  switch (type.kind) {
    case "scalar":
      return readScalar(r, type.scalar);
    case "enum": {
      const n = r.int32();
      return type.values.get(n) ?? n;
    }
    case "message":
      return decode(r.message(), type.schema(), depth + 1);
  }
}

/** A map entry's key as a JSON object key. */
function mapKey(r: ProtobufReader, scalar: ProtobufScalarType): string {
  return String(readScalar(r, scalar));
}

function decode(r: ProtobufReader, schema: MessageSchema, depth: number): unknown {
  if (depth > MAX_DEPTH) throw r.error(r.pos, `messages nested more than ${MAX_DEPTH} deep`);
  const out: Record<string, unknown> = {};
  while (!r.done) {
    const at = r.pos;
    const tag = r.tag();
    const field = schema.fields.get(tag >>> 3);
    if (field === undefined) {
      r.skip(tag);
      continue;
    }
    readField(r, tag, at, field, out, depth);
  }
  return wellKnown(schema, out, depth);
}

function readField(
  r: ProtobufReader,
  tag: number,
  at: number,
  field: FieldSchema,
  out: Record<string, unknown>,
  depth: number,
): void {
  const wire = tag & 7;
  const { type } = field;
  if (field.mapKey !== undefined) {
    if (wire !== ProtobufWireType.LEN) throw r.error(at, `wrong wire type ${wire} for map field ${field.jsonName}`);
    const entry = r.message();
    let key = field.mapKey === "bool" ? "false" : field.mapKey === "string" ? "" : "0";
    let value: unknown = type.kind === "message" ? wellKnown(type.schema(), {}, depth) : undefined;
    while (!entry.done) {
      const t = entry.tag();
      if (t >>> 3 === 1) key = mapKey(entry, field.mapKey);
      else if (t >>> 3 === 2) value = readValue(entry, type, depth);
      else entry.skip(t);
    }
    const map = (out[field.jsonName] ??= {}) as Record<string, unknown>;
    map[key] = value ?? defaultOf(type);
    return;
  }
  const expected = type.kind === "scalar"
    ? wireTypeOf(type.scalar)
    : type.kind === "enum"
    ? ProtobufWireType.VARINT
    : ProtobufWireType.LEN;
  if (field.repeated && wire === ProtobufWireType.LEN && expected !== ProtobufWireType.LEN) {
    // Packed.
    const packed = r.message();
    const list = (out[field.jsonName] ??= []) as unknown[];
    while (!packed.done) list.push(readValue(packed, type, depth));
    return;
  }
  if (wire !== expected) throw r.error(at, `wrong wire type ${wire} for field ${field.jsonName}`);
  const value = readValue(r, type, depth);
  if (field.repeated) ((out[field.jsonName] ??= []) as unknown[]).push(value);
  else out[field.jsonName] = value;
}

/** A map value absent from its entry: the type's zero value. */
function defaultOf(type: ProtobufValueType): unknown {
  if (type.kind === "enum") return type.values.get(0) ?? 0;
  if (type.kind === "message") return {};
  switch (type.scalar) {
    case "bool":
      return false;
    case "string":
    case "bytes":
      return "";
    case "int64":
    case "uint64":
    case "sint64":
    case "fixed64":
    case "sfixed64":
      return "0";
    default:
      return 0;
  }
}

const WRAPPERS = new Set(
  ["Double", "Float", "Int64", "UInt64", "Int32", "UInt32", "Bool", "String", "Bytes"].map((t) =>
    `google.protobuf.${t}Value`
  ),
);

/** The JSON mapping's special forms of the well-known types, from their fields decoded as any message's. */
function wellKnown(schema: MessageSchema, fields: Record<string, unknown>, depth: number): unknown {
  const name = schema.fullName;
  if (!name.startsWith("google.protobuf.")) return fields;
  if (WRAPPERS.has(name)) return fields.value ?? defaultOf(schema.fields.get(1)!.type);
  switch (name) {
    case "google.protobuf.Timestamp": {
      const seconds = Number(fields.seconds ?? 0);
      const nanos = Number(fields.nanos ?? 0);
      const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
      return `${iso}${fraction(nanos)}Z`;
    }
    case "google.protobuf.Duration": {
      const seconds = BigInt(String(fields.seconds ?? "0"));
      const nanos = Number(fields.nanos ?? 0);
      const negative = seconds < 0n || nanos < 0;
      const whole = seconds < 0n ? -seconds : seconds;
      return `${negative ? "-" : ""}${whole}${fraction(Math.abs(nanos))}s`;
    }
    case "google.protobuf.FieldMask":
      return ((fields.paths ?? []) as string[]).map((p) => p.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()))
        .join(",");
    case "google.protobuf.Struct":
      return fields.fields ?? {};
    case "google.protobuf.ListValue":
      return fields.values ?? [];
    case "google.protobuf.Value": {
      if ("nullValue" in fields) return null;
      for (const k of ["numberValue", "stringValue", "boolValue", "structValue", "listValue"]) {
        if (k in fields) return fields[k];
      }
      return null;
    }
    case "google.protobuf.Any": {
      const url = String(fields.typeUrl ?? "");
      const target = schema.lookup?.(url.slice(url.lastIndexOf("/") + 1));
      if (target === undefined || typeof fields.value !== "string") return { "@type": url, value: fields.value ?? "" };
      const bytes = Uint8Array.from(atob(fields.value), (c) => c.charCodeAt(0));
      const value = decode(new ProtobufReader(bytes), target, depth + 1);
      // A well-known type's special JSON form goes under "value"; a message's fields beside "@type".
      return typeof value === "object" && value !== null && !Array.isArray(value) &&
          !target.fullName.startsWith("google.protobuf.")
        ? { "@type": url, ...value }
        : { "@type": url, value };
    }
    default:
      return fields;
  }
}

/** Nanoseconds as the JSON mapping's fraction: none, or 3, 6 or 9 digits. */
function fraction(nanos: number): string {
  if (nanos === 0) return "";
  const digits = String(nanos).padStart(9, "0");
  return "." + (digits.endsWith("000000") ? digits.slice(0, 3) : digits.endsWith("000") ? digits.slice(0, 6) : digits);
}

/**
 * The protobuf JSON mapping's value of the message `bytes` of type `schema`: fields by their JSON names (those on the
 * wire; unknown fields skipped), 64-bit integers as strings, bytes as base64, enums by name (their number if unknown),
 * the well-known types in their special forms (Timestamp, Duration, wrappers, Struct, Value, ListValue, FieldMask,
 * Any when its type is known). A malformed message is a `DecodeError` (`MESSAGE_INVALID`) at `baseOffset` + its place.
 */
export function messageToJson(bytes: Uint8Array, schema: MessageSchema, baseOffset = 0): unknown {
  try {
    return decode(new ProtobufReader(bytes, baseOffset), schema, 0);
  } catch (error) {
    if (error instanceof DecodeError) throw error;
    if (error instanceof RangeError) throw new DecodeError("MESSAGE_INVALID", baseOffset, error.message);
    throw error;
  }
}
