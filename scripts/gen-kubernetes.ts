/**
 * Generates the Kubernetes protobuf decoders (`src/codec/kubernetes/generated/`) from the schema that
 * `tools/refgen/cmd/schema` extracts from the Go types (`tools/refgen/schema.json`): one module per Go package (one
 * per group/version), each message a function that reads its fields straight from the wire into the JSON object
 * Go's `encoding/json` would print for the value `proto.Unmarshal` makes.
 *
 * Usage: node --import tsx scripts/gen-kubernetes.ts [--check] [--schema FILE]
 *   --check: generate into a scratch folder and fail if anything differs from the committed files.
 *   --schema FILE: read the schema from FILE (default tools/refgen/schema.json).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Field, type Message, readSchema, type Schema, SCHEMA_PATH, type Type } from "./refgen_schema.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const schemaArg = process.argv.indexOf("--schema");
const schemaPath = schemaArg > 0 ? process.argv[schemaArg + 1] : SCHEMA_PATH;
const outDir = join(root, "src/codec/kubernetes/generated");
const schema: Schema = readSchema(schemaPath);

/**
 * Messages that decode alike (same Go type name, same fields with the same JSON names, options and wire types, and
 * field types that decode alike in turn: `Deployment` in apps/v1 and apps/v1beta2, `ObjectReference` wherever it is
 * repeated) share one decoder: the one of the first by Go type (the stable version sorts first). Their other modules
 * import it. About 40% of the messages are such repeats.
 */
function computeOwners(): Map<string, string> {
  const memo = new Map<string, string>();
  const busy = new Set<string>();
  const typeSig = (t: Type): string =>
    t.kind === "message"
      ? `m(${sig(t.ref!)})${t.pointer ? "*" : ""}`
      : `${t.kind}|${t.ref ?? ""}|${t.wire ?? ""}|${t.pointer ? "*" : ""}|${t.key ? typeSig(t.key) : ""}|${
        t.elem ? typeSig(t.elem) : ""
      }`;
  const sig = (name: string): string => {
    const known = memo.get(name);
    if (known !== undefined) return known;
    const m = schema.messages[name];
    // Outside the schema (TypeMeta) or a recursion: a message only ever equal to itself.
    if (m === undefined || busy.has(name)) return `self(${name})`;
    busy.add(name);
    const fields = m.fields.filter((f) => f.number !== 0).map((f) =>
      [f.json, f.omitempty, f.omitzero, f.inline, f.number, f.repeated, typeSig(f.type)].join(",")
    );
    busy.delete(name);
    const result = `${typeName(name)}{${fields.join(";")}}`;
    memo.set(name, result);
    return result;
  };
  const first = new Map<string, string>();
  const out = new Map<string, string>();
  for (const name of Object.keys(schema.messages).sort()) {
    const key = sig(name);
    if (!first.has(key)) first.set(key, name);
    out.set(name, first.get(key)!);
  }
  return out;
}
let owner = new Map<string, string>();

const T = {
  META: "k8s.io/apimachinery/pkg/apis/meta/v1",
};

/** Go package path to module file name: k8s.io/api/apps/v1 -> apps_v1, .../apis/meta/v1 -> meta_v1. */
function moduleOf(goType: string): string {
  const pkg = goType.slice(0, goType.lastIndexOf("."));
  if (pkg.startsWith("k8s.io/api/")) return pkg.slice("k8s.io/api/".length).replaceAll("/", "_");
  if (pkg === T.META) return "meta_v1";
  throw new Error(`no module for ${goType}`);
}
const typeName = (goType: string) => goType.slice(goType.lastIndexOf(".") + 1);
const fn = (goType: string) => `m_${typeName(goType)}`;
const fin = (goType: string) => `f_${typeName(goType)}`;

const WIRE: Record<string, number> = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 };

/**
 * Kubernetes' special types: `read` reads a fresh value (a list item, a map value); `merge(o, key)`, where the type's Go
 * `Unmarshal` merges into the value already there, reads a singular field met again into what `o[key]` holds (Time and
 * MicroTime replace the whole value, as theirs do; RawExtension and FieldsV1 fields go through setRawJson).
 */
const SPECIAL: Record<
  string,
  { read: string; zero: string; zeroIsEmpty?: boolean; merge?: (o: string, key: string) => string }
> = {
  "k8s.io/apimachinery/pkg/apis/meta/v1.Time": { read: "time(c, end)", zero: "null", zeroIsEmpty: true },
  "k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime": { read: "microTime(c, end)", zero: "null", zeroIsEmpty: true },
  "k8s.io/apimachinery/pkg/apis/meta/v1.Duration": {
    read: "duration(c, end)",
    zero: '"0s"',
    merge: (o) => `duration(c, end, ${o})`,
  },
  "k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1": { read: 'rawJson(c, end, "FieldsV1")', zero: "null" },
  "k8s.io/apimachinery/pkg/runtime.RawExtension": { read: 'rawJson(c, end, "RawExtension")', zero: "null" },
  "k8s.io/apimachinery/pkg/api/resource.Quantity": {
    read: "quantity(c, end)",
    zero: '"0"',
    merge: (o) => `quantity(c, end, ${o})`,
  },
  "k8s.io/apimachinery/pkg/util/intstr.IntOrString": {
    read: "intOrString(c, end)",
    zero: "0",
    merge: (_, key) => `intOrString(c, end, o, ${JSON.stringify(key)})`,
  },
};

/** RawExtension and FieldsV1 fields (not list items or map values) are set with setRawJson (lazily parsed in metadata mode). */
const s_isRaw = (ref: string) => ref.endsWith(".FieldsV1") || ref.endsWith(".RawExtension");

/** The wire type a single value of `t` is sent with. */
function wireOf(t: Type): number {
  switch (t.kind) {
    case "string":
    case "bytes":
    case "message":
    case "special":
    case "map":
    case "wrappedList":
      return 2;
  }
  const w = WIRE[t.wire ?? "varint"];
  if (w === undefined) throw new Error(`wire ${t.wire} of ${t.kind}`);
  return w;
}

/** An expression reading one value of scalar/special/message/wrappedList type `t` (at `c.pos`, bounded by `end`). */
function readExpr(t: Type, uses: Set<string>, imports: Map<string, Set<string>>, self: string, end = "end"): string {
  return readExprAt(t, uses, imports, self).replaceAll("(c, end", `(c, ${end}`).replaceAll("(end)", `(${end})`);
}

function readExprAt(t: Type, uses: Set<string>, imports: Map<string, Set<string>>, self: string): string {
  switch (t.kind) {
    case "string":
      return "c.str(end)";
    case "bytes":
      return "c.bytes(end)";
    case "bool":
      return "c.bool(end)";
    case "int32":
      return "c.int32(end)";
    case "int64":
      return "c.int64(end)";
    case "uint32":
      return "c.uint32(end)";
    case "uint64":
      return "c.uint64(end)";
    case "special": {
      const s = SPECIAL[t.ref!];
      if (!s) throw new Error(`special ${t.ref}`);
      uses.add(s.read.slice(0, s.read.indexOf("(")));
      return s.read;
    }
    case "message":
      return `${ref(t.ref!, imports, self)}(c, c.len(end), {})`;
    case "wrappedList": {
      uses.add("wrappedList");
      const item = (1 << 3) | wireOf(t.elem!);
      return `wrappedList(c, end, ${item}, (c, we) => ${readExpr(t.elem!, uses, imports, self, "we")})`;
    }
  }
  throw new Error(`no reader for ${JSON.stringify(t)}`);
}

/** A reference to message function `fn` of `goType`, importing it when it lives in another module. */
function ref(goType: string, imports: Map<string, Set<string>>, self: string, which = fn): string {
  goType = owner.get(goType) ?? goType;
  const mod = moduleOf(goType);
  const name = which(goType);
  if (mod === self) return name;
  // Imported under a name of its own: two packages may have messages of the same name (UserInfo).
  if (!imports.has(mod)) imports.set(mod, new Set());
  imports.get(mod)!.add(`${name} as ${mod}_${name}`);
  return `${mod}_${name}`;
}

/** The JSON of a value of `t` that was never on the wire (Go's zero value), or undefined if it is omitted. */
function zeroJson(f: Field, imports: Map<string, Set<string>>, self: string): string | undefined {
  const t = f.type;
  if (f.repeated) return f.omitempty ? undefined : "null";
  if (t.pointer) return f.omitempty ? undefined : "null";
  switch (t.kind) {
    case "message":
      return `${ref(t.ref!, imports, self, fin)}({})`;
    case "special": {
      const s = SPECIAL[t.ref!];
      if (f.omitzero && s.zeroIsEmpty) return undefined;
      return s.zero;
    }
    case "map":
    case "bytes":
    case "wrappedList":
      return f.omitempty ? undefined : "null";
    case "string":
      return f.omitempty ? undefined : '""';
    case "bool":
      return f.omitempty ? undefined : "false";
    default:
      return f.omitempty ? undefined : "0";
  }
}

/** The JSON value a map entry's value has when the entry leaves it out (Go's `mapvalue := ...` default). */
function mapZero(t: Type, uses: Set<string>, imports: Map<string, Set<string>>, self: string): string {
  switch (t.kind) {
    case "string":
    case "bytes":
      return '""';
    case "bool":
      return "false";
    case "message":
      return `${ref(t.ref!, imports, self, fin)}({})`;
    case "special":
      return SPECIAL[t.ref!].zero;
    case "wrappedList":
      uses.add("emptyList");
      return "emptyList()"; // &ExtraValue{}: an empty, non-nil slice
    default:
      return "0";
  }
}

const prop = (name: string) => /^[A-Za-z_$][\w$]*$/.test(name) ? `o.${name}` : `o[${JSON.stringify(name)}]`;

function genMessage(m: Message, uses: Set<string>, imports: Map<string, Set<string>>, self: string): string {
  const name = typeName(m.go);
  const cases: string[] = [];
  const finals: string[] = [];
  const known: number[] = [];
  for (const f of m.fields) {
    if (f.number === 0) continue; // TypeMeta: apiVersion and kind come from the envelope.
    known.push(f.number);
    const t = f.type;
    const key = f.json;
    const o = key === "" ? "" : prop(key);
    if (f.inline) {
      if (t.kind !== "message") throw new Error(`inline ${t.kind} in ${m.go}`);
      cases.push(`case ${(f.number << 3) | 2}: ${ref(t.ref!, imports, self)}(c, c.len(end), o); break;`);
      finals.push(`${ref(t.ref!, imports, self, fin)}(o);`);
      continue;
    }
    if (key === "") {
      // No JSON (json:"-"): read past it.
      continue;
    }
    if (f.repeated) {
      const e = t.elem!;
      const w = wireOf(e);
      const read = readExpr(e, uses, imports, self);
      const push =
        `{ const v = ${read}; const a = ${o} as unknown[] | null | undefined; if (a) a.push(v); else ${o} = listOf(v); }`;
      uses.add("listOf");
      cases.push(`case ${(f.number << 3) | w}: ${push} break;`);
      if (w === 0) {
        // Packed encoding of a repeated scalar.
        uses.add("emptyList");
        cases.push(
          `case ${
            (f.number << 3) | 2
          }: { const e = c.len(end); let a = ${o} as unknown[] | null | undefined; if (!a) ${o} = a = emptyList(); while (c.pos < e) a.push(${
            readExpr(e, uses, imports, self, "e")
          }); } break;`,
        );
      }
    } else if (t.kind === "map") {
      const k = t.key!;
      const v = t.elem!;
      // A map entry is read as Go's generated code reads it: fields 1 and 2 by the map's key and value types whatever
      // wire type their tags say, each bounded by the end of the message that holds the map (not of the entry), the
      // entry's other fields skipped by their wire types, and the reading going on at the entry's end.
      const kzero = k.kind === "string" ? '""' : "0";
      uses.add("setKey");
      cases.push(
        `case ${(f.number << 3) | 2}: { const e = c.len(end); let k: ${
          k.kind === "string" ? "string" : "number"
        } = ${kzero}; let v: unknown = undefined; while (c.pos < e) { const at = c.pos; const f = c.entryField(end); if (f === 1) k = ${
          readExpr(k, uses, imports, self, "end")
        }; else if (f === 2) v = ${readExpr(v, uses, imports, self, "end")}; else c.skipEntryField(at, e, end, ${
          JSON.stringify(name + "." + key)
        }); } c.pos = e; let m = ${o} as JsonObject | null | undefined; if (!m) ${o} = m = {}; ${
          k.kind === "string" ? "const key = k;" : "const key = String(k);"
        } const value = v === undefined ? ${
          mapZero(v, uses, imports, self)
        } : v; if (key !== "__proto__") m[key] = value; else setKey(m, key, value); } break;`,
      );
    } else {
      const w = wireOf(t);
      const read = readExpr(t, uses, imports, self);
      let stmt: string;
      const omitsEmpty = !t.pointer && f.omitempty;
      if (t.kind === "message") {
        stmt = `${o} = ${ref(t.ref!, imports, self)}(c, c.len(end), (${o} as JsonObject | null | undefined) ?? {});`;
      } else if (t.kind === "special" && s_isRaw(t.ref!)) {
        uses.add("setRawJson");
        stmt = `setRawJson(o, ${JSON.stringify(key)}, c, end, ${JSON.stringify(typeName(t.ref!))});`;
      } else if (t.kind === "special") {
        const s = SPECIAL[t.ref!];
        if (!t.pointer && f.omitzero && s.zeroIsEmpty) {
          stmt = `{ const v = ${read}; if (v !== null) ${o} = v; else if (${o} !== undefined) delete ${o}; }`;
        } else stmt = `${o} = ${s.merge ? s.merge(o, key) : read};`;
      } else if (omitsEmpty && (t.kind === "string" || t.kind === "bytes")) {
        stmt = `{ const v = ${read}; if (v !== "") ${o} = v; else if (${o} !== undefined) delete ${o}; }`;
      } else if (omitsEmpty && t.kind === "bool") {
        stmt = `{ const v = ${read}; if (v) ${o} = v; else if (${o} !== undefined) delete ${o}; }`;
      } else if (t.kind === "wrappedList") {
        // Only met as map values (ExtraValue) so far; a field of its own would need Go's nil-vs-empty rules checked.
        throw new Error(`${m.go}.${f.go}: a named slice as a field of its own`);
      } else if (omitsEmpty) {
        stmt = `{ const v = ${read}; if (v !== 0) ${o} = v; else if (${o} !== undefined) delete ${o}; }`;
      } else {
        stmt = `${o} = ${read};`;
      }
      cases.push(`case ${(f.number << 3) | w}: ${stmt} break;`);
    }
    const zero = zeroJson(f, imports, self);
    if (zero !== undefined) finals.push(`if (${o} === undefined) ${o} = ${zero};`);
  }
  const max = Math.max(0, ...known);
  const table = Array.from({ length: max + 1 }, (_, i) => (known.includes(i) ? 1 : 0));
  return `
const K_${name} = /* @__PURE__ */ Uint8Array.of(${table.join(", ")});

/** Decodes a \`${m.go}\` message, \`c.pos\` to \`end\`, into \`o\`. */
export function ${fn(m.go)}(c: Cursor, end: number, o: JsonObject): JsonObject {
  while (c.pos < end) {
    const t = c.tag(end);
    switch (t) {
      ${cases.join("\n      ")}
      default: c.other(t, end, K_${name}, ${JSON.stringify(name)});
    }
  }
  return ${fin(m.go)}(o);
}

/** Fills in what Go prints for the fields of \`${name}\` that were not on the wire. */
export function ${fin(m.go)}(o: JsonObject): JsonObject {
  ${finals.join("\n  ")}
  return o;
}
`;
}

function generate(): Map<string, string> {
  owner = computeOwners();
  const byModule = new Map<string, Message[]>();
  for (const m of Object.values(schema.messages).sort((a, b) => a.go.localeCompare(b.go))) {
    if (SPECIAL[m.go] || owner.get(m.go) !== m.go) continue;
    const mod = moduleOf(m.go);
    if (!byModule.has(mod)) byModule.set(mod, []);
    byModule.get(mod)!.push(m);
  }
  const kindsByModule = new Map<string, { apiVersion: string; kind: string; type: string }[]>();
  for (const k of schema.kinds) {
    const mod = moduleOf(k.type);
    if (!kindsByModule.has(mod)) kindsByModule.set(mod, []);
    kindsByModule.get(mod)!.push(k);
    if (!byModule.has(mod)) byModule.set(mod, []);
  }
  const files = new Map<string, string>();
  const header = `// GENERATED by scripts/gen-kubernetes.ts from tools/refgen/schema.json (${
    Object.entries(schema.modules).filter(([k]) => k.startsWith("k8s.io/api")).map(([k, v]) => `${k} ${v}`).join(", ")
  }). DO NOT EDIT.\n`;
  const exportsOf: { mod: string; id: string; apiVersion: string }[] = [];
  for (const [mod, messages] of [...byModule].sort(([a], [b]) => a.localeCompare(b))) {
    const uses = new Set<string>(["Cursor", "decodeTop"]);
    const imports = new Map<string, Set<string>>();
    const bodies = messages.map((m) => genMessage(m, uses, imports, mod));
    const kinds = (kindsByModule.get(mod) ?? []).sort((a, b) => a.kind.localeCompare(b.kind));
    const apiVersions = [...new Set(kinds.map((k) => k.apiVersion))];
    let tail = "";
    for (const apiVersion of apiVersions) {
      const id = mod === "meta_v1" ? "metaV1" : identifier(apiVersion);
      exportsOf.push({ mod, id, apiVersion });
      const entries = kinds.filter((k) => k.apiVersion === apiVersion).map((k) =>
        `  ${k.kind}: (bytes, start, end, target, baseOffset) => decodeTop(${
          ref(k.type, imports, mod)
        }, bytes, start, end, target, baseOffset),`
      );
      const exceptions: string[] = [];
      for (const k of kinds.filter((k) => k.apiVersion === apiVersion)) {
        const first = schema.messages[k.type].fields.find((f) => f.number === 1);
        const ref = first?.type.ref;
        if (first?.json === "metadata" && ref === `${T.META}.ObjectMeta`) continue;
        exceptions.push(
          `    ${k.kind}: "${first?.json === "metadata" && ref === `${T.META}.ListMeta` ? "list" : "none"}",`,
        );
      }
      tail += `
/**
 * The decoders of the top-level kinds of \`${apiVersion}\`, for {@linkcode createKubernetesDecoders}.
 *
 * @example
 * \`\`\`ts
 * import { ${id}, createKubernetesDecoders } from "watchwire/kubernetes";
 *
 * const decoders = createKubernetesDecoders([${id}]);
 * console.log(decoders.decoder("${apiVersion}", "${
        kinds.find((k) => k.apiVersion === apiVersion)!.kind
      }") !== undefined); // true
 * \`\`\`
 */
export const ${id}: GroupVersionDecoders = {
  apiVersion: ${JSON.stringify(apiVersion)},
  kinds: {
${entries.join("\n")}
  },${exceptions.length ? `\n  metadata: {\n${exceptions.join("\n")}\n  },` : ""}
};
`;
    }
    if (!apiVersions.length) uses.delete("decodeTop");
    // Only what the code calls (a reader computed for a branch not taken may have asked for more).
    const code = bodies.join("") + tail;
    const used = [...uses].filter((u) => u !== "Cursor" && new RegExp(`\\b${u}\\(`).test(code));
    const importLines = [
      `import { ${
        [...used, ...(bodies.length ? ["type Cursor", "type JsonObject"] : [])].join(", ")
      } } from "../generated_runtime.ts";`,
      ...(apiVersions.length ? [`import type { GroupVersionDecoders } from "../registry.ts";`] : []),
      ...[...imports].sort(([a], [b]) => a.localeCompare(b)).map(([m, names]) =>
        `import { ${[...names].sort().join(", ")} } from "./${m}.ts";`
      ),
    ];
    const body = header +
      `/**\n * Decoders of the protobuf messages of Go package \`${
        packageOf(mod)
      }\` (those that decode like a message of an ` +
      `earlier package are imported from there).\n *\n * @module\n */\n` +
      importLines.join("\n") + "\n" +
      bodies.join("") + tail;
    files.set(`${mod}.ts`, body);
  }
  // The registry of everything.
  files.set(
    "all.ts",
    header + `/**
 * Every built-in kind's decoder: all group/versions client-go's scheme registers (${schema.kinds.length} kinds), and
 * \`v1\` \`Status\`. Importing this module brings in every generated decoder; import single group/versions
 * (\`appsV1\`, ...) and {@linkcode createKubernetesDecoders} to take only some.
 *
 * @module
 */
import { createKubernetesDecoders } from "../decoders.ts";
import type { GroupVersionDecoders, KubernetesProtobufDecoders } from "../registry.ts";
${
      [...new Set(exportsOf.map((e) => e.mod))].map((m) =>
        `import { ${exportsOf.filter((e) => e.mod === m).map((e) => e.id).join(", ")} } from "./${m}.ts";`
      ).join("\n")
    }

/**
 * The decoders of every built-in group/version (${exportsOf.length}).
 *
 * @example
 * \`\`\`ts
 * import { appsV1, BUILTIN_GROUP_VERSIONS, createKubernetesDecoders } from "watchwire/kubernetes";
 *
 * console.log(BUILTIN_GROUP_VERSIONS.length, BUILTIN_GROUP_VERSIONS.includes(appsV1)); // ${exportsOf.length} true
 * // Every built-in kind but those of alpha and beta group/versions:
 * const stable = BUILTIN_GROUP_VERSIONS.filter((gv) => !/alpha|beta/.test(gv.apiVersion));
 * const decoders = createKubernetesDecoders(stable);
 * console.log(decoders.decoder("apps/v1", "Deployment") !== undefined); // true
 * console.log(decoders.decoder("batch/v1beta1", "CronJob")); // undefined
 * \`\`\`
 */
export const BUILTIN_GROUP_VERSIONS: readonly GroupVersionDecoders[] = [
  ${exportsOf.map((e) => e.id).join(",\n  ")},
];

/**
 * Decoders of every built-in kind (${schema.kinds.length}, Kubernetes ${
      schema.modules["k8s.io/api"]?.replace("v0.", "1.")
    }).
 *
 * @example
 * \`\`\`ts
 * import { builtinDecoders } from "watchwire/kubernetes";
 *
 * console.log(builtinDecoders.decoder("apps/v1", "Deployment") !== undefined); // true
 * \`\`\`
 */
export const builtinDecoders: KubernetesProtobufDecoders = /* @__PURE__ */ createKubernetesDecoders(
  BUILTIN_GROUP_VERSIONS,
);
`,
  );
  files.set(
    "index.ts",
    header + `/**
 * The generated decoders of each group/version, by name (\`appsV1\`, \`coreV1\`, ...), and of every built-in kind.
 *
 * @module
 */
export { BUILTIN_GROUP_VERSIONS, builtinDecoders } from "./all.ts";
${exportsOf.map((e) => `export { ${e.id} } from "./${e.mod}.ts";`).join("\n")}
`,
  );
  return files;
}

/** The Go package of a module (inverse of moduleOf). */
function packageOf(mod: string): string {
  return mod === "meta_v1" ? T.META : `k8s.io/api/${mod.replace("_", "/")}`;
}

function identifier(apiVersion: string): string {
  // "apps/v1" -> appsV1, "v1" -> coreV1, "rbac.authorization.k8s.io/v1" -> rbacAuthorizationV1
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["core", apiVersion];
  const g = group.replace(/\.k8s\.io$/, "").split(".").map((p, i) => (i === 0 ? p : p[0].toUpperCase() + p.slice(1)))
    .join("");
  return g + version[0].toUpperCase() + version.slice(1);
}

function format(dir: string): void {
  const deno = join(root, "node_modules/.bin/deno");
  execFileSync(deno, ["fmt", "--quiet", "--config", join(root, "deno.json"), dir], { cwd: root, stdio: "inherit" });
}

const files = generate();
if (process.argv.includes("--check")) {
  const tmp = mkdtempSync(join(tmpdir(), "gen-kubernetes-"));
  for (const [name, text] of files) writeFileSync(join(tmp, name), text);
  format(tmp);
  const committed = readdirSync(outDir).filter((n) => n.endsWith(".ts")).sort();
  const generated = readdirSync(tmp).sort();
  let same = committed.join() === generated.join();
  for (const name of generated) {
    if (!same) break;
    same = readFileSync(join(tmp, name), "utf8") === readFileSync(join(outDir, name), "utf8");
    if (!same) console.error(`differs: ${name}`);
  }
  rmSync(tmp, { recursive: true });
  if (!same) {
    console.error("src/codec/kubernetes/generated/ is not what scripts/gen-kubernetes.ts generates: run it");
    process.exit(1);
  }
  console.log(`src/codec/kubernetes/generated/: ${files.size} files, as generated`);
} else {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  for (const [name, text] of files) writeFileSync(join(outDir, name), text);
  format(outDir);
  console.log(`wrote ${files.size} files to src/codec/kubernetes/generated/`);
}
