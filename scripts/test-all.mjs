#!/usr/bin/env node
// Runs the test suite under Node (the one running npm), the current Node LTS (scripts/node-lts.mjs), Deno and Bun (the
// binaries come from npm) and fails if any runtime fails. `npm test -- node deno` runs only the runtimes named. Each runtime's own report is shown as it runs; a summary line per runtime and a total come last.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const only = process.argv.slice(2);
// Node's test runner reports in TAP when not on a terminal up to Node 22, later with the spec reporter; the Node that
// runs npm may be either.
const nodeCounts = { pass: /^(?:# |ℹ )pass (\d+)/m, fail: /^(?:# |ℹ )fail (\d+)/m };
const runtimes = [
  { name: "node", script: "test:node", ...nodeCounts },
  { name: "node-lts", script: "test:node-lts", ...nodeCounts },
  { name: "deno", script: "test:deno", pass: /(\d+) passed/, fail: /(\d+) failed/ },
  { name: "bun", script: "test:bun", pass: /^\s*(\d+) pass$/m, fail: /^\s*(\d+) fail$/m },
].filter((r) => only.length === 0 || only.includes(r.name));

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
      resolve({ name: runtime.name, code, passed, failed });
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
process.exit(bad ? 1 : 0);
