#!/usr/bin/env node
// Runs the test suite under Node (the one running npm), the current Node LTS (scripts/node-lts.mjs), Deno and Bun (the
// binaries come from npm) and fails if any runtime fails. `npm test -- node deno` runs only the runtimes named. Each
// runtime's own report is shown as it runs; a summary line per runtime and a total come last, and after them, for a
// runtime that failed, its failures again: CI keeps only the end of a long log, which must still say what failed.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
// `--suite servers`: the tests of tests/servers/ (scripts/test-servers.mjs sets up their servers and passes this).
const args = process.argv.slice(2);
const suiteAt = args.indexOf("--suite");
const suite = suiteAt >= 0 ? args.splice(suiteAt, 2)[1] : "main";
const prefix = suite === "servers" ? "test:servers:" : "test:";
const only = args;
// Node's test runner reports in TAP when not on a terminal up to Node 22, later with the spec reporter; the Node that
// runs npm may be either.
const nodeCounts = { pass: /^(?:# |ℹ )pass (\d+)/m, fail: /^(?:# |ℹ )fail (\d+)/m };
const runtimes = [
  { name: "node", script: `${prefix}node`, ...nodeCounts, failures: nodeFailures },
  { name: "node-lts", script: `${prefix}node-lts`, ...nodeCounts, failures: nodeFailures },
  { name: "deno", script: `${prefix}deno`, pass: /(\d+) passed/, fail: /(\d+) failed/, failures: denoFailures },
  { name: "bun", script: `${prefix}bun`, pass: /^\s*(\d+) pass$/m, fail: /^\s*(\d+) fail$/m, failures: bunFailures },
].filter((r) => (only.length === 0 ? suite === "main" || r.name !== "node-lts" : only.includes(r.name)));

/** The lines around each place a report says a test failed (`before` lines ahead of it, `after` behind). */
function around(lines, isFailure, before, after) {
  const keep = new Set();
  lines.forEach((line, i) => {
    if (!isFailure(line)) return;
    for (let j = Math.max(0, i - before); j <= Math.min(lines.length - 1, i + after); j++) keep.add(j);
  });
  return [...keep].sort((a, b) => a - b).map((i) => lines[i]);
}

// Node's spec reporter repeats the failures at its end under "failing tests"; its TAP reporter says "not ok" and
// then the details.
function nodeFailures(lines) {
  const start = lines.findIndex((line) => /failing tests:/.test(line));
  return start >= 0 ? lines.slice(start) : around(lines, (line) => /^\s*not ok /.test(line), 0, 40);
}

// Deno lists every failure with its error under "ERRORS", then their names under "FAILURES".
function denoFailures(lines) {
  const start = lines.findIndex((line) => /^\s*ERRORS\s*$/.test(line));
  return start >= 0 ? lines.slice(start) : around(lines, (line) => /\.\.\. FAILED/.test(line), 0, 0);
}

// Bun prints a failing test's error just ahead of its "(fail)" line.
function bunFailures(lines) {
  return around(lines, (line) => /^\(fail\)/.test(line), 40, 0);
}

function run(runtime) {
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", "--silent", runtime.script], {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const keep = (chunk, to) => {
      output += chunk.toString();
      to.write(chunk);
    };
    child.stdout.on("data", (c) => keep(c, process.stdout));
    child.stderr.on("data", (c) => keep(c, process.stderr));
    child.on("close", (code) => {
      // deno-lint-ignore no-control-regex
      const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
      const passed = Number(plain.match(runtime.pass)?.[1] ?? 0);
      const failed = Number(plain.match(runtime.fail)?.[1] ?? 0);
      const lines = plain.split("\n");
      // A run that stopped before any test failed (a type error, a crash at load) leaves no failure to find: its
      // report's end says why.
      const failures = code === 0 ? [] : runtime.failures(lines);
      if (code !== 0 && failures.length === 0) {
        failures.push("(no failing test found; the report's end:)", ...lines.slice(-40));
      }
      resolve({ name: runtime.name, code, passed, failed, failures });
    });
  });
}

const results = [];
for (const runtime of runtimes) {
  console.log(`\n=== ${runtime.name} ===`);
  results.push(await run(runtime));
}
console.log("\n=== summary ===");
let passed = 0;
let failed = 0;
let bad = false;
for (const r of results) {
  console.log(`${r.name}: ${r.passed} passed, ${r.failed} failed, exit ${r.code}`);
  passed += r.passed;
  failed += r.failed;
  if (r.code !== 0 || r.passed === 0) bad = true;
}
console.log(`${passed} passed, ${failed} failed`);
for (const r of results) {
  if (r.code === 0) continue;
  const shown = r.failures.slice(-300);
  console.log(
    `\n=== ${r.name}: what failed (${shown.length < r.failures.length ? "the last 300 lines of " : ""}its report) ===`,
  );
  console.log(shown.join("\n"));
}
process.exit(bad ? 1 : 0);
