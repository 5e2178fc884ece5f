#!/usr/bin/env node
// `npm start`: decodes every bundled server-to-client capture in fixtures/ with the built CLI and prints the events
// as a table (pass `-- --output ndjson` for JSON lines). Each is decoded with its request direction (--request), so
// the table names the request of every response: the HTTP/1.1 captures of node:http, Deno.serve and Bun.serve
// (*.request.http), the etcd Watch capture (HTTP/2), Go net/http's HEAD capture, and the Go net/http captures of
// Kubernetes protobuf watches (fixtures/kubernetes/captures: HTTP/1.1 and h2c).
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const captures = readdirSync(new URL("../fixtures/", import.meta.url))
  .filter((name) => name.endsWith(".http") && !name.endsWith(".request.http"))
  .sort()
  .map((name) => `fixtures/${name}`);
const goCaptures = readdirSync(new URL("../fixtures/kubernetes/captures/", import.meta.url))
  .filter((name) => name.endsWith(".s2c.bin"))
  .sort()
  .map((name) => {
    const file = `fixtures/kubernetes/captures/${name}`;
    return [file, "--request", file.replace(/\.s2c\.bin$/, ".c2s.bin")];
  });
const extra = process.argv.slice(2);
const args = extra.length > 0 ? extra : ["--output", "table"];
// The etcd Watch capture is HTTP/2 (gRPC): its request direction tells the CLI which stream is the watch.
const runs = [
  ...captures.map((file) => [file, "--request", file.replace(/\.http$/, ".request.http")]),
  ["fixtures/etcd-watch.s2c.bin", "--request", "fixtures/etcd-watch.c2s.bin"],
  // Go's net/http: HEAD responses on a keep-alive connection, which only the request direction can frame.
  ["fixtures/go-http1-head.s2c.bin", "--request", "fixtures/go-http1-head.c2s.bin"],
  ...goCaptures,
];
let status = 0;
for (const files of runs) {
  console.log(`\n# ${files.join(" ")}`);
  const run = spawnSync(process.execPath, ["dist/bin/node.js", "decode", ...args, ...files], {
    cwd: root,
    stdio: "inherit",
  });
  status ||= run.status ?? 1;
}
process.exit(status);
