/**
 * Chaos against the real server: an informer of ConfigMaps (all namespaces, one label) reads the real kube-apiserver
 * through the fault proxy (tests/peers/fault_proxy.ts), which cuts, resets, stalls and truncates its responses and
 * answers 429 (Retry-After), 500 and 410 at random (and over HTTP/2, GOAWAY and RST_STREAM), while a random schedule
 * of creates, updates, relabels (out of the selection and back) and deletes goes to the server directly. Once the
 * mutations stop and the faults with them, the informer must settle on exactly what a fresh list from the server
 * says (keys, resourceVersions, contents), and on the way:
 *
 * - its handlers saw a consistent history: no add of a known object, no update or delete of an unknown one, an update's
 *   `old` is the last state handed on, resourceVersions only go forward; replayed into a map, the calls give the store;
 * - each reconnect wait kept to the backoff schedule (full jitter under initialMs·2ⁿ capped at maxMs, n reset after
 *   resetAfterMs without a failure), and a 429's Retry-After was waited for;
 * - a watch broken by a fault was resumed from its resourceVersion, not relisted: a new initial sync only follows a
 *   fault on an initial sync or a 410 (the proxy's request log tells which request came after which);
 * - a watch stalled for longer than the idle timeout, before its answer or in its body, was given up within it;
 * - `stop()` ends it.
 *
 * JSON and protobuf, streaming list and list + watch, HTTP/1.1 and HTTP/2 (where the runtime's fetch has it). Each
 * run prints its seed; `WATCHWIRE_CHAOS_SEED=<seed>` repeats it (the same mutations and the same fault for the n-th
 * request; the timing of a live server still varies), `WATCHWIRE_CHAOS_RUNS=<n>` runs n seeds per combination,
 * `WATCHWIRE_CHAOS_MUTATIONS=<n>` makes n changes a run (80; more while fewer than 6 faults took effect), and
 * `WATCHWIRE_CHAOS_LOG=1` prints each failure reported and each run's request log.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { isDeepStrictEqual } from "node:util";
import { connectCluster } from "../../src/cluster/connection/connect_cluster.ts";
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";
import { ClusterAccessError } from "../../src/cluster/errors.ts";
import { loadKubeconfig } from "../../src/cluster/kubeconfig/load_kubeconfig.ts";
import { list } from "../../src/cluster/list.ts";
import { informer } from "../../src/cluster/resource_source.ts";
import type { KubernetesObject } from "../../src/events.ts";
import type { DeletedFinalStateUnknown } from "../../src/watch/informer.ts";
import { WatchStatusError } from "../../src/watch/watcher.ts";
import { builtinDecoders } from "../../src/codec/kubernetes/generated/all.ts";
import { type ProxiedRequest, seededRandom } from "../peers/fault_proxy.ts";
import { apiRequest, namespaceName, RUNTIME, sharedCluster, sharedFaultProxy } from "./_cluster.ts";
import {
  BACKOFF,
  chaosInformerTimings,
  chaosSchedule,
  type ConfigMap,
  IDLE_TIMEOUT_MS,
  keyOf,
  mutateThenEndFaults,
  Mutator,
  RETRY_AFTER_SECONDS,
} from "./_chaos.ts";

const RUNS = Number(process.env.WATCHWIRE_CHAOS_RUNS ?? 1);
const FIXED_SEED = process.env.WATCHWIRE_CHAOS_SEED === undefined
  ? undefined
  : Number(process.env.WATCHWIRE_CHAOS_SEED);
const MUTATIONS = Number(process.env.WATCHWIRE_CHAOS_MUTATIONS ?? 80);
const HTTP2_FETCH = RUNTIME !== "bun"; // Bun's fetch has no HTTP/2

/** The mutations go on until this many faults took effect: a run without faults would prove nothing. */
const MIN_FAULTS = 6;

const cluster = await sharedCluster();
const proxy = sharedFaultProxy;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const rvOf = (o: KubernetesObject) => BigInt(o.metadata?.resourceVersion ?? "0");

const send = (c: ClusterConnection, method: string, url: URL, body?: unknown) =>
  apiRequest<ConfigMap>(c, method, url, body);

/** The handlers' view: every call replayed into a map, and what broke the rules. */
class History {
  readonly objects = new Map<string, ConfigMap>();
  readonly violations: string[] = [];
  calls = 0;

  add = (object: ConfigMap) => {
    this.calls++;
    const key = keyOf(object);
    if (this.objects.has(key)) {
      this.violations.push(`add of ${key}, known at ${this.objects.get(key)!.metadata.resourceVersion}`);
    }
    this.objects.set(key, object);
  };

  update = (old: ConfigMap, object: ConfigMap) => {
    this.calls++;
    const key = keyOf(object);
    const known = this.objects.get(key);
    if (known === undefined) this.violations.push(`update of unknown ${key}`);
    else if (!isDeepStrictEqual(known, old)) {
      this.violations.push(
        `update of ${key} from ${old.metadata.resourceVersion}, last handed on ${known.metadata.resourceVersion}`,
      );
    }
    if (rvOf(object) <= rvOf(old)) {
      this.violations.push(
        `update of ${key} back from ${old.metadata.resourceVersion} to ${object.metadata.resourceVersion}`,
      );
    }
    this.objects.set(key, object);
  };

  delete = (gone: ConfigMap | DeletedFinalStateUnknown<ConfigMap>) => {
    this.calls++;
    const key = "finalStateUnknown" in gone ? gone.key : keyOf(gone);
    const object = "finalStateUnknown" in gone ? gone.object : gone;
    const known = this.objects.get(key);
    if (known === undefined) this.violations.push(`delete of unknown ${key}`);
    else if (rvOf(object) < rvOf(known)) {
      this.violations.push(
        `delete of ${key} at ${object.metadata.resourceVersion}, known at ${known.metadata.resourceVersion}`,
      );
    }
    this.objects.delete(key);
  };
}

/** The shortest wait a failure asks for: a 429's Retry-After (a watch's Status, or the 1 s a list's 429 gets). */
function retryAfterMs(error: unknown): number {
  if (error instanceof WatchStatusError && error.status.code === 429) {
    return (error.status.details?.retryAfterSeconds ?? 0) * 1000;
  }
  if (error instanceof ClusterAccessError && error.status === 429) return 1000;
  return 0;
}

/** Each wait against the schedule: the violations, one line each. */
function checkWaits(clock: number[], waits: number[], errors: unknown[]): string[] {
  const out: string[] = [];
  let failures = 0;
  for (let i = 0; i < waits.length; i++) {
    failures = i > 0 && clock[i] - clock[i - 1] < BACKOFF.resetAfterMs ? failures + 1 : 0;
    const ceiling = Math.min(BACKOFF.maxMs, BACKOFF.initialMs * 2 ** failures);
    const floor = retryAfterMs(errors[i]);
    const wait = waits[i];
    if (wait < floor || wait > Math.max(ceiling, floor) || (floor === 0 && wait >= ceiling)) {
      out.push(
        `wait ${i} (failure ${failures} in a row, after ${errors[i]}): ${wait} ms, not in [${floor}, ${
          Math.max(ceiling, floor)
        }]`,
      );
    }
  }
  return out;
}

/**
 * The request log against the watch loop's rules: after a broken watch from a resourceVersion, a watch from the same
 * or a later one (a resume); a new initial sync only after a fault on an initial sync or a 410; the next request
 * after a 429 no sooner than its Retry-After; a watch stalled (before its answer or in its body) for longer than the
 * idle timeout given up within it.
 */
function checkRequests(requests: ProxiedRequest[]): string[] {
  const out: string[] = [];
  const syncStart = (r: ProxiedRequest) => r.kind === "streamingList" || (r.kind === "list" && !r.continued);
  const faulted = (r: ProxiedRequest) => r.faultAt !== undefined && (r.fault?.name !== "stall" || r.end === "client"); // a stall that made it give up
  const describe = (r: ProxiedRequest) =>
    `#${r.n} ${r.kind}${r.continued ? " (continued)" : ""}${r.resourceVersion ? ` from ${r.resourceVersion}` : ""}` +
    (r.fault ? ` [${r.fault.name}${r.faultAt === undefined ? " not reached" : ""}, ${r.end}]` : ` [${r.end}]`);
  for (const r of requests) {
    const stall = r.fault?.name === "stall" && r.faultAt !== undefined ? r.fault : undefined;
    if (stall === undefined || r.kind === "list" || stall.ms! < IDLE_TIMEOUT_MS + 500) continue;
    if (r.end !== "client" || r.endedAt! > r.faultAt! + IDLE_TIMEOUT_MS + 1000) {
      const after = r.endedAt === undefined ? "not" : `${r.endedAt - r.faultAt!} ms after it,`;
      out.push(`${describe(r)}: stalled ${stall.ms} ms after ${stall.afterBytes} bytes, ${after} given up`);
    }
  }
  for (let i = 1; i < requests.length; i++) {
    const [before, now] = [requests[i - 1], requests[i]];
    if (before.fault?.name === "status429" && before.faultAt !== undefined) {
      const waited = now.at - before.faultAt;
      if (waited < RETRY_AFTER_SECONDS * 1000 - 25) {
        out.push(
          `${describe(now)} came ${waited} ms after the 429 of ${
            describe(before)
          } (Retry-After: ${RETRY_AFTER_SECONDS})`,
        );
      }
      if (before.kind === "list" && now.path !== before.path) {
        out.push(`${describe(now)} after the 429 of ${describe(before)}: not the same page again`);
      }
    }
    if (before.kind === "watchFromVersion" && faulted(before)) {
      if (before.fault?.name === "gone") {
        if (!syncStart(now)) out.push(`${describe(now)} after the 410 of ${describe(before)}: not a new initial sync`);
      } else if (now.kind !== "watchFromVersion" || BigInt(now.resourceVersion!) < BigInt(before.resourceVersion!)) {
        out.push(`${describe(now)} after ${describe(before)}: not a resume from its resourceVersion or later`);
      }
    }
    if (syncStart(now) && !(faulted(before) && (before.kind !== "watchFromVersion" || before.fault?.name === "gone"))) {
      out.push(
        `${describe(now)}: a new initial sync after ${describe(before)}, which no fault of a sync or 410 explains`,
      );
    }
  }
  return out;
}

interface RunResult {
  seconds: number;
  settleMs: number;
  objects: number;
  counts: Record<string, number>;
  faults: string;
  syncs: number;
  waits: number;
  log: string;
}

async function chaosRun(
  seed: number,
  format: "json" | "protobuf",
  initialSync: "streaming" | "list",
  http2: boolean,
): Promise<RunResult> {
  const begun = Date.now();
  const p = await proxy();
  const config = await loadKubeconfig({ path: cluster.kubeconfig });
  const admin = await connectCluster(config);
  const viaProxy = await connectCluster({ ...config, server: p.url }, { http2 });
  const first = (await p.stats()).requests.length;
  const stop = new AbortController();
  try {
    const random = seededRandom(seed);
    // A label of this run alone (a seed run again, or by another combination, must not see this one's objects).
    const label = { "watchwire-chaos": `${RUNTIME}-${seed}-${Math.random().toString(36).slice(2, 8)}` };
    const labelSelector = `watchwire-chaos=${label["watchwire-chaos"]}`;
    const namespaces: string[] = [];
    for (let i = 0; i < 3; i++) {
      namespaces.push(namespaceName(`chaos${i}`));
      await send(admin, "POST", new URL("/api/v1/namespaces", admin.server), { metadata: { name: namespaces[i] } });
    }
    const mutator = new Mutator(admin, random, namespaces, label);
    for (let i = 0; i < 8; i++) await mutator.create();

    // The informer, through the proxy, faults from its first request on.
    await p.schedule(chaosSchedule(seed));
    const history = new History();
    const errors: unknown[] = [];
    const clock: number[] = [];
    const waits: number[] = [];
    const timings = chaosInformerTimings(seed);
    const configmaps = informer<ConfigMap>(viaProxy, { version: "v1", resource: "configmaps" }, {
      format,
      protobuf: { decoders: builtinDecoders },
      initialSync,
      labelSelector,
      ...timings,
      backoff: {
        ...timings.backoff,
        now: () => {
          const now = Date.now();
          clock.push(now);
          return now;
        },
      },
      sleep: (ms, signal) => {
        waits.push(ms);
        return new Promise((resolve, reject) => {
          if (signal.aborted) return reject(signal.reason);
          const timer = setTimeout(resolve, ms);
          signal.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(signal.reason);
          }, { once: true });
        });
      },
      onError: (error) => {
        errors.push(error);
        if (process.env.WATCHWIRE_CHAOS_LOG) console.log(`error at ${Date.now()}: ${error}`);
      },
      signal: stop.signal,
    });
    configmaps.addHandlers(history);
    const running = configmaps.start();

    // MUTATIONS changes, and more while fewer than MIN_FAULTS faults took effect (up to 30 s in all).
    const faultsSoFar = async () => (await p.stats()).requests.slice(first).filter((r) => r.faultAt).length;
    const mutating = Date.now();
    const more = async () => Date.now() - mutating < 30_000 && await faultsSoFar() < MIN_FAULTS;
    // The faults go on a moment after the last change, then stop: the informer must settle.
    await mutateThenEndFaults(mutator, random, p, MUTATIONS, more);
    const settling = Date.now();

    const truth = await list<ConfigMap>(admin, { version: "v1", resource: "configmaps" }, { labelSelector });
    const expected = new Map(truth.items.map((o) => [keyOf(o), o]));
    const versions = (objects: Iterable<ConfigMap>) =>
      [...objects].map((o) => `${keyOf(o)}@${o.metadata.resourceVersion}`).sort().join(" ");
    const want = versions(expected.values());
    const until = Date.now() + 30_000;
    while (
      (versions(configmaps.store.list()) !== want || versions(history.objects.values()) !== want) &&
      Date.now() < until
    ) {
      await sleep(50);
    }
    const settleMs = Date.now() - settling;
    // A stall still open now (the store can settle while a relist stalls, as the old store stays until the new one is
    // whole) is judged once its idle timeout, and the second of slack checkRequests allows, has run out.
    const openStalls = (await p.stats()).requests.slice(first)
      .filter((r) => r.fault?.name === "stall" && r.faultAt !== undefined && r.endedAt === undefined);
    const judgeAt = Math.max(0, ...openStalls.map((r) => r.faultAt! + IDLE_TIMEOUT_MS + 1200));
    if (judgeAt > Date.now()) await sleep(judgeAt - Date.now());
    const requests = (await p.stats()).requests.slice(first);
    const log = () =>
      requests.map((r) =>
        `${r.n}:${r.kind}${r.continued ? "+" : ""}${
          r.fault ? `:${r.fault.name}@${r.fault.afterBytes}` : ""
        }:${r.status}:${r.end}:${r.bytes}B:${r.at - requests[0].at}-${(r.endedAt ?? 0) - requests[0].at}`
      ).join(" ");

    // The store is a fresh list: the same keys at the same resourceVersions, the same contents.
    assert.equal(versions(configmaps.store.list()), want, `the store settles on the list in 30 s; requests: ${log()}`);
    for (const object of configmaps.store.list()) assert.deepEqual(object, expected.get(keyOf(object)));
    assert.ok(configmaps.hasSynced);
    // The handlers saw a consistent history, which replayed gives the store.
    assert.deepEqual(history.violations, [], "the handlers' history");
    assert.deepEqual(new Map([...history.objects].sort()), new Map([...expected].sort()), "the handlers' replay");
    assert.equal(configmaps.stats.changes, history.calls, "every change handed on once");

    stop.abort();
    const stopped = await Promise.race([running.then(() => true), sleep(5000).then(() => false)]);
    assert.ok(stopped, "stop() ends it within 5 s");

    // Each wait kept to the schedule; each failure was followed by one.
    assert.equal(waits.length, clock.length, "a wait for each backoff step");
    assert.ok(
      errors.length - waits.length <= 1,
      `a wait after each failure (${errors.length} failures, ${waits.length} waits)`,
    );
    assert.deepEqual(
      checkWaits(clock, waits, errors),
      [],
      `the waits ${JSON.stringify(waits)} at ${JSON.stringify(clock.map((t) => t - clock[0]))} after ${
        errors.join("; ")
      }`,
    );
    // Resumes, not relists; Retry-After waited for.
    assert.deepEqual(checkRequests(requests), [], `the requests: ${log()}`);

    const fired = requests.filter((r) => r.faultAt !== undefined);
    assert.ok(fired.length >= MIN_FAULTS, `at least ${MIN_FAULTS} faults took effect (${fired.length}): ${log()}`);
    const counts: Record<string, number> = {};
    for (const r of requests) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
    const tally: Record<string, number> = {};
    for (const r of fired) tally[r.fault!.name] = (tally[r.fault!.name] ?? 0) + 1;
    return {
      seconds: (Date.now() - begun) / 1000,
      settleMs,
      objects: expected.size,
      counts,
      faults: Object.entries(tally).map(([name, n]) => `${name} ${n}`).join(", "),
      syncs: configmaps.stats.initialSyncs,
      waits: waits.length,
      log: process.env.WATCHWIRE_CHAOS_LOG ? log() : "",
    };
  } finally {
    stop.abort();
    await p.schedule(null);
    await viaProxy.close();
    await admin.close();
  }
}

const COMBINATIONS = [
  { format: "json", initialSync: "streaming" },
  { format: "json", initialSync: "list" },
  { format: "protobuf", initialSync: "streaming" },
  { format: "protobuf", initialSync: "list" },
] as const;

for (const [index, { format, initialSync }] of COMBINATIONS.entries()) {
  test(`informer chaos (${format}, ${initialSync === "list" ? "list + watch" : "streaming list"}): it settles on the server's list, with a consistent history`, async () => {
    for (let run = 0; run < RUNS; run++) {
      const seed = FIXED_SEED !== undefined ? FIXED_SEED + run : Math.floor(Math.random() * 2 ** 31);
      // HTTP/2 for every other seed (the same for the same seed), where the runtime's fetch has it.
      const http2 = HTTP2_FETCH && (seed + index) % 2 === 1;
      const what = `seed ${seed} (${format}, ${initialSync}, ${http2 ? "HTTP/2" : "HTTP/1.1"}, ${RUNTIME})`;
      try {
        const r = await chaosRun(seed, format, initialSync, http2);
        console.log(
          `chaos ${what}: ${r.seconds.toFixed(1)} s, settled in ${r.settleMs} ms on ${r.objects} objects; ` +
            `requests ${JSON.stringify(r.counts)}; faults ${r.faults}; ${r.syncs} initial syncs, ${r.waits} waits` +
            (r.log ? `\n${r.log}` : ""),
        );
      } catch (e) {
        console.log(`chaos ${what} FAILED: WATCHWIRE_CHAOS_SEED=${seed} repeats it`);
        if (e instanceof Error) e.message = `${what}: ${e.message}`;
        throw e;
      }
    }
  });
}
