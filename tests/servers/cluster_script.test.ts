/**
 * The README's way to run a cluster by hand: `eval "$(node scripts/kube/cluster.mjs start)"`, then
 * `node scripts/kube/cluster.mjs stop`, run here as child processes with `--dir` a temporary directory (and
 * `--watch-cache=false`, a flag the script passes on to kube-apiserver). `start` prints one line, `export
 * KUBECONFIG=<path>`, that a shell's eval takes; that kubeconfig connects in this runtime and lists namespaces; `stop`
 * ends etcd and kube-apiserver, by the PIDs in the directory. The binaries are those scripts/kube/build.mjs cached.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { connectCluster } from "../../src/cluster/connection/connect_cluster.ts";
import { loadKubeconfig } from "../../src/cluster/kubeconfig/load_kubeconfig.ts";
import { list } from "../../src/cluster/list.ts";
import { stopCluster } from "../../scripts/kube/cluster.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** The `node` of the README's command line: this one under Node, else the one on PATH (or `$WATCHWIRE_NODE`). */
const NODE = "Deno" in globalThis || "Bun" in globalThis ? process.env.WATCHWIRE_NODE ?? "node" : process.execPath;

type Run = { status: number | null; stdout: string; stderr: string };

/** Runs `node scripts/kube/cluster.mjs ...args` from the repository's root; killed if it runs past `timeoutMs`. */
function cluster(args: string[], timeoutMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, ["scripts/kube/cluster.mjs", ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: string[] = [];
    const err: string[] = [];
    const decoder = [new TextDecoder(), new TextDecoder()];
    child.stdout!.on("data", (chunk: Uint8Array) => out.push(decoder[0].decode(chunk, { stream: true })));
    child.stderr!.on("data", (chunk: Uint8Array) => err.push(decoder[1].decode(chunk, { stream: true })));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout: out.join(""), stderr: err.join("") });
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test(
  "scripts/kube/cluster.mjs: start prints the export eval takes, its kubeconfig lists namespaces, stop ends both processes",
  {
    timeout: 300_000,
  },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "watchwire-cluster-script-"));
    try {
      const start = await cluster(["start", "--dir", dir, "--watch-cache=false"], 240_000);
      assert.equal(start.status, 0, `start failed:\n${start.stderr}`);
      const kubeconfig = join(dir, "kubeconfig");
      assert.equal(start.stdout, `export KUBECONFIG=${kubeconfig}\n`, "stdout is one line, the export");
      // What `eval "$(...)"` makes of it in a shell.
      const shell = spawnSync("sh", ["-c", 'eval "$1" && printf %s "$KUBECONFIG"', "sh", start.stdout], {
        encoding: "utf8",
      });
      assert.equal(shell.status, 0, shell.stderr);
      assert.equal(shell.stdout, kubeconfig);

      const pids = Object.fromEntries(
        ["kube-apiserver", "etcd"].map((name) => [name, Number(readFileSync(join(dir, `${name}.pid`), "utf8"))]),
      );
      for (const [name, pid] of Object.entries(pids)) {
        assert.ok(Number.isInteger(pid) && pid > 0 && alive(pid), `${name} (${pid}) runs after start`);
      }
      // The flag reached kube-apiserver: its command line (Linux's /proc), else what the script recorded.
      const cmdline = `/proc/${pids["kube-apiserver"]}/cmdline`;
      const apiserverArgs: string[] = existsSync(cmdline)
        ? readFileSync(cmdline, "utf8").split("\0")
        : JSON.parse(readFileSync(join(dir, "cluster.json"), "utf8")).apiserverArgs;
      assert.ok(apiserverArgs.includes("--watch-cache=false"), apiserverArgs.join(" "));

      const path = start.stdout.trim().slice("export KUBECONFIG=".length);
      const c = await connectCluster(await loadKubeconfig({ path }));
      try {
        const namespaces = await list(c, { version: "v1", resource: "namespaces" });
        const names = namespaces.items.map((n) => n.metadata?.name);
        for (const name of ["default", "kube-system"]) assert.ok(names.includes(name), `${name} in ${names}`);
        assert.match(namespaces.resourceVersion, /^\d+$/);
      } finally {
        await c.close();
      }

      const stop = await cluster(["stop", "--dir", dir], 60_000);
      assert.equal(stop.status, 0, `stop failed:\n${stop.stderr}`);
      assert.equal(stop.stdout, "");
      for (const [name, pid] of Object.entries(pids)) {
        assert.throws(() => process.kill(pid, 0), `${name} (${pid}) is gone after stop`);
      }
    } finally {
      // If the test failed before its stop: nothing of it left running.
      await stopCluster(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
