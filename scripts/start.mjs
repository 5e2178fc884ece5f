#!/usr/bin/env node
// `npm start`: decodes every bundled server-to-client capture in fixtures/ with the built CLI and prints the events
// as a table (pass `-- --output ndjson` for JSON lines). Request-direction captures (*.request.http) are left out.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const captures = readdirSync(new URL("../fixtures/", import.meta.url))
  .filter((name) => name.endsWith(".http") && !name.endsWith(".request.http"))
  .sort()
  .map((name) => `fixtures/${name}`);
const extra = process.argv.slice(2);
const args = extra.length > 0 ? extra : ["--output", "table"];
let status = 0;
for (const file of captures) {
  console.log(`\n# ${file}`);
  const run = spawnSync(process.execPath, ["dist/cli/node.js", "decode", ...args, file], {
    cwd: root,
    stdio: "inherit",
  });
  status ||= run.status ?? 1;
}
process.exit(status);
