/**
 * Against a real kube-apiserver: an informer's state saved (encodeInformerState, msgpack) and resumed from.
 * - While the server still has the saved resourceVersion, the resumed informer does no initial sync
 *   (`stats.initialSyncs` stays 0, and the proxy in front of the server saw one request: a watch from the saved
 *   resourceVersion) and its handlers get exactly the changes made while it was away, in full and in metadata-only
 *   protobuf mode.
 * - Once etcd has compacted it (a server of its own: watch cache off, compaction every second), the resumed informer
 *   relists once (410 Expired; at the proxy, a watch from the saved resourceVersion, then one initial sync) and its
 *   handlers get what changed meanwhile: add, update, delete (final state unknown).
 * - A sequence of time-budgeted runs (runInformerWithin, a memory store), with changes between runs and during them,
 *   sees every change exactly once, and never relists after the first.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connectCluster } from "../../src/cluster/connection/connect_cluster.ts";
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";
import { loadKubeconfig } from "../../src/cluster/kubeconfig/load_kubeconfig.ts";
import { objectUrl, resourcePath, type ResourceRef } from "../../src/cluster/resource.ts";
import { informer } from "../../src/cluster/resource_source.ts";
import { KubernetesProtobufObject } from "../../src/codec/kubernetes/protobuf_object.ts";
import type { KubernetesObject } from "../../src/events.ts";
import type { Informer, InformerChange } from "../../src/watch/informer.ts";
import { decodeInformerState, encodeInformerState } from "../../src/watch/informer_state.ts";
import { runInformerWithin } from "../../src/watch/run_informer.ts";
import { loadInformerState, memoryStateStore } from "../../src/watch/state_store.ts";
import { builtinDecoders } from "../../src/codec/kubernetes/generated/all.ts";
import type { Cluster } from "../../scripts/kube/cluster.mjs";
import { type ProxyStats, startFaultProxy } from "../peers/fault_proxy.ts";
import { apiRequest, namespaceName, ownCluster, sharedCluster, sharedFaultProxy } from "./_cluster.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Started (or attached) at the file's top level, so that when this file runs alone it lasts for all its tests.
const shared = sharedCluster();
shared.catch(() => {});

type Obj = KubernetesObject & { metadata: { name: string; resourceVersion: string } };

async function connect(cluster: Cluster, server?: string): Promise<ClusterConnection> {
  const config = await loadKubeconfig({ path: cluster.kubeconfig });
  return connectCluster(server === undefined ? config : { ...config, server });
}

/** The requests a fault proxy (with no faults) saw for namespace `ns`: kind and resourceVersion asked for. */
async function requestsFor(proxy: { stats(): Promise<ProxyStats> }, ns: string): Promise<string[]> {
  return (await proxy.stats()).requests.filter((r) => r.path.includes(`/namespaces/${ns}/`))
    .map((r) => `${r.kind}${r.resourceVersion === undefined ? "" : ` ${r.resourceVersion}`}`);
}

const send = (c: ClusterConnection, method: string, url: URL, body?: unknown) => apiRequest<Obj>(c, method, url, body);

const configMaps = (namespace: string): ResourceRef => ({ version: "v1", resource: "configmaps", namespace });
const create = (c: ClusterConnection, ns: string, name: string) =>
  send(c, "POST", new URL(resourcePath(configMaps(ns)), c.server), { metadata: { name }, data: { v: "0" } });
const update = (c: ClusterConnection, ns: string, name: string, v: string) =>
  send(c, "PATCH", objectUrl(c.server, configMaps(ns), name), { data: { v } });
const remove = (c: ClusterConnection, ns: string, name: string) =>
  send(c, "DELETE", objectUrl(c.server, configMaps(ns), name));

async function namespace(c: ClusterConnection, what: string): Promise<string> {
  const name = namespaceName(what);
  await send(c, "POST", new URL("/api/v1/namespaces", c.server), { metadata: { name } });
  return name;
}

/** What a change is, as a line: `add a 123`, `update a 124`, `delete a` (`delete? a` for a final state unknown). */
function describe(change: InformerChange<KubernetesObject>): string {
  if (change.type === "delete") {
    const o = change.object;
    return "finalStateUnknown" in o ? `delete? ${o.object.metadata?.name}` : `delete ${o.metadata?.name}`;
  }
  return `${change.type} ${change.object.metadata?.name} ${change.object.metadata?.resourceVersion}`;
}

/** Records the changes of `informer` as lines, from now on (no replay of what a resumed store holds). */
function record(informer: Informer): string[] {
  const seen: string[] = [];
  informer.addHandlers({
    add: (object) => void seen.push(describe({ type: "add", object })),
    update: (old, object) => void seen.push(describe({ type: "update", old, object })),
    delete: (object) => void seen.push(describe({ type: "delete", object })),
  }, { replay: false });
  return seen;
}

async function waitFor(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

const names = (objects: KubernetesObject[]) => objects.map((o) => o.metadata?.name).sort();

for (const mode of ["json", "protobuf metadata"] as const) {
  test(`informer state (${mode}): resumed while the server has its resourceVersion, no relist, only the changes since`, async () => {
    const cluster = await shared;
    const c = await connect(cluster);
    try {
      const ns = await namespace(c, "resume");
      await create(c, ns, "a");
      await create(c, ns, "b");
      const options = mode === "json"
        ? { format: "json" as const }
        : { format: "protobuf" as const, protobuf: { decoders: builtinDecoders, mode: "metadata" as const } };
      const first = informer(c, configMaps(ns), options);
      const running = first.start();
      await first.synced;
      assert.deepEqual(names(first.store.list()), ["a", "b"]);
      if (mode !== "json") assert.ok(first.store.list()[0] instanceof KubernetesProtobufObject);
      first.stop();
      await running;
      const bytes = await encodeInformerState(first.snapshot());
      const saved = await decodeInformerState(bytes);
      assert.equal(saved.resourceVersion, first.resourceVersion);
      // A metadata-only object is kept as its JSON: kind, apiVersion, metadata.
      assert.deepEqual(saved.objects, JSON.parse(JSON.stringify(first.snapshot().objects)));

      const a1 = await update(c, ns, "a", "1");
      const d = await create(c, ns, "d");
      await remove(c, ns, "b");

      // Resumed through the proxy (no faults), which counts its requests.
      const proxy = await sharedFaultProxy();
      const viaProxy = await connect(cluster, proxy.url);
      const resumed = informer(viaProxy, configMaps(ns), { ...options, resume: saved });
      const seen = record(resumed);
      const again = resumed.start();
      await waitFor("the three changes", () => seen.length >= 3);
      await sleep(300); // nothing more may come
      resumed.stop();
      await again;
      assert.deepEqual(seen, [
        `update a ${a1.metadata.resourceVersion}`,
        `add d ${d.metadata.resourceVersion}`,
        "delete b",
      ]);
      await viaProxy.close();
      assert.equal(resumed.stats.initialSyncs, 0);
      assert.equal(resumed.stats.expired, 0);
      assert.deepEqual(await requestsFor(proxy, ns), [`watchFromVersion ${saved.resourceVersion}`]);
      assert.deepEqual(names(resumed.store.list()), ["a", "d"]);
      await send(c, "DELETE", new URL(`/api/v1/namespaces/${ns}`, c.server));
    } finally {
      await c.close();
    }
  });
}

test("informer state: resumed after etcd compacted its resourceVersion, one relist, the changes meanwhile", {
  timeout: 180_000,
}, async () => {
  const cluster = await ownCluster({ watchCache: false, etcdCompactionInterval: "1s" });
  const c = await connect(cluster);
  try {
    const ns = await namespace(c, "compacted");
    await create(c, ns, "a");
    await create(c, ns, "b");
    await create(c, ns, "c");
    const first = informer(c, configMaps(ns), { format: "protobuf", protobuf: { decoders: builtinDecoders } });
    const running = first.start();
    await first.synced;
    first.stop();
    await running;
    const bytes = await encodeInformerState(first.snapshot());

    const a1 = await update(c, ns, "a", "1");
    await remove(c, ns, "b");
    const d = await create(c, ns, "d");
    // Compaction runs each interval up to the revision seen at the interval before: more writes, then past two.
    for (let i = 0; i < 4; i++) {
      await update(c, ns, "c", `x${i}`);
      await sleep(500);
    }
    await sleep(3000);
    const c4 = await update(c, ns, "c", "last");

    const proxy = await startFaultProxy({ upstream: cluster.server, ca: cluster.pki.ca, caKey: cluster.pki.caKey });
    const viaProxy = await connect(cluster, proxy.url);
    const saved = await decodeInformerState(bytes);
    const resumed = informer(viaProxy, configMaps(ns), {
      format: "protobuf",
      protobuf: { decoders: builtinDecoders },
      resume: saved,
    });
    const seen = record(resumed);
    const again = resumed.start();
    await waitFor("the relist's changes", () => seen.length >= 4);
    await sleep(300);
    resumed.stop();
    await again;
    await viaProxy.close();
    const requests = await requestsFor(proxy, ns);
    await proxy.close();
    assert.equal(resumed.stats.expired, 1, "the watch from the saved resourceVersion was refused: 410");
    assert.equal(resumed.stats.initialSyncs, 1);
    // At the proxy: the watch from the saved resourceVersion, then one streaming list, whose watch goes on.
    assert.deepEqual(requests, [`watchFromVersion ${saved.resourceVersion}`, "streamingList"]);
    assert.deepEqual(
      seen.sort(),
      [
        `add d ${d.metadata.resourceVersion}`,
        `update a ${a1.metadata.resourceVersion}`,
        `update c ${c4.metadata.resourceVersion}`,
        "delete? b",
      ].sort(),
    );
  } finally {
    await c.close();
  }
});

test("runInformerWithin: budgeted runs, changes between and during them, each change seen exactly once", {
  timeout: 120_000,
}, async () => {
  const cluster = await shared;
  const c = await connect(cluster);
  try {
    const ns = await namespace(c, "budget");
    const store = memoryStateStore();
    const made: string[] = [];
    const seen: string[] = [];
    const syncs: number[] = [];
    const made1 = await create(c, ns, "before");
    made.push(`add before ${made1.metadata.resourceVersion}`);
    for (let run = 0; run < 5; run++) {
      // Between runs: a new one, an update of the one before, and the deletion of the one before that.
      const created = await create(c, ns, `between-${run}`);
      made.push(`add between-${run} ${created.metadata.resourceVersion}`);
      if (run >= 1) {
        const updated = await update(c, ns, `between-${run - 1}`, "1");
        made.push(`update between-${run - 1} ${updated.metadata.resourceVersion}`);
      }
      if (run >= 2) {
        await remove(c, ns, `between-${run - 2}`);
        made.push(`delete between-${run - 2}`);
      }
      const pods = informer(c, configMaps(ns), { resume: await loadInformerState(store, "cms") });
      const recorded = record(pods);
      // During the run: changes while it watches (some land after it stopped, for the next run).
      const during = (async () => {
        for (let i = 0; i < 4; i++) {
          await sleep(150);
          const o = await update(c, ns, "before", `${run}.${i}`);
          made.push(`update before ${o.metadata.resourceVersion}`);
        }
      })();
      const result = await runInformerWithin(pods, { budgetMs: 600, reserveMs: 100, store, key: "cms" });
      await during;
      seen.push(...recorded);
      syncs.push(pods.stats.initialSyncs);
      assert.equal(result.state?.resourceVersion, pods.resourceVersion);
      assert.deepEqual(names(result.state!.objects), names(pods.store.list()));
    }
    // The last changes, picked up by one more run.
    const last = informer(c, configMaps(ns), { resume: await loadInformerState(store, "cms") });
    const recorded = record(last);
    await runInformerWithin(last, { budgetMs: 800, store, key: "cms" });
    seen.push(...recorded);
    syncs.push(last.stats.initialSyncs);

    assert.deepEqual(syncs, [1, 0, 0, 0, 0, 0], "one initial sync, then watches from the saved resourceVersion");
    assert.deepEqual([...seen].sort(), [...made].sort());
    assert.equal(new Set(seen).size, seen.length, "no change twice");
    await send(c, "DELETE", new URL(`/api/v1/namespaces/${ns}`, c.server));
  } finally {
    await c.close();
  }
});
