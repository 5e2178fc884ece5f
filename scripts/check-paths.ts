/**
 * Checks that every file path the repository's comments and docs name exists: repository-relative paths
 * (`src/…`, `tests/…`, `scripts/…`, `bench/…`, `docs/…`, `fixtures/…`, `tools/…`, `examples/…`, `bin/…`) in the
 * comments of the sources, scripts, tests and benchmarks and anywhere in the docs; paths relative to the file
 * (`./<file>.ts`, `../<file>.md`, `../<folder>/`) in comments; and the local targets of Markdown links. Lists each
 * one that does not exist, with where it is named (exit 1), or prints a count.
 *
 * Kept simple, and so low on false positives: a path with a placeholder in it (`<group>`, `*`, `${name}`, `{a,b}`,
 * `…`, `...`) is skipped, and so are paths under `node_modules/`, `dist/`, `.cache/` and `docs/api/` (generated, not
 * committed), code outside comments (the type checkers see its imports), relative paths in comments that name no
 * source or doc file (a user's `./state.kv` in an example) and `../shared/` (the conformance corpus beside the
 * checkout). `bench/RESULTS.md`, the log of past runs, names files as they were at each run: what it names that is
 * gone is printed as a warning, not failed on.
 *
 * Run: `node --import tsx scripts/check-paths.ts`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/** What is scanned: these folders (recursively) and files. */
const SCANNED_DIRS = ["src", "tests", "bench", "scripts", "bin", "docs", "examples"];
const SCANNED_FILES = [
  "README.md",
  "fixtures/README.md",
  "mod.ts",
  "wire.ts",
  "kubernetes.ts",
  "capture.ts",
  "cli.ts",
  "msgpack_no_eval.ts",
];
/** Files of these kinds are read. */
const TEXT = /\.(?:ts|mts|cts|js|mjs|cjs|md)$/;
/** Never scanned, never checked: generated or installed. */
const SKIPPED = ["node_modules", "dist", ".cache", "docs/api"];
/** Named paths that are gone are warnings here, not failures (see the module comment). */
const WARN_ONLY = new Set(["bench/RESULTS.md"]);

/** The top-level folders a repository-relative path starts with. */
const TOP = "(?:src|tests|scripts|bench|docs|fixtures|tools|examples|bin)";
/**
 * A repository-relative path: a top-level folder, then path characters. Not preceded by a path character, `@`, `:`
 * or `~` (so not the middle of a URL, of a package path such as `node_modules/<package>/src/`, or of a relative path).
 */
const REPO_PATH = new RegExp(`(?<![\\w.@:~/\\\\-])${TOP}/[\\w./-]*`, "g");
/** A path relative to the file that names it, in a comment. */
const RELATIVE_PATH = /(?<![\w.@:~/\\-])\.\.?\/[\w./-]*/g;
/** A Markdown link's target (inline links). */
const MD_LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
/**
 * The relative paths checked: those of a source or doc file, or of a folder (`../<folder>/`). Others in comments are the
 * user's files in examples (`./state.kv`, `./kubeconfig`).
 */
const RELATIVE_CHECKED = /(?:\.(?:ts|mts|mjs|js|md|json|go|sh)|\/)$/;
/** `../shared/`: the conformance corpus beside the checkout, not the repository's to check. */
const OUTSIDE = /^(?:\.\.\/)+shared\//;
/** Characters that, right after a match, say the path goes on with a placeholder. */
const PLACEHOLDER_AFTER = /^[<*{$[…]/;

interface Finding {
  file: string;
  line: number;
  path: string;
}

function skipped(rel: string): boolean {
  return SKIPPED.some((s) => rel === s || rel.startsWith(`${s}/`) || rel.includes(`/${s}/`));
}

function walk(dir: string, out: string[]): void {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (skipped(rel)) continue;
    if (entry.isDirectory()) walk(rel, out);
    else if (TEXT.test(entry.name)) out.push(rel);
  }
}

/** `path` as named, less what ends a sentence or a reference (`.`, `,`, a `:line`, `#anchor`...). */
function clean(path: string): string {
  return path.replace(/#.*$/, "").replace(/[.,;:]+$/, "");
}

/** Whether `path` (relative to the repository, or absolute) names a file or folder that exists. */
function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The comment part of a line of code: the whole line in a block comment, else what follows `//`. */
function commentOf(line: string, inBlock: boolean): string | undefined {
  const t = line.trimStart();
  if (inBlock || t.startsWith("*") || t.startsWith("/*") || t.startsWith("//")) return line;
  const at = line.indexOf(" // ");
  return at === -1 ? undefined : line.slice(at);
}

function scan(file: string): Finding[] {
  const text = readFileSync(join(root, file), "utf8");
  const markdown = file.endsWith(".md");
  const here = dirname(join(root, file));
  const found: Finding[] = [];
  const check = (path: string, base: string, line: number) => {
    const p = clean(path);
    if (p === "" || p === "." || p === ".." || path.includes("...") || OUTSIDE.test(p)) return;
    const full = resolve(base, p);
    const rel = relative(root, full);
    if (rel.startsWith("..") || skipped(rel)) return;
    if (!exists(full)) found.push({ file, line, path });
  };
  /** Inside a block comment (code), or a fenced code block (Markdown). */
  let inBlock = false;
  text.split("\n").forEach((line, i) => {
    const n = i + 1;
    // Markdown: all of it (code blocks too: a file tree names files); code: its comments.
    const prose = markdown ? line : commentOf(line, inBlock);
    if (prose !== undefined) {
      for (const m of prose.matchAll(REPO_PATH)) {
        if (m[0].endsWith("/") || PLACEHOLDER_AFTER.test(prose.slice(m.index + m[0].length))) continue;
        check(m[0], root, n);
      }
    }
    if (markdown) {
      // Links are relative to the page, as a Markdown viewer reads them; code blocks hold code, not links.
      if (/^\s*(?:```|~~~)/.test(line)) inBlock = !inBlock;
      if (inBlock) return;
      for (const m of line.matchAll(MD_LINK)) {
        const target = m[1];
        if (/^[a-z][\w+.-]*:/i.test(target) || target.startsWith("#") || /[<*{$…]/.test(target)) continue;
        check(decodeURI(target), here, n);
      }
      return;
    }
    if (prose !== undefined) {
      for (const m of prose.matchAll(RELATIVE_PATH)) {
        const before = prose[m.index - 1];
        if (before === '"' || before === "'") continue; // an import in an example: its checker sees it
        if (!RELATIVE_CHECKED.test(clean(m[0])) || PLACEHOLDER_AFTER.test(prose.slice(m.index + m[0].length))) continue;
        check(m[0], here, n);
      }
    }
    // Block comments: open after a `/*` without its `*/`, closed by a `*/`. Not a `/*` in a line comment or in a
    // path (`tests/*.test.ts`).
    if (!inBlock && line.trimStart().startsWith("//")) return;
    const open = Math.max(-1, ...[...line.matchAll(/(?<![\w./-])\/\*/g)].map((m) => m.index));
    const close = line.lastIndexOf("*/");
    if (open !== -1 && open > close) inBlock = true;
    else if (close !== -1) inBlock = false;
  });
  // A path named twice on one line is one finding.
  return found.filter((f, k) => found.findIndex((g) => g.line === f.line && g.path === f.path) === k);
}

const files: string[] = [];
for (const dir of SCANNED_DIRS) walk(dir, files);
for (const file of SCANNED_FILES) if (existsSync(join(root, file))) files.push(file);

const failures: Finding[] = [];
const warnings: Finding[] = [];
for (const file of files) {
  for (const finding of scan(file)) (WARN_ONLY.has(file) ? warnings : failures).push(finding);
}
const show = (f: Finding) => `  ${f.file}:${f.line}: ${f.path}`;
if (warnings.length > 0) {
  console.warn(`check-paths: ${warnings.length} path(s) named in past records that no longer exist (not failed on):`);
  for (const f of warnings) console.warn(show(f));
}
if (failures.length > 0) {
  console.error(`check-paths: ${failures.length} path(s) named that do not exist:`);
  for (const f of failures) console.error(show(f));
  process.exit(1);
}
console.log(`check-paths: every path named in ${files.length} files exists`);
