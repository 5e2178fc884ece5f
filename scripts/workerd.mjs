// @ts-self-types="./workerd.d.mts"
// A Worker run in workerd, Cloudflare Workers' own runtime: its binary comes from the `workerd` npm package (a
// devDependency, as deno and bun are). Used by tests/workerd.test.ts and scripts/read-buffers.mjs.
//
// The Worker is one ES module with no compatibility flags (no Node APIs: what a Worker has), listening on a free
// loopback port; every `fetch` it makes goes to one loopback server (`outbound`, its only way out), whatever the URL.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The compatibility date the Workers are run with (at most workerd's own date). */
const COMPATIBILITY_DATE = "2026-11-01";

/**
 * Starts workerd with the Worker `module` (ES module source) and waits until it answers. `outbound`: `host:port` of the
 * server every fetch of the Worker goes to. Returns its base URL, its output so far (`log()`), a promise that rejects
 * when workerd exits (`exited`, already handled), and `stop()`, which ends it and removes its files.
 */
export async function startWorker({ module, outbound }) {
  const dir = mkdtempSync(join(tmpdir(), "watchwire-workerd-"));
  const port = await freePort();
  writeFileSync(join(dir, "worker.js"), module);
  writeFileSync(
    join(dir, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "outbound", external = (address = "${outbound}", http = ())),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  globalOutbound = "outbound",
);
`,
  );
  const child = spawn(join(root, "node_modules", ".bin", "workerd"), ["serve", join(dir, "config.capnp")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise((_, reject) => {
    child.on("exit", (code, signal) => reject(new Error(`workerd exited (${code ?? signal}): ${output}`)));
  });
  exited.catch(() => {}); // raced by the caller; expected once stop() ends it
  const stop = () => {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  // workerd listens once its config is compiled.
  try {
    for (let tries = 0;; tries++) {
      const up = await Promise.race([
        fetch(url, { method: "HEAD" }).then(() => true, (error) => {
          if (tries >= 100) throw error;
          return false;
        }),
        exited,
      ]);
      if (up) return { url, log: () => output, exited, stop };
      await Promise.race([new Promise((resolve) => setTimeout(resolve, 100)), exited]);
    }
  } catch (error) {
    stop();
    throw error;
  }
}
