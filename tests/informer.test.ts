/**
 * The watch loop and the informer against a scripted source (each list and watch answered from a script, in order),
 * for the state machine's every path quickly; the real kube-apiserver tests (tests/servers/informer.test.ts) are the
 * proof, these are in addition. Sleeps are recorded, not slept.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Backoff,
  Informer,
  type InformerChange,
  type KubernetesObject,
  type ListWatchSource,
  type SourceWatchRequest,
  Store,
  watcher,
  type WatcherEvent,
  type WatchEvent,
} from "../mod.ts";

type Obj = KubernetesObject & { metadata: { name: string; namespace?: string; resourceVersion: string } };
const cm = (name: string, rv: string | number, data = ""): Obj => ({
  kind: "ConfigMap",
  metadata: { namespace: "ns", name, resourceVersion: String(rv) },
  ...(data ? { data: { v: data } } : {}),
});
const added = (o: Obj): WatchEvent<Obj> => ({ type: "ADDED", object: o });
const modified = (o: Obj): WatchEvent<Obj> => ({ type: "MODIFIED", object: o });
const deleted = (o: Obj): WatchEvent<Obj> => ({ type: "DELETED", object: o });
const bookmark = (rv: string | number, end = false): WatchEvent<Obj> => ({
  type: "BOOKMARK",
  object: {
    metadata: {
      name: "",
      resourceVersion: String(rv),
      ...(end ? { annotations: { "k8s.io/initial-events-end": "true" } } : {}),
    },
  } as Obj,
});
const status = (code: number, reason: string, message = "", retryAfterSeconds?: number): WatchEvent<Obj> => ({
  type: "ERROR",
  object: {
    kind: "Status",
    code,
    reason,
    message,
    ...(retryAfterSeconds === undefined ? {} : { details: { retryAfterSeconds } }),
  },
});

type WatchScript = WatchEvent<Obj>[] | { events: WatchEvent<Obj>[]; then: "hang" | "fail" | "end" } | Error;

/** A source that answers lists and watches from scripts, in order, and records the requests. */
function scripted(lists: ({ items: Obj[]; resourceVersion: string } | Error)[], watches: WatchScript[]) {
  const requests: string[] = [];
  const source: ListWatchSource<Obj> = {
    list: () => {
      requests.push("list");
      const next = lists.shift();
      if (next === undefined) return new Promise(() => {});
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(structuredClone(next));
    },
    watch: (request: SourceWatchRequest) => {
      requests.push(
        request.sendInitialEvents ? "streaming-list" : `watch@${request.resourceVersion}`,
      );
      const next = watches.shift();
      if (next === undefined) {
        return Promise.resolve(new ReadableStream({ cancel() {} }));
      }
      if (next instanceof Error) return Promise.reject(next);
      const { events, then } = Array.isArray(next) ? { events: next, then: "end" as const } : next;
      let i = 0;
      return Promise.resolve(
        new ReadableStream<WatchEvent<Obj>>({
          pull(controller) {
            if (i < events.length) controller.enqueue(structuredClone(events[i++]));
            else if (then === "end") controller.close();
            else if (then === "fail") controller.error(new TypeError("terminated"));
            else return new Promise(() => {});
          },
        }, { highWaterMark: 0 }),
      );
    },
  };
  return { source, requests };
}

/** The loop's events until `until` says stop (or `max` events), with sleeps recorded, not slept. */
async function run(
  source: ListWatchSource<Obj>,
  options: Parameters<typeof watcher>[1],
  until: (e: WatcherEvent<Obj>, all: WatcherEvent<Obj>[]) => boolean,
  max = 200,
) {
  const stop = new AbortController();
  const sleeps: number[] = [];
  const events: WatcherEvent<Obj>[] = [];
  for await (
    const event of watcher(source, {
      ...options,
      signal: stop.signal,
      sleep: (ms) => (sleeps.push(ms), Promise.resolve()),
      backoff: new Backoff({ random: () => 0.5 }),
    })
  ) {
    events.push(event);
    if (until(event, events) || events.length >= max) stop.abort();
  }
  return { events, sleeps };
}

const summary = (events: WatcherEvent<Obj>[]) =>
  events.map((e) =>
    "object" in e
      ? `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`
      : "resourceVersion" in e
      ? `${e.type} ${e.resourceVersion}`
      : e.type
  );

test("watcher: a streaming list, its initial-events-end bookmark, then changes from the same watch", async () => {
  const { source, requests } = scripted([], [
    [added(cm("a", 2)), added(cm("b", 3)), bookmark(5, true), modified(cm("a", 6)), deleted(cm("b", 7)), bookmark(8)],
  ]);
  const { events } = await run(source, {}, (e) => e.type === "Bookmark");
  assert.deepEqual(summary(events), [
    "Init",
    "InitApply a@2",
    "InitApply b@3",
    "InitDone 5",
    "Apply a@6",
    "Delete b@7",
    "Bookmark 8",
  ]);
  assert.deepEqual(requests, ["streaming-list"]);
});

test("watcher: a refused streaming list falls back to list + watch for good", async () => {
  const { source, requests } = scripted([{ items: [cm("a", 2)], resourceVersion: "4" }], [
    [status(422, "Invalid", "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")],
    [added(cm("c", 9))],
  ]);
  const { events } = await run(source, {}, (e) => e.type === "Apply");
  assert.deepEqual(summary(events), ["Init", "Error", "Init", "InitApply a@2", "InitDone 4", "Apply c@9"]);
  assert.deepEqual(requests, ["streaming-list", "list", "watch@4"]);
});

test("watcher: a watch that ends re-watches from the last resourceVersion (no relist); 410 relists", async () => {
  const { source, requests } = scripted(
    [{ items: [], resourceVersion: "10" }, { items: [cm("z", 30)], resourceVersion: "30" }],
    [[added(cm("a", 11)), bookmark(15)], [modified(cm("a", 16))], [status(410, "Expired", "too old resource version")]],
  );
  const { events } = await run(
    source,
    { initialSync: "list" },
    (_e, all) => all.filter((e) => e.type === "InitDone").length === 2,
  );
  assert.deepEqual(summary(events), [
    "Init",
    "InitDone 10",
    "Apply a@11",
    "Bookmark 15",
    "Apply a@16",
    "Expired",
    "Init",
    "InitApply z@30",
    "InitDone 30",
  ]);
  assert.deepEqual(requests, ["list", "watch@10", "watch@15", "watch@16", "list"]);
});

test("watcher: failures back off with full jitter, doubling to the ceiling; Retry-After is honoured", async () => {
  const refused = Object.assign(new Error("connect ECONNREFUSED"), {});
  const { source, requests } = scripted(
    [refused, refused, refused, { items: [], resourceVersion: "1" }],
    [
      { events: [added(cm("a", 2))], then: "fail" },
      [status(429, "TooManyRequests", "slow down", 7)],
      [status(500, "InternalError", "etcd")],
      [added(cm("b", 3))],
    ],
  );
  const { events, sleeps } = await run(
    source,
    { initialSync: "list" },
    (e) => e.type === "Apply" && e.object.metadata.name === "b",
  );
  assert.deepEqual(summary(events).filter((s) => s !== "Init"), [
    "Error",
    "Error",
    "Error",
    "InitDone 1",
    "Apply a@2",
    "Error", // cut mid-body: re-watch from 2
    "Error", // 429: at least its Retry-After
    "Error", // 500
    "Apply b@3",
  ]);
  // random() = 0.5: half of 800, 1600, 3200, 6400 ms; then 7 s for the 429 (its ceiling is lower); then 25 600 / 2.
  assert.deepEqual(sleeps, [400, 800, 1600, 3200, 7000, 12800]);
  assert.deepEqual(requests, ["list", "list", "list", "list", "watch@1", "watch@2", "watch@2", "watch@2"]);
});

test("watcher: a watch that goes silent is closed by the watchdog and opened again from its resourceVersion", async () => {
  const { source, requests } = scripted([{ items: [], resourceVersion: "1" }], [
    { events: [added(cm("a", 2))], then: "hang" },
    [added(cm("b", 3))],
  ]);
  const { events } = await run(
    source,
    { initialSync: "list", idleTimeoutMs: 50 },
    (e) => e.type === "Apply" && e.object.metadata.name === "b",
  );
  assert.ok(events.some((e) => e.type === "Error" && (e.error as Error).name === "WatchIdleError"));
  assert.deepEqual(requests, ["list", "watch@1", "watch@2"]);
});

test("watcher: resuming from a resourceVersion watches from it with no initial sync", async () => {
  const { source, requests } = scripted([], [[modified(cm("a", 21))]]);
  const { events } = await run(source, { resourceVersion: "20" }, (e) => e.type === "Apply");
  assert.deepEqual(summary(events), ["Apply a@21"]);
  assert.deepEqual(requests, ["watch@20"]);
});

test("informer: a relist tells handlers exactly what changed while away; the store is swapped whole", async () => {
  const { source } = scripted(
    [
      { items: [cm("keep", 1), cm("change", 2), cm("vanish", 3)], resourceVersion: "3" },
      { items: [cm("keep", 1), cm("change", 9, "new"), cm("new", 8)], resourceVersion: "9" },
    ],
    [[status(410, "Expired")]],
  );
  const informer = new Informer(source, {
    initialSync: "list",
    sleep: () => Promise.resolve(),
    indexers: { byName: (o) => [o.metadata?.name ?? ""] },
  });
  const seen: string[] = [];
  const stores: number[] = [];
  informer.addHandlers({
    add: (o) => void seen.push(`add ${o.metadata.name}`),
    update: (old, o) =>
      void seen.push(`update ${o.metadata.name} ${old.metadata.resourceVersion}->${o.metadata.resourceVersion}`),
    delete: (o) => {
      seen.push("finalStateUnknown" in o ? `delete ${o.key} (final state unknown)` : `delete ${o.metadata.name}`);
      stores.push(informer.store.size);
      if (seen.length === 6) informer.stop();
    },
  });
  await informer.start();
  assert.deepEqual(seen, [
    "add keep",
    "add change",
    "add vanish",
    "update change 2->9",
    "add new",
    "delete ns/vanish (final state unknown)",
  ]);
  // When the delete is told, the store already is the new one, whole.
  assert.deepEqual(stores, [3]);
  assert.deepEqual(informer.store.keys().sort(), ["ns/change", "ns/keep", "ns/new"]);
  assert.deepEqual(informer.store.byIndex("byName", "new").map((o) => o.metadata.resourceVersion), ["8"]);
  assert.equal(informer.resourceVersion, "9");
  assert.equal(informer.stats.expired, 1);
  assert.equal(informer.stats.initialSyncs, 2);
});

test("informer: a handler that throws is reported and the informer goes on; async handlers are awaited in order", async () => {
  const { source } = scripted([{ items: [], resourceVersion: "1" }], [[
    added(cm("a", 2)),
    modified(cm("a", 3)),
    deleted(cm("a", 4)),
  ]]);
  const errors: unknown[] = [];
  const informer = new Informer(source, { initialSync: "list", onError: (e) => errors.push(e) });
  const order: string[] = [];
  informer.addHandlers({
    add: async (o) => {
      await new Promise((r) => setTimeout(r, 20));
      order.push(`add ${o.metadata.resourceVersion}`);
    },
    update: () => {
      throw new Error("handler bug");
    },
    delete: (o) => {
      order.push(`delete ${"finalStateUnknown" in o ? o.key : o.metadata.resourceVersion}`);
      informer.stop();
    },
  });
  await informer.start();
  assert.deepEqual(order, ["add 2", "delete 4"]);
  assert.equal(informer.stats.handlerErrors, 1);
  assert.match(String(errors[0]), /handler bug/);
  assert.equal(informer.store.size, 0);
  assert.equal(informer.resourceVersion, "4");
});

test("informer: several handlers, sync and async, see each change in order; a rejected promise is reported", async () => {
  const { source } = scripted([{ items: [], resourceVersion: "1" }], [[
    added(cm("a", 2)),
    modified(cm("a", 3)),
    added(cm("b", 4)),
  ]]);
  const errors: unknown[] = [];
  const informer = new Informer(source, { initialSync: "list", onError: (e) => errors.push(e) });
  const order: string[] = [];
  const slow = (what: string) => new Promise<void>((r) => setTimeout(() => (order.push(what), r()), 10));
  informer.addHandlers({
    add: (o) => slow(`1 add ${o.metadata.resourceVersion}`),
    update: async (_, o) => {
      await slow(`1 update ${o.metadata.resourceVersion}`);
      throw new Error("async handler bug");
    },
  });
  informer.addHandlers({
    add: (o) => {
      order.push(`2 add ${o.metadata.resourceVersion}`);
      if (o.metadata.name === "b") informer.stop();
    },
    update: (_, o) => void order.push(`2 update ${o.metadata.resourceVersion}`),
  });
  await informer.start();
  assert.deepEqual(order, ["1 add 2", "2 add 2", "1 update 3", "2 update 3", "1 add 4", "2 add 4"]);
  assert.equal(informer.stats.handlerErrors, 1);
  assert.match(String(errors[0]), /async handler bug/);
});

test("watcher: time spent in a slow handler is not the server's silence: the watchdog does not fire for it", async () => {
  const { source, requests } = scripted([{ items: [], resourceVersion: "1" }], [
    { events: [added(cm("a", 2)), added(cm("b", 3))], then: "hang" },
  ]);
  const errors: unknown[] = [];
  const informer = new Informer(source, { initialSync: "list", idleTimeoutMs: 60, onError: (e) => errors.push(e) });
  const seen: string[] = [];
  informer.addHandlers({
    add: async (o) => {
      seen.push(o.metadata.name);
      if (o.metadata.name === "a") await new Promise((r) => setTimeout(r, 200));
      else informer.stop();
    },
  });
  await informer.start();
  assert.deepEqual(seen, ["a", "b"]);
  assert.deepEqual(errors, []);
  assert.deepEqual(requests, ["list", "watch@1"]);
});

test("informer: a handler added after the sync gets the store as adds first; changes() iterates the same", async () => {
  const { source } = scripted([{ items: [cm("a", 1), cm("b", 2)], resourceVersion: "2" }], [
    { events: [], then: "hang" },
  ]);
  const informer = new Informer(source, { initialSync: "list" });
  const running = informer.start();
  await informer.synced;
  const late: string[] = [];
  informer.addHandlers({ add: (o) => void late.push(o.metadata.name) });
  const changes: InformerChange<Obj>[] = [];
  const iterator = informer.changes();
  for await (const change of iterator) {
    changes.push(change);
    if (changes.length === 2) break;
  }
  informer.stop();
  await running;
  assert.deepEqual(late, ["a", "b"]);
  assert.deepEqual(changes.map((c) => c.type === "add" && c.object.metadata.name), ["a", "b"]);
});

test("informer: resumed from a snapshot, it is synced at once and applies the watch from its resourceVersion", async () => {
  const { source, requests } = scripted([], [[modified(cm("a", 6)), added(cm("b", 7))]]);
  const informer = new Informer(source, { resume: { resourceVersion: "5", objects: [cm("a", 4)] } });
  assert.equal(informer.hasSynced, true);
  const seen: string[] = [];
  informer.addHandlers({
    update: (old, o) => void seen.push(`update ${old.metadata.resourceVersion}->${o.metadata.resourceVersion}`),
    add: (o) => {
      seen.push(`add ${o.metadata.name}`);
      if (o.metadata.name === "b") informer.stop();
    },
  });
  await informer.start();
  // The late handler's adds (the resumed store) come first.
  assert.deepEqual(seen, ["add a", "update 4->6", "add b"]);
  assert.deepEqual(requests, ["watch@5"]);
  assert.deepEqual(informer.snapshot(), { resourceVersion: "7", objects: [cm("a", 6), cm("b", 7)] });
});

test("store: keys, indexes kept in step with sets and deletes", () => {
  const store = new Store<Obj>({ byData: (o) => [String((o as { data?: { v?: string } }).data?.v ?? "")] });
  store.set(cm("a", 1, "x"));
  store.set(cm("b", 2, "x"));
  store.set(cm("a", 3, "y"));
  assert.deepEqual(store.byIndex("byData", "x").map((o) => o.metadata.name), ["b"]);
  assert.deepEqual(store.byIndex("byData", "y").map((o) => o.metadata.name), ["a"]);
  store.delete("ns/b");
  assert.deepEqual(store.byIndex("byData", "x"), []);
  assert.deepEqual(store.byIndex("namespace", "ns").map((o) => o.metadata.name), ["a"]);
  assert.throws(() => store.byIndex("nope", ""), RangeError);
  // An update that moves some of an object's index values and keeps others.
  const tags = new Store<Obj>({ tags: (o) => Object.keys(o.metadata.labels ?? {}) });
  tags.set({ metadata: { namespace: "ns", name: "t", resourceVersion: "1", labels: { x: "", y: "" } } });
  tags.set({ metadata: { namespace: "other", name: "t", resourceVersion: "1", labels: { y: "" } } });
  tags.set({ metadata: { namespace: "ns", name: "t", resourceVersion: "2", labels: { y: "", z: "" } } });
  const names = (index: string, value: string) => tags.byIndex(index, value).map((o) => o.metadata.namespace).sort();
  assert.deepEqual([names("tags", "x"), names("tags", "y"), names("tags", "z")], [[], ["ns", "other"], ["ns"]]);
  tags.set({ metadata: { namespace: "ns", name: "t", resourceVersion: "3" } });
  assert.deepEqual([names("tags", "y"), names("tags", "z"), names("namespace", "ns")], [["other"], [], ["ns"]]);
});
