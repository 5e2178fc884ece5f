/**
 * Generates the TypeScript types of every built-in Kubernetes kind (`src/kinds/`, in the `watchwire/kubernetes` entry point)
 * from the schema that `tools/refgen/cmd/schema` extracts from the Go types (`tools/refgen/schema.json`), one module
 * per Go package as for the decoders (`core_v1`, `apps_v1`, `meta_v1`, ...), and the typed fixture module
 * `tests/_kinds_fixtures.ts`: real objects of every kind (the refgen fixtures' JSON watch streams), each checked by the
 * TypeScript compiler against its kind's type.
 *
 * The types say what Go's `encoding/json` writes for a value of the Go type (what the API server and the protobuf
 * decoders give): a field is optional only where Go can leave it out (`omitempty` on a string, number, bool, slice,
 * map or pointer; `omitzero`), and `null` where Go can write null (a nil slice, map, `[]byte` or pointer without
 * `omitempty`, a zero `metav1.Time`/`MicroTime`, a nil `FieldsV1`). A struct field is always written, `omitempty` or
 * not, so it is required.
 *
 * Usage: node --import tsx scripts/gen-kinds.ts [--check] [--schema FILE]
 *   --check: generate into a scratch folder and fail if anything differs from the committed files.
 *   --schema FILE: read the schema from FILE (default tools/refgen/schema.json).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { type Field, type KindEntry, type Message, readSchema, type Schema, type Type } from "./refgen_schema.ts";

export type { Schema } from "./refgen_schema.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
/** Where the kind modules go. */
export const KINDS_DIR = join(root, "src/kinds");
/** The typed fixture module. */
export const FIXTURES_MODULE = join(root, "tests/_kinds_fixtures.ts");
/** The refgen fixtures the typed fixture module is made of. */
export const STREAMS_DIR = join(root, "fixtures/kubernetes/streams");
/** The events of each kind's JSON watch stream the fixture module holds (DELETED is ADDED's object again; ERROR a Status). */
export const FIXTURE_EVENTS = ["ADDED", "MODIFIED", "BOOKMARK"] as const;

export { readSchema };

const META = "k8s.io/apimachinery/pkg/apis/meta/v1";

/**
 * The names `watchwire` (mod.ts) declares for every object (`ObjectMeta`, `ListMeta`, `Status`, ...: src/events.ts):
 * not exported flat by the index, so that each name has one meaning across the entry points; the generated types of
 * those names stay in their namespace (`meta_v1.ObjectMeta`).
 */
export function mainEntryNames(): Set<string> {
  const events = readFileSync(join(root, "src/events.ts"), "utf8");
  return new Set([...events.matchAll(/^export (?:interface|type|const|function|class) (\w+)/gm)].map((m) => m[1]));
}
const TYPE_META = `${META}.TypeMeta`;

/**
 * Types whose JSON is written by a MarshalJSON of their own, as TypeScript: the module they live in, their type, and
 * whether a value of theirs can be written as `null` (Time and MicroTime when zero, FieldsV1 when empty; RawExtension
 * is `unknown`, null included).
 */
const SPECIAL: Record<string, { mod: string; name: string; type: string; nullable: boolean; doc: string }> = {
  [`${META}.Time`]: {
    mod: "meta_v1",
    name: "Time",
    type: "string",
    nullable: true,
    doc: "`metav1.Time`: RFC 3339 in UTC, to the second (`2026-11-20T07:30:00Z`); a zero Time is written `null`.",
  },
  [`${META}.MicroTime`]: {
    mod: "meta_v1",
    name: "MicroTime",
    type: "string",
    nullable: true,
    doc:
      "`metav1.MicroTime`: RFC 3339 in UTC with microseconds (`2026-11-20T07:30:00.000000Z`); a zero MicroTime is written `null`.",
  },
  [`${META}.Duration`]: {
    mod: "meta_v1",
    name: "Duration",
    type: "string",
    nullable: false,
    doc: "`metav1.Duration`: Go's `time.Duration` string (`1m30s`).",
  },
  [`${META}.FieldsV1`]: {
    mod: "meta_v1",
    name: "FieldsV1",
    type: "FieldsV1",
    nullable: true,
    doc:
      '`metav1.FieldsV1`: a set of field paths as nested objects (`{ "f:spec": { "f:replicas": {} } }`); an empty one is written `null`.',
  },
  "k8s.io/apimachinery/pkg/api/resource.Quantity": {
    mod: "apimachinery",
    name: "Quantity",
    type: "string",
    nullable: false,
    doc: '`resource.Quantity`, in its canonical form (`"500m"`, `"128Mi"`, `"0"`).',
  },
  "k8s.io/apimachinery/pkg/util/intstr.IntOrString": {
    mod: "apimachinery",
    name: "IntOrString",
    type: "number | string",
    nullable: false,
    doc: '`intstr.IntOrString`: a number or a string (`8080` or `"http"`, `"25%"`).',
  },
  "k8s.io/apimachinery/pkg/runtime.RawExtension": {
    mod: "apimachinery",
    name: "RawExtension",
    type: "unknown",
    nullable: false,
    doc: "`runtime.RawExtension`: any JSON (an embedded object, usually), `null` when empty.",
  },
};

/** Go package path to module name: k8s.io/api/apps/v1 -> apps_v1, .../apis/meta/v1 -> meta_v1 (as the decoders'). */
function moduleOf(goType: string): string {
  const special = SPECIAL[goType];
  if (special !== undefined) return special.mod;
  const pkg = goType.slice(0, goType.lastIndexOf("."));
  if (pkg.startsWith("k8s.io/api/")) return pkg.slice("k8s.io/api/".length).replaceAll("/", "_");
  if (pkg === META) return "meta_v1";
  throw new Error(`no module for ${goType}`);
}
const typeName = (goType: string) => goType.slice(goType.lastIndexOf(".") + 1);
const packageOf = (goType: string) => goType.slice(0, goType.lastIndexOf("."));
const prop = (name: string) => /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);

/**
 * The rank of a module for the flat (un-namespaced) exports, lower first: Kubernetes' version priority (GA before
 * beta before alpha, then the higher major and minor version: v2 > v1 > v1beta2 > v1beta1 > v1alpha1), then the core
 * group and meta/v1 before the named groups.
 */
function moduleRank(mod: string): [number, number, number, number] {
  if (mod === "apimachinery") return [0, 0, 0, 0];
  const version = mod.slice(mod.lastIndexOf("_") + 1);
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(version);
  if (m === null) throw new Error(`version of ${mod}`);
  const stability = m[2] === undefined ? 0 : m[2] === "beta" ? 1 : 2;
  const group = mod.slice(0, mod.lastIndexOf("_"));
  return [stability, -Number(m[1]), -Number(m[3] ?? 0), group === "core" || group === "meta" ? 0 : 1];
}

interface Context {
  schema: Schema;
  /** Go type of each top-level kind, to its kind. */
  kindOf: Map<string, KindEntry>;
  /** Modules the module being written refers to. */
  imports: Set<string>;
  self: string;
}

/** A reference to the TypeScript type of Go type `goType` from module `ctx.self`. */
function refer(goType: string, ctx: Context): string {
  const mod = moduleOf(goType);
  const name = SPECIAL[goType]?.name ?? typeName(goType);
  if (mod === ctx.self) return name;
  ctx.imports.add(mod);
  return `${mod}.${name}`;
}

/** Whether a value of `t` (present: not left out) can be written as `null`. */
function nullable(t: Type): boolean {
  if (t.pointer) return true;
  switch (t.kind) {
    case "list":
    case "map":
    case "bytes":
    case "wrappedList":
      return true;
    case "special":
      return SPECIAL[t.ref!].nullable;
  }
  return false;
}

/** The TypeScript type of a (non-null) value of `t`. */
function typeOf(t: Type, ctx: Context): string {
  switch (t.kind) {
    case "string":
    case "bytes": // base64
      return "string";
    case "bool":
      return "boolean";
    case "int32":
    case "int64":
    case "uint32":
    case "uint64":
    case "float32":
    case "float64":
      return "number";
    case "special":
      if (SPECIAL[t.ref!] === undefined) throw new Error(`special ${t.ref}`);
      return refer(t.ref!, ctx);
    case "message": {
      const name = refer(t.ref!, ctx);
      // A kind's object inside another (a List's items, a StatefulSet's volumeClaimTemplates): Go writes its
      // apiVersion and kind only if they were set, which they are not in what the API server sends.
      if (ctx.kindOf.has(t.ref!)) return `${ctx.self === "meta_v1" ? "" : "meta_v1."}Nested<${name}>`;
      return name;
    }
    case "wrappedList":
      return refer(t.ref!, ctx);
    case "list":
      return arrayOf(valueOf(t.elem!, ctx));
    case "map":
      return `Record<string, ${valueOf(t.elem!, ctx)}>`;
  }
  throw new Error(`no type for ${JSON.stringify(t)}`);
}

/** The type of a list item or map value of type `t`, null included where Go can write one. */
function valueOf(t: Type, ctx: Context): string {
  const base = typeOf(t, ctx);
  return nullable(t) && base !== "unknown" ? `${base} | null` : base;
}

const arrayOf = (item: string) => (/^[\w.$]+(<[\w.$]+>)?$/.test(item) ? `${item}[]` : `(${item})[]`);

/**
 * A field as Go's encoding/json writes it: `[optional, type]`. Left out (optional) only where Go can leave it out:
 * `omitzero`, or `omitempty` on what is not a struct (Go's omitempty never leaves out a struct). What is written can be
 * null where the value can be nil (a slice, map, []byte or pointer, unless omitempty leaves nil out) or a special
 * whose JSON is null (a zero Time, unless omitzero left it out).
 */
function fieldType(f: Field, ctx: Context): [boolean, string] {
  const t = f.type;
  const isStruct = !t.pointer && (t.kind === "message" || t.kind === "special");
  const optional = f.omitzero === true || (f.omitempty === true && !isStruct);
  // omitzero is met on a struct only (ObjectMeta.creationTimestamp): left out when zero, so never a zero Time's null.
  // On a pointer, whether a non-nil zero value is left out depends on the type's IsZero: not worked out here.
  if (f.omitzero && t.pointer) throw new Error(`${f.go}: omitzero on a pointer`);
  let canBeNull: boolean;
  if (f.omitzero) canBeNull = false;
  else if (t.pointer) canBeNull = !f.omitempty || (t.kind === "special" && SPECIAL[t.ref!].nullable);
  else if (f.omitempty && (t.kind === "list" || t.kind === "map" || t.kind === "bytes" || t.kind === "wrappedList")) {
    canBeNull = false;
  } else canBeNull = nullable(t);
  const base = typeOf(t, ctx);
  return [optional, canBeNull && base !== "unknown" ? `${base} | null` : base];
}

/** The TypeScript declaration of message `m`. */
function declaration(m: Message, ctx: Context): string {
  const name = typeName(m.go);
  const kind = ctx.kindOf.get(m.go);
  const parents: string[] = [];
  const members: string[] = [];
  const own = new Set<string>();
  for (const f of m.fields) {
    if (f.number === 0) {
      if (f.type.ref !== TYPE_META || !f.inline) throw new Error(`${m.go}.${f.go}: a field without protobuf`);
      // TypeMeta: the kind's own apiVersion and kind, which the API server sets on what it sends.
      members.push(
        kind === undefined
          ? "apiVersion?: string;\n  kind?: string;"
          : `apiVersion: ${JSON.stringify(kind.apiVersion)};\n  kind: ${JSON.stringify(kind.kind)};`,
      );
      own.add("apiVersion").add("kind");
      continue;
    }
    if (f.inline) {
      if (f.type.kind !== "message" || f.type.pointer) throw new Error(`${m.go}.${f.go}: inline ${f.type.kind}`);
      parents.push(f.type.ref!);
      continue;
    }
    if (f.json === "") continue; // json:"-"
    const [optional, type] = fieldType(f, ctx);
    members.push(`${prop(f.json)}${optional ? "?" : ""}: ${type};`);
    own.add(f.json);
  }
  // Go's embedding: an embedded struct's fields are the outer struct's (`extends`). A JSON name both of the struct and of
  // an embedded one (Go: the outer wins), or of two embedded ones (Go: neither), would need an Omit: not met, refused.
  for (const p of parents) {
    for (const n of jsonNames(p, ctx.schema)) {
      if (own.has(n)) throw new Error(`${m.go}: ${n} both of its own and of inline ${p}`);
      own.add(n);
    }
  }
  const doc = kind === undefined
    ? `/** \`${m.go}\`. */`
    : `/** \`${m.go}\`: the kind \`${kind.kind}\` of \`${kind.apiVersion}\`. */`;
  const extendsList = parents.map((p) => refer(p, ctx));
  if (members.length === 0) {
    if (extendsList.length === 0) return `${doc}\nexport type ${name} = Record<string, never>;\n`;
    if (extendsList.length === 1) return `${doc}\nexport type ${name} = ${extendsList[0]};\n`;
  }
  return `${doc}\nexport interface ${name}${extendsList.length ? ` extends ${extendsList.join(", ")}` : ""} {\n  ${
    members.join("\n  ")
  }\n}\n`;
}

/** The JSON property names of a message, inline ones included. */
function jsonNames(goType: string, schema: Schema): string[] {
  const m = schema.messages[goType];
  return m.fields.flatMap((f) =>
    f.number === 0 ? ["apiVersion", "kind"] : f.inline ? jsonNames(f.type.ref!, schema) : f.json === "" ? [] : [f.json]
  );
}

function header(schema: Schema): string {
  return `// GENERATED by scripts/gen-kinds.ts from tools/refgen/schema.json (${
    Object.entries(schema.modules).filter(([k]) => k.startsWith("k8s.io/api")).map(([k, v]) => `${k} ${v}`).join(", ")
  }). DO NOT EDIT.\n`;
}

/** `text` as the lines of a doc comment, words wrapped at the line width deno fmt uses for code (120). */
function docLines(text: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && 3 + line.length + 1 + word.length > 120) {
      lines.push(` * ${line}`);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, ` * ${line}`];
}

/** A module's doc comment with a runnable example (a watch of `kind`, or the apimachinery types in use). */
function moduleDoc(mod: string, what: string, kind: KindEntry | undefined, withObjectMeta: boolean): string {
  const lines = ["/**", ...docLines(what), " *", " * @example", " * ```ts"];
  if (kind !== undefined) {
    const meta = withObjectMeta ? `,"metadata":{"name":"example"}` : "";
    const shown = withObjectMeta
      ? "event.object.kind, event.object.metadata.name"
      : "event.object.apiVersion, event.object.kind";
    lines.push(
      ` * import { decodeWatchResponse } from "watchwire";`,
      ` * import type { ${mod} } from "watchwire/kubernetes";`,
      ` *`,
      ` * const response = new Response('{"type":"ADDED","object":{"apiVersion":"${kind.apiVersion}","kind":"${kind.kind}"${meta}}}\\n', {`,
      ` *   headers: { "content-type": "application/json" },`,
      ` * });`,
      ` * const [event] = await Array.fromAsync(decodeWatchResponse<${mod}.${kind.kind}>(response));`,
      ` * if (event.type === "ADDED") console.log(${shown}); // ${
        withObjectMeta ? `${kind.kind} example` : `${kind.apiVersion} ${kind.kind}`
      }`,
    );
  } else {
    lines.push(
      ` * import type { ${mod} } from "watchwire/kubernetes";`,
      ` *`,
      ` * const port: ${mod}.IntOrString = "http";`,
      ` * const memory: ${mod}.Quantity = "128Mi";`,
      ` * console.log(port, memory); // http 128Mi`,
    );
  }
  lines.push(" * ```", " *", " * @module", " */");
  return lines.join("\n") + "\n";
}

/** The kind modules (`src/kinds/`), by file name, before formatting. */
export function generateKindModules(schema: Schema): Map<string, string> {
  const kindOf = new Map(schema.kinds.map((k) => [k.type, k]));
  const byModule = new Map<string, Message[]>();
  for (const m of Object.values(schema.messages).sort((a, b) => typeName(a.go).localeCompare(typeName(b.go)))) {
    const mod = moduleOf(m.go);
    if (!byModule.has(mod)) byModule.set(mod, []);
    byModule.get(mod)!.push(m);
  }
  byModule.set("apimachinery", []);
  // Named slices encoded as messages (ExtraValue): aliases of arrays in their package's module.
  const wrapped = new Map<string, Type>();
  const visit = (t: Type) => {
    if (t.kind === "wrappedList") wrapped.set(t.ref!, t.elem!);
    if (t.elem) visit(t.elem);
  };
  for (const m of Object.values(schema.messages)) for (const f of m.fields) visit(f.type);

  const head = header(schema);
  const files = new Map<string, string>();
  /** Every module's exported names, for the index. */
  const exported = new Map<string, string[]>();
  for (const [mod, messages] of [...byModule].sort(([a], [b]) => a.localeCompare(b))) {
    const ctx: Context = { schema, kindOf, imports: new Set(), self: mod };
    const parts: string[] = [];
    const names: string[] = [];
    if (mod === "meta_v1") {
      parts.push(`/** \`${TYPE_META}\`: the apiVersion and kind Go writes when they are set. */
export interface TypeMeta {
  apiVersion?: string;
  kind?: string;
}

/**
 * A kind's object inside another object (a List's \`items\`, a StatefulSet's \`volumeClaimTemplates\`): Go writes its
 * \`apiVersion\` and \`kind\` only when they are set, and the API server leaves them unset there.
 */
export type Nested<T extends { apiVersion: string; kind: string }> =
  & Omit<T, "apiVersion" | "kind">
  & { apiVersion?: T["apiVersion"]; kind?: T["kind"] };
`);
      names.push("TypeMeta", "Nested");
    }
    for (const [goType, s] of Object.entries(SPECIAL)) {
      if (s.mod !== mod || !schema.specials.includes(goType)) continue;
      // FieldsV1 is recursive: an interface (a type alias cannot refer to itself through an index signature).
      const decl = s.name === "FieldsV1"
        ? `export interface FieldsV1 {\n  [field: string]: FieldsV1;\n}`
        : `export type ${s.name} = ${s.type};`;
      parts.push(
        `${3 + s.doc.length + 3 <= 120 ? `/** ${s.doc} */` : ["/**", ...docLines(s.doc), " */"].join("\n")}\n${decl}\n`,
      );
      names.push(s.name);
    }
    for (const [goType, elem] of [...wrapped].filter(([g]) => moduleOf(g) === mod).sort()) {
      parts.push(
        `/** \`${goType}\`: a named slice. */\nexport type ${typeName(goType)} = ${arrayOf(valueOf(elem, ctx))};\n`,
      );
      names.push(typeName(goType));
    }
    for (const m of mod === "apimachinery" ? [] : messages) {
      parts.push(declaration(m, ctx));
      names.push(typeName(m.go));
    }
    const kinds = schema.kinds.filter((k) => moduleOf(k.type) === mod).sort((a, b) => a.kind.localeCompare(b.kind));
    const pkg = mod === "apimachinery" ? "k8s.io/apimachinery" : packageOf(messages[0].go);
    const what = mod === "apimachinery"
      ? "The types of `k8s.io/apimachinery` (`api/resource`, `util/intstr`, `runtime`) that have a JSON of their own, as TypeScript types."
      : `The types of Go package \`${pkg}\` as Go's \`encoding/json\` writes them${
        kinds.length
          ? `, with the top-level kinds of \`${[...new Set(kinds.map((k) => k.apiVersion))].join("`, `")}\`: ${
            kinds.map((k) => `\`${k.kind}\``).join(", ")
          }`
          : ""
      }.`;
    // The example watches the module's first kind with ObjectMeta (else its first kind).
    const hasObjectMeta = (k: KindEntry) =>
      schema.messages[k.type].fields.some((f) => f.json === "metadata" && f.type.ref === `${META}.ObjectMeta`);
    const shown = kinds.find(hasObjectMeta) ?? kinds[0];
    const imports = [...ctx.imports].sort().map((m) => `import type * as ${m} from "./${m}.ts";`);
    files.set(
      `${mod}.ts`,
      head + moduleDoc(mod, what, shown, shown !== undefined && hasObjectMeta(shown)) +
        (imports.length ? imports.join("\n") + "\n" : "") + "\n" +
        parts.join("\n"),
    );
    exported.set(mod, names);
  }

  // The index: every module as a namespace, and each name once, flat, from the module that ranks first (a kind
  // before a type that is not one: ResourceClaim is resource.k8s.io's kind, not core/v1's container field; then
  // moduleRank). A name that two named groups declare at the same rank (rbac/v1 and flowcontrol/v1 Subject) is left
  // to the namespaces: neither is the obvious one. So is a name the main entry point declares (mainEntryNames).
  const reserved = mainEntryNames();
  const kindNames = new Set(schema.kinds.map((k) => `${moduleOf(k.type)}.${typeName(k.type)}`));
  const rankOf = (name: string, mod: string) => [kindNames.has(`${mod}.${name}`) ? 0 : 1, ...moduleRank(mod)];
  const compare = (a: number[], b: number[]) => {
    const i = a.findIndex((x, i) => x !== b[i]);
    return i < 0 ? 0 : a[i] - b[i];
  };
  const candidates = new Map<string, string[]>();
  for (const [mod, names] of exported) {
    for (const name of names) candidates.set(name, [...(candidates.get(name) ?? []), mod]);
  }
  const best = new Map<string, string>();
  const ambiguous: string[] = [];
  for (const [name, mods] of candidates) {
    if (reserved.has(name)) continue;
    const sorted = mods.sort((a, b) => compare(rankOf(name, a), rankOf(name, b)));
    if (sorted.length > 1 && compare(rankOf(name, sorted[0]), rankOf(name, sorted[1])) === 0) ambiguous.push(name);
    else best.set(name, sorted[0]);
  }
  const mods = [...exported.keys()].sort();
  const flat = mods.flatMap((mod) => {
    const names = [...best].filter(([, m]) => m === mod).map(([n]) => n).sort();
    return names.length ? [`export type {\n  ${names.join(",\n  ")},\n} from "./${mod}.ts";`] : [];
  });
  const indexDoc = docLines(
    "The types of every built-in kind, by module (`core_v1`, `apps_v1`, `apps_v1beta1`, ...: one per Go package, as " +
      "for the decoders) and flat: each name from the module that ranks first, a top-level kind before a type of " +
      "the same name that is not one, then by Kubernetes' version priority (GA, then beta, then alpha; the higher " +
      "version first), then the core group and meta/v1 before the named groups. So `Pod` is `core_v1.Pod`, " +
      "`Deployment` `apps_v1.Deployment`, `HorizontalPodAutoscaler` `autoscaling_v2.HorizontalPodAutoscaler`, " +
      "`Event` `core_v1.Event` (`events_v1.Event` for events.k8s.io's). Names two named groups declare at the same " +
      `rank are left to the namespaces: ${ambiguous.sort().map((n) => `\`${n}\``).join(", ")}; so are those the ` +
      "`watchwire` entry point declares for every object, with shapes of its own: " +
      `${[...candidates.keys()].filter((n) => reserved.has(n)).sort().map((n) => `\`${n}\``).join(", ")} ` +
      "(`meta_v1.ObjectMeta` is the generated one).",
  );
  files.set(
    "index.ts",
    head + `/**
${indexDoc.join("\n")}
 *
 * @module
 */
${mods.map((m) => `export type * as ${m} from "./${m}.ts";`).join("\n")}

${flat.join("\n")}
`,
  );
  return files;
}

/** The JSON watch stream file of a kind. */
function streamFile(k: KindEntry): string {
  return join(STREAMS_DIR, `${k.apiVersion.replaceAll("/", "_")}.${k.kind}.json`);
}

/** The objects of `FIXTURE_EVENTS` of a kind's JSON watch stream, in that order. */
export function fixtureObjects(k: KindEntry): unknown[] {
  const events = readFileSync(streamFile(k), "utf8").split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l) as { type: string; object: unknown }
  );
  return FIXTURE_EVENTS.map((type) => {
    const event = events.find((e) => e.type === type);
    if (event === undefined) throw new Error(`${streamFile(k)}: no ${type} event`);
    return event.object;
  });
}

/** A JSON value as a TypeScript literal (JSON, but a `__proto__` key as a computed one, which sets no prototype). */
function literal(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(literal).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${
      Object.entries(value).map(([k, v]) =>
        `${k === "__proto__" ? `[${JSON.stringify(k)}]` : JSON.stringify(k)}:${literal(v)}`
      ).join(",")
    }}`;
  }
  return JSON.stringify(value);
}

/** The key of a kind in `KIND_FIXTURES`. */
export const fixtureKey = (k: { apiVersion: string; kind: string }): string => `${k.apiVersion} ${k.kind}`;

/** `tests/_kinds_fixtures.ts`: already as deno fmt leaves it (it ignores the file), so no formatting is needed. */
export function generateKindFixtures(schema: Schema): string {
  const entries = schema.kinds.map((k) => {
    const objects = fixtureObjects(k).map((o) => `    ${literal(o)},`);
    return `  ${JSON.stringify(fixtureKey(k))}: typed<kinds.${moduleOf(k.type)}.${k.kind}>(\n${
      objects.join("\n")
    }\n  ),`;
  });
  return `// GENERATED by scripts/gen-kinds.ts from fixtures/kubernetes/streams/*.json. DO NOT EDIT.
// deno-fmt-ignore-file
/**
 * Real objects of every built-in kind, typed: the ${FIXTURE_EVENTS.join(", ")} objects of each kind's refgen JSON
 * watch stream (what Go's encoding/json writes for the objects), each an argument of \`typed<T>\` with T the kind's type
 * from \`watchwire/kubernetes\`. The TypeScript compiler (\`tsc --noEmit\`, \`deno check\`) checks every object against its
 * type: a field of the wrong type, a field the type does not have, a required field missing, or a kind's type that is
 * not a KubernetesObject (what decodeWatchResponse<T> asks of T) fails the check. tests/kinds_types.test.ts checks
 * that every kind is here, and that this file is what the generator makes of the fixtures.
 */
import type { KubernetesObject } from "../mod.ts";
import type * as kinds from "../kubernetes.ts";

/** The objects, checked against \`T\` by the compiler. */
const typed = <T extends KubernetesObject>(...objects: T[]): readonly KubernetesObject[] => objects;

/** ${FIXTURE_EVENTS.join(", ")} objects of each kind, by \`"<apiVersion> <kind>"\`. */
export const KIND_FIXTURES: Readonly<Record<string, readonly KubernetesObject[]>> = {
${entries.join("\n")}
};
`;
}

function format(dir: string): void {
  const deno = join(root, "node_modules/.bin/deno");
  execFileSync(deno, ["fmt", "--quiet", "--config", join(root, "deno.json"), dir], { cwd: root, stdio: "inherit" });
}

function main(): void {
  const schemaArg = process.argv.indexOf("--schema");
  const schema = readSchema(schemaArg > 0 ? process.argv[schemaArg + 1] : undefined);
  const files = generateKindModules(schema);
  const fixtures = generateKindFixtures(schema);
  if (process.argv.includes("--check")) {
    const tmp = mkdtempSync(join(tmpdir(), "gen-kinds-"));
    for (const [name, text] of files) writeFileSync(join(tmp, name), text);
    format(tmp);
    const committed = readdirSync(KINDS_DIR).filter((n) => n.endsWith(".ts")).sort();
    const generated = readdirSync(tmp).sort();
    let same = committed.join() === generated.join();
    for (const name of generated) {
      if (!same) break;
      same = readFileSync(join(tmp, name), "utf8") === readFileSync(join(KINDS_DIR, name), "utf8");
      if (!same) console.error(`differs: ${name}`);
    }
    rmSync(tmp, { recursive: true });
    let fixturesSame = false;
    try {
      fixturesSame = readFileSync(FIXTURES_MODULE, "utf8") === fixtures;
    } catch {
      // Missing: not the same.
    }
    if (!same) console.error("src/kinds/ is not what scripts/gen-kinds.ts generates: run it");
    if (!fixturesSame) console.error("tests/_kinds_fixtures.ts is not what scripts/gen-kinds.ts generates: run it");
    if (!same || !fixturesSame) process.exit(1);
    console.log(`src/kinds/: ${files.size} files, and tests/_kinds_fixtures.ts, as generated`);
  } else {
    rmSync(KINDS_DIR, { recursive: true, force: true });
    mkdirSync(KINDS_DIR, { recursive: true });
    for (const [name, text] of files) writeFileSync(join(KINDS_DIR, name), text);
    format(KINDS_DIR);
    writeFileSync(FIXTURES_MODULE, fixtures);
    console.log(`wrote ${files.size} files to src/kinds/ and tests/_kinds_fixtures.ts`);
  }
}

// Run as a script (not when a test imports the generator's functions).
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
