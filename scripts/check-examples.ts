/**
 * Checks that every public export of the entry points (`mod.ts`, `wire.ts`, `kubernetes.ts`, `capture.ts`, `cli.ts`,
 * `msgpack_no_eval.ts`: functions, classes, constants, interfaces and types alike) and each entry point's module doc
 * carry a JSDoc `@example`, as docs/development.md asks. The generated types of the built-in kinds (`src/kinds/`,
 * exported by `kubernetes.ts`) are left out: there each group/version's module doc has the example. It reads what `deno doc --json` reports, follows
 * re-exports to the declaration they name, and lists each export without an example (exit 1), or prints a count.
 * The examples themselves are type-checked and run by `deno test --doc` (part of `npm test`).
 *
 * Run: `node --import tsx scripts/check-examples.ts`.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const deno = `${root}node_modules/.bin/deno`;
/** The entry points: those of deno.json's and package.json's `exports`. Change this list when they change. */
const ENTRY_POINTS = ["mod.ts", "wire.ts", "kubernetes.ts", "capture.ts", "cli.ts", "msgpack_no_eval.ts"];
/** Declarations under here are not checked one by one (see above). */
const GENERATED_KINDS = `${root}src/kinds/`;

interface Location {
  filename: string;
  line: number;
}
interface Declaration {
  location: Location;
  kind: string;
  jsDoc?: { tags?: { kind: string }[] };
  def?: { target?: Location };
}
interface DocSymbol {
  name: string;
  declarations: Declaration[];
}
interface DocJson {
  nodes: Record<string, { symbols?: DocSymbol[]; module_doc?: { tags?: { kind: string }[] } }>;
}

function doc(files: string[]): DocJson {
  const out = execFileSync(deno, ["doc", "--json", ...files], {
    cwd: root,
    maxBuffer: 1 << 28,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return JSON.parse(out) as DocJson;
}

const key = (l: Location) => `${l.filename}:${l.line}`;
const hasExample = (d: Declaration) => (d.jsDoc?.tags ?? []).some((t) => t.kind === "example");

const entries = doc(ENTRY_POINTS);
// Declarations by where they stand, from the entry points and from every file a re-export points into.
const byLocation = new Map<string, Declaration>();
const collect = (json: DocJson) => {
  for (const node of Object.values(json.nodes)) {
    for (const symbol of node.symbols ?? []) {
      for (const d of symbol.declarations) byLocation.set(key(d.location), d);
    }
  }
};
collect(entries);
const targets = new Set<string>();
for (const node of Object.values(entries.nodes)) {
  for (const symbol of node.symbols ?? []) {
    for (const d of symbol.declarations) {
      if (d.kind === "reference" && d.def?.target !== undefined) targets.add(d.def.target.filename);
    }
  }
}
if (targets.size > 0) collect(doc([...targets].map((t) => fileURLToPath(t))));

/** The declaration a re-export names, followed through further re-exports. */
function resolve(d: Declaration): Declaration | undefined {
  for (let hops = 0; d.kind === "reference"; hops++) {
    const target = d.def?.target;
    const next = target === undefined ? undefined : byLocation.get(key(target));
    if (next === undefined || hops > 8) return undefined;
    d = next;
  }
  return d;
}

const missing: string[] = [];
let checked = 0;
for (const [file, node] of Object.entries(entries.nodes)) {
  const entry = file.slice(file.lastIndexOf("/") + 1);
  checked++;
  if (!(node.module_doc?.tags ?? []).some((t) => t.kind === "example")) missing.push(`${entry}: its module doc`);
  for (const symbol of node.symbols ?? []) {
    const declarations = symbol.declarations.map(resolve);
    if (declarations.every((d) => d !== undefined && d.location.filename.startsWith(`file://${GENERATED_KINDS}`))) {
      continue;
    }
    checked++;
    if (declarations.some((d) => d === undefined)) {
      missing.push(`${entry}: ${symbol.name} (a re-export whose declaration was not found)`);
    } else if (!declarations.some((d) => hasExample(d!))) {
      const d = declarations[0]!;
      const where = fileURLToPath(d.location.filename).slice(root.length);
      missing.push(`${entry}: ${d.kind} ${symbol.name} (${where}:${d.location.line})`);
    }
  }
}

if (missing.length > 0) {
  console.error(`${missing.length} of ${checked} exports have no @example:\n${missing.join("\n")}`);
  process.exit(1);
}
console.log(
  `check-examples: the ${ENTRY_POINTS.length} module docs and all ${checked - ENTRY_POINTS.length} exports of ` +
    `${ENTRY_POINTS.join(", ")} (the kind types aside) have an @example`,
);
