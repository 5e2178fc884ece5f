/**
 * Against a real kube-apiserver (v1.37.2, with a real etcd, on loopback; scripts/kube/cluster.mjs): the kubeconfig
 * loader and connectCluster in this runtime (its own fetch and TLS), lists, watches and streaming lists in JSON and
 * protobuf, while ConfigMaps, Secrets, Pods and objects of a CRD are created, updated and deleted. The decoded events
 * must equal what the server answered to each change, and the objects at the end what kubectl (an independent
 * client) reads back. Field and label selectors pick exactly what the server's rules pick; discovery finds each kind's
 * resource and scope as `kubectl api-resources` does.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connectCluster } from "../../src/cluster/connection/connect_cluster.ts";
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";
import { ClusterAccessError } from "../../src/cluster/errors.ts";
import { loadKubeconfig } from "../../src/cluster/kubeconfig/load_kubeconfig.ts";
import { list } from "../../src/cluster/list.ts";
import { type DiscoveredResource, discoverResource } from "../../src/cluster/discovery.ts";
import { objectUrl, type ResourceRef, watchUrl } from "../../src/cluster/resource.ts";
import { watch } from "../../src/cluster/watch.ts";
import { decodeWatchResponse } from "../../src/watch/decode_watch_response.ts";
import { DecodeError } from "../../src/errors.ts";
import type { KubernetesObject, Status, WatchEvent } from "../../src/events.ts";
import { builtinDecoders } from "../../src/codec/kubernetes/generated/all.ts";
import type { Cluster } from "../../scripts/kube/cluster.mjs";
import { apiRequest, kubectl, namespaceName, RUNTIME, sharedCluster } from "./_cluster.ts";
import { startRecordingProxy } from "../peers/recording_proxy.ts";
import { readUntil } from "./_api.ts";
import { CONFIGMAPS, PODS, SECRETS, WIDGET_CRD as CRD, WIDGETS } from "./_api.ts";

type Obj = KubernetesObject & {
  metadata: { name: string; resourceVersion: string; [k: string]: unknown };
  [k: string]: unknown;
};

async function connect(context = "token"): Promise<ClusterConnection> {
  const cluster = await sharedCluster();
  return connectCluster(await loadKubeconfig({ path: cluster.kubeconfig, context }));
}

const send = (c: ClusterConnection, method: string, url: URL, body?: unknown) => apiRequest<Obj>(c, method, url, body);

const create = (c: ClusterConnection, ref: ResourceRef, object: unknown) =>
  send(c, "POST", new URL(watchUrl(c.server, ref).pathname, c.server), object);
const replace = (c: ClusterConnection, ref: ResourceRef, object: Obj) =>
  send(c, "PUT", objectUrl(c.server, ref, object.metadata.name), object);
const remove = (c: ClusterConnection, ref: ResourceRef, name: string) =>
  send(c, "DELETE", objectUrl(c.server, ref, name), { gracePeriodSeconds: 0 });

/** A namespace with a `default` ServiceAccount (there is no controller-manager to make one, and Pods need it). */
async function namespaceWithServiceAccount(c: ClusterConnection, what: string): Promise<string> {
  const name = namespaceName(what);
  await send(c, "POST", new URL("/api/v1/namespaces", c.server), { metadata: { name } });
  await send(c, "POST", new URL(`/api/v1/namespaces/${name}/serviceaccounts`, c.server), {
    metadata: { name: "default" },
  });
  return name;
}

const withoutManagedFields = (object: Obj) => {
  const { managedFields: _m, ...metadata } = object.metadata;
  return { ...object, metadata };
};

/**
 * The changes of one kind of object: each answer of the server to a change, in order. Where a change's event is
 * known but for its resourceVersion (`atSomeVersion`: a DELETE that answered a Status, or a step the server took by
 * itself), the event must carry that object at a resourceVersion between its neighbours'.
 */
type Change = { type: "ADDED" | "MODIFIED" | "DELETED"; object: Obj; atSomeVersion?: true };

const versionOf = (o: unknown) => BigInt((o as Obj).metadata.resourceVersion);

/** What a watch should say of `changes`, given the events `seen`. */
function expectedEvents(changes: Change[], seen: WatchEvent<Obj>[]): unknown[] {
  return changes.map((change, i) => {
    if (!change.atSomeVersion) return { type: change.type, object: change.object };
    const object = seen[i]?.object as Obj | undefined;
    const before = i === 0 ? -1n : versionOf(changes[i - 1].object);
    const after = changes[i + 1]?.atSomeVersion ? undefined : changes[i + 1]?.object;
    if (
      object !== undefined && versionOf(object) > before &&
      (after === undefined || versionOf(object) < versionOf(after))
    ) {
      const metadata = { ...change.object.metadata, resourceVersion: object.metadata.resourceVersion };
      return { type: change.type, object: { ...change.object, metadata } };
    }
    return { type: change.type, object: `${change.object.metadata.name} at a version after ${before}` };
  });
}

/** The last state of `object`, deleted by a DELETE that answered a Status. */
const deletedAt = (object: Obj): Change => ({ type: "DELETED", object, atSomeVersion: true });

async function changeConfigMaps(c: ClusterConnection, ns: string): Promise<Change[]> {
  const ref = CONFIGMAPS(ns);
  const a = await create(c, ref, { metadata: { name: "a", labels: { app: "web" } }, data: { k: "v" } });
  const b = await create(c, ref, { metadata: { name: "b" }, data: { big: "x".repeat(5000) } });
  const a2 = await replace(c, ref, { ...a, data: { k: "v2", unicode: "ü ß 𝄞 \u2028" } });
  assert.equal((await remove(c, ref, "b")).kind, "Status");
  return [
    { type: "ADDED", object: a },
    { type: "ADDED", object: b },
    { type: "MODIFIED", object: a2 },
    deletedAt(b),
  ];
}

async function changeSecrets(c: ClusterConnection, ns: string): Promise<Change[]> {
  const ref = SECRETS(ns);
  const s = await create(c, ref, { metadata: { name: "s" }, type: "Opaque", data: { password: btoa("hunter2") } });
  const s2 = await replace(c, ref, { ...s, stringData: undefined, data: { password: btoa("correct horse") } } as Obj);
  return [{ type: "ADDED", object: s }, { type: "MODIFIED", object: s2 }];
}

async function changePods(c: ClusterConnection, ns: string): Promise<Change[]> {
  const ref = PODS(ns);
  const p = await create(c, ref, {
    metadata: { name: "p", labels: { tier: "front" } },
    spec: {
      containers: [{
        name: "web",
        image: "nginx:1.27",
        ports: [{ containerPort: 80 }],
        resources: { limits: { cpu: "500m", memory: "128Mi" } },
      }],
    },
  });
  const p2 = await replace(c, ref, { ...p, metadata: { ...p.metadata, labels: { tier: "back" } } });
  // A DELETE marks the Pod (deletionTimestamp; a MODIFIED event) and, with no kubelet and a grace period of 0,
  // removes it at once: the answer is the Pod as removed (the DELETED event).
  const p3 = await remove(c, ref, "p");
  assert.ok(p3.metadata.deletionTimestamp, "a Pod's DELETE answers the Pod marked for deletion");
  return [
    { type: "ADDED", object: p },
    { type: "MODIFIED", object: p2 },
    { type: "MODIFIED", object: p3, atSomeVersion: true },
    { type: "DELETED", object: p3 },
  ];
}

async function changeWidgets(c: ClusterConnection, ns: string): Promise<Change[]> {
  const ref = WIDGETS(ns);
  const w = await create(c, ref, {
    apiVersion: "watchwire.example/v1",
    kind: "Widget",
    metadata: { name: "w" },
    spec: { size: 3, colour: "blue", nested: { list: [1, 2.5, "three", null, true] } },
  });
  const w2 = await replace(c, ref, { ...w, spec: { size: 4 } } as Obj);
  return [{ type: "ADDED", object: w }, { type: "MODIFIED", object: w2 }];
}

async function ensureCrd(c: ClusterConnection): Promise<void> {
  const cluster = await sharedCluster();
  kubectl(cluster, ["apply", "-f", "-"], JSON.stringify(CRD));
  kubectl(cluster, ["wait", "--for=condition=Established", "--timeout=30s", "crd/widgets.watchwire.example"]);
  // Discovery and storage have it a moment after it is established (until then: 404, or 429 with Retry-After).
  for (let i = 0;; i++) {
    try {
      await discoverResource(c, "watchwire.example/v1", "Widget");
      return;
    } catch (e) {
      if (i === 100) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const KINDS: [string, (ns: string) => ResourceRef, (c: ClusterConnection, ns: string) => Promise<Change[]>][] = [
  ["ConfigMaps", CONFIGMAPS, changeConfigMaps],
  ["Secrets", SECRETS, changeSecrets],
  ["Pods", PODS, changePods],
  ["Widgets (a CRD: JSON even when protobuf is asked)", WIDGETS, changeWidgets],
];

for (const format of ["json", "protobuf"] as const) {
  test(`kube-apiserver (${format}): a watch from a list's resourceVersion gives each change as the server answered it`, async () => {
    const c = await connect();
    try {
      await ensureCrd(c);
      const ns = await namespaceWithServiceAccount(c, `watch-${format}`);
      for (const [name, refOf, change] of KINDS) {
        const ref = refOf(ns);
        const listed = await list(c, ref, { format, protobuf: { decoders: builtinDecoders } });
        assert.deepEqual(listed.items, [], `${name}: a new namespace is empty`);
        const events = await watch<Obj>(c, ref, {
          format,
          protobuf: { decoders: builtinDecoders },
          resourceVersion: listed.resourceVersion,
        });
        const changes = await change(c, ns);
        let pending = changes.length;
        const seen = await readUntil(events, () => --pending === 0);
        assert.deepEqual(
          seen.map((e) => ({ type: e.type, object: e.object })),
          expectedEvents(changes, seen),
          `${name}: the events are the server's answers to the changes, in order, whole`,
        );
        // What the server holds now, read by an independent client, is what the events leave.
        const truth = JSON.parse(
          kubectl(await sharedCluster(), [
            "get",
            ref.resource + (ref.group ? `.${ref.group}` : ""),
            "-n",
            ns,
            "-o",
            "json",
          ]),
        );
        const store = new Map<string, Obj>();
        for (const e of seen) {
          if (e.type === "DELETED") store.delete((e.object as Obj).metadata.name);
          else if (e.type !== "BOOKMARK" && e.type !== "ERROR") {
            store.set((e.object as Obj).metadata.name, e.object as Obj);
          }
        }
        assert.deepEqual(
          [...store.values()].map(withoutManagedFields),
          truth.items.map((o: Obj) => withoutManagedFields(o)),
          `${name}: the events leave what kubectl reads`,
        );
      }
      await send(c, "DELETE", new URL(`/api/v1/namespaces/${ns}`, c.server));
    } finally {
      await c.close();
    }
  });
}

test("kube-apiserver: protobuf lists and watches decode to exactly the JSON ones (ConfigMaps, Secrets, Pods)", async () => {
  const c = await connect();
  try {
    const ns = await namespaceWithServiceAccount(c, "twins");
    await changeConfigMaps(c, ns);
    await changeSecrets(c, ns);
    await create(c, PODS(ns), { metadata: { name: "q" }, spec: { containers: [{ name: "c", image: "busybox" }] } });
    for (const refOf of [CONFIGMAPS, SECRETS, PODS]) {
      const ref = refOf(ns);
      const json = await list(c, ref, { format: "json" });
      const protobuf = await list(c, ref, { format: "protobuf", protobuf: { decoders: builtinDecoders } });
      assert.ok(json.items.length > 0);
      assert.deepEqual(protobuf, json, `${ref.resource}: list`);
      // The same range of history as a watch, in both formats.
      const jsonEvents = await readUntil(await watch(c, ref, { resourceVersion: "1", timeoutSeconds: 2 }), () => false);
      const pbEvents = await readUntil(
        await watch(c, ref, {
          format: "protobuf",
          protobuf: { decoders: builtinDecoders },
          resourceVersion: "1",
          timeoutSeconds: 2,
        }),
        () => false,
      );
      assert.ok(jsonEvents.length >= json.items.length);
      assert.deepEqual(pbEvents, jsonEvents, `${ref.resource}: watch from resourceVersion 1`);
    }
  } finally {
    await c.close();
  }
});

test("kube-apiserver: a streaming list gives the objects as ADDED, then the initial-events-end bookmark", async () => {
  const c = await connect();
  try {
    const ns = await namespaceWithServiceAccount(c, "stream");
    for (let i = 0; i < 12; i++) {
      await create(c, CONFIGMAPS(ns), { metadata: { name: `cm-${i}` }, data: { i: String(i) } });
    }
    for (const format of ["json", "protobuf"] as const) {
      const events = await readUntil(
        await watch<Obj>(c, CONFIGMAPS(ns), {
          format,
          protobuf: { decoders: builtinDecoders },
          sendInitialEvents: true,
          resourceVersionMatch: "NotOlderThan",
          allowWatchBookmarks: true,
        }),
        (e) => e.type === "BOOKMARK",
      );
      const end = events.at(-1)!;
      assert.equal(end.type, "BOOKMARK");
      assert.equal(end.object.metadata.annotations?.["k8s.io/initial-events-end"], "true");
      const listed = await list<Obj>(c, CONFIGMAPS(ns));
      assert.deepEqual(
        events.slice(0, -1).map((e) => [e.type, (e.object as Obj).metadata.name]).sort(),
        listed.items.map((o) => ["ADDED", o.metadata.name]).sort(),
        `${format}: every object once, as ADDED`,
      );
      const newest = events.slice(0, -1).reduce((m, e) => {
        const rv = BigInt((e.object as Obj).metadata.resourceVersion);
        return rv > m ? rv : m;
      }, 0n);
      assert.ok(BigInt(end.object.metadata.resourceVersion) >= newest, "the bookmark is at or after every object");
    }
  } finally {
    await c.close();
  }
});

test("kube-apiserver: bookmarks come when asked for, before a watch's timeout, with the newest resourceVersion", async () => {
  const c = await connect();
  try {
    const quiet = await namespaceWithServiceAccount(c, "bookmark-quiet");
    const busy = await namespaceWithServiceAccount(c, "bookmark-busy");
    const listed = await list(c, CONFIGMAPS(quiet));
    // The watch cache sends a bookmark about two seconds before the watch's deadline, at the newest resourceVersion
    // it knows: changes elsewhere (another namespace) move it on, though this watch sees none of them.
    const events = await watch(c, CONFIGMAPS(quiet), {
      resourceVersion: listed.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: 15,
    });
    const elsewhere = await create(c, CONFIGMAPS(busy), { metadata: { name: "elsewhere" } });
    const seen = await readUntil(events, (e) => e.type === "BOOKMARK", 20_000);
    assert.deepEqual(seen.map((e) => e.type), ["BOOKMARK"]);
    const bookmark = seen[0].object as Obj;
    assert.ok(
      BigInt(bookmark.metadata.resourceVersion) >= BigInt(elsewhere.metadata.resourceVersion),
      `bookmark ${bookmark.metadata.resourceVersion} after ${elsewhere.metadata.resourceVersion}`,
    );
  } finally {
    await c.close();
  }
});

test("kube-apiserver: a paginated list with a small pageSize returns every object once", async () => {
  const c = await connect();
  try {
    const ns = await namespaceWithServiceAccount(c, "pages");
    const names = Array.from({ length: 23 }, (_, i) => `page-${String(i).padStart(2, "0")}`);
    for (const name of names) await create(c, CONFIGMAPS(ns), { metadata: { name } });
    for (const format of ["json", "protobuf"] as const) {
      const pages: number[] = [];
      const result = await list<Obj>(c, CONFIGMAPS(ns), {
        format,
        protobuf: { decoders: builtinDecoders },
        pageSize: 4,
        onPage: (p) => void pages.push(p.items),
      });
      assert.deepEqual(result.items.map((o) => o.metadata.name), names, format);
      assert.equal(result.pages, 6, format);
      assert.deepEqual(pages, [4, 4, 4, 4, 4, 3]);
      assert.equal(result.kind, "ConfigMapList");
      assert.ok(result.items.every((o) => o.kind === "ConfigMap" && o.apiVersion === "v1"));
      // The whole list's resourceVersion is the first page's: a watch from it misses nothing.
      assert.match(result.resourceVersion, /^\d+$/);
    }
  } finally {
    await c.close();
  }
});

test("kube-apiserver: each kubeconfig credential works (token, client certificate, exec plugin); wrong ones are clear errors", async () => {
  const cluster = await sharedCluster();
  for (const context of ["token", "certificate", "exec"]) {
    const c = await connect(context);
    try {
      const result = await list(c, { version: "v1", resource: "namespaces" });
      assert.ok(result.items.some((n) => n.metadata?.name === "kube-system"), context);
      // Who the server says we are.
      const review = await send(c, "POST", new URL("/apis/authentication.k8s.io/v1/selfsubjectreviews", c.server), {
        apiVersion: "authentication.k8s.io/v1",
        kind: "SelfSubjectReview",
      }) as unknown as { status: { userInfo: { username: string; groups: string[] } } };
      assert.equal(review.status.userInfo.username, "admin", context);
      assert.ok(review.status.userInfo.groups.includes("system:masters"), context);
    } finally {
      await c.close();
    }
  }
  // The exec plugin's credential (no expiry) is cached: one run per connection, not per request.
  const before = cluster.execPluginRuns();
  const c = await connect("exec");
  try {
    for (let i = 0; i < 3; i++) {
      await list(c, { version: "v1", resource: "namespaces", namespace: undefined }, { pageSize: 1 });
    }
    assert.equal(cluster.execPluginRuns() - before, 1);
  } finally {
    await c.close();
  }

  const config = await loadKubeconfig({ path: cluster.kubeconfig, context: "token" });
  const wrong = await connectCluster({ ...config, token: "not-a-token" });
  try {
    await assert.rejects(list(wrong, CONFIGMAPS("default")), (e: unknown) => {
      assert.ok(e instanceof ClusterAccessError);
      assert.equal(e.code, "UNAUTHORIZED");
      assert.equal(e.status, 401);
      assert.match(
        e.message,
        /list configmaps in namespace default: 401 \(Unauthorized\) Unauthorized: the credentials were refused/,
      );
      return true;
    });
    // A watch answers the same as one ERROR event with the Status.
    const events = await readUntil(await watch(wrong, CONFIGMAPS("default")), () => false);
    assert.equal(events.length, 1);
    assert.equal(events[0].type, "ERROR");
    assert.equal(events[0].type === "ERROR" && events[0].object.code, 401);
  } finally {
    await wrong.close();
  }
  const nobody = await connectCluster({ ...config, token: cluster.nobodyToken });
  try {
    await assert.rejects(list(nobody, CONFIGMAPS("default")), (e: unknown) => {
      assert.ok(e instanceof ClusterAccessError);
      assert.equal(e.code, "FORBIDDEN");
      assert.match(
        e.message,
        /403 \(Forbidden\) configmaps is forbidden: User "nobody" cannot list resource "configmaps"/,
      );
      return true;
    });
  } finally {
    await nobody.close();
  }
});

test("kube-apiserver: decodeWatchResponse given a list's answer by mistake says so", async () => {
  const c = await connect();
  try {
    for (
      const [format, accept, pattern] of [
        ["json", "application/json", /the body is a ConfigMapList \(a list's answer\).*watch=true left out/],
        [
          "protobuf",
          "application/vnd.kubernetes.protobuf",
          /single object \(k8s\\0 envelope; a list's answer\?\).*watch=true left out/,
        ],
      ] as const
    ) {
      const headers = await c.headers();
      headers.set("accept", accept);
      const url = new URL("/api/v1/namespaces/kube-system/configmaps", c.server);
      const response = await c.fetch(url, { headers });
      await assert.rejects(
        readUntil(decodeWatchResponse(response), () => false),
        (e: unknown) => e instanceof DecodeError && pattern.test(e.message),
        format,
      );
    }
  } finally {
    await c.close();
  }
});

test("kube-apiserver: watches over HTTP/1.1 and, where this runtime's fetch offers it, HTTP/2 give the same events", async () => {
  const cluster = await sharedCluster();
  // A TCP proxy that records each connection: HTTP/2 carries concurrent watches on one, HTTP/1.1 needs one each.
  const proxy = await startRecordingProxy(Number(new URL(cluster.server).port));
  const config = await loadKubeconfig({ path: cluster.kubeconfig });
  const admin = await connect();
  try {
    const ns = await namespaceWithServiceAccount(admin, "protocols");
    const listed = await list(admin, CONFIGMAPS(ns));
    const rounds: { connections: number; sizes: string; events: WatchEvent<Obj>[][] }[] = [];
    const BIG = 20_000;
    for (const http2 of [false, true]) {
      const before = proxy.connections().length;
      const c = await connectCluster({ ...config, server: `https://127.0.0.1:${proxy.port}` }, { http2 });
      try {
        // Three watches from the same resourceVersion, in both formats: the first opened alone (a client opens a
        // connection per request until one is up and has said it speaks HTTP/2), the other two together.
        const watchIn = (format: "json" | "protobuf") =>
          watch<Obj>(c, CONFIGMAPS(ns), {
            format,
            protobuf: { decoders: builtinDecoders },
            resourceVersion: listed.resourceVersion,
          });
        const streams = [await watchIn("json"), ...await Promise.all([watchIn("protobuf"), watchIn("json")])];
        const name = http2 ? "made-in-http2-round" : "made-in-http1-round";
        await create(admin, CONFIGMAPS(ns), { metadata: { name }, data: { big: "y".repeat(BIG) } });
        const events = await Promise.all(
          streams.map((s) => readUntil(s, (e) => (e.object as Obj).metadata.name === name)),
        );
        // The connections that carried the watches: each got the object of BIG bytes, which no TLS handshake or
        // request refused before its answer comes near. A connection a client opened and dropped unused, as a client
        // under load may, says nothing about how the watches were carried; its size is in the message if one counts.
        const opened = proxy.connections().slice(before);
        rounds.push({
          connections: opened.filter((c) => c.serverToClient.length > BIG).length,
          sizes: opened.map((c) => `${c.clientToServer.length}/${c.serverToClient.length}`).join(", "),
          events,
        });
      } finally {
        await c.close();
      }
    }
    const [http1, http2] = rounds;
    // Every watch of both rounds saw the first object whole and the same; the HTTP/2 round saw the second as well.
    const first = http1.events[0][0];
    assert.equal(first.type, "ADDED");
    for (const events of [...http1.events, ...http2.events]) assert.deepEqual(events[0], first);
    for (const events of http2.events) {
      assert.deepEqual(events.map((e) => (e.object as Obj).metadata.name), [
        "made-in-http1-round",
        "made-in-http2-round",
      ]);
    }
    const bytes = (round: typeof http1) => `connections' bytes sent/received: ${round.sizes}`;
    assert.equal(http1.connections, 3, `HTTP/1.1: a connection per watch (${bytes(http1)})`);
    if (RUNTIME === "bun") {
      // Bun's fetch has no HTTP/2: the option changes nothing there.
      assert.equal(http2.connections, 3, `Bun: HTTP/1.1 whatever is asked (${bytes(http2)})`);
    } else {
      assert.equal(http2.connections, 1, `HTTP/2: the three watches share one connection (${bytes(http2)})`);
    }
  } finally {
    await admin.close();
    await proxy.close();
  }
});

test("kube-apiserver: fieldSelector, alone and with labelSelector, lists and watches exactly the objects it selects", async () => {
  const cluster = await sharedCluster();
  const c = await connect();
  try {
    const ns = await namespaceWithServiceAccount(c, "fields");
    const ref = CONFIGMAPS(ns);
    for (const [name, app] of [["a", "web"], ["b", "db"], ["c", "web"]]) {
      await create(c, ref, { metadata: { name, labels: { app } }, data: { v: "1" } });
    }
    type Selection = { query: { fieldSelector: string; labelSelector?: string }; names: string[] };
    // Each selection, and the objects of each it picks (`names`: what the server's rules say it must pick).
    const selections: Selection[] = [
      { query: { fieldSelector: "metadata.name=b" }, names: ["b"] },
      { query: { fieldSelector: "metadata.name=c", labelSelector: "app=web" }, names: ["c"] },
      { query: { fieldSelector: "metadata.name=b", labelSelector: "app=web" }, names: [] },
      { query: { fieldSelector: "metadata.name!=b", labelSelector: "app=web" }, names: ["a", "c", "d"] },
      { query: { fieldSelector: `metadata.namespace=${ns},metadata.name!=a` }, names: ["b", "c", "d"] },
    ];
    const picks = (s: Selection, o: Obj) => s.names.includes(o.metadata.name);

    // Lists: what the server holds (all of it, read by kubectl), filtered here by each selection's rule.
    const truth: Obj[] = JSON.parse(kubectl(cluster, ["get", "configmaps", "-n", ns, "-o", "json"])).items;
    assert.deepEqual(truth.map((o) => o.metadata.name), ["a", "b", "c"]);
    for (const format of ["json", "protobuf"] as const) {
      for (const s of selections) {
        const listed = await list<Obj>(c, ref, { format, protobuf: { decoders: builtinDecoders }, ...s.query });
        assert.deepEqual(
          listed.items.map(withoutManagedFields),
          truth.filter((o) => picks(s, o)).map(withoutManagedFields),
          `${format} list, ${JSON.stringify(s.query)}`,
        );
      }
    }
    // A field the resource has no selector for is the server's 400, said clearly.
    await assert.rejects(list(c, ref, { fieldSelector: "data.v=1" }), (e: unknown) => {
      assert.ok(e instanceof ClusterAccessError);
      assert.equal(e.code, "STATUS");
      assert.equal(e.status, 400);
      assert.equal(
        e.message,
        `list configmaps in namespace ${ns}: 400 (BadRequest) "data.v" is not a known field selector: ` +
          `only "metadata.name", "metadata.namespace"`,
      );
      return true;
    });
    // A watch answers the same as one ERROR event with the Status.
    const refused = await readUntil(await watch(c, ref, { fieldSelector: "data.v=1" }), () => false);
    assert.deepEqual(refused.map((e) => [e.type, (e.object as Status).code, (e.object as Status).reason]), [
      ["ERROR", 400, "BadRequest"],
    ]);

    // Watches from the list's resourceVersion, each selection in both formats and one with no selector (what the
    // server sends of every change), all ended by the server after a few seconds: each selective watch gives exactly
    // the events of the unselective one whose object it picks, in order. No change moves an object into or out of a
    // selection (that would be an ADDED or DELETED of its own).
    const listed = await list(c, ref);
    const open = (format: "json" | "protobuf", query: Selection["query"] | Record<string, never>) =>
      watch<Obj>(c, ref, {
        format,
        protobuf: { decoders: builtinDecoders },
        resourceVersion: listed.resourceVersion,
        timeoutSeconds: 8,
        ...query,
      });
    const everything = await open("json", {});
    const selective = await Promise.all(
      (["json", "protobuf"] as const).flatMap((format) => selections.map((s) => open(format, s.query))),
    );
    const reads = [everything, ...selective].map((events) => readUntil(events, () => false, 30_000));
    const [a, b, cc] = truth;
    await replace(c, ref, { ...a, data: { v: "2" } });
    await replace(c, ref, { ...b, data: { v: "2" } });
    await create(c, ref, { metadata: { name: "d", labels: { app: "web" } } });
    await replace(c, ref, { ...cc, data: { v: "2" } });
    await remove(c, ref, "b");
    await remove(c, ref, "a");
    const [all, ...got] = await Promise.all(reads);
    assert.deepEqual(
      all.map((e) => [e.type, (e.object as Obj).metadata.name]),
      [["MODIFIED", "a"], ["MODIFIED", "b"], ["ADDED", "d"], ["MODIFIED", "c"], ["DELETED", "b"], ["DELETED", "a"]],
      "the watch with no selector saw every change (the server ended it after they were made)",
    );
    got.forEach((events, i) => {
      const s = selections[i % selections.length];
      const what = `${i < selections.length ? "json" : "protobuf"} watch, ${JSON.stringify(s.query)}`;
      assert.deepEqual(events, all.filter((e) => picks(s, e.object as Obj)), what);
    });
  } finally {
    await c.close();
  }
});

/** The rows of `kubectl api-resources -o wide`, cut at its header's column starts. */
function apiResourcesTable(cluster: Cluster): Record<string, string>[] {
  const [header, ...rows] = kubectl(cluster, ["api-resources", "-o", "wide"]).split("\n").filter((l) => l !== "");
  const columns = [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0], start: m.index! }));
  return rows.map((row) =>
    Object.fromEntries(
      columns.map((col, i) => [col.name, row.slice(col.start, columns[i + 1]?.start ?? row.length).trim()]),
    )
  );
}

test("kube-apiserver: discoverResource finds each kind's resource and scope as kubectl api-resources does", async () => {
  const cluster = await sharedCluster();
  const c = await connect();
  try {
    await ensureCrd(c);
    const table = apiResourcesTable(cluster);
    const expected: [string, string, Omit<DiscoveredResource, "verbs">][] = [
      ["v1", "Pod", { group: "", version: "v1", resource: "pods", kind: "Pod", namespaced: true }],
      ["v1", "ConfigMap", { group: "", version: "v1", resource: "configmaps", kind: "ConfigMap", namespaced: true }],
      ["v1", "Namespace", { group: "", version: "v1", resource: "namespaces", kind: "Namespace", namespaced: false }],
      ["v1", "Node", { group: "", version: "v1", resource: "nodes", kind: "Node", namespaced: false }],
      [
        "apps/v1",
        "Deployment",
        { group: "apps", version: "v1", resource: "deployments", kind: "Deployment", namespaced: true },
      ],
      [
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        {
          group: "rbac.authorization.k8s.io",
          version: "v1",
          resource: "clusterroles",
          kind: "ClusterRole",
          namespaced: false,
        },
      ],
      [
        "watchwire.example/v1",
        "Widget",
        { group: "watchwire.example", version: "v1", resource: "widgets", kind: "Widget", namespaced: true },
      ],
    ];
    for (const [apiVersion, kind, want] of expected) {
      const found = await discoverResource(c, apiVersion, kind);
      const { verbs, ...rest } = found;
      assert.deepEqual(rest, want, `${apiVersion} ${kind}`);
      // kubectl, an independent client, reads the same discovery: the same name, scope and verbs.
      const row = table.find((r) => r.APIVERSION === apiVersion && r.KIND === kind);
      assert.ok(row, `kubectl api-resources lists ${apiVersion} ${kind}`);
      assert.equal(row.NAME, found.resource, `${apiVersion} ${kind}: kubectl's name`);
      assert.equal(row.NAMESPACED, String(found.namespaced), `${apiVersion} ${kind}: kubectl's scope`);
      assert.deepEqual(
        [...verbs].sort(),
        row.VERBS.replace(/^\[|\]$/g, "").split(/[\s,]+/).filter((v) => v !== "").sort(),
        `${apiVersion} ${kind}: kubectl's verbs`,
      );
      assert.ok(verbs.includes("list") && verbs.includes("watch"), `${apiVersion} ${kind}: ${verbs}`);
    }
    // What it finds is a ResourceRef a list takes as it is.
    const namespaces = await list(c, await discoverResource(c, "v1", "Namespace"));
    assert.ok(namespaces.items.some((n) => n.metadata?.name === "kube-system"));

    // A kind the group version does not serve, or serves only as a subresource (apps/v1 Scale: deployments/scale,
    // ...), is not found: a ClusterAccessError STATUS 404 that names both.
    for (const [apiVersion, kind] of [["v1", "NoSuchKind"], ["apps/v1", "Scale"], ["v1", "pod"]]) {
      await assert.rejects(discoverResource(c, apiVersion, kind), (e: unknown) => {
        assert.ok(e instanceof ClusterAccessError, String(e));
        assert.equal(e.code, "STATUS");
        assert.equal(e.status, 404);
        assert.equal(e.message, `discovery of ${apiVersion}: the server has no resource of kind ${kind}`);
        return true;
      });
    }
    // A group version the server does not serve at all: its 404, the same error type and code.
    await assert.rejects(discoverResource(c, "nosuch.example/v1", "Thing"), (e: unknown) => {
      assert.ok(e instanceof ClusterAccessError, String(e));
      assert.equal(e.code, "STATUS");
      assert.equal(e.status, 404);
      assert.match(e.message, /^discovery of nosuch\.example\/v1: 404\b/);
      return true;
    });
  } finally {
    await c.close();
  }
});
