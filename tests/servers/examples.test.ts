/**
 * The examples of examples/, each run as written against the real kube-apiserver: a Worker's Durable Object in workerd
 * (its storage on disk, the API server reached over TLS with the cluster's private CA through a service binding), a
 * Deno.serve function with Deno KV, a Bun.serve function with a state directory, and a Node job. Each does three
 * budgeted steps with kubectl's changes between them, and is restarted (a new process; workerd started again on the
 * same storage) before the third: the first step syncs (one initial sync, every ConfigMap as `add`), the next ones
 * resume from the saved state with no initial sync and see exactly the changes made since, once.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { type RunningWorker, startWorker } from "../../scripts/workerd.mjs";
import { kubectl, namespaceName, sharedCluster } from "./_cluster.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = (name: string) => join(root, "node_modules", ".bin", name);
// Started (or attached) at the file's top level, so that when this file runs alone it lasts for all its tests.
const shared = sharedCluster();
shared.catch(() => {});

/** What a step answers (the examples' common shape). */
interface Step {
  resumed: boolean;
  initialSyncs: number;
  changes: string[];
}

/** An example: how to run one step, how to restart it (a new process), how to end it. */
interface Runner {
  step(budgetMs: number): Promise<Step>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** A server example: started, its `listening on URL` line awaited; `/step` fetched. */
function serverRunner(command: string, args: string[], env: Record<string, string>): Runner {
  let child: ChildProcess | undefined;
  let url: Promise<string> | undefined;
  let output = "";
  const start = () => {
    const started = spawn(command, args, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    child = started;
    children.add(started);
    url = new Promise<string>((resolve, reject) => {
      started.stdout!.on("data", (chunk) => {
        output += chunk;
        const m = /listening on (http:\/\/\S+)/.exec(output);
        if (m) resolve(m[1]);
      });
      started.stderr!.on("data", (chunk) => (output += chunk));
      started.on("exit", (code) => reject(new Error(`exited (${code}) before listening: ${output}`)));
    });
    url.catch(() => {});
  };
  const stop = async () => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child!.on("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  };
  start();
  return {
    step: async (budgetMs) => {
      const response = await fetch(`${await url}/step?budgetMs=${budgetMs}`);
      const text = await response.text();
      assert.equal(response.status, 200, `${text}\n${output}`);
      return JSON.parse(text);
    },
    restart: async () => {
      await stop();
      output = "";
      start();
      await url;
    },
    stop,
  };
}

/** The Node job: each step is a run of its own (`restart` is then nothing). */
function jobRunner(env: Record<string, string>): Runner {
  return {
    step: (budgetMs) => {
      const run = spawnSync("node", ["--import", "tsx", "examples/node/informer_job.ts"], {
        cwd: root,
        encoding: "utf8",
        env: { ...process.env, ...env, BUDGET_MS: String(budgetMs) },
      });
      assert.equal(run.status, 0, run.stderr);
      const summary = /(started|resumed); initial syncs: (\d+);/.exec(run.stderr);
      assert.ok(summary, run.stderr);
      return Promise.resolve({
        resumed: summary[1] === "resumed",
        initialSyncs: Number(summary[2]),
        changes: run.stdout.split("\n").filter((line) => line !== ""),
      });
    },
    restart: () => Promise.resolve(),
    stop: () => Promise.resolve(),
  };
}

/** The Worker: bundled with esbuild, run by workerd with its Durable Object's storage in `storageDir`. */
async function workerRunner(env: Record<string, string>, storageDir: string): Promise<Runner> {
  const cluster = await shared;
  const built = spawnSync(
    bin("esbuild"),
    ["examples/workers/worker.ts", "--bundle", "--format=esm", "--platform=neutral", "--log-level=error"],
    { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  assert.equal(built.status, 0, built.stderr);
  const options = {
    module: built.stdout,
    durableObjects: [{ className: "ConfigMapInformer", binding: "INFORMER" }],
    storageDir,
    bindings: { KUBE_SERVER: cluster.server, KUBE_TOKEN: cluster.adminToken, NAMESPACE: env.NAMESPACE },
    // workerd's own TLS to the API server, trusting the cluster's private CA (its certificate names localhost).
    httpsServices: [{
      binding: "KUBE",
      address: new URL(cluster.server).host,
      ca: readFileSync(cluster.pki.ca, "utf8"),
      certificateHost: "localhost",
    }],
  };
  let worker: RunningWorker = await startWorker(options);
  return {
    step: async (budgetMs) => {
      const response = await Promise.race([fetch(`${worker.url}/step?budgetMs=${budgetMs}`), worker.exited]);
      const text = await response.text();
      assert.equal(response.status, 200, `${text}\n${worker.log()}`);
      return JSON.parse(text);
    },
    restart: async () => {
      worker.stop();
      await worker.exited.catch(() => {});
      worker = await startWorker(options);
    },
    stop: () => {
      worker.stop();
      return Promise.resolve();
    },
  };
}

const EXAMPLES: [string, (env: Record<string, string>, dir: string) => Runner | Promise<Runner>][] = [
  ["workers (Durable Object in workerd)", (env, dir) => workerRunner(env, dir)],
  [
    "deno (Deno.serve, Deno KV)",
    (env, dir) =>
      serverRunner(bin("deno"), ["run", "-A", "--unstable-kv", "examples/deno/main.ts"], {
        ...env,
        KV_PATH: join(dir, "state.kv"),
      }),
  ],
  [
    "bun (Bun.serve, a state directory)",
    (env, dir) => serverRunner(bin("bun"), ["examples/bun/server.ts"], { ...env, STATE_DIR: dir }),
  ],
  ["node (a job, a state directory)", (env, dir) => jobRunner({ ...env, STATE_DIR: dir })],
];

for (const [name, make] of EXAMPLES) {
  test(`examples/${name}: resumes across steps and restarts, each change once, one initial sync`, {
    timeout: 180_000,
  }, async () => {
    const cluster = await shared;
    const ns = namespaceName("example");
    const dir = mkdtempSync(join(tmpdir(), "watchwire-example-"));
    const rv = (...args: string[]) =>
      JSON.parse(kubectl(cluster, ["-n", ns, ...args, "-o", "json"])).metadata.resourceVersion as string;
    kubectl(cluster, ["create", "namespace", ns]);
    const runner = await make({ KUBECONFIG: cluster.kubeconfig, NAMESPACE: ns }, dir);
    try {
      const a = rv("create", "configmap", "a", "--from-literal=v=0");
      const first = await runner.step(1500);
      assert.deepEqual(first, { ...first, resumed: false, initialSyncs: 1, changes: [`add a ${a}`] });

      const b = rv("create", "configmap", "b", "--from-literal=v=0");
      const second = await runner.step(1500);
      assert.deepEqual(second, { ...second, resumed: true, initialSyncs: 0, changes: [`add b ${b}`] });

      await runner.restart();
      const a1 = rv("patch", "configmap", "a", "-p", '{"data":{"v":"1"}}');
      kubectl(cluster, ["-n", ns, "delete", "configmap", "b"]);
      const third = await runner.step(1500);
      assert.deepEqual(third, {
        ...third,
        resumed: true,
        initialSyncs: 0,
        changes: [`update a ${a1}`, third.changes[1]],
      });
      assert.match(third.changes[1] ?? "", /^delete b \d+$/);
      assert.equal(third.changes.length, 2);

      // Nothing changed: nothing seen.
      const fourth = await runner.step(800);
      assert.deepEqual(fourth.changes, []);
      assert.equal(fourth.initialSyncs, 0);
    } finally {
      await runner.stop();
      rmSync(dir, { recursive: true, force: true });
      kubectl(cluster, ["delete", "namespace", ns, "--wait=false"]);
    }
  });
}
