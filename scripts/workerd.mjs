// @ts-self-types="./workerd.d.mts"
// A Worker run in workerd, Cloudflare Workers' own runtime: its binary comes from the `workerd` npm package (a
// devDependency, as deno and bun are). Used by tests/workerd.test.ts and scripts/read-buffers.mjs.
//
// The Worker is one ES module with no compatibility flags (no Node APIs: what a Worker has), listening on a free
// loopback port; every `fetch` it makes goes to one loopback server (`outbound`, its only way out), whatever the URL.
// Optionally (examples/workers, tests/servers/examples.test.ts) it has Durable Object classes with their storage on
// disk (kept across restarts of workerd), text bindings, and service bindings to HTTPS servers that workerd reaches
// with TLS of its own (a private CA, a client certificate): a Worker's mTLS binding, in effect.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The compatibility date the Workers are run with (at most workerd's own date). */
const COMPATIBILITY_DATE = "2026-11-01";

/** A capnp text literal. */
const text = (value) => JSON.stringify(String(value));

/**
 * Starts workerd with the Worker `module` (ES module source) and waits until it answers. `outbound`: `host:port` of the
 * server every fetch of the Worker goes to (none: the Worker reaches only its service bindings). Options for Durable
 * Objects and bindings: `durableObjects` ([{ className, binding }]: classes the module exports, each bound to the
 * Worker's env as `binding`), `storageDir` (where their storage is kept, left in place by `stop()`, so a workerd
 * started again with it finds it; default: in memory), `bindings` ({ NAME: text }), `httpsServices`
 * ([{ binding, address, ca, certificateHost, clientCertificate, clientKey }]: `env[binding].fetch(...)` goes to
 * `address` over TLS, the server's certificate checked against `ca` (PEM) for `certificateHost`, presenting the client
 * certificate if given). Returns its base URL, its output so far (`log()`), a promise that rejects when workerd exits
 * (`exited`, already handled), and `stop()`, which ends it and removes its files (the storage directory aside).
 */
export async function startWorker({
  module,
  outbound,
  durableObjects = [],
  storageDir,
  bindings = {},
  httpsServices = [],
}) {
  const dir = mkdtempSync(join(tmpdir(), "watchwire-workerd-"));
  const port = await freePort();
  writeFileSync(join(dir, "worker.js"), module);
  const services = [`(name = "main", worker = .worker)`];
  if (outbound !== undefined) services.push(`(name = "outbound", external = (address = ${text(outbound)}, http = ()))`);
  const workerBindings = Object.entries(bindings).map(([name, value]) =>
    `(name = ${text(name)}, text = ${text(value)})`
  );
  for (const [i, service] of httpsServices.entries()) {
    const keypair = service.clientCertificate === undefined
      ? ""
      : `keypair = (privateKey = ${text(service.clientKey)}, certificateChain = ${text(service.clientCertificate)}), `;
    services.push(
      `(name = "https-${i}", external = (address = ${text(service.address)}, https = (options = (), ` +
        `tlsOptions = (${keypair}trustedCertificates = [${text(service.ca)}]), ` +
        `certificateHost = ${text(service.certificateHost ?? "localhost")})))`,
    );
    workerBindings.push(`(name = ${text(service.binding)}, service = "https-${i}")`);
  }
  for (const { className, binding } of durableObjects) {
    workerBindings.push(`(name = ${text(binding)}, durableObjectNamespace = ${text(className)})`);
  }
  let storage = "";
  if (durableObjects.length > 0) {
    if (storageDir !== undefined) {
      services.push(`(name = "do-storage", disk = (path = ${text(storageDir)}, writable = true))`);
      storage = `durableObjectStorage = (localDisk = "do-storage"),`;
    } else {
      storage = "durableObjectStorage = (inMemory = void),";
    }
  }
  const namespaces = durableObjects.map(({ className }) =>
    `(className = ${text(className)}, uniqueKey = ${text(`watchwire-${className}`)})`
  );
  writeFileSync(
    join(dir, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    ${services.join(",\n    ")},
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  ${outbound === undefined ? "" : `globalOutbound = "outbound",`}
  bindings = [${workerBindings.join(", ")}],
  durableObjectNamespaces = [${namespaces.join(", ")}],
  ${storage}
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
