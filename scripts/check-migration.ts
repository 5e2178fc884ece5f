/**
 * Checks that `docs/migration.md` still holds: every name it says an entry point exports now is exported there. Its
 * tables list every name of the entry points before the split by job (generated from `deno doc --json` of the commit
 * before it), so an export that moves or goes without the page saying so fails here. Reads each entry point's exports
 * with `deno doc --json` (the names `deno.json`'s `exports` map), then:
 * - the table "`watchwire` and `watchwire/core`": each name (its new name where the table "Renamed" renames it), or
 *   the name after "as", is exported by the entry point in its "now in" column;
 * - the table "Renamed": each new name is exported by the entry points its "where" column names or, for an option, is
 *   a property of the option types that column names (asked of the type checker, so inherited ones count);
 * - "`watchwire/kinds`": each `meta_v1.X` named there is in `watchwire/kubernetes`'s `meta_v1`, and `X` is in
 *   `watchwire`.
 * Lists each miss (exit 1), or prints the counts.
 *
 * Run: `node --import tsx scripts/check-migration.ts`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const deno = join(root, "node_modules", ".bin", process.platform === "win32" ? "deno.cmd" : "deno");

interface DocNode {
  name: string;
  declarations?: { kind: string; def?: { elements?: DocNode[]; typeParams?: unknown[] } }[];
}

const exportsMap = JSON.parse(readFileSync(join(root, "deno.json"), "utf8")).exports as Record<string, string>;
/** Each entry point's name (`watchwire`, `watchwire/wire`, ...) to its file. */
const entryFiles = new Map(
  Object.entries(exportsMap).map(([subpath, file]) => [
    subpath === "." ? "watchwire" : `watchwire/${subpath.slice(2)}`,
    file.replace(/^\.\//, ""),
  ]),
);

/** Each entry point's name to its exported symbols, by name. */
function entryPointExports(): Map<string, Map<string, DocNode>> {
  const result = new Map<string, Map<string, DocNode>>();
  for (const [name, file] of entryFiles) {
    const json = execFileSync(deno, ["doc", "--json", file], {
      cwd: root,
      maxBuffer: 256 << 20,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"], // deno doc's warnings about @types/node are not ours
    });
    const doc = JSON.parse(json) as { nodes: Record<string, { symbols?: DocNode[] }> };
    const symbols = Object.values(doc.nodes)[0]?.symbols ?? [];
    result.set(name, new Map(symbols.map((s) => [s.name, s])));
  }
  return result;
}

/** The rows of the first Markdown table after the heading `heading`, as cells (the header and rule left out). */
function tableAfter(markdown: string, heading: string): string[][] {
  const lines = markdown.split("\n");
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`docs/migration.md has no heading ${heading}`);
  const rows: string[][] = [];
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("#")) break;
    if (line.startsWith("|")) {
      inTable = true;
      rows.push(line.split("|").slice(1, -1).map((c) => c.trim()));
    } else if (inTable) break;
  }
  return rows.slice(2);
}

/** The backticked words of a cell. */
function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

const exportsByEntry = entryPointExports();
const markdown = readFileSync(join(root, "docs", "migration.md"), "utf8");
const misses: string[] = [];
const checked = { moved: 0, renamed: 0, kinds: 0 };

function expectExport(entry: string, name: string, why: string): void {
  const exported = exportsByEntry.get(entry);
  if (exported === undefined) misses.push(`${why}: no entry point ${entry}`);
  else if (!exported.has(name)) misses.push(`${why}: ${entry} does not export ${name}`);
}

/** Old export names to new ones, from the table "Renamed" (its rows that rename an export, not an option). */
const renamedExports = new Map(
  tableAfter(markdown, "## Renamed").map(([oldCell, newCell]) => [codeSpans(oldCell)[0], codeSpans(newCell)[0]]),
);
for (const [nameCell, , nowIn] of tableAfter(markdown, "## `watchwire` and `watchwire/core`")) {
  const [name] = codeSpans(nameCell);
  const [entry, ...rest] = codeSpans(nowIn);
  const as = /\bas\b/.test(nowIn) ? rest[0] : undefined;
  expectExport(entry, as ?? renamedExports.get(name) ?? name, `moved ${name}`);
  checked.moved++;
}
/** For the renamed options: `type` lines that name each as a property of the option types its row names. */
const optionProbes: string[] = [];
for (const [oldCell, newCell, where] of tableAfter(markdown, "## Renamed")) {
  const [newName] = codeSpans(newCell);
  const why = `renamed ${codeSpans(oldCell)[0]}`;
  const entries = codeSpans(where).filter((s) => s.startsWith("watchwire"));
  if (entries.length === 0) misses.push(`${why}: its row names no entry point`);
  for (const entry of entries) {
    const exported = exportsByEntry.get(entry);
    if (exported?.has(newName)) continue;
    // An option renamed: a property of the interfaces the row names, which the entry point exports.
    const holders = codeSpans(where).filter((name) => exported?.get(name)?.declarations?.[0]?.kind === "interface");
    if (holders.length === 0) misses.push(`${why}: ${entry} exports neither ${newName} nor an interface the row names`);
    const file = entryFiles.get(entry);
    for (const holder of holders) {
      const alias = `Probe${optionProbes.length}`;
      optionProbes.push(`import type { ${holder} as ${alias} } from ${JSON.stringify(join(root, file ?? "?"))};`);
      // A generic option type is instantiated with `any` for each of its type parameters.
      const typeParams = exported?.get(holder)?.declarations?.[0]?.def?.typeParams?.length ?? 0;
      const args = typeParams > 0 ? `<${Array(typeParams).fill("any").join(", ")}>` : "";
      optionProbes.push(`export type ${alias}_${newName} = ${alias}${args}["${newName}"]; // ${why}`);
    }
  }
  checked.renamed++;
}
if (optionProbes.length > 0) {
  // The type checker says whether each renamed option is a property of its types (inherited ones included). The
  // probe lives outside the checkout: deno.json excludes .cache/, and deno check skips excluded files silently.
  const probeDir = mkdtempSync(join(tmpdir(), "watchwire-migration-"));
  const probe = join(probeDir, "probe.ts");
  writeFileSync(probe, optionProbes.join("\n") + "\n");
  try {
    execFileSync(deno, ["check", "--quiet", "--config", join(root, "deno.json"), probe], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (e) {
    const output = String((e as { stderr?: string }).stderr ?? e).split("\n").filter((l) =>
      /TS\d+|\/\/ renamed/.test(l)
    );
    misses.push(`renamed options that are not properties of the types their rows name:\n    ${output.join("\n    ")}`);
  } finally {
    rmSync(probeDir, { recursive: true, force: true });
  }
}
const kindsSection = markdown.split("## `watchwire/kinds`")[1]?.split("\n## ")[0] ?? "";
for (const [, name, inner] of kindsSection.matchAll(/^- `(\w+)`: `meta_v1\.(\w+)` from `watchwire\/kubernetes`/gm)) {
  const metaV1 = exportsByEntry.get("watchwire/kubernetes")?.get("meta_v1");
  const elements = metaV1?.declarations?.flatMap((d) => d.def?.elements ?? []) ?? [];
  if (!elements.some((e) => e.name === inner)) {
    misses.push(`kinds ${name}: watchwire/kubernetes has no meta_v1.${inner}`);
  }
  expectExport("watchwire", name, `kinds ${name}`);
  checked.kinds++;
}

if (checked.moved === 0 || checked.renamed === 0 || checked.kinds === 0) {
  misses.push(`a section of docs/migration.md was not found or is empty: ${JSON.stringify(checked)}`);
}
if (misses.length > 0) {
  console.error(`docs/migration.md: ${misses.length} names not where it says:\n  ${misses.join("\n  ")}`);
  process.exit(1);
}
console.log(
  `docs/migration.md holds: ${checked.moved} moved names, ${checked.renamed} renamed, ${checked.kinds} kinds' names found where it says`,
);
