/**
 * The chaos comparison of issue 36: the same fault schedules against watchwire's informer and against
 * @kubernetes/client-node's `makeInformer`, and how often each one's cache ends equal to the server's.
 *
 * For each seed, three runs one after another, each against the real kube-apiserver through the fault proxy
 * (tests/peers/fault_proxy.ts: it terminates TLS with a certificate from the cluster's test CA, which both clients
 * trust from the kubeconfig), each with ConfigMaps of a label of its own in three namespaces of its own:
 *
 * - `watchwire`: `informer()` as tests/servers/informer_chaos.test.ts configures it (JSON, streaming list, its small
 *   timings: watches of 1-3 s, backoff 50-800 ms, idle timeout 2.5 s), over HTTP/1.1;
 * - `client-node`: `makeInformer(kubeconfig, "/api/v1/configmaps", listConfigMapForAllNamespaces, labelSelector)` as
 *   it is: when it emits `error` it has stopped, and it is not restarted here (that is what is compared);
 * - `client-node + restart`: the same with client-node's own example's error handler (examples/typescript/informer/
 *   informer.ts in kubernetes-client/javascript: on `error`, `informer.start()` again after 5 s).
 *
 * The same proxy fault schedule (tests/servers/_chaos.ts `chaosSchedule(seed)`: the n-th request through the proxy gets
 * the same fault in the three runs) and the same seeded mutations (`Mutator`: 8 creates, then `--mutations` creates,
 * updates, relabels and deletes straight to the server). Once the mutations stop, the faults go on 1 s more and stop;
 * then each informer has up to 30 s to settle: its cache (keys and resourceVersions) equal to a fresh list from the
 * server. Recorded: equal or not, the time it took, whether the informer had stopped for good (client-node: it emitted
 * `error`, no restart is pending, and no request of it reached the proxy since; a client-node informer in that state
 * cannot change any more, so its wait ends there), the requests and the faults that took effect.
 *
 *   node --import tsx bench/informer_chaos_compare.ts [--runs 8] [--seed 1] [--mutations 80] [--cluster-dir DIR] [--log]
 *
 * Seeds `--seed` .. `--seed + --runs - 1`. A cluster of its own is started (scripts/kube/cluster.mjs, from the binaries
 * in ~/.cache/watchwire) and removed at the end, unless `--cluster-dir` names one already running. client-node 2.0.1
 * needs Node >= 22.19: under an older Node the script runs itself again with the LTS Node (scripts/node-lts.mjs).
 * A line per seed and a summary go to stdout, then a markdown table, then one JSON line with every result; `--log`
 * adds each run's errors and the proxy's request log (n:kind:fault@afterBytes:status:end:bytes:from-to ms) to stderr.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import type * as ClientNodeTypes from "@kubernetes/client-node";
import { connectCluster, informer, list, loadKubeconfig } from "../mod.ts";
import { attachCluster, type Cluster, startCluster } from "../scripts/kube/cluster.mjs";
import { type FaultProxy, type ProxiedRequest, seededRandom, startFaultProxy } from "../tests/peers/fault_proxy.ts";
import { apiRequest } from "../tests/servers/_api.ts";
import {
  chaosInformerTimings,
  chaosSchedule,
  type ConfigMap,
  keyOf,
  mutateThenEndFaults,
  Mutator,
} from "../tests/servers/_chaos.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

// client-node 2.0.1 does not load in Node < 22.19 (its undici wants zlib's zstd): run again with the LTS Node.
const [major, minor] = process.versions.node.split(".").map(Number);
if (!("Deno" in globalThis) && !("Bun" in globalThis) && (major < 22 || (major === 22 && minor < 19))) {
  const lts = spawnSync(process.execPath, [`${root}scripts/node-lts.mjs`, "--path"], { encoding: "utf8" });
  if (lts.status !== 0) throw new Error(`scripts/node-lts.mjs --path: ${lts.stderr}`);
  process.stderr.write(`== Node ${process.version} cannot load client-node 2.0.1: running in ${lts.stdout.trim()}\n`);
  const run = spawnSync(
    lts.stdout.trim(),
    ["--import", "tsx", fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: "inherit", cwd: process.cwd() },
  );
  process.exit(run.status ?? 1);
}

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = argv.indexOf(`--${name}`);
  return at < 0 ? fallback : argv[at + 1];
};
const RUNS = Number(option("runs", "8"));
const FIRST_SEED = Number(option("seed", "1"));
const MUTATIONS = Number(option("mutations", "80"));
const CLUSTER_DIR = option("cluster-dir", "");
const LOG = argv.includes("--log");
const SETTLE_MS = 30_000;
/** client-node's example: `setTimeout(() => informer.start(), 5000)` in its `error` handler. */
const RESTART_AFTER_MS = 5000;

const VARIANTS = ["watchwire", "client-node", "client-node + restart"] as const;
type Variant = typeof VARIANTS[number];

const say = (message: string) => process.stderr.write(`== ${message}\n`);
/** The code measured: the commit, and the files of src/ that differ from it when the run starts. */
const codeMeasured = (() => {
  const git = (args: string[]) => {
    const r = spawnSync("git", ["-C", root, ...args], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(r.stderr);
    return r.stdout.trimEnd(); // not the start: a porcelain line begins with its status, " M" for a change
  };
  try {
    const changed = git(["status", "--porcelain", "--", "src", "mod.ts", "wire.ts", "kubernetes.ts", "capture.ts"])
      .split("\n").filter(Boolean)
      .map((l) => l.slice(3));
    return `commit ${git(["rev-parse", "--short", "HEAD"])}${
      changed.length > 0 ? ` plus uncommitted changes to ${changed.join(", ")}` : ""
    }`;
  } catch {
    return "unknown (no git)";
  }
})();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const clientNodeVersion = JSON.parse(readFileSync(`${root}node_modules/@kubernetes/client-node/package.json`, "utf8"))
  .version as string;

/** What the comparison reads of a cached object (client-node's have `Date`s where watchwire's have strings). */
type Versioned = { metadata?: { name?: string; namespace?: string; resourceVersion?: string } };

/** One informer under test, as the run sees it. */
interface Subject {
  /** The cache's objects. */
  objects(): Iterable<Versioned>;
  /** Errors it reported (watchwire: `onError`; client-node: its `error` event), as text. */
  errors: string[];
  /** Date.now() of its last error. */
  lastErrorAt?: number;
  /** client-node + restart: the restarts done. */
  restarts: number;
  /** A restart is pending (client-node + restart). */
  restartPending(): boolean;
  /** watchwire: its loop ended by itself (it never should: only its signal ends it). */
  ended(): boolean;
  close(): Promise<void>;
}

interface RunResult {
  seed: number;
  variant: Variant;
  /** The cache equal to a fresh list (keys and resourceVersions) within 30 s of the faults' end. */
  equal: boolean;
  /** ms from the faults' end to equal (null: never). */
  settleMs: number | null;
  /** It had stopped for good when the wait ended. */
  stoppedForGood: boolean;
  objects: number;
  /** Against the fresh list at the end: keys missing from the cache, keys it has that are gone, stale versions. */
  missing: number;
  extra: number;
  stale: number;
  requests: number;
  faults: number;
  faultsByName: Record<string, number>;
  errors: number;
  firstErrors: string[];
  restarts: number;
}

function describeError(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { statusCode?: number; code?: unknown }).statusCode ?? (e as { code?: unknown }).code;
    const cause = e.cause instanceof Error ? ` (${e.cause.message})` : "";
    return `${e.name}: ${e.message}${code === undefined ? "" : ` [${code}]`}${cause}`.slice(0, 200);
  }
  return String(e).slice(0, 200);
}

let clientNode: typeof ClientNodeTypes | undefined;

/** watchwire's informer through the proxy, as the chaos test configures it (JSON, streaming list), over HTTP/1.1. */
async function startWatchwire(cluster: Cluster, p: FaultProxy, seed: number, labelSelector: string): Promise<Subject> {
  const config = await loadKubeconfig({ path: cluster.kubeconfig });
  const viaProxy = await connectCluster({ ...config, server: p.url }, { http2: false });
  const stop = new AbortController();
  const errors: string[] = [];
  const subject: Subject = {
    objects: () => configmaps.store.list(),
    errors,
    restarts: 0,
    restartPending: () => false,
    ended: () => ended,
    close: async () => {
      stop.abort();
      await Promise.race([running, sleep(5000)]);
      await viaProxy.close();
    },
  };
  const configmaps = informer<ConfigMap>(viaProxy, { version: "v1", resource: "configmaps" }, {
    format: "json",
    initialSync: "streaming",
    labelSelector,
    ...chaosInformerTimings(seed),
    onError: (error) => {
      errors.push(describeError(error));
      subject.lastErrorAt = Date.now();
    },
    signal: stop.signal,
  });
  let ended = false;
  const running = configmaps.start().then(
    () => void (ended = !stop.signal.aborted),
    (e) => {
      ended = true;
      errors.push(`the loop ended: ${describeError(e)}`);
    },
  );
  return subject;
}

/** client-node's makeInformer of ConfigMaps of the label, all namespaces, through the proxy. */
async function startClientNode(cluster: Cluster, p: FaultProxy, labelSelector: string, restart: boolean) {
  const k8s = clientNode ??= await import("@kubernetes/client-node");
  const kubeconfig = new k8s.KubeConfig();
  kubeconfig.loadFromFile(cluster.kubeconfig);
  // The cluster's entry (its certificate-authority: the test CA, which signed the proxy's certificate) at the proxy.
  const proxied = new k8s.KubeConfig();
  proxied.loadFromOptions({
    clusters: kubeconfig.clusters.map((c) => ({ ...c, server: p.url })),
    users: kubeconfig.users,
    contexts: kubeconfig.contexts,
    currentContext: kubeconfig.currentContext,
  });
  const api = proxied.makeApiClient(k8s.CoreV1Api);
  const cache = k8s.makeInformer<ClientNodeTypes.V1ConfigMap>(
    proxied,
    "/api/v1/configmaps",
    () => api.listConfigMapForAllNamespaces({ labelSelector }),
    labelSelector,
  );
  const errors: string[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let closed = false;
  const subject: Subject = {
    objects: () => cache.list(),
    errors,
    restarts: 0,
    restartPending: () => timers.size > 0,
    ended: () => false,
    close: async () => {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await cache.stop();
    },
  };
  cache.on("error", (error: unknown) => {
    errors.push(describeError(error));
    subject.lastErrorAt = Date.now();
    if (!restart || closed) return;
    // client-node's example: "Restart informer after 5sec".
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (closed) return;
      subject.restarts++;
      void cache.start();
    }, RESTART_AFTER_MS);
    timers.add(timer);
  });
  void cache.start();
  return subject;
}

/** The cache against the fresh list: the same keys at the same resourceVersions, and what differs. */
function compare(objects: Iterable<Versioned>, expected: Map<string, ConfigMap>) {
  const have = new Map(
    [...objects].map((o) => [`${o.metadata?.namespace}/${o.metadata?.name}`, o.metadata?.resourceVersion]),
  );
  let missing = 0, extra = 0, stale = 0;
  for (const [key, object] of expected) {
    const rv = have.get(key);
    if (rv === undefined) missing++;
    else if (rv !== object.metadata.resourceVersion) stale++;
  }
  for (const key of have.keys()) if (!expected.has(key)) extra++;
  return { equal: missing + extra + stale === 0, missing, extra, stale, objects: have.size };
}

/** One seed, one variant: the mutations under the seed's faults, then the wait for the cache to settle. */
async function run(cluster: Cluster, p: FaultProxy, seed: number, variant: Variant): Promise<RunResult> {
  const config = await loadKubeconfig({ path: cluster.kubeconfig });
  const admin = await connectCluster(config);
  let subject: Subject | undefined;
  try {
    const random = seededRandom(seed);
    const tag = `${seed}-${Math.random().toString(36).slice(2, 8)}`;
    const label = { "watchwire-chaos": `compare-${tag}` };
    const labelSelector = `watchwire-chaos=${label["watchwire-chaos"]}`;
    const namespaces: string[] = [];
    for (let i = 0; i < 3; i++) {
      namespaces.push(`ww-compare${i}-${tag}`);
      await apiRequest(admin, "POST", new URL("/api/v1/namespaces", admin.server), {
        metadata: { name: namespaces[i] },
      });
    }
    const mutator = new Mutator(admin, random, namespaces, label);
    for (let i = 0; i < 8; i++) await mutator.create();

    // The informer, through the proxy, faults from its first request on.
    const first = (await p.stats()).requests.length;
    await p.schedule(chaosSchedule(seed));
    subject = variant === "watchwire"
      ? await startWatchwire(cluster, p, seed, labelSelector)
      : await startClientNode(cluster, p, labelSelector, variant === "client-node + restart");

    await mutateThenEndFaults(mutator, random, p, MUTATIONS);
    const settling = Date.now();

    const truth = await list<ConfigMap>(admin, { version: "v1", resource: "configmaps" }, { labelSelector });
    const expected = new Map(truth.items.map((o) => [keyOf(o), o]));
    const requestsSince = async () => (await p.stats()).requests.slice(first);
    /** client-node stopped for good: an error, no restart pending, no request since the error, none open. */
    const stoppedForGood = (s: Subject, requests: ProxiedRequest[]) => {
      if (s.ended()) return true;
      if (variant === "watchwire" || s.lastErrorAt === undefined || s.restartPending()) return false;
      return requests.every((r) => r.at < s.lastErrorAt! && r.endedAt !== undefined);
    };
    let settleMs: number | null = null;
    let stopped = false;
    while (true) {
      if (compare(subject.objects(), expected).equal) {
        settleMs = Date.now() - settling;
        break;
      }
      stopped = stoppedForGood(subject, await requestsSince());
      if (stopped || Date.now() - settling >= SETTLE_MS) break;
      await sleep(50);
    }
    const requests = await requestsSince();
    stopped ||= stoppedForGood(subject, requests);
    const diff = compare(subject.objects(), expected);
    if (LOG) {
      const log = requests.map((r) =>
        `${r.n}:${r.kind}${r.fault ? `:${r.fault.name}@${r.fault.afterBytes}` : ""}:${r.status}:${r.end}:${r.bytes}B:${
          r.at - settling
        }-${(r.endedAt ?? settling) - settling}`
      ).join(" ");
      say(
        `seed ${seed} ${variant}: errors ${
          JSON.stringify(subject.errors)
        }\n   requests (ms from the faults' end): ${log}`,
      );
    }
    const fired = requests.filter((r) => r.faultAt !== undefined);
    const faultsByName: Record<string, number> = {};
    for (const r of fired) faultsByName[r.fault!.name] = (faultsByName[r.fault!.name] ?? 0) + 1;
    return {
      seed,
      variant,
      equal: diff.equal,
      settleMs: diff.equal ? settleMs : null,
      stoppedForGood: stopped,
      objects: expected.size,
      missing: diff.missing,
      extra: diff.extra,
      stale: diff.stale,
      requests: requests.length,
      faults: fired.length,
      faultsByName,
      errors: subject.errors.length,
      firstErrors: subject.errors.slice(0, 3),
      restarts: subject.restarts,
    };
  } finally {
    await p.schedule(null);
    await subject?.close();
    await admin.close();
  }
}

function line(r: RunResult): string {
  const faults = Object.entries(r.faultsByName).map(([name, n]) => `${name} ${n}`).join(", ");
  const state = r.equal
    ? `equal, settled in ${r.settleMs} ms`
    : `NOT equal (${r.missing} missing, ${r.extra} extra, ${r.stale} stale of ${r.objects})`;
  return `  ${r.variant.padEnd(22)} ${state}; ${r.stoppedForGood ? "stopped for good; " : ""}` +
    `${r.requests} requests, ${r.faults} faults (${faults || "none"}); ${r.errors} errors` +
    (r.restarts > 0 ? `, ${r.restarts} restarts` : "") +
    (r.firstErrors.length > 0 ? `; first: ${r.firstErrors[0]}` : "");
}

const unhandled: string[] = [];
process.on("unhandledRejection", (e) => {
  unhandled.push(describeError(e));
  say(`unhandled rejection: ${describeError(e)}`);
});

const started = Date.now();
let cluster: Cluster;
let own = false;
if (CLUSTER_DIR) cluster = attachCluster(CLUSTER_DIR);
else {
  say("starting a cluster (scripts/kube/cluster.mjs)");
  cluster = await startCluster();
  own = true;
}
say(`kube-apiserver ${cluster.server}; Node ${process.version}; @kubernetes/client-node ${clientNodeVersion}`);
say(`watchwire: ${codeMeasured}`);
const proxy = await startFaultProxy({ upstream: cluster.server, ca: cluster.pki.ca, caKey: cluster.pki.caKey });
const results: RunResult[] = [];
const seeds = Array.from({ length: RUNS }, (_, i) => FIRST_SEED + i);
try {
  for (const seed of seeds) {
    const mine: RunResult[] = [];
    for (const variant of VARIANTS) {
      say(`seed ${seed}: ${variant}`);
      mine.push(await run(cluster, proxy, seed, variant));
    }
    results.push(...mine);
    console.log(`seed ${seed}:\n${mine.map(line).join("\n")}`);
  }
} finally {
  await proxy.close();
  if (own) await cluster.destroy();
}

const median = (values: number[]) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const summary = VARIANTS.map((variant) => {
  const rs = results.filter((r) => r.variant === variant);
  const settle = rs.filter((r) => r.equal).map((r) => r.settleMs!);
  return {
    variant,
    runs: rs.length,
    equal: rs.filter((r) => r.equal).length,
    stoppedForGood: rs.filter((r) => r.stoppedForGood).length,
    settleMedianMs: settle.length ? median(settle) : null,
    settleMaxMs: settle.length ? Math.max(...settle) : null,
    requests: rs.reduce((n, r) => n + r.requests, 0),
    faults: rs.reduce((n, r) => n + r.faults, 0),
    errors: rs.reduce((n, r) => n + r.errors, 0),
    restarts: rs.reduce((n, r) => n + r.restarts, 0),
  };
});
console.log(
  `\nsummary (seeds ${seeds[0]}..${seeds[seeds.length - 1]}, ${MUTATIONS} mutations each, ${
    ((Date.now() - started) / 1000).toFixed(0)
  } s; watchwire ${codeMeasured}; @kubernetes/client-node ${clientNodeVersion}; Node ${process.version}):`,
);
for (const s of summary) {
  console.log(
    `  ${s.variant.padEnd(22)} equal ${s.equal}/${s.runs}; stopped for good ${s.stoppedForGood}/${s.runs}; ` +
      `settle median ${s.settleMedianMs ?? "-"} ms, max ${s.settleMaxMs ?? "-"} ms; ${s.requests} requests, ` +
      `${s.faults} faults, ${s.errors} errors${s.restarts ? `, ${s.restarts} restarts` : ""}`,
  );
}
if (unhandled.length > 0) {
  console.log(`  unhandled rejections: ${unhandled.length}: ${unhandled.slice(0, 3).join("; ")}`);
}

// The table for bench/RESULTS.md.
const ms = (v: number | null) => (v === null ? "–" : String(Math.round(v)));
console.log(
  [
    "",
    "| informer | cache equal to a fresh list | stopped for good | settle, median (max) ms | requests | faults that took effect | errors reported |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...summary.map((s) =>
      `| ${s.variant}${
        s.restarts ? ` (${s.restarts} restarts)` : ""
      } | ${s.equal}/${s.runs} | ${s.stoppedForGood}/${s.runs} | ` +
      `${ms(s.settleMedianMs)} (${ms(s.settleMaxMs)}) | ${s.requests} | ${s.faults} | ${s.errors} |`
    ),
    "",
    `| seed | ${VARIANTS.join(" | ")} |`,
    `| --- | ${VARIANTS.map(() => "---").join(" | ")} |`,
    ...seeds.map((seed) =>
      `| ${seed} | ${
        VARIANTS.map((variant) => {
          const r = results.find((x) => x.seed === seed && x.variant === variant)!;
          const state = r.equal ? `equal in ${r.settleMs} ms` : `**not equal** (${r.missing}/${r.extra}/${r.stale})`;
          return `${state}${r.stoppedForGood ? ", stopped" : ""}; ${r.faults}/${r.requests} faulted`;
        }).join(" | ")
      } |`
    ),
    "",
  ].join("\n"),
);
console.log(JSON.stringify({
  node: process.version,
  clientNode: clientNodeVersion,
  watchwire: codeMeasured,
  seeds,
  mutations: MUTATIONS,
  settleMs: SETTLE_MS,
  seconds: Math.round((Date.now() - started) / 1000),
  summary,
  results,
  unhandledRejections: unhandled,
}));
process.exit(0);
