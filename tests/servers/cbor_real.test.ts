/**
 * CBOR against a real kube-apiserver (v1.37.2, with a real etcd, on loopback), on servers of this file's own:
 *
 * - With `--feature-gates=CBORServingAndStorage=true`: while ConfigMaps, Secrets, Pods and objects of a CRD are
 *   created, updated and deleted, CBOR watches (`application/cbor-seq`), paginated CBOR lists (`application/cbor`)
 *   and CBOR streaming lists decode to exactly what the same requests give in JSON; the informer syncs and follows in
 *   CBOR; a refused request's Status comes in CBOR and reads as in JSON.
 * - Without the gate: `format: "cbor"` asks `application/cbor, application/json` and gets JSON (the server answers
 *   `application/cbor` alone with 406), so lists, watches and the informer work as with `format: "json"`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connectCluster } from "../../src/cluster/connection/connect_cluster.ts";
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";
import { ClusterAccessError } from "../../src/cluster/errors.ts";
import { loadKubeconfig } from "../../src/cluster/kubeconfig/load_kubeconfig.ts";
import { list } from "../../src/cluster/list.ts";
import { objectUrl, type ResourceRef, watchUrl } from "../../src/cluster/resource.ts";
import { informer } from "../../src/cluster/resource_source.ts";
import { watch, type WatchOptions } from "../../src/cluster/watch.ts";
import type { KubernetesObject, WatchEvent } from "../../src/events.ts";
import { INITIAL_EVENTS_END } from "../../src/watch/watcher.ts";
import type { Cluster } from "../../scripts/kube/cluster.mjs";
import { apiRequest, namespaceName, ownCluster } from "./_cluster.ts";
import { readUntil } from "./_api.ts";
import { CONFIGMAPS, PODS, SECRETS, WIDGET_CRD as CRD, WIDGETS } from "./_api.ts";

type Obj = KubernetesObject & { metadata: { name: string; resourceVersion: string }; [k: string]: unknown };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A connection that notes the Content-Type of every response (the wire format the server chose). */
interface Noting extends ClusterConnection {
  contentTypes: string[];
}

/** `c`, noting the Content-Type of each response in a list of its own. */
function noting(c: ClusterConnection): Noting {
  const contentTypes: string[] = [];
  return {
    server: c.server,
    contentTypes,
    headers: () => c.headers(),
    fetch: async (input, init) => {
      const response = await c.fetch(input, init);
      contentTypes.push(response.headers.get("content-type") ?? "");
      return response;
    },
    close: () => c.close(),
  };
}

async function connect(cluster: Cluster, token?: string): Promise<Noting> {
  const config = await loadKubeconfig({ path: cluster.kubeconfig });
  return noting(await connectCluster(token === undefined ? config : { ...config, token }));
}

const send = (c: ClusterConnection, method: string, url: URL, body?: unknown) => apiRequest<Obj>(c, method, url, body);
const collection = (c: ClusterConnection, ref: ResourceRef) => new URL(watchUrl(c.server, ref).pathname, c.server);
const create = (c: ClusterConnection, ref: ResourceRef, object: unknown) => send(c, "POST", collection(c, ref), object);
const patch = (c: ClusterConnection, ref: ResourceRef, name: string, body: unknown) =>
  send(c, "PATCH", objectUrl(c.server, ref, name), body);
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

/** The CRD, created and served. */
async function widgetsServed(c: ClusterConnection, ns: string): Promise<void> {
  await send(c, "POST", new URL("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", c.server), CRD);
  for (let i = 0; i < 100; i++) {
    try {
      await send(c, "GET", collection(c, WIDGETS(ns)));
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error("the CRD's API was not served within 10 s");
}

/** Creates, updates and deletes objects of every kind: the changes each watch below must see alike. */
async function makeChanges(c: ClusterConnection, ns: string): Promise<void> {
  await create(c, CONFIGMAPS(ns), {
    metadata: { name: "web", labels: { app: "web" }, annotations: { note: "grüße ✓ 🚀" } },
    data: { greeting: "hello", empty: "" },
    binaryData: { blob: "AP+A/w==" },
  });
  await patch(c, CONFIGMAPS(ns), "web", { data: { greeting: "hello again" } });
  await create(c, CONFIGMAPS(ns), { metadata: { name: "big" }, data: { big: "y".repeat(70_000) } });
  await remove(c, CONFIGMAPS(ns), "big");
  await create(c, SECRETS(ns), {
    metadata: { name: "creds" },
    type: "Opaque",
    data: { password: "czNjcjN0", binary: "/wCAgf7/" },
  });
  await patch(c, SECRETS(ns), "creds", { stringData: { user: "admin" } });
  await remove(c, SECRETS(ns), "creds");
  await create(c, PODS(ns), {
    metadata: { name: "nginx", labels: { app: "web" } },
    spec: {
      containers: [{
        name: "nginx",
        image: "nginx:1.27",
        ports: [{ containerPort: 80 }],
        resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { memory: "128Mi" } },
      }],
      terminationGracePeriodSeconds: 0,
    },
  });
  await patch(c, PODS(ns), "nginx", { metadata: { labels: { tier: "front" } } });
  await create(c, WIDGETS(ns), {
    apiVersion: "watchwire.example/v1",
    kind: "Widget",
    metadata: { name: "w1" },
    spec: {
      size: 3,
      ratio: 0.1,
      half: 1.5,
      whole: 2.0,
      big: 9007199254740993,
      negative: -42,
      tiny: 1e-7,
      huge: 1.7976931348623157e308,
      text: "日本語 🚀",
      on: true,
      none: null,
      list: [1, "two", 3.5, [], {}],
      nested: { a: { b: { c: [{ d: "e" }] } } },
    },
  });
  await patch(c, WIDGETS(ns), "w1", { spec: { size: 4 } });
  await create(c, WIDGETS(ns), { apiVersion: "watchwire.example/v1", kind: "Widget", metadata: { name: "w2" } });
  await remove(c, WIDGETS(ns), "w2");
}

/** Every event of a watch that ends by itself (`timeoutSeconds`). */
async function allEvents<T>(events: ReadableStream<WatchEvent<T>>): Promise<WatchEvent<T>[]> {
  const out: WatchEvent<T>[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const essence = (contentType: string) => contentType.split(";")[0].trim();

/** A watch in `format` through `c`, and the Content-Type its response had. */
async function watchIn<T>(c: ClusterConnection, ref: ResourceRef, format: "json" | "cbor", options: WatchOptions) {
  const own = noting(c);
  const events = await watch<T>(own, ref, { ...options, format });
  return { events, contentType: essence(own.contentTypes[0]) };
}

test("kube-apiserver with CBORServingAndStorage: CBOR watches, lists and streaming lists equal their JSON twins", async () => {
  const cluster = await ownCluster({ featureGates: { CBORServingAndStorage: true } });
  const c = await connect(cluster);
  try {
    const ns = await namespaceWithServiceAccount(c, "cbor");
    await widgetsServed(c, ns);
    const start = (await list(c, CONFIGMAPS(ns))).resourceVersion;
    await makeChanges(c, ns);
    const refs = [CONFIGMAPS(ns), SECRETS(ns), PODS(ns), WIDGETS(ns)];

    // Watches from before the changes, in both formats at once; each ends after its timeout.
    await Promise.all(refs.map(async (ref) => {
      const options = { resourceVersion: start, timeoutSeconds: 2 };
      const [json, cbor] = await Promise.all([
        watchIn<Obj>(c, ref, "json", options),
        watchIn<Obj>(c, ref, "cbor", options),
      ]);
      assert.equal(json.contentType, "application/json", ref.resource);
      assert.equal(cbor.contentType, "application/cbor-seq", ref.resource);
      const [jsonEvents, cborEvents] = await Promise.all([allEvents(json.events), allEvents(cbor.events)]);
      assert.ok(jsonEvents.length >= 2, `${ref.resource}: ${jsonEvents.length} events`);
      assert.ok(jsonEvents.some((e) => e.type === "MODIFIED"), ref.resource);
      assert.deepStrictEqual(cborEvents, jsonEvents, `${ref.resource}: watch from resourceVersion ${start}`);
    }));

    // Lists, a page at a time (continue tokens in CBOR too), at the same resourceVersion.
    for (const ref of refs) {
      const json = await list<Obj>(c, ref, { format: "json", pageSize: 1 });
      const before = c.contentTypes.length;
      const cbor = await list<Obj>(c, ref, {
        format: "cbor",
        pageSize: 1,
        resourceVersion: json.resourceVersion,
        resourceVersionMatch: "Exact",
      });
      assert.deepEqual(new Set(c.contentTypes.slice(before).map(essence)), new Set(["application/cbor"]));
      assert.equal(cbor.pages, json.pages, ref.resource);
      assert.deepStrictEqual({ ...cbor, pages: 0 }, { ...json, pages: 0 }, `${ref.resource}: list`);
    }

    // Streaming lists: the objects as ADDED, then the bookmark that ends them.
    for (const ref of refs) {
      const options: WatchOptions = {
        sendInitialEvents: true,
        resourceVersionMatch: "NotOlderThan",
        allowWatchBookmarks: true,
      };
      const isEnd = (e: WatchEvent<Obj>) =>
        e.type === "BOOKMARK" && e.object.metadata.annotations?.[INITIAL_EVENTS_END] === "true";
      const json = await watchIn<Obj>(c, ref, "json", options);
      const jsonEvents = await readUntil(json.events, isEnd);
      const cbor = await watchIn<Obj>(c, ref, "cbor", options);
      const cborEvents = await readUntil(cbor.events, isEnd);
      assert.equal(cbor.contentType, "application/cbor-seq", ref.resource);
      assert.ok(isEnd(cborEvents.at(-1)!), `${ref.resource}: the streaming list ended`);
      // The bookmarks' resourceVersions are the server's newest when each was asked (it writes leases of its own).
      assert.deepStrictEqual(cborEvents.slice(0, -1), jsonEvents.slice(0, -1), `${ref.resource}: streaming list`);
      const bookmark = ({ object }: WatchEvent<Obj>) => ({
        ...object,
        metadata: { ...object.metadata, resourceVersion: "" },
      });
      assert.deepStrictEqual(bookmark(cborEvents.at(-1)!), bookmark(jsonEvents.at(-1)!));
    }

    // The informer in CBOR: synced to what a JSON list holds, then following a change.
    const configMaps = informer<Obj>(c, CONFIGMAPS(ns), { format: "cbor" });
    const running = configMaps.start();
    try {
      for (let i = 0; i < 200 && !configMaps.hasSynced; i++) await sleep(50);
      assert.ok(configMaps.hasSynced, "the informer synced");
      const listed = await list<Obj>(c, CONFIGMAPS(ns));
      const names = (objects: Obj[]) => objects.map((o) => o.metadata.name).sort();
      assert.deepEqual(names(configMaps.store.list()), names(listed.items));
      for (const object of listed.items) {
        assert.deepStrictEqual(configMaps.store.get(`${ns}/${object.metadata.name}`), object);
      }
      const made = await create(c, CONFIGMAPS(ns), { metadata: { name: "later" }, data: { v: "1" } });
      for (let i = 0; i < 200 && configMaps.store.get(`${ns}/later`) === undefined; i++) await sleep(50);
      assert.deepStrictEqual(configMaps.store.get(`${ns}/later`), made);
    } finally {
      configMaps.stop();
      await running;
    }
    assert.ok(c.contentTypes.includes("application/cbor-seq"), "the informer's watch came in CBOR");
  } finally {
    await c.close();
  }
  const nobody = await connect(cluster, cluster.nobodyToken);
  try {
    // A refused request: the Status comes in CBOR and reads as the JSON one does.
    await assert.rejects(list(nobody, CONFIGMAPS("default"), { format: "cbor" }), (e: unknown) => {
      assert.ok(e instanceof ClusterAccessError);
      assert.equal(e.code, "FORBIDDEN");
      assert.match(e.message, /403 \(Forbidden\) configmaps is forbidden: User "nobody" cannot list resource/);
      return true;
    });
    assert.equal(essence(nobody.contentTypes.at(-1)!), "application/cbor");
    const [event] = await allEvents(await watch(nobody, CONFIGMAPS("default"), { format: "cbor" }));
    assert.equal(event.type, "ERROR");
    assert.equal(event.type === "ERROR" && event.object.reason, "Forbidden");
    assert.match(event.type === "ERROR" ? event.object.message ?? "" : "", /cannot watch resource "configmaps"/);
  } finally {
    await nobody.close();
  }
});

test("kube-apiserver without the CBOR gate: format cbor gets JSON (application/cbor alone is 406)", async () => {
  const cluster = await ownCluster();
  const c = await connect(cluster);
  try {
    const ns = await namespaceWithServiceAccount(c, "nocbor");
    const start = (await list(c, CONFIGMAPS(ns))).resourceVersion;
    await create(c, CONFIGMAPS(ns), { metadata: { name: "a" }, data: { v: "1" } });
    await patch(c, CONFIGMAPS(ns), "a", { data: { v: "2" } });

    const headers = await c.headers();
    headers.set("accept", "application/cbor");
    const refused = await c.fetch(collection(c, CONFIGMAPS(ns)), { headers });
    assert.equal(refused.status, 406);
    await refused.body?.cancel();

    const options = { resourceVersion: start, timeoutSeconds: 1 };
    const cbor = await watchIn<Obj>(c, CONFIGMAPS(ns), "cbor", options);
    assert.equal(cbor.contentType, "application/json");
    const json = await watchIn<Obj>(c, CONFIGMAPS(ns), "json", options);
    const [cborEvents, jsonEvents] = await Promise.all([allEvents(cbor.events), allEvents(json.events)]);
    assert.equal(jsonEvents.length, 2);
    assert.deepStrictEqual(cborEvents, jsonEvents);

    const before = c.contentTypes.length;
    const listed = await list<Obj>(c, CONFIGMAPS(ns), { format: "cbor" });
    assert.equal(essence(c.contentTypes[before]), "application/json");
    assert.deepEqual(listed.items.map((o) => o.metadata.name), ["a"]);

    const configMaps = informer<Obj>(c, CONFIGMAPS(ns), { format: "cbor" });
    const running = configMaps.start();
    try {
      for (let i = 0; i < 200 && !configMaps.hasSynced; i++) await sleep(50);
      assert.ok(configMaps.hasSynced);
      assert.deepStrictEqual(configMaps.store.get(`${ns}/a`), listed.items[0]);
    } finally {
      configMaps.stop();
      await running;
    }
  } finally {
    await c.close();
  }
});
