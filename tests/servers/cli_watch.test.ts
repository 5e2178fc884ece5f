/**
 * `watchwire watch` against a real kube-apiserver, the command run in the runtime running the test (Node:
 * `node --import tsx bin/node.ts`, Deno: `deno run -A bin/deno.ts`, Bun: `bun bin/node.ts`), changes made with
 * kubectl (an independent client) while it runs. Each printed line must be the change kubectl made (type, name,
 * resourceVersion as kubectl's answer says); the initial sync's progress and its end are on stderr; SIGINT ends it with
 * status 0 and its state written; a second run from that state prints only what changed meanwhile, with no initial
 * sync.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { connectCluster } from "../../src/cluster/connection/connect_cluster.ts";
import { loadKubeconfig } from "../../src/cluster/kubeconfig/load_kubeconfig.ts";
import { decodeInformerState } from "../../src/watch/informer_state.ts";
import { kubectl, namespaceName, RUNTIME, sharedCluster } from "./_cluster.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
// Started (or attached) at the file's top level, so that when this file runs alone it lasts for all its tests.
const shared = sharedCluster();
shared.catch(() => {});

const CLI: Record<string, string[]> = {
  node: ["--import", "tsx", "bin/node.ts"],
  deno: ["run", "-A", "bin/deno.ts"],
  bun: ["bin/node.ts"],
};

/** Every CLI started: killed when the file's tests end, so that a failed test leaves none running. */
const started = new Set<ChildProcess>();
after(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** The CLI running, its output read as it comes. */
class Running {
  readonly child: ChildProcess;
  stdout = "";
  stderr = "";
  readonly exited: Promise<number | null>;
  constructor(args: string[]) {
    this.child = spawn(process.execPath, [...CLI[RUNTIME], ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1" },
    });
    started.add(this.child);
    this.child.stdout!.on("data", (chunk) => (this.stdout += chunk));
    this.child.stderr!.on("data", (chunk) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)));
  }
  lines(): string[] {
    return this.stdout.split("\n").filter((line) => line !== "");
  }
  /** Waits until `check` holds (polled), or fails naming what was awaited and the output so far. */
  async until(what: string, check: () => boolean, ms = 30_000): Promise<void> {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end || this.child.exitCode !== null) {
        this.child.kill("SIGKILL");
        assert.fail(`${what}: not within ${ms} ms\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  async interrupt(): Promise<number | null> {
    // process.kill rather than child.kill: Deno's child.kill makes the exit event say the signal ended the child
    // (code null) even when it handled it and exited with a status of its own.
    process.kill(this.child.pid!, "SIGINT");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 20_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

type Answer = { metadata: { name: string; resourceVersion: string } };
const json = (text: string) => JSON.parse(text) as Answer;

test(
  `cli watch (${RUNTIME}): changes printed live as kubectl makes them; SIGINT writes the state; a resumed run prints only what changed meanwhile`,
  {
    timeout: 180_000,
  },
  async () => {
    const cluster = await shared;
    const ns = namespaceName("cli");
    const dir = mkdtempSync(join(tmpdir(), "watchwire-cli-watch-"));
    const state = join(dir, "configmaps.state");
    const k = (...args: string[]) => kubectl(cluster, ["-n", ns, ...args]);
    try {
      kubectl(cluster, ["create", "namespace", ns]);
      const a = json(k("create", "configmap", "a", "--from-literal=v=0", "-o", "json"));
      k("create", "configmap", "b", "--from-literal=v=0");
      k("create", "configmap", "unlabelled", "--from-literal=v=0");
      k("label", "configmap", "a", "b", "app=web");
      const a0 = json(k("get", "configmap", "a", "-o", "json"));
      const b0 = json(k("get", "configmap", "b", "-o", "json"));
      assert.notEqual(a0.metadata.resourceVersion, a.metadata.resourceVersion);

      const first = new Running([
        "watch",
        "--kubeconfig",
        cluster.kubeconfig,
        "-n",
        ns,
        "-l",
        "app=web",
        "-o",
        "ndjson",
        "--state",
        state,
        "configmaps",
      ]);
      await first.until("the synced line", () => /synced 2 configmaps at resourceVersion \d+/.test(first.stderr));
      k("create", "configmap", "c", "--from-literal=v=0");
      k("label", "configmap", "c", "app=web");
      const c0 = json(k("get", "configmap", "c", "-o", "json"));
      const a1 = json(k("patch", "configmap", "a", "-p", '{"data":{"v":"1"}}', "-o", "json"));
      k("delete", "configmap", "b");
      k("patch", "configmap", "unlabelled", "-p", '{"data":{"v":"1"}}');
      await first.until("five lines", () => first.lines().length >= 5);
      await new Promise((r) => setTimeout(r, 500)); // nothing more may come
      const events = first.lines().map((line) => JSON.parse(line));
      const seen = events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`);
      const initial = seen.slice(0, 2).sort();
      assert.deepEqual(initial, [`ADDED a ${a0.metadata.resourceVersion}`, `ADDED b ${b0.metadata.resourceVersion}`]);
      // c was created without the label: the watch sees it when the label makes it match. The unlabelled one never.
      assert.deepEqual(seen.slice(2, 4), [
        `ADDED c ${c0.metadata.resourceVersion}`,
        `MODIFIED a ${a1.metadata.resourceVersion}`,
      ]);
      assert.match(seen[4], /^DELETED b \d+$/);
      assert.ok(BigInt(seen[4].split(" ")[2]) > BigInt(a1.metadata.resourceVersion));
      assert.equal(events.length, 5, `no more lines: ${seen.join(", ")}`);
      assert.equal(events[2].object.kind, "ConfigMap");
      assert.deepEqual(events[3].object.data, { v: "1" });
      const deletedAt = events[4].object.metadata.resourceVersion;
      assert.equal(await first.interrupt(), 0, first.stderr);
      // At the last change, or at a bookmark after it (the server sends them for changes the selector filters out).
      const stoppedAt = /stopped at resourceVersion (\d+); state written to /.exec(first.stderr)?.[1];
      assert.ok(stoppedAt !== undefined && BigInt(stoppedAt) >= BigInt(deletedAt), first.stderr);

      const saved = await decodeInformerState(new Uint8Array(readFileSync(state)));
      assert.equal(saved.resourceVersion, stoppedAt);
      assert.deepEqual(saved.objects.map((o) => o.metadata?.name).sort(), ["a", "c"]);

      // While it is not running: d created, c deleted, a left alone.
      k("create", "configmap", "d", "--from-literal=v=0");
      k("label", "configmap", "d", "app=web");
      const d0 = json(k("get", "configmap", "d", "-o", "json"));
      k("delete", "configmap", "c");
      const second = new Running([
        "watch",
        "--kubeconfig",
        cluster.kubeconfig,
        "--namespace",
        ns,
        "--selector=app=web",
        "--output",
        "table",
        "--state",
        state,
        "configmaps",
      ]);
      await second.until("two rows", () => second.lines().length >= 3);
      await new Promise((r) => setTimeout(r, 500));
      const [heading, ...rows] = second.lines();
      assert.match(heading, /^EVENT +NAME +RESOURCEVERSION +AGE$/);
      assert.equal(rows.length, 2, second.stdout);
      assert.match(rows[0], new RegExp(`^ADDED +d +${d0.metadata.resourceVersion} +\\d+s$`));
      assert.match(rows[1], /^DELETED +c +\d+ +\d+s$/);
      assert.match(second.stderr, new RegExp(`resumed 2 configmaps at resourceVersion ${stoppedAt} from `));
      assert.doesNotMatch(second.stderr, /synced/, "no initial sync: a watch from the saved resourceVersion");
      assert.equal(await second.interrupt(), 0, second.stderr);

      // The state file is of one resource and namespace: another is refused, not resumed wrongly.
      for (
        const [args, message] of [
          [["-n", "default", "configmaps"], `holds objects of namespace ${ns}, not of default`],
          [["-n", ns, "secrets"], "holds the state of ConfigMap objects, not of Secret (v1)"],
        ] as const
      ) {
        const refused = new Running(["watch", "--kubeconfig", cluster.kubeconfig, "--state", state, ...args]);
        assert.equal(await refused.exited, 1, refused.stderr);
        assert.equal(refused.stderr, `watchwire: ${state} ${message}\n`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      kubectl(cluster, ["delete", "namespace", ns, "--wait=false"]);
    }
  },
);

test(
  `cli watch (${RUNTIME}): progress while a large initial sync runs, metadata only, a field selector, -A with deployments.apps`,
  {
    timeout: 180_000,
  },
  async () => {
    const cluster = await shared;
    const ns = namespaceName("cli-big");
    const c = await connectCluster(await loadKubeconfig({ path: cluster.kubeconfig }));
    try {
      kubectl(cluster, ["create", "namespace", ns]);
      // 1 100 ConfigMaps, eight requests at a time (kubectl would take one at a time).
      const headers = await c.headers();
      headers.set("content-type", "application/json");
      const names = Array.from({ length: 1100 }, (_, i) => `cm-${String(i).padStart(4, "0")}`);
      for (let i = 0; i < names.length; i += 8) {
        await Promise.all(
          names.slice(i, i + 8).map(async (name) => {
            const response = await c.fetch(new URL(`/api/v1/namespaces/${ns}/configmaps`, c.server), {
              method: "POST",
              headers,
              body: JSON.stringify({ metadata: { name, labels: { n: name } }, data: { big: "x".repeat(200) } }),
            });
            assert.equal(response.status, 201, await response.text());
          }),
        );
      }
      const run = new Running([
        "watch",
        `--kubeconfig=${cluster.kubeconfig}`,
        "-n",
        ns,
        "--metadata-only",
        "--field-selector",
        "metadata.name!=cm-0007",
        "configmaps",
      ]);
      await run.until("the synced line", () => /synced 1099 configmaps/.test(run.stderr));
      await run.until("1099 lines", () => run.lines().length >= 1099);
      assert.match(run.stderr, /syncing configmaps: 500 objects so far\n/);
      assert.match(run.stderr, /syncing configmaps: 1000 objects so far\n/);
      const events = run.lines().map((line) => JSON.parse(line));
      assert.equal(events.length, 1099);
      assert.ok(events.every((e) => e.type === "ADDED"));
      assert.deepEqual(events.map((e) => e.object.metadata.name).sort(), names.filter((n) => n !== "cm-0007"));
      // Metadata only: kind, apiVersion, metadata; no data.
      assert.deepEqual(Object.keys(events[0].object), ["kind", "apiVersion", "metadata"]);
      assert.equal(events[0].object.metadata.labels.n, events[0].object.metadata.name);
      assert.equal(await run.interrupt(), 0, run.stderr);

      const all = new Running(["watch", "--kubeconfig", cluster.kubeconfig, "-A", "-o", "table", "deploy.apps"]);
      await all.until("synced", () => /synced \d+ deployments\.apps/.test(all.stderr));
      const made = JSON.parse(
        kubectl(cluster, ["-n", ns, "create", "deployment", "web", "--image=nginx", "-o", "json"]),
      );
      const row = new RegExp(`^ADDED +${ns} +web +${made.metadata.resourceVersion} +\\d+s$`, "m");
      await all.until("its row", () => row.test(all.stdout));
      const lines = all.lines();
      assert.match(lines[0], /^EVENT +NAMESPACE +NAME +RESOURCEVERSION +AGE$/);
      assert.equal(await all.interrupt(), 0, all.stderr);
    } finally {
      await c.close();
      kubectl(cluster, ["delete", "namespace", ns, "--wait=false"]);
    }
  },
);

for (
  const flags of [["--transport", "websocket"], ["--transport", "websocket", "--format", "json"], ["--format", "cbor"]]
) {
  test(`cli watch (${RUNTIME}) ${flags.join(" ")}: the same changes printed live`, { timeout: 120_000 }, async () => {
    const cluster = await shared;
    const ns = namespaceName("cli-flags");
    const k = (...args: string[]) => kubectl(cluster, ["-n", ns, ...args]);
    try {
      kubectl(cluster, ["create", "namespace", ns]);
      k("create", "configmap", "a", "--from-literal=v=0");
      const run = new Running(["watch", "--kubeconfig", cluster.kubeconfig, "-n", ns, "-o", "ndjson", ...flags, "cm"]);
      await run.until("the synced line", () => /synced 1 configmaps at resourceVersion \d+/.test(run.stderr));
      const b = json(k("create", "configmap", "b", "--from-literal=v=0", "-o", "json"));
      const a1 = json(k("patch", "configmap", "a", "-p", '{"data":{"v":"1"}}', "-o", "json"));
      k("delete", "configmap", "b");
      await run.until("four lines", () => run.lines().length >= 4);
      const seen = run.lines().map((line) => JSON.parse(line)).map((e) =>
        `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`
      );
      assert.match(seen[0], /^ADDED a \d+$/);
      assert.deepEqual(seen.slice(1, 3), [
        `ADDED b ${b.metadata.resourceVersion}`,
        `MODIFIED a ${a1.metadata.resourceVersion}`,
      ]);
      assert.match(seen[3], /^DELETED b \d+$/);
      assert.equal(await run.interrupt(), 0, run.stderr);
    } finally {
      kubectl(cluster, ["delete", "namespace", ns, "--wait=false"]);
    }
  });
}

test(`cli watch (${RUNTIME}): an unknown resource and a usage error are one line each`, async () => {
  const cluster = await shared;
  const unknown = new Running(["watch", "--kubeconfig", cluster.kubeconfig, "gizmos"]);
  assert.equal(await unknown.exited, 1);
  assert.equal(unknown.stderr, 'watchwire: the server doesn\'t have a resource type "gizmos"\n');
  const usage = new Running(["watch", "-A", "-n", "x", "pods"]);
  assert.equal(await usage.exited, 2);
  assert.equal(
    usage.stderr,
    "watchwire: -n NAMESPACE and -A (all namespaces) exclude each other\n" +
      "Usage: watchwire watch [OPTION]... RESOURCE  (watchwire --help for the options)\n",
  );
});
