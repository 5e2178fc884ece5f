/**
 * The informer against the real kube-apiserver: initial sync by streaming list and by list + watch, in JSON and
 * protobuf, then changes; its store must equal a fresh list from the server, and its handlers must have seen a
 * consistent history (replayed, they give the store; no update or delete of an unknown object, no add of a known one).
 * Also: a metadata-only informer, a CRD informer, the fallback when the WatchList feature gate is off, and a 410 for
 * real (resumed after etcd compacted past its resourceVersion), with the exact changes told.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  type ClusterConnection,
  connectCluster,
  type DeletedFinalStateUnknown,
  type Informer,
  informer,
  type KubernetesObject,
  list,
  loadKubeconfig,
  objectKey,
  objectUrl,
  resourcePath,
  type ResourceRef,
} from "../../mod.ts";
import { builtinDecoders } from "../../kubernetes.ts";
import type { Cluster } from "../../scripts/kube/cluster.mjs";
import { apiRequest, kubectl, namespaceName, ownCluster, sharedCluster } from "./_cluster.ts";

type Obj = KubernetesObject & {
  metadata: { name: string; namespace?: string; resourceVersion: string };
  data?: Record<string, string>;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connect(cluster: Cluster): Promise<ClusterConnection> {
  return connectCluster(await loadKubeconfig({ path: cluster.kubeconfig }));
}

const send = (c: ClusterConnection, method: string, url: URL, body?: unknown) => apiRequest<Obj>(c, method, url, body);

const configmaps = (namespace: string): ResourceRef => ({ version: "v1", resource: "configmaps", namespace });

async function namespace(c: ClusterConnection, what: string): Promise<string> {
  const name = namespaceName(what);
  await send(c, "POST", new URL("/api/v1/namespaces", c.server), { metadata: { name } });
  return name;
}

/** Records every handler call and checks the history is consistent as it goes. */
function recorder<T extends KubernetesObject>(informer: Informer<T>) {
  const replay = new Map<string, string>();
  const problems: string[] = [];
  const calls: string[] = [];
  informer.addHandlers({
    add: (o) => {
      const key = objectKey(o);
      if (replay.has(key)) problems.push(`add of known ${key}`);
      replay.set(key, o.metadata?.resourceVersion ?? "");
      calls.push(`add ${key}`);
    },
    update: (old, o) => {
      const key = objectKey(o);
      if (!replay.has(key)) problems.push(`update of unknown ${key}`);
      if (replay.get(key) !== old.metadata?.resourceVersion) problems.push(`update of ${key} from a stale old`);
      replay.set(key, o.metadata?.resourceVersion ?? "");
      calls.push(`update ${key}`);
    },
    delete: (o) => {
      const gone = (o as DeletedFinalStateUnknown<T>).finalStateUnknown
        ? (o as DeletedFinalStateUnknown<T>).key
        : objectKey(o as T);
      if (!replay.has(gone)) problems.push(`delete of unknown ${gone}`);
      replay.delete(gone);
      calls.push(
        `delete ${gone}${(o as DeletedFinalStateUnknown<T>).finalStateUnknown ? " (final state unknown)" : ""}`,
      );
    },
  });
  return { replay, problems, calls };
}

/** Waits until the informer's store has exactly the server's objects (keys and resourceVersions). */
async function settled<T extends KubernetesObject>(c: ClusterConnection, ref: ResourceRef, informer: Informer<T>) {
  let truth = new Map<string, string>();
  for (let i = 0; i < 200; i++) {
    const listed = await list<T>(c, ref);
    truth = new Map(listed.items.map((o) => [objectKey(o), o.metadata?.resourceVersion ?? ""]));
    const mine = new Map(informer.store.list().map((o) => [objectKey(o), o.metadata?.resourceVersion ?? ""]));
    if (mine.size === truth.size && [...truth].every(([k, rv]) => mine.get(k) === rv)) return truth;
    await sleep(50);
  }
  const mine = informer.store.list().map((o) => `${objectKey(o)}@${o.metadata?.resourceVersion}`);
  assert.fail(`the store never matched the server:\n mine ${mine.join(" ")}\n theirs ${[...truth].join(" ")}`);
}

for (const format of ["json", "protobuf"] as const) {
  for (const initialSync of ["auto", "list"] as const) {
    test(`informer (${format}, ${initialSync === "auto" ? "streaming list" : "list + watch"}): store equals the server's, history consistent`, async () => {
      const cluster = await sharedCluster();
      const c = await connect(cluster);
      const errors: unknown[] = [];
      try {
        const ns = await namespace(c, `informer-${format}-${initialSync}`);
        const ref = configmaps(ns);
        for (let i = 0; i < 30; i++) {
          await send(c, "POST", new URL(resourcePath(ref), c.server), {
            metadata: { name: `pre-${i}` },
            data: { i: String(i) },
          });
        }
        const cms = informer<Obj>(c, ref, {
          format,
          protobuf: { decoders: builtinDecoders },
          initialSync,
          pageSize: 7,
          onError: (e) => errors.push(e),
        });
        const history = recorder(cms);
        const running = cms.start();
        await cms.synced;
        assert.equal(cms.store.size, 30);
        // Changes while it watches: updates, deletes, creates.
        for (let i = 0; i < 30; i += 3) {
          const name = `pre-${i}`;
          const current = await send(c, "GET", objectUrl(c.server, ref, name));
          await send(c, "PUT", objectUrl(c.server, ref, name), { ...current, data: { i: `${i}-changed` } });
          await send(c, "DELETE", objectUrl(c.server, ref, `pre-${i + 1}`));
          await send(c, "POST", new URL(resourcePath(ref), c.server), { metadata: { name: `new-${i}` } });
        }
        const truth = await settled(c, ref, cms);
        cms.stop();
        await running;
        assert.deepEqual(history.problems, []);
        assert.deepEqual(history.replay, truth, "the handlers' history replayed gives the server's objects");
        assert.equal(cms.stats.initialSyncs, 1);
        assert.deepEqual(errors, []);
        // Contents too: each stored object is what the server holds.
        const listed = await list<Obj>(c, ref);
        for (const o of listed.items) assert.deepEqual(cms.store.get(objectKey(o)), o);
      } finally {
        await c.close();
      }
    });
  }
}

test("list() in protobuf metadata mode gives every item (the List is decoded whole)", async () => {
  const cluster = await sharedCluster();
  const c = await connect(cluster);
  try {
    const ref = configmaps(await namespace(c, "list-metadata"));
    for (let i = 0; i < 3; i++) {
      await send(c, "POST", new URL(resourcePath(ref), c.server), { metadata: { name: `l-${i}` } });
    }
    const metadataOnly = await list<Obj>(c, ref, {
      format: "protobuf",
      protobuf: { decoders: builtinDecoders, mode: "metadata" },
      pageSize: 2,
    });
    assert.deepEqual(metadataOnly.items, (await list<Obj>(c, ref)).items);
    // And the informer that lists: synced with every object, none lost.
    const cms = informer<Obj>(c, ref, {
      format: "protobuf",
      protobuf: { decoders: builtinDecoders, mode: "metadata" },
      initialSync: "list",
    });
    const running = cms.start();
    await cms.synced;
    assert.equal(cms.store.size, 3);
    cms.stop();
    await running;
  } finally {
    await c.close();
  }
});

test("informer, metadata-only (protobuf metadata mode): metadata now, the whole object on demand", async () => {
  const cluster = await sharedCluster();
  const c = await connect(cluster);
  try {
    const ns = await namespace(c, "informer-metadata");
    const ref = configmaps(ns);
    for (let i = 0; i < 5; i++) {
      await send(c, "POST", new URL(resourcePath(ref), c.server), {
        metadata: { name: `m-${i}`, labels: { i: String(i) } },
        data: { big: "z".repeat(2000) },
      });
    }
    const cms = informer<Obj>(c, ref, {
      format: "protobuf",
      protobuf: { decoders: builtinDecoders, mode: "metadata" },
    });
    const running = cms.start();
    await cms.synced;
    const listed = await list<Obj>(c, ref);
    for (const o of listed.items) {
      const mine = cms.store.get(objectKey(o)) as unknown as {
        metadata: Obj["metadata"];
        data?: unknown;
        decode(): unknown;
      };
      assert.deepEqual(JSON.parse(JSON.stringify(mine.metadata)), o.metadata);
      assert.equal(mine.data, undefined, "the body is not decoded until asked");
      assert.deepEqual(mine.decode(), o);
    }
    cms.stop();
    await running;
  } finally {
    await c.close();
  }
});

test("informer of a CRD's objects (JSON, which is all a CRD speaks)", async () => {
  const cluster = await sharedCluster();
  kubectl(
    cluster,
    ["apply", "-f", "-"],
    JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "gadgets.watchwire.example" },
      spec: {
        group: "watchwire.example",
        scope: "Namespaced",
        names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
        versions: [{
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        }],
      },
    }),
  );
  kubectl(cluster, ["wait", "--for=condition=Established", "--timeout=30s", "crd/gadgets.watchwire.example"]);
  const c = await connect(cluster);
  try {
    const ns = await namespace(c, "informer-crd");
    const ref: ResourceRef = { group: "watchwire.example", version: "v1", resource: "gadgets", namespace: ns };
    const cms = informer<Obj>(c, ref, { format: "protobuf", protobuf: { decoders: builtinDecoders } });
    const history = recorder(cms);
    const running = cms.start();
    for (let i = 0;; i++) {
      try {
        await send(c, "POST", new URL(resourcePath(ref), c.server), {
          apiVersion: "watchwire.example/v1",
          kind: "Gadget",
          metadata: { name: "g" },
          spec: { n: 1 },
        });
        break;
      } catch (e) {
        if (i === 100) throw e; // the CRD's storage takes a moment after it is established
        await sleep(100);
      }
    }
    const truth = await settled(c, ref, cms);
    cms.stop();
    await running;
    assert.deepEqual(history.replay, truth);
    assert.deepEqual(history.problems, []);
  } finally {
    await c.close();
  }
});

test("informer with the WatchList feature gate off: falls back to list + watch, says so once", async () => {
  const cluster = await ownCluster({ featureGates: { WatchList: false } });
  const c = await connect(cluster);
  const errors: unknown[] = [];
  try {
    const ref = configmaps("default");
    await send(c, "POST", new URL(resourcePath(ref), c.server), { metadata: { name: "before" } });
    const cms = informer<Obj>(c, ref, { onError: (e) => errors.push(e) });
    const running = cms.start();
    await cms.synced;
    await send(c, "POST", new URL(resourcePath(ref), c.server), { metadata: { name: "after" } });
    await settled(c, ref, cms);
    cms.stop();
    await running;
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /streaming list refused, listing: 422 Invalid/);
  } finally {
    await c.close();
  }
});

test("informer resumed after etcd compacted past its resourceVersion: 410, relist, exactly what changed told", async () => {
  const cluster = await ownCluster({ watchCache: false, etcdCompactionInterval: "1s" });
  const c = await connect(cluster);
  try {
    const ref = configmaps("default");
    for (const name of ["keep", "change", "vanish"]) {
      await send(c, "POST", new URL(resourcePath(ref), c.server), { metadata: { name } });
    }
    const first = informer<Obj>(c, ref, { initialSync: "list" });
    const running = first.start();
    await first.synced;
    await settled(c, ref, first);
    const saved = first.snapshot();
    first.stop();
    await running;

    // While it is away: a change, a deletion, a creation; then etcd compacts past the saved resourceVersion.
    const change = await send(c, "GET", objectUrl(c.server, ref, "change"));
    await send(c, "PUT", objectUrl(c.server, ref, "change"), { ...change, data: { now: "changed" } });
    await send(c, "DELETE", objectUrl(c.server, ref, "vanish"));
    await send(c, "POST", new URL(resourcePath(ref), c.server), { metadata: { name: "new" } });
    for (let i = 0; i < 6; i++) {
      await send(c, "POST", new URL(resourcePath(configmaps("kube-public")), c.server), {
        metadata: { name: `tick-${i}` },
      });
      await sleep(500);
    }

    const resumed = informer<Obj>(c, ref, { initialSync: "list", resume: saved });
    const history = recorder(resumed);
    const running2 = resumed.start();
    const truth = await settled(c, ref, resumed);
    resumed.stop();
    await running2;
    assert.equal(resumed.stats.expired, 1, "the saved resourceVersion was gone: 410");
    assert.equal(resumed.stats.initialSyncs, 1, "one relist");
    assert.deepEqual(history.calls.slice(0, 3).sort(), [
      "add default/change",
      "add default/keep",
      "add default/vanish",
    ]);
    assert.deepEqual(history.calls.slice(3).sort(), [
      "add default/new",
      "delete default/vanish (final state unknown)",
      "update default/change",
    ]);
    assert.deepEqual(history.replay, truth);
    assert.deepEqual(history.problems, []);
  } finally {
    await c.close();
  }
});
