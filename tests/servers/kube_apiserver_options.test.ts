/**
 * The real kube-apiserver with the options the watcher's tests need, each on a server of its own: etcd compacting
 * every second with the watch cache off (a watch or a list continued from a compacted resourceVersion: 410), a
 * restart that keeps etcd's data (the watch cache's window moves on), and the WatchList feature gate off (a
 * streaming list refused, the signal to fall back to list + watch).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connectCluster } from "../../src/cluster/connection/connect_cluster.ts";
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";
import { loadKubeconfig } from "../../src/cluster/kubeconfig/load_kubeconfig.ts";
import { list } from "../../src/cluster/list.ts";
import { objectUrl, resourcePath, type ResourceRef } from "../../src/cluster/resource.ts";
import { watch } from "../../src/cluster/watch.ts";
import type { Status, WatchEvent } from "../../src/events.ts";
import { builtinDecoders } from "../../src/codec/kubernetes/generated/all.ts";
import type { Cluster } from "../../scripts/kube/cluster.mjs";
import { ownCluster } from "./_cluster.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connect(cluster: Cluster): Promise<ClusterConnection> {
  return connectCluster(await loadKubeconfig({ path: cluster.kubeconfig }));
}

async function put(c: ClusterConnection, ref: ResourceRef, name: string, data: Record<string, string>) {
  const headers = await c.headers();
  headers.set("content-type", "application/json");
  const url = new URL(resourcePath(ref), c.server);
  // Create, or replace the current one (no resourceVersion: last write wins).
  let response = await c.fetch(objectUrl(c.server, ref, name), {
    method: "PUT",
    headers,
    body: JSON.stringify({ metadata: { name }, data }),
  });
  if (response.status === 404) {
    await response.body?.cancel();
    response = await c.fetch(url, { method: "POST", headers, body: JSON.stringify({ metadata: { name }, data }) });
  }
  const body = await response.json();
  assert.ok(response.ok, JSON.stringify(body));
  return body as { metadata: { resourceVersion: string } };
}

async function firstEvents<T>(events: ReadableStream<WatchEvent<T>>, count: number): Promise<WatchEvent<T>[]> {
  const out: WatchEvent<T>[] = [];
  for await (const event of events) {
    out.push(event);
    if (out.length === count) break;
  }
  return out;
}

const CONFIGMAPS: ResourceRef = { version: "v1", resource: "configmaps", namespace: "default" };

test("kube-apiserver, watch cache off, etcd compacting every second: an old resourceVersion is 410 Expired", async () => {
  const cluster = await ownCluster({ watchCache: false, etcdCompactionInterval: "1s" });
  const c = await connect(cluster);
  try {
    const first = await put(c, CONFIGMAPS, "old", { v: "0" });
    // Compaction runs each interval up to the revision seen at the interval before: write and wait past two.
    for (let i = 1; i <= 6; i++) {
      await put(c, CONFIGMAPS, "old", { v: String(i) });
      await sleep(500);
    }
    for (const format of ["json", "protobuf"] as const) {
      const [event] = await firstEvents(
        await watch(c, CONFIGMAPS, {
          format,
          protobuf: { decoders: builtinDecoders },
          resourceVersion: first.metadata.resourceVersion,
        }),
        1,
      );
      assert.equal(event.type, "ERROR", format);
      const status = event.object as Status;
      assert.equal(status.code, 410, format);
      assert.equal(status.reason, "Expired", format);
    }

    // A list continued after its revision was compacted: the continue token's 410, then the list starts again.
    for (let i = 0; i < 9; i++) await put(c, CONFIGMAPS, `page-${i}`, { i: String(i) });
    let paused = false;
    const result = await list<{ metadata: { name: string } }>(c, CONFIGMAPS, {
      pageSize: 3,
      onPage: async () => {
        if (paused) return;
        paused = true;
        // Between the first page and the second, etcd compacts past the first page's revision.
        for (let i = 0; i < 6; i++) {
          await put(c, CONFIGMAPS, "old", { v: `later-${i}` });
          await sleep(500);
        }
      },
    });
    assert.equal(result.restarts, 1, "the expired continue token started the list again, once");
    assert.deepEqual(
      result.items.map((o) => o.metadata.name).sort(),
      ["old", ...Array.from({ length: 9 }, (_, i) => `page-${i}`)].sort(),
      "every object once",
    );
  } finally {
    await c.close();
  }
});

test("kube-apiserver restarted on the same etcd: the data stays, a watch from before the restart is 410 Expired", async () => {
  const cluster = await ownCluster();
  let c = await connect(cluster);
  try {
    const before = await put(c, CONFIGMAPS, "kept", { v: "1" });
    await put(c, CONFIGMAPS, "kept", { v: "2" });
    await c.close();
    await cluster.restartApiserver();
    c = await connect(cluster);
    const listed = await list<{ metadata: { name: string }; data: Record<string, string> }>(c, CONFIGMAPS);
    assert.deepEqual(listed.items.find((o) => o.metadata.name === "kept")?.data, { v: "2" }, "etcd kept the data");
    // The new watch cache starts at the current revision: older ones are out of its window.
    const [event] = await firstEvents(
      await watch(c, CONFIGMAPS, { resourceVersion: before.metadata.resourceVersion }),
      1,
    );
    assert.equal(event.type, "ERROR");
    assert.equal((event.object as Status).code, 410);
  } finally {
    await c.close();
  }
});

test("kube-apiserver with the WatchList feature gate off: a streaming list is refused (a client falls back to list + watch)", async () => {
  const cluster = await ownCluster({ featureGates: { WatchList: false } });
  const c = await connect(cluster);
  try {
    const [event] = await firstEvents(
      await watch(c, CONFIGMAPS, {
        sendInitialEvents: true,
        resourceVersionMatch: "NotOlderThan",
        allowWatchBookmarks: true,
      }),
      1,
    );
    assert.equal(event.type, "ERROR", `refused, not ${event.type}`);
    const status = event.object as Status;
    assert.equal(status.code, 422);
    assert.equal(status.reason, "Invalid");
    assert.match(status.message ?? "", /sendInitialEvents/);
    // A plain list + watch works.
    const listed = await list(c, CONFIGMAPS);
    await put(c, CONFIGMAPS, "after", { v: "1" });
    const [added] = await firstEvents(await watch(c, CONFIGMAPS, { resourceVersion: listed.resourceVersion }), 1);
    assert.equal(added.type, "ADDED");
  } finally {
    await c.close();
  }
});
