#!/usr/bin/env node
// The tests that need servers from other registries, set up here: `npm run test:servers`.
//
// What it needs and installs:
// - Go (on these machines) and the Go module proxy: builds kube-apiserver and kubectl v1.37.2 and etcd v3.7.3 into
//   ~/.cache/watchwire (scripts/kube/build.mjs; minutes, once per machine), and openssl for the test CA.
// - Debian's chromium and firefox-esr for the browser checks, and tcpdump, tshark and curl for the real captures:
//   installed with apt-get when missing (as root).
// Then it starts one kube-apiserver with etcd for the run (tests/servers/_cluster.ts attaches to it; a test that
// needs other flags starts its own), runs tests/servers/ in Node, Deno and Bun, stops the server, and runs the
// browser checks (scripts/browser-check.ts, the capture viewer's, scripts/capture-viewer-check.ts, and a WebSocket
// watch of a real kube-apiserver of its own, scripts/browser-websocket-check.ts). `npm run test:servers -- node` runs one runtime and no browsers.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildEtcd, buildKubernetes } from "./kube/build.mjs";
import { startCluster } from "./kube/cluster.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
// `--verbose`: each runtime's full report as it runs (scripts/test-all.mjs); other words name runtimes or "browsers".
const verbose = process.argv.includes("--verbose");
const only = process.argv.slice(2).filter((a) => a !== "--verbose");
const runtimes = ["node", "deno", "bun"].filter((r) => only.length === 0 || only.includes(r));
const browsers = only.length === 0 || only.includes("browsers");

function need(command, args, why) {
  const result = spawnSync(command, args, { encoding: "utf8" });
  if (result.error || result.status !== 0) {
    console.error(`test:servers needs ${command} (${why}): ${result.error?.message ?? result.stderr}`);
    process.exit(2);
  }
}

function aptInstall(packages) {
  const missing = packages.filter(([command]) => spawnSync("sh", ["-c", `command -v ${command}`]).status !== 0);
  if (missing.length === 0) return;
  const names = missing.map(([, pkg]) => pkg);
  if (process.getuid?.() !== 0) {
    console.error(`test:servers needs ${names.join(", ")} (Debian): run as root, or apt-get install them first`);
    process.exit(2);
  }
  console.error(`== installing ${names.join(", ")} (Debian)`);
  for (const args of [["update", "-qq"], ["install", "-y", "-qq", ...names]]) {
    const r = spawnSync("apt-get", args, {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
}

need("go", ["version"], "to build kube-apiserver and etcd from the Go module proxy");
need("openssl", ["version"], "to make the test CA and certificates");
// tcpdump and tshark: the real captures of tests/servers/capture_real.test.ts; curl: its watching client.
aptInstall([["tcpdump", "tcpdump"], ["tshark", "tshark"], ["curl", "curl"]]);
if (browsers) aptInstall([["chromium", "chromium"], ["firefox-esr", "firefox-esr"]]);

const started = Date.now();
const built = { ...buildEtcd(), ...buildKubernetes() };
console.error(
  `== binaries ready in ${((Date.now() - started) / 1000).toFixed(0)} s: ${Object.values(built).join(" ")}`,
);

let status = 0;
if (runtimes.length > 0) {
  const dir = mkdtempSync(join(tmpdir(), "watchwire-servers-"));
  const cluster = await startCluster({ dir });
  console.error(`== kube-apiserver ${cluster.server} ready in ${cluster.startSeconds} s (${dir})`);
  try {
    const result = spawnSync(
      process.execPath,
      [join(root, "scripts/test-all.mjs"), "--suite", "servers", ...(verbose ? ["--verbose"] : []), ...runtimes],
      {
        cwd: root,
        stdio: "inherit",
        env: { ...process.env, WATCHWIRE_CLUSTER_DIR: dir },
      },
    );
    status = result.status ?? 1;
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
if (browsers) {
  for (const browser of ["chromium", "firefox-esr"]) {
    console.log(`\n=== browser check: ${browser} ===`);
    const result = spawnSync(process.execPath, ["--import", "tsx", "scripts/browser-check.ts", browser], {
      cwd: root,
      stdio: "inherit",
    });
    if (result.status !== 0) status = result.status ?? 1;
    console.log(`\n=== capture viewer check: ${browser} ===`);
    const viewer = spawnSync(process.execPath, ["--import", "tsx", "scripts/capture-viewer-check.ts", browser], {
      cwd: root,
      stdio: "inherit",
    });
    if (viewer.status !== 0) status = viewer.status ?? 1;
    console.log(`\n=== browser WebSocket check: ${browser} ===`);
    const webSocket = spawnSync(process.execPath, ["--import", "tsx", "scripts/browser-websocket-check.ts", browser], {
      cwd: root,
      stdio: "inherit",
    });
    if (webSocket.status !== 0) status = webSocket.status ?? 1;
  }
}
process.exit(status);
