/**
 * {@linkcode MessageSchema}: what decoding a protobuf message by reflection needs to know of its type (fields by number,
 * their types and JSON names), made from a `.proto` file's descriptor by whatever parsed it. Internal.
 *
 * @module
 */

/** The scalar types of protobuf. */
export type ProtobufScalarType =
  | "double"
  | "float"
  | "int32"
  | "int64"
  | "uint32"
  | "uint64"
  | "sint32"
  | "sint64"
  | "fixed32"
  | "fixed64"
  | "sfixed32"
  | "sfixed64"
  | "bool"
  | "string"
  | "bytes";

/** The type of a field's values (of a map's values, for a map field). */
export type ProtobufValueType =
  | { readonly kind: "scalar"; readonly scalar: ProtobufScalarType }
  | { readonly kind: "enum"; readonly fullName: string; readonly values: ReadonlyMap<number, string> }
  | { readonly kind: "message"; readonly schema: () => MessageSchema };

/** One field of a message type. */
export interface FieldSchema {
  readonly number: number;
  /** The name in the protobuf JSON mapping (lowerCamelCase unless `json_name` says otherwise). */
  readonly jsonName: string;
  readonly type: ProtobufValueType;
  readonly repeated: boolean;
  /** For a map field: its key's scalar type (`type` is then the values'). */
  readonly mapKey?: ProtobufScalarType;
}

/** A message type: its full name (`google.protobuf.Timestamp`) and its fields by number. */
export interface MessageSchema {
  readonly fullName: string;
  readonly fields: ReadonlyMap<number, FieldSchema>;
  /** The schema of another message type by full name, for `google.protobuf.Any`; `undefined` if unknown. */
  readonly lookup?: (fullName: string) => MessageSchema | undefined;
}
