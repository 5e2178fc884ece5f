/**
 * `watchwire decode --proto FILE --proto-path DIR`: the user's `.proto` files, parsed at run time by protobufjs (its
 * parser and reflection only: its generated encoders and decoders, which need `new Function`, are never made), to the
 * schemas that decode the messages of any gRPC method in a capture to their JSON mapping.
 *
 * @module
 */
import type {
  FieldSchema,
  MessageSchema,
  ProtobufScalarType,
  ProtobufValueType,
} from "../codec/protobuf/message_schema.ts";
import { messageToJson } from "../codec/protobuf/message_to_json.ts";
import type { GrpcMethodDecoders } from "../watch/capture_item.ts";

/** Reads a file's text; `undefined` if it does not exist. */
export type ReadText = (path: string) => Promise<string | undefined>;

/** The decoders of a gRPC method's request and response messages by its path (`/pkg.Service/Method`), if the files define it. */
export type GrpcDecoders = (path: string) => GrpcMethodDecoders | undefined;

const SCALARS = new Set<string>([
  "double",
  "float",
  "int32",
  "int64",
  "uint32",
  "uint64",
  "sint32",
  "sint64",
  "fixed32",
  "fixed64",
  "sfixed32",
  "sfixed64",
  "bool",
  "string",
  "bytes",
]);

/** protoc's JSON name of a field: underscores dropped, the letter after each upper-cased. */
function jsonNameOf(name: string): string {
  let out = "";
  let upper = false;
  for (const c of name) {
    if (c === "_") upper = true;
    else {
      out += upper ? c.toUpperCase() : c;
      upper = false;
    }
  }
  return out;
}

// The few protobufjs reflection members read here (its own types are those of a CommonJS module).
interface PbField {
  name: string;
  id: number;
  type: string;
  repeated: boolean;
  map?: boolean;
  keyType?: string;
  resolvedType: PbType | PbEnum | null;
  options?: Record<string, unknown>;
}
interface PbType {
  fullName: string;
  fieldsArray: PbField[];
}
interface PbEnum {
  fullName: string;
  values: Record<string, number>;
}
interface PbRoot {
  resolveAll(): PbRoot;
  lookup(path: string): unknown;
  addJSON(json: unknown): PbRoot;
}
interface Protobufjs {
  Root: new () => PbRoot;
  Type: new (...args: never[]) => PbType;
  Enum: new (...args: never[]) => PbEnum;
  Service: new (...args: never[]) => {
    methods: Record<string, { resolvedRequestType: PbType | null; resolvedResponseType: PbType | null }>;
  };
  parse(source: string, root: PbRoot, options: { keepCase: boolean }): { imports?: string[]; weakImports?: string[] };
  common: { get(file: string): { nested: unknown } | null };
}

/**
 * Loads `files` (and what they import, found in `paths`, or among the well-known types protobufjs carries) and returns
 * the request and response decoders of the gRPC methods they define. An import found nowhere is skipped (imports that only carry
 * options, such as `google/api/annotations.proto`, are common); a type it would have defined then fails to resolve.
 * Throws an `Error` that names a file that cannot be read or parsed, or a type that cannot be resolved.
 */
export async function loadProtoFiles(
  files: string[],
  paths: string[],
  readText: ReadText,
): Promise<GrpcDecoders> {
  const pb = ((await import("protobufjs")) as unknown as { default: Protobufjs }).default;
  const root = new pb.Root();
  const loaded = new Set<string>();
  const missing: string[] = [];
  const load = async (file: string, candidates: string[], top = false) => {
    if (loaded.has(file)) return;
    loaded.add(file);
    const common = pb.common.get(file);
    if (common !== null && file.startsWith("google/protobuf/")) {
      root.addJSON(common.nested);
      return;
    }
    // protobufjs ships the rest of Google's own as JSON (google/protobuf/descriptor.proto, which options extend).
    if (file.startsWith("google/protobuf/")) {
      let json;
      try {
        json = await import(`protobufjs/${file.replace(/\.proto$/, ".json")}`, { with: { type: "json" } });
      } catch {
        // Not one of them: looked for in `paths` below.
      }
      if (json !== undefined) {
        root.addJSON((json.default as { nested: unknown }).nested);
        return;
      }
    }
    let text: string | undefined;
    for (const candidate of candidates) {
      text = await readText(candidate);
      if (text !== undefined) break;
    }
    if (text === undefined) {
      // The files named are needed; an import may only carry options (google/api/annotations.proto): a type it would
      // have defined fails to resolve below, by name.
      if (top) throw new Error(`${file}: not found (looked at ${candidates.join(", ")})`);
      missing.push(file);
      return;
    }
    let parsed;
    try {
      parsed = pb.parse(text, root, { keepCase: true });
    } catch (error) {
      throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
    for (const imported of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
      await load(imported, paths.map((dir) => `${dir.replace(/\/$/, "")}/${imported}`));
    }
  };
  for (const file of files) await load(file, [file, ...paths.map((dir) => `${dir.replace(/\/$/, "")}/${file}`)], true);
  try {
    root.resolveAll();
  } catch (error) {
    const imports = missing.length > 0 ? ` (imports not found: ${missing.join(", ")})` : "";
    throw new Error(`${error instanceof Error ? error.message : String(error)}${imports}`);
  }

  const schemas = new Map<string, MessageSchema>();
  const lookup = (fullName: string): MessageSchema | undefined => {
    const found = root.lookup(fullName);
    return found instanceof pb.Type ? schemaOf(found as PbType) : undefined;
  };
  const valueType = (f: PbField): ProtobufValueType => {
    if (SCALARS.has(f.type)) return { kind: "scalar", scalar: f.type as ProtobufScalarType };
    const resolved = f.resolvedType;
    if (resolved instanceof pb.Enum) {
      const values = new Map<number, string>();
      for (const [name, n] of Object.entries((resolved as PbEnum).values)) if (!values.has(n)) values.set(n, name);
      return { kind: "enum", fullName: (resolved as PbEnum).fullName, values };
    }
    const type = resolved as PbType;
    return { kind: "message", schema: () => schemaOf(type) };
  };
  const schemaOf = (type: PbType): MessageSchema => {
    const known = schemas.get(type.fullName);
    if (known !== undefined) return known;
    const fields = new Map<number, FieldSchema>();
    // Registered before its fields are made: a type may hold itself.
    const schema: MessageSchema = { fullName: type.fullName.replace(/^\./, ""), fields, lookup };
    schemas.set(type.fullName, schema);
    for (const f of type.fieldsArray) {
      const jsonName = typeof f.options?.json_name === "string" ? f.options.json_name : jsonNameOf(f.name);
      fields.set(f.id, {
        number: f.id,
        jsonName,
        type: valueType(f),
        repeated: f.repeated,
        ...(f.map ? { mapKey: f.keyType as ProtobufScalarType } : {}),
      });
    }
    return schema;
  };

  return (path) => {
    const match = /^\/([^/]+)\/([^/]+)$/.exec(path);
    if (match === null) return undefined;
    const service = root.lookup(match[1]);
    if (!(service instanceof pb.Service)) return undefined;
    const method = (service as InstanceType<Protobufjs["Service"]>).methods[match[2]];
    if (method === undefined) return undefined;
    const decoderOf = (type: PbType | null) => {
      if (type == null) return undefined;
      const schema = schemaOf(type);
      return (message: Uint8Array, offset: number) => messageToJson(message, schema, offset);
    };
    return { request: decoderOf(method.resolvedRequestType), response: decoderOf(method.resolvedResponseType) };
  };
}
