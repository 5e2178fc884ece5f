#!/usr/bin/env node
// `npm run docs:api`: the API reference, built from the JSDoc of the entry points by `deno doc --html` into docs/api/
// (generated, not committed: see .gitignore). Open docs/api/index.html.
//
// Exits 1 if deno doc fails, or reports a problem (an error or a warning) about the project's files. deno doc also
// warns about node_modules/@types/node/index.d.ts, whose `/// <reference path>` lines it cannot resolve (deno check
// does not): those warnings are counted and printed, not failed on, since nothing in the project can change them.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The entry points the reference documents: one section each. Change this list when the entry points change. */
const ENTRY_POINTS = ["mod.ts", "wire.ts", "kubernetes.ts", "capture.ts", "cli.ts", "msgpack_no_eval.ts"];
/** Where the reference goes, from the repository's root. */
const OUTPUT = "docs/api";

const root = fileURLToPath(new URL("..", import.meta.url));
const local = `${root}node_modules/.bin/deno`;
const deno = existsSync(local) ? local : "deno";

rmSync(`${root}${OUTPUT}`, { recursive: true, force: true });
const run = spawnSync(deno, ["doc", "--html", "--name=watchwire", `--output=${OUTPUT}`, ...ENTRY_POINTS], {
  cwd: root,
  encoding: "utf8",
  env: { ...process.env, NO_COLOR: "1" },
  maxBuffer: 1 << 26,
});
if (run.error !== undefined) {
  console.error(`docs:api: could not run ${deno}: ${run.error.message}`);
  process.exit(1);
}

// A diagnostic is a line that starts with "error" or "warning", and the lines indented under it (its location).
const diagnostics = [];
for (const line of `${run.stdout}\n${run.stderr}`.split("\n")) {
  if (/^(error|warning)\b/i.test(line)) diagnostics.push([line]);
  else if (/^\s+\S/.test(line) && diagnostics.length > 0) diagnostics.at(-1).push(line);
}
const inDependency = (d) => d.slice(1).some((l) => l.includes("/node_modules/"));
const ignored = diagnostics.filter(inDependency);
const problems = diagnostics.filter((d) => !inDependency(d));

if (ignored.length > 0) {
  const files = [...new Set(ignored.map((d) => d.slice(1).join(" ").replace(/^.*?(node_modules\/\S+?):\d+.*$/, "$1")))];
  console.log(`docs:api: ${ignored.length} warnings about dependencies, not ours: ${files.join(", ")}`);
}
if (run.status !== 0 || problems.length > 0) {
  console.error(problems.map((d) => d.join("\n")).join("\n") || `${run.stdout}${run.stderr}`);
  console.error(
    `docs:api: deno doc ${run.status !== 0 ? `exited ${run.status}` : `reported ${problems.length} problems`}`,
  );
  process.exit(1);
}
if (!existsSync(`${root}${OUTPUT}/index.html`)) {
  console.error(`docs:api: deno doc wrote no ${OUTPUT}/index.html`);
  process.exit(1);
}
const written = /Written (\d+) files/.exec(run.stdout + run.stderr)?.[1] ??
  String(readdirSync(`${root}${OUTPUT}`).length);
console.log(`docs:api: ${written} files in ${OUTPUT}/ from ${ENTRY_POINTS.join(", ")}; open ${OUTPUT}/index.html`);
