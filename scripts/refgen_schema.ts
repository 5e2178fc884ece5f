/**
 * The shape of `tools/refgen/schema.json` (written by tools/refgen/cmd/schema from the Go types), which the
 * generators of the decoders (gen-kubernetes.ts) and of the types (gen-kinds.ts) read.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** A field's type. */
export interface Type {
  kind: string;
  ref?: string;
  elem?: Type;
  key?: Type;
  pointer?: boolean;
  wire?: string;
}
/** A struct field: its Go and JSON names, JSON options and protobuf number. */
export interface Field {
  go: string;
  json: string;
  omitempty?: boolean;
  omitzero?: boolean;
  inline?: boolean;
  number: number;
  repeated?: boolean;
  type: Type;
}
/** A Go struct (a protobuf message). */
export interface Message {
  go: string;
  fields: Field[];
}
/** A kind: its apiVersion and the Go type that holds it. */
export interface KindEntry {
  apiVersion: string;
  kind: string;
  type: string;
}
/** `tools/refgen/schema.json`. */
export interface Schema {
  generator: string;
  modules: Record<string, string>;
  kinds: KindEntry[];
  specials: string[];
  messages: Record<string, Message>;
}

/** The schema's default path. */
export const SCHEMA_PATH = join(fileURLToPath(new URL("..", import.meta.url)), "tools/refgen/schema.json");

/** Reads the schema (default `tools/refgen/schema.json`). */
export function readSchema(path = SCHEMA_PATH): Schema {
  return JSON.parse(readFileSync(path, "utf8")) as Schema;
}
