/**
 * Checks that the JSDoc examples say what they print. `deno test --doc` type-checks and runs every example, but
 * nothing checked the comments that state a `console.log`'s output: this runs each example in Deno with every
 * statement of the form
 *
 *     console.log(a, b); // what it prints
 *
 * that stands at the example's top level (not indented; alone, or after a one-line `if (...)`) replaced by a call that
 * formats its arguments as `console.log` does (`Deno.inspect`, strings as they are) and compares them with the
 * comment, white space aside (a comment is one line where `Deno.inspect` may break a long array over several; where
 * the comment writes a line break as `\n`, that reading is accepted too; after the output, the comment may explain it
 * after ": " or " ("). Each such statement must run exactly once. Lines inside loops and callbacks are not compared:
 * what they print varies by design. Exit 1 with each mismatch listed.
 *
 * Run: `node --import tsx scripts/check-example-output.ts` (needs the `deno` devDependency).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const deno = `${root}node_modules/.bin/deno`;
const work = `${root}.tmp/example-output-${process.pid}/`;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = `${dir}/${name}`;
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

interface Example {
  where: string;
  code: string;
}

/** The ```ts blocks of the JSDoc comments of `file`, with the ` * ` margin removed. */
function examplesOf(file: string): Example[] {
  const text = readFileSync(file, "utf8");
  const examples: Example[] = [];
  const lines = text.split("\n");
  let block: string[] | undefined;
  let start = 0;
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*\* ?(.*)$/.exec(lines[i]);
    if (m === null) {
      block = undefined;
      continue;
    }
    const body = m[1];
    if (block === undefined) {
      if (/^```(ts|typescript)\s*$/.test(body)) {
        block = [];
        start = i + 1;
      }
    } else if (/^```\s*$/.test(body)) {
      examples.push({ where: `${file.slice(root.length)}:${start}`, code: block.join("\n") });
      block = undefined;
    } else block.push(body);
  }
  return examples;
}

// A statement at the example's top level (it runs once), alone or after a one-line `if (...)`.
const STATEMENT = /^((?:if \(.*\) )?)console\.log\((.*)\);\s*\/\/ (.*)$/;

/** The example with its top-level `console.log(...); // output` statements turned into checks (their ids: to `ids`). */
function instrument(example: Example, ids: string[]): string {
  return example.code.split("\n").map((line, i) => {
    const m = STATEMENT.exec(line);
    if (m === null) return line;
    const id = `${example.where} +${i}`;
    ids.push(id);
    return `${m[1]}(globalThis as any).__expectOutput(${JSON.stringify(id)}, ${JSON.stringify(m[3].trimEnd())}, ${
      m[2]
    });`;
  }).join("\n");
}

const RUNNER = `
const mismatches: string[] = [];
const format = (args: unknown[]) => args.map((a) => typeof a === "string" ? a : Deno.inspect(a)).join(" ");
const norm = (text: string) => text.replace(/\\s+/g, " ").trim();
// A comment may go on after the output with ": " or " (" to explain it.
const same = (printed: string, comment: string) =>
  [comment, comment.replaceAll("\\\\n", "\\n")].map(norm).some((c) =>
    c === norm(printed) || c.startsWith(norm(printed) + ": ") || c.startsWith(norm(printed) + " (")
  );
const calls = new Map<string, number>();
(globalThis as any).__expectOutput = (where: string, expected: string, ...args: unknown[]) => {
  calls.set(where, (calls.get(where) ?? 0) + 1);
  const got = format(args);
  if (!same(got, expected)) {
    mismatches.push(where + "\\n    comment: " + expected + "\\n    printed: " + got.replaceAll("\\n", "\\\\n"));
  }
};
const log = console.log;
const files: string[] = JSON.parse(Deno.args[0]);
const ids: string[] = JSON.parse(Deno.args[1]);
for (const file of files) {
  console.log = () => {};
  try {
    await import(file);
  } catch (e) {
    mismatches.push(file + ": threw " + e);
  } finally {
    console.log = log;
  }
}
// Each checked statement stands at the top level: it must have run exactly once (not skipped by its if, not repeated).
for (const id of ids) {
  const n = calls.get(id) ?? 0;
  if (n !== 1) mismatches.push(id + ": printed " + n + " times, where its comment states one output");
}
console.log(JSON.stringify({ mismatches }));
`;

/** The entry points, whose module docs have examples too. */
const ENTRY_POINTS = ["mod.ts", "wire.ts", "kubernetes.ts", "capture.ts", "cli.ts", "msgpack_no_eval.ts"];
const examples = [...sourceFiles(`${root}src`), ...ENTRY_POINTS.map((file) => `${root}${file}`)].flatMap(examplesOf);
mkdirSync(work, { recursive: true });
try {
  const files: string[] = [];
  const ids: string[] = [];
  examples.forEach((example, n) => {
    const before = ids.length;
    const code = instrument(example, ids);
    if (ids.length === before) return;
    const file = `${work}example_${n}.ts`;
    writeFileSync(file, code + "\n");
    files.push(`./example_${n}.ts`);
  });
  writeFileSync(`${work}runner.ts`, RUNNER);
  const out = execFileSync(deno, [
    "run",
    "-A",
    "--quiet",
    `${work}runner.ts`,
    JSON.stringify(files),
    JSON.stringify(ids),
  ], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 1 << 26,
  });
  const result = JSON.parse(out.trim().split("\n").pop()!) as { mismatches: string[] };
  if (result.mismatches.length > 0) {
    console.error(`${result.mismatches.length} example output comment(s) differ from what the example prints:`);
    for (const m of result.mismatches) console.error(`  ${m}`);
    process.exitCode = 1;
  } else {
    console.log(
      `check-example-output: ${ids.length} printed values in ${files.length} of ${examples.length} examples match their comments`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
