/**
 * The informer benchmark, in one runtime, against the cluster bench/informer_cluster.ts made (bench/informer_run.ts
 * runs it and client-go's tools/informer-bench, and writes bench/RESULTS.md's informer section). One part per run, one
 * JSON line on stdout:
 *
 *   --part sync     initial sync of the namespace's ConfigMaps and Pods until `synced`, round by round, the cases of a
 *                   round in a rotated order, a full GC (untimed) before each: watchwire's informer (JSON and protobuf
 *                   with `initialSync: "list"` and `"streaming"`; protobuf `mode: "metadata"` streaming), @kubernetes/client-node's
 *                   makeInformer (Node only), and the ceilings: the same requests with their bodies read and thrown
 *                   away (and, for JSON lists, read and `JSON.parse`d).
 *   --part memory --case C --resource R
 *                   one sync of case C (a first sync of it, dropped, warms the code up), the informer stopped with its
 *                   store kept, a full GC, and the heap used before and after, per object.
 *   --part churn    the recorded watch of N MODIFIED events (DIR/churn-<resource>.{json,pb}, real server bytes) as
 *                   64 KiB reads through an informer (decode + store + a no-op handler) of a ListWatchSource of its
 *                   own, against decoding alone (`decodeWatchResponse`, the events counted), and the ceiling: decoding
 *                   and keeping each object in a Map by key, as any cache must: events/s, by round.
 *
 *   node --expose-gc --import tsx bench/informer.bench.ts --part sync --kubeconfig DIR/kubeconfig --dir DIR
 *       [--rounds 5] [--warmup 1] [--objects 5000]   (or `deno run -A --v8-flags=--expose-gc`, `bun`)
 *
 * @module
 */
import type * as ClientNodeTypes from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import {
  type ClusterConnection,
  connectCluster,
  decodeWatchResponse,
  Informer,
  informer,
  type KubernetesObject,
  type ListWatchSource,
  loadKubeconfig,
  type WatchEvent,
} from "../mod.ts";
import { builtinDecoders } from "../kubernetes.ts";
import { collect, log, runtimeInfo } from "./harness.ts";
import { type BenchResource, NAMESPACE, RESOURCES } from "./informer_cluster.ts";

function flag(name: string, fallback?: string): string {
  const at = process.argv.indexOf(`--${name}`);
  const value = at < 0 ? fallback : process.argv[at + 1];
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

const part = flag("part");
const kubeconfig = flag("kubeconfig", process.env.KUBECONFIG);
const dir = flag("dir", "");
const ROUNDS = Number(flag("rounds", "5"));
const WARMUP = Number(flag("warmup", "1"));
const runtime = runtimeInfo();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const PROTOBUF_ACCEPT = "application/vnd.kubernetes.protobuf, application/json";
const INITIAL_EVENTS_END = new TextEncoder().encode("k8s.io/initial-events-end");

/** What one sync left: the number of objects and what holds them (for the memory part). */
interface Synced {
  objects: number;
  keep: unknown;
}

type SyncCase = (connection: ClusterConnection, resource: BenchResource) => Promise<Synced>;

/** watchwire's informer until `synced`; stopped (its watch closed) before it returns, its store kept. */
function watchwire(
  format: "json" | "protobuf",
  mode: "full" | "metadata",
  initialSync: "list" | "streaming",
): SyncCase {
  return async (connection, resource) => {
    let failure: unknown;
    const running = informer(connection, { version: "v1", resource, namespace: NAMESPACE }, {
      format,
      // Every built-in kind, as the benchmark measured before decoders became explicit (and as client-go has them).
      protobuf: { decoders: builtinDecoders, ...(mode === "metadata" ? { mode } : {}) },
      initialSync,
      onError: (e) => (failure ??= e),
    });
    let adds = 0;
    running.addHandlers({ add: () => void adds++ });
    const done = running.start();
    await Promise.race([
      running.synced,
      (async () => {
        while (failure === undefined) await sleep(20);
        throw failure;
      })(),
    ]);
    failure = "synced"; // ends the race's poller
    const objects = running.store.size;
    running.stop();
    await done;
    if (adds !== objects) throw new Error(`watchwire: ${adds} adds for ${objects} objects`);
    return { objects, keep: running };
  };
}

/** The client-node module (Node only: it needs Node 22.19 or later). */
type ClientNode = typeof ClientNodeTypes;
let clientNodeModule: ClientNode | undefined;

/**
 * @kubernetes/client-node's makeInformer (JSON; its list is one request, unpaginated, as client-node lists): synced
 * when its add handler has been given every object (the count of the first watchwire sync). start() resolves once its
 * watch is open; it is awaited, untimed, before the informer is stopped.
 */
function clientNode(expected: Map<BenchResource, number>): SyncCase {
  return async (_connection, resource) => {
    const k8s = clientNodeModule ??= await import("@kubernetes/client-node");
    const config = new k8s.KubeConfig();
    config.loadFromFile(kubeconfig);
    const api = config.makeApiClient(k8s.CoreV1Api);
    const listFn = resource === "pods"
      ? () => api.listNamespacedPod({ namespace: NAMESPACE })
      : () => api.listNamespacedConfigMap({ namespace: NAMESPACE });
    const cache = k8s.makeInformer<ClientNodeTypes.KubernetesObject>(
      config,
      `/api/v1/namespaces/${NAMESPACE}/${resource}`,
      listFn as () => Promise<ClientNodeTypes.KubernetesListObject<ClientNodeTypes.KubernetesObject>>,
    );
    const want = expected.get(resource)!;
    let adds = 0;
    let synced!: () => void;
    const all = new Promise<void>((resolve) => (synced = resolve));
    cache.on("add", () => {
      if (++adds === want) synced();
    });
    let failure: unknown;
    cache.on("error", (e) => (failure ??= e));
    const started = cache.start();
    // start() resolves once the list is applied and the watch open: by then every add has been given.
    await Promise.race([
      all,
      started.then(() => {
        if (adds !== want) throw new Error(`client-node: ${adds} adds, expected ${want}; ${failure}`);
      }),
    ]);
    // The caller's timer stops here; `after` (awaited by the caller, untimed) stops the informer.
    return {
      objects: adds,
      keep: cache,
      after: async () => {
        await started;
        await cache.stop();
        if (failure !== undefined) throw failure;
      },
    } as Synced;
  };
}

/** `path` with a query, on the connection's server. */
function url(connection: ClusterConnection, resource: BenchResource, query: string): URL {
  return new URL(`/api/v1/namespaces/${NAMESPACE}/${resource}?${query}`, connection.server);
}

async function get(connection: ClusterConnection, target: URL, accept: string, signal?: AbortSignal) {
  const headers = await connection.headers();
  headers.set("accept", accept);
  const response = await connection.fetch(target, { headers, ...(signal ? { signal } : {}) });
  if (!response.ok) throw new Error(`GET ${target}: ${response.status}`);
  return response;
}

/** A protobuf varint at `at`: [value, next offset]. */
function varint(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return [value, at];
    shift += 7;
  }
}

/** The fields of a protobuf message's bytes whose wire type is LEN: field number -> [start, end]. */
function lenFields(bytes: Uint8Array, start: number, end: number): Map<number, [number, number]> {
  const fields = new Map<number, [number, number]>();
  let at = start;
  while (at < end) {
    let key: number;
    [key, at] = varint(bytes, at);
    const wire = key & 7;
    if (wire === 0) [, at] = varint(bytes, at);
    else if (wire === 2) {
      let length: number;
      [length, at] = varint(bytes, at);
      if (!fields.has(key >>> 3)) fields.set(key >>> 3, [at, at + length]);
      at += length;
    } else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else throw new Error(`wire type ${wire}`);
  }
  return fields;
}

/**
 * The continue token of a list page, from its first bytes: JSON and protobuf both put the list's metadata before its
 * items. (Protobuf: `k8s\0`, runtime.Unknown's raw (field 2), the list's ListMeta (field 1), its continue (field 3).)
 */
function continueToken(head: Uint8Array, protobuf: boolean): string {
  if (!protobuf) {
    const text = new TextDecoder().decode(head.subarray(0, 2048));
    return /"continue":"([^"]*)"/.exec(text)?.[1] ?? "";
  }
  // Only the front of the message is here: walk it field by field, never past what is known to be complete.
  let at = 4;
  for (;;) {
    let key: number, length: number;
    [key, at] = varint(head, at);
    [length, at] = varint(head, at);
    if (key >>> 3 === 2) break; // raw: the list
    at += length;
  }
  let key: number, length: number;
  [key, at] = varint(head, at);
  [length, at] = varint(head, at);
  if (key >>> 3 !== 1) return "";
  const meta = lenFields(head, at, at + length);
  const token = meta.get(3);
  return token === undefined ? "" : new TextDecoder().decode(head.subarray(token[0], token[1]));
}

/** The ceiling of a paginated list: each page's request made and its body read and thrown away (or parsed). */
function listCeiling(format: "json" | "protobuf", parse: boolean): SyncCase {
  return async (connection, resource) => {
    let token = "";
    let pages = 0;
    do {
      const query = `limit=500${token ? `&continue=${encodeURIComponent(token)}` : ""}`;
      const response = await get(
        connection,
        url(connection, resource, query),
        format === "json" ? "application/json" : PROTOBUF_ACCEPT,
      );
      if (parse) {
        const page = JSON.parse(new TextDecoder().decode(new Uint8Array(await response.arrayBuffer())));
        token = page.metadata?.continue ?? "";
      } else {
        const reader = response.body!.getReader();
        let head: Uint8Array | undefined;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (head === undefined || head.length < 4096) head = head === undefined ? value : concat(head, value);
        }
        token = continueToken(head ?? new Uint8Array(), format === "protobuf");
      }
      pages++;
    } while (token !== "");
    return { objects: -1, keep: pages };
  };
}

/** client-node's list request (one, unpaginated, JSON), its body read and thrown away. */
const unpaginatedCeiling: SyncCase = async (connection, resource) => {
  const response = await get(connection, url(connection, resource, ""), "application/json");
  const reader = response.body!.getReader();
  while (!(await reader.read()).done);
  return { objects: -1, keep: 1 };
};

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Whether `bytes` (with `carry`, the end of the reads before) holds `needle`. */
function holds(carry: Uint8Array, bytes: Uint8Array, needle: Uint8Array): boolean {
  const hay = carry.length > 0 ? concat(carry, bytes.subarray(0, needle.length)) : undefined;
  const search = (h: Uint8Array) => {
    const first = needle[0];
    for (let i = h.indexOf(first); i >= 0 && i <= h.length - needle.length; i = h.indexOf(first, i + 1)) {
      let j = 1;
      while (j < needle.length && h[i + j] === needle[j]) j++;
      if (j === needle.length) return true;
    }
    return false;
  };
  return (hay !== undefined && search(hay)) || search(bytes);
}

/**
 * The ceiling of a streaming list: the same watch request (sendInitialEvents), its body read and thrown away until
 * the bytes of the `k8s.io/initial-events-end` annotation go by (no decoding), then the request aborted.
 */
function streamCeiling(format: "json" | "protobuf"): SyncCase {
  return async (connection, resource) => {
    const abort = new AbortController();
    const query = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
    const response = await get(
      connection,
      url(connection, resource, query),
      format === "json" ? "application/json" : PROTOBUF_ACCEPT,
      abort.signal,
    );
    const reader = response.body!.getReader();
    let carry = new Uint8Array();
    let reads = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error("the watch ended before its initial events did");
      reads++;
      if (holds(carry, value, INITIAL_EVENTS_END)) break;
      carry = value.slice(Math.max(0, value.length - INITIAL_EVENTS_END.length));
    }
    abort.abort();
    await reader.cancel().catch(() => {});
    return { objects: -1, keep: reads };
  };
}

function syncCases(expected: Map<BenchResource, number>): Record<string, SyncCase> {
  const cases: Record<string, SyncCase> = {};
  for (const initialSync of ["list", "streaming"] as const) {
    cases[`watchwire JSON, ${initialSync}`] = watchwire("json", "full", initialSync);
    cases[`watchwire protobuf, ${initialSync}`] = watchwire("protobuf", "full", initialSync);
  }
  // Not `initialSync: "list"`: list() in metadata mode decodes each page as a List whose metadata is its ListMeta and
  // leaves its items as bytes, so the informer syncs with no objects (src/cluster/list.ts; reported, not fixed here).
  cases["watchwire metadata, streaming"] = watchwire("protobuf", "metadata", "streaming");
  if (runtime.name === "node" && Number(process.versions.node.split(".")[0]) >= 22) {
    cases["client-node makeInformer (JSON)"] = clientNode(expected);
  }
  cases["ceiling: JSON list pages read"] = listCeiling("json", false);
  cases["ceiling: JSON list pages read + JSON.parse"] = listCeiling("json", true);
  cases["ceiling: protobuf list pages read"] = listCeiling("protobuf", false);
  cases["ceiling: JSON streaming list read"] = streamCeiling("json");
  cases["ceiling: protobuf streaming list read"] = streamCeiling("protobuf");
  cases["ceiling: unpaginated JSON list read (client-node's request)"] = unpaginatedCeiling;
  return cases;
}

async function connect(): Promise<ClusterConnection> {
  const connection = await connectCluster(await loadKubeconfig({ path: kubeconfig }));
  // The connection made before anything is timed.
  await (await connection.fetch(new URL("/version", connection.server), { headers: await connection.headers() }))
    .text();
  return connection;
}

/** Times one sync; runs the case's untimed `after` (client-node's stop). */
async function timeSync(
  c: SyncCase,
  connection: ClusterConnection,
  resource: BenchResource,
): Promise<[number, Synced]> {
  const t0 = performance.now();
  const synced = await c(connection, resource);
  const ms = performance.now() - t0;
  await (synced as { after?: () => Promise<void> }).after?.();
  return [ms, synced];
}

async function syncPart(): Promise<Record<string, unknown>> {
  const connection = await connect();
  const expected = new Map<BenchResource, number>();
  const results: Record<string, { objects: number; ms: Record<string, number[]> }> = {};
  try {
    for (const resource of RESOURCES) {
      expected.set(resource, (await watchwire("protobuf", "full", "list")(connection, resource)).objects);
    }
    const cases = syncCases(expected);
    const names = Object.keys(cases);
    for (const resource of RESOURCES) {
      const ms: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      for (let round = 0; round < WARMUP + ROUNDS; round++) {
        for (let k = 0; k < names.length; k++) {
          const name = names[(k + round) % names.length];
          collect();
          const [took, synced] = await timeSync(cases[name], connection, resource);
          if (synced.objects >= 0 && synced.objects !== expected.get(resource)) {
            throw new Error(`${name}: ${synced.objects} objects, expected ${expected.get(resource)}`);
          }
          if (round >= WARMUP) ms[name].push(took);
        }
        log(`sync ${resource}: round ${round + 1}/${WARMUP + ROUNDS}`);
      }
      results[resource] = { objects: expected.get(resource)!, ms };
    }
  } finally {
    await connection.close();
  }
  return { sync: results };
}

/**
 * The JS heap plus what it holds outside it: V8 (Node, Deno) counts ArrayBuffers' bytes (what metadata mode keeps of
 * each object) in `external`, not in `heapUsed`; JavaScriptCore (Bun) counts them in `heapUsed` already (its
 * `external` is the same bytes again).
 */
const heapUsed = () => {
  const usage = process.memoryUsage();
  return runtime.name === "bun" ? usage.heapUsed : usage.heapUsed + usage.external;
};

async function memoryPart(): Promise<Record<string, unknown>> {
  const name = flag("case");
  const resource = flag("resource") as BenchResource;
  const connection = await connect();
  try {
    const expected = new Map<BenchResource, number>([[resource, Number(flag("objects", "5000"))]]);
    const c = syncCases(expected)[name];
    if (c === undefined) throw new Error(`no case ${name}`);
    // A first sync, dropped: the code compiled and warmed before the baseline, as for every later informer. Not in
    // Bun: JavaScriptCore scans the stack conservatively, and the dropped informer may still be alive at the baseline.
    if (flag("warm-sync", runtime.name === "bun" ? "0" : "1") === "1") await timeSync(c, connection, resource);
    await sleep(300);
    collect();
    collect();
    const before = heapUsed();
    const [ms, synced] = await timeSync(c, connection, resource);
    await sleep(300);
    collect();
    collect();
    const after = heapUsed();
    if (synced.objects !== expected.get(resource)) throw new Error(`${synced.objects} objects`);
    // Read after the measurement, so that the store is alive across it.
    const kept = synced.keep instanceof Informer ? synced.keep.store.size : synced.objects;
    return { memory: { case: name, resource, objects: kept, before, after, perObject: (after - before) / kept, ms } };
  } finally {
    await connection.close();
  }
}

/** The recorded bytes as 64 KiB reads, delivered once `gate` resolves. */
function gated(reads: Uint8Array[], gate: Promise<void>): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i === 0) await gate;
      if (i < reads.length) controller.enqueue(reads[i++]);
      else controller.close();
    },
  });
}

function splitReads(bytes: Uint8Array, size = 64 * 1024): Uint8Array[] {
  const reads: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) reads.push(bytes.slice(at, at + size));
  return reads;
}

async function churnPart(): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  for (const resource of RESOURCES) {
    const list = JSON.parse(readFileSync(join(dir, `churn-${resource}-list.json`), "utf8")) as {
      items: KubernetesObject[];
      metadata: { resourceVersion: string };
    };
    const n = list.items.length;
    for (
      const [label, file, contentType, mode] of [
        ["JSON", "json", "application/json", "full"],
        ["protobuf", "pb", "application/vnd.kubernetes.protobuf;stream=watch", "full"],
        ["protobuf metadata", "pb", "application/vnd.kubernetes.protobuf;stream=watch", "metadata"],
      ] as const
    ) {
      const bytes = new Uint8Array(readFileSync(join(dir, `churn-${resource}.${file}`)));
      const reads = splitReads(bytes);
      const decode = (gate: Promise<void>) =>
        decodeWatchResponse(new Response(gated(reads, gate), { headers: { "content-type": contentType } }), {
          protobuf: { decoders: builtinDecoders, ...(mode === "metadata" ? { mode } : {}) },
        });
      const decodeAlone = async (): Promise<number> => {
        let open!: () => void;
        const gate = new Promise<void>((resolve) => (open = resolve));
        const events = decode(gate);
        let count = 0;
        const t0 = performance.now();
        open();
        for await (const event of events) if (event.type === "MODIFIED") count++;
        const ms = performance.now() - t0;
        if (count !== n) throw new Error(`decoded ${count} MODIFIED events, expected ${n}`);
        return ms;
      };
      // The ceiling: decoding, and keeping each object in a Map by its key, as any cache must (the objects outlive the
      // loop, which costs the garbage collector what decoding alone, whose objects die young, does not pay).
      const decodeAndKeep = async (): Promise<number> => {
        let open!: () => void;
        const gate = new Promise<void>((resolve) => (open = resolve));
        const kept = new Map<string, unknown>();
        for (const o of list.items) kept.set(`${o.metadata?.namespace}/${o.metadata?.name}`, o);
        const events = decode(gate);
        let count = 0;
        const t0 = performance.now();
        open();
        for await (const event of events) {
          if (event.type !== "MODIFIED") continue;
          count++;
          const metadata = (event.object as KubernetesObject).metadata;
          kept.set(`${metadata?.namespace}/${metadata?.name}`, event.object);
        }
        const ms = performance.now() - t0;
        if (count !== n) throw new Error(`decoded ${count} MODIFIED events, expected ${n}`);
        return ms;
      };
      const throughInformer = async (): Promise<number> => {
        let open!: () => void;
        const gate = new Promise<void>((resolve) => (open = resolve));
        let watching!: () => void;
        const watchOpened = new Promise<void>((resolve) => (watching = resolve));
        let watches = 0;
        const source: ListWatchSource = {
          list: () => Promise.resolve({ items: list.items, resourceVersion: list.metadata.resourceVersion }),
          watch: (request) => {
            if (watches++ === 0) {
              watching();
              return Promise.resolve(decode(gate) as ReadableStream<WatchEvent<KubernetesObject>>);
            }
            // Later watches (after the recording ends): quiet until the informer stops.
            return Promise.resolve(
              new ReadableStream({
                start: (c) => request.signal.addEventListener("abort", () => c.close(), { once: true }),
              }),
            );
          },
        };
        let failure: unknown;
        const running = new Informer(source, { initialSync: "list", onError: (e) => (failure ??= e) });
        let updates = 0;
        let allSeen!: () => void;
        const all = new Promise<void>((resolve) => (allSeen = resolve));
        running.addHandlers({
          add: () => {},
          update: () => {
            if (++updates === n) allSeen();
          },
        });
        const done = running.start();
        await running.synced;
        await watchOpened;
        const t0 = performance.now();
        open();
        await all;
        const ms = performance.now() - t0;
        running.stop();
        await done;
        if (failure !== undefined) throw failure;
        return ms;
      };
      const informerMs: number[] = [];
      const decodeMs: number[] = [];
      const keepMs: number[] = [];
      const cases = [throughInformer, decodeAlone, decodeAndKeep];
      for (let round = 0; round < WARMUP + ROUNDS; round++) {
        // The three in a rotated order, round by round.
        const times = new Map<() => Promise<number>, number>();
        for (let i = 0; i < cases.length; i++) {
          const run = cases[(round + i) % cases.length];
          collect();
          times.set(run, await run());
        }
        if (round < WARMUP) continue;
        informerMs.push(times.get(throughInformer)!);
        decodeMs.push(times.get(decodeAlone)!);
        keepMs.push(times.get(decodeAndKeep)!);
      }
      results[`${resource} ${label}`] = { events: n, bytes: bytes.length, informerMs, decodeMs, keepMs };
      log(`churn ${resource} ${label}: done`);
    }
  }
  return { churn: results };
}

const started = performance.now();
const output = part === "sync" ? await syncPart() : part === "memory" ? await memoryPart() : await churnPart();
process.stdout.write(
  JSON.stringify({ runtime, seconds: (performance.now() - started) / 1e3, rounds: ROUNDS, warmup: WARMUP, ...output }) +
    "\n",
);
process.exit(0);
