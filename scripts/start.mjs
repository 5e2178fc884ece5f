#!/usr/bin/env node
// `npm start`: decodes every bundled server-to-client capture in fixtures/ with the built CLI and prints the events
// as a table (pass `-- --output ndjson` for JSON lines). Request-direction captures (*.request.http) are left out;
// the etcd Watch capture (HTTP/2) is decoded with its request direction.
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
// The etcd Watch capture is HTTP/2 (gRPC): its request direction tells the CLI which stream is the watch.
const runs = [
  ...captures.map((file) => [file]),
  ["fixtures/etcd-watch.s2c.bin", "--request", "fixtures/etcd-watch.c2s.bin"],
];
let status = 0;
for (const files of runs) {
  console.log(`\n# ${files.join(" ")}`);
  const run = spawnSync(process.execPath, ["dist/cli/node.js", "decode", ...args, ...files], {
    cwd: root,
    stdio: "inherit",
  });
  status ||= run.status ?? 1;
}
process.exit(status);
