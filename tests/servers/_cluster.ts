/**
 * The real kube-apiserver the server tests run against: the one scripts/test-servers.mjs started for the whole run
 * (its directory in WATCHWIRE_CLUSTER_DIR), or, when a test file runs alone, one started here and stopped when the
 * file's tests end. Tests that need a server of their own (other flags, a restart) call startCluster themselves.
 */
import { after } from "node:test";
import { spawnSync } from "node:child_process";
import process from "node:process";
import { type FaultProxy, startFaultProxy } from "../peers/fault_proxy.ts";
import { attachCluster, type Cluster, type ClusterOptions, startCluster } from "../../scripts/kube/cluster.mjs";

let shared: Promise<Cluster> | undefined;
let started: Cluster | undefined;

let faultProxy: Promise<FaultProxy> | undefined;

// Registered as this module loads (at a test file's top level): an `after` registered inside a test would stop the
// cluster when that test ends, in Node and Bun, before the file's next test.
after(async () => {
  await (await faultProxy)?.close();
  await started?.destroy();
});

/** A fault proxy (tests/peers/fault_proxy.ts) in front of the shared cluster, for the file's tests. */
export function sharedFaultProxy(): Promise<FaultProxy> {
  faultProxy ??= sharedCluster().then((cluster) =>
    startFaultProxy({ upstream: cluster.server, ca: cluster.pki.ca, caKey: cluster.pki.caKey })
  );
  return faultProxy;
}

/** The run's shared cluster. */
export function sharedCluster(): Promise<Cluster> {
  shared ??= (async () => {
    const dir = process.env.WATCHWIRE_CLUSTER_DIR;
    if (dir) return attachCluster(dir);
    started = await startCluster();
    return started;
  })();
  return shared;
}

/** A cluster of the test's own (stopped and removed after the file's tests). */
export async function ownCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const cluster = await startCluster(options);
  after(() => cluster.destroy());
  return cluster;
}

/** The runtime running the test, for names of namespaces that do not collide between runtimes. */
export const RUNTIME = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";

/** A namespace name of its own for a test: `ww-<runtime>-<what>-<random>`. */
export function namespaceName(what: string): string {
  return `ww-${RUNTIME}-${what}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Runs kubectl (built beside kube-apiserver, of its version) against `cluster` (the admin token context); its stdout, or it throws with stderr. */
export function kubectl(cluster: Cluster, args: string[], input?: string): string {
  const result = spawnSync(cluster.binaries.kubectl, ["--kubeconfig", cluster.kubeconfig, ...args], {
    encoding: "utf8",
    ...(input === undefined ? {} : { input }),
  });
  if (result.error) throw new Error(`kubectl could not run : ${result.error.message}`);
  if (result.status !== 0) throw new Error(`kubectl ${args.join(" ")} failed: ${result.stderr}`);
  return result.stdout;
}

export { apiRequest } from "./_api.ts";
