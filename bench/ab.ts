/**
 * Two checkouts of watchwire measured against each other: what one change buys on the decoding rows users run and on
 * the informer's work (issue 37: a mechanism stays only where it buys at least 10% on one of them, in the same run).
 * Each checkout is loaded through its public entry points (`mod.ts`, `kubernetes.ts`), so the two may differ in
 * anything behind them. Each row is timed in processes of its own, one checkout each, the two checkouts' processes
 * alternating (which goes first changes every round): a process warms the row up with two runs, then times five, each
 * after a full GC. Timing both checkouts in one process let the first one's heap and compiled code disturb the other's
 * by more than the changes measured (a checkout against itself gave 0.75x-1.8x there).
 *
 * Rows:
 * - decode: the refgen fixtures' Pod, ConfigMap and Node (fixtures/kubernetes/streams, written by the Kubernetes
 *   serializers), each stream's first event repeated into ~6 MB of protobuf frames, as 64 KiB reads through
 *   `decodeWatchResponse`: full and metadata mode (bench/kubernetes_protobuf.bench.ts's headline rows).
 * - real: the real kube-apiserver's recorded watch bodies of N MODIFIED events (distinct objects, JSON and protobuf;
 *   DIR/churn-{pods,configmaps}.{json,pb}, written by bench/informer_cluster.ts) decoded alone.
 * - sync: those bodies through an `Informer` into an empty store (every object new and kept: an initial sync's work,
 *   with the network left out).
 * - churn: the same, the store holding the listed objects first (every event an update).
 * - memory: the store after a sync, per object: the heap used plus what it holds outside it (ArrayBuffers), after a
 *   full GC, in rounds of their own.
 *
 * Each row reports both checkouts' best time and the median of their processes' best times, and B's speed from each;
 * running a checkout against itself (`--a . --b .`) shows how far those move with no change at all. Memory is measured
 * in this process, the two checkouts alternating.
 *
 *   node --expose-gc --import tsx bench/ab.ts --a DIR_A --b DIR_B [--dir .cache/informer-bench] [--rounds 5]
 *       [--only decode,real,sync,churn,memory] [--match "protobuf full,metadata"] [--b-options '{"inputViews":"always"}']
 *
 * (or `deno run -A --v8-flags=--expose-gc bench/ab.ts ...`, `bun bench/ab.ts ...`). `--match` keeps the timed rows whose
 * name holds one of its comma-separated parts. `--b-options` adds protobuf options to B's metadata-mode rows, for an
 * option's A/B within one checkout (`--a . --b .`).
 *
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import process from "node:process";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { collect, log, runtimeInfo } from "./harness.ts";

function flag(name: string, fallback?: string): string {
  const at = process.argv.indexOf(`--${name}`);
  const value = at < 0 ? fallback : process.argv[at + 1];
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

const ROUNDS = Number(flag("rounds", "5"));
const dataDir = flag("dir", ".cache/informer-bench");
const only = new Set(flag("only", "decode,real,sync,churn,memory").split(","));
const bOptions = JSON.parse(flag("b-options", "{}")) as Record<string, unknown>;
/** Rows whose name holds one of these (comma-separated), or all. */
const match = flag("match", "").split(",").filter((m) => m !== "");

// deno-lint-ignore no-explicit-any
type Module = any;

interface Checkout {
  label: string;
  mod: Module;
  kubernetes: Module;
  metadataOptions: Record<string, unknown>;
}

async function load(label: string, dir: string, extra: Record<string, unknown>): Promise<Checkout> {
  const root = resolve(dir);
  return {
    label,
    mod: await import(pathToFileURL(join(root, "mod.ts")).href),
    kubernetes: await import(pathToFileURL(join(root, "kubernetes.ts")).href),
    metadataOptions: extra,
  };
}

/** `--child --checkout A|B --row NAME`: one process timing one row of one checkout (see the module doc). */
const child = process.argv.includes("--child");
const checkouts: Checkout[] = child
  ? [flag("checkout") === "A" ? await load("A", flag("a"), {}) : await load("B", flag("b"), bOptions)]
  : [await load("A", flag("a"), {}), await load("B", flag("b"), bOptions)];

const PB_WATCH = "application/vnd.kubernetes.protobuf;stream=watch";

function splitReads(bytes: Uint8Array, size = 64 * 1024): Uint8Array[] {
  const reads: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) reads.push(bytes.slice(at, at + size));
  return reads;
}

function streamOf(reads: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < reads.length) controller.enqueue(reads[i++]);
      else controller.close();
    },
  });
}

type Mode = "full" | "metadata";

function decode(c: Checkout, reads: Uint8Array[], contentType: string, mode: Mode) {
  const protobuf = mode === "metadata"
    ? { decoders: c.kubernetes.builtinDecoders, mode, ...c.metadataOptions }
    : { decoders: c.kubernetes.builtinDecoders };
  return c.mod.decodeWatchResponse(new Response(streamOf(reads), { headers: { "content-type": contentType } }), {
    protobuf,
  }) as ReadableStream<{ type: string; object: { metadata?: { name?: string; namespace?: string } } }>;
}

async function countEvents(events: AsyncIterable<unknown>): Promise<number> {
  let n = 0;
  for await (const _ of events) n++;
  return n;
}

interface Row {
  name: string;
  /** Runs the case once on a checkout; returns milliseconds. */
  run: (c: Checkout) => Promise<number>;
}

/** The case run again until at least `MIN_SAMPLE_MS` have passed: milliseconds per run. */
const MIN_SAMPLE_MS = 150;
async function sample(row: Row, c: Checkout): Promise<number> {
  let total = 0;
  let runs = 0;
  while (total < MIN_SAMPLE_MS) {
    total += await row.run(c);
    runs++;
  }
  return total / runs;
}

const rows: Row[] = [];

// decode: the repeated fixture events.
if (only.has("decode")) {
  const fixtures = new URL("../fixtures/kubernetes/streams/", import.meta.url);
  for (const kind of ["Pod", "ConfigMap", "Node"]) {
    const pb = new Uint8Array(readFileSync(new URL(`v1.${kind}.pb`, fixtures)));
    const frame = pb.subarray(0, 4 + new DataView(pb.buffer, pb.byteOffset).getUint32(0));
    const times = Math.ceil(6_000_000 / frame.length);
    const body = new Uint8Array(frame.length * times);
    for (let i = 0; i < times; i++) body.set(frame, i * frame.length);
    const reads = splitReads(body);
    for (const mode of ["full", "metadata"] as const) {
      rows.push({
        name: `decode ${kind} protobuf ${mode} (${times} events)`,
        run: async (c) => {
          const t0 = performance.now();
          const n = await countEvents(decode(c, reads, PB_WATCH, mode));
          const ms = performance.now() - t0;
          if (n !== times) throw new Error(`${n} events`);
          return ms;
        },
      });
    }
  }
}

interface Recorded {
  resource: string;
  format: "JSON" | "protobuf";
  mode: Mode;
  reads: Uint8Array[];
  contentType: string;
  list: { items: { metadata?: { name?: string; namespace?: string } }[]; metadata: { resourceVersion: string } };
}

const recorded: Recorded[] = [];
if (["real", "sync", "churn", "memory", "after-sync"].some((p) => only.has(p))) {
  if (!existsSync(join(dataDir, "churn-pods.pb"))) {
    throw new Error(`${dataDir}: no recorded bodies (run bench/informer_run.ts once, or pass --only decode)`);
  }
  for (const resource of ["pods", "configmaps"]) {
    const list = JSON.parse(readFileSync(join(dataDir, `churn-${resource}-list.json`), "utf8"));
    for (
      const [format, file, contentType, mode] of [
        ["JSON", "json", "application/json", "full"],
        ["protobuf", "pb", PB_WATCH, "full"],
        ["protobuf", "pb", PB_WATCH, "metadata"],
      ] as const
    ) {
      const reads = splitReads(new Uint8Array(readFileSync(join(dataDir, `churn-${resource}.${file}`))));
      recorded.push({ resource, format, mode, reads, contentType, list });
    }
  }
}

const label = (r: Recorded) => `${r.resource} ${r.format}${r.format === "protobuf" ? ` ${r.mode}` : ""}`;

/** An informer over `r`'s recorded watch, the list empty (`sync`) or the listed objects (`churn`); its store kept. */
async function throughInformer(c: Checkout, r: Recorded, listed: boolean): Promise<[number, unknown]> {
  const n = r.list.items.length;
  let watches = 0;
  let opened!: () => void;
  const watchOpened = new Promise<void>((resolve) => (opened = resolve));
  let gateOpen!: () => void;
  const gate = new Promise<void>((resolve) => (gateOpen = resolve));
  const source = {
    list: () =>
      Promise.resolve({ items: listed ? r.list.items : [], resourceVersion: r.list.metadata.resourceVersion }),
    watch: (request: { signal: AbortSignal }) => {
      if (watches++ === 0) {
        opened();
        const events = decode(c, r.reads, r.contentType, r.mode);
        // Held until the clock starts.
        return gate.then(() => events);
      }
      return Promise.resolve(
        new ReadableStream({ start: (s) => request.signal.addEventListener("abort", () => s.close(), { once: true }) }),
      );
    },
  };
  let failure: unknown;
  const informer = new c.mod.Informer(source, { initialSync: "list", onError: (e: unknown) => (failure ??= e) });
  let seen = 0;
  let all!: () => void;
  const allSeen = new Promise<void>((resolve) => (all = resolve));
  const count = () => {
    if (++seen === n) all();
  };
  informer.addHandlers({ add: listed ? () => {} : count, update: listed ? count : () => {} });
  const done = informer.start();
  await informer.synced;
  await watchOpened;
  const t0 = performance.now();
  gateOpen();
  await allSeen;
  const ms = performance.now() - t0;
  informer.stop();
  await done;
  if (failure !== undefined) throw failure;
  if (informer.store.size !== n) throw new Error(`store holds ${informer.store.size}, expected ${n}`);
  return [ms, informer];
}

for (const r of recorded) {
  if (only.has("real")) {
    rows.push({
      name: `real ${label(r)}: decode (${r.list.items.length} events)`,
      run: async (c) => {
        const t0 = performance.now();
        const n = await countEvents(decode(c, r.reads, r.contentType, r.mode));
        const ms = performance.now() - t0;
        if (n !== r.list.items.length) throw new Error(`${n} events`);
        return ms;
      },
    });
  }
  if (only.has("sync")) {
    rows.push({
      name: `sync ${label(r)}: informer, empty store`,
      run: async (c) => (await throughInformer(c, r, false))[0],
    });
  }
  if (only.has("churn")) {
    rows.push({
      name: `churn ${label(r)}: informer, every event an update`,
      run: async (c) => (await throughInformer(c, r, true))[0],
    });
  }
}

// after-sync: the headline Pod decode row timed after an informer's sync of the real server's Pods, its store kept for
// the rest of the process (V8 may then allocate what the decoder makes straight in the old generation).
if (only.has("after-sync")) {
  const pods = recorded.find((r) => r.resource === "pods" && r.format === "protobuf" && r.mode === "full");
  const decodeRow = rows.find((r) => r.name.startsWith("decode Pod protobuf full"));
  if (pods === undefined || decodeRow === undefined) throw new Error("after-sync needs the decode and real rows");
  const stores = new Map<Checkout, unknown>();
  rows.push({
    name: "decode Pod protobuf full, after a sync of 5000 Pods kept",
    run: async (c) => {
      if (!stores.has(c)) stores.set(c, (await throughInformer(c, pods, false))[1]);
      return await decodeRow.run(c);
    },
  });
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1];
const quantile = (v: number[], q: number) => [...v].sort((a, b) => a - b)[Math.round((v.length - 1) * q)];

if (match.length > 0) rows.splice(0, rows.length, ...rows.filter((row) => match.some((m) => row.name.includes(m))));

const runtime = runtimeInfo();
const SAMPLES = 5;
if (child) {
  // Two runs to warm the code up, then the samples, each after a full GC.
  const row = rows.find((r) => r.name === flag("row"));
  if (row === undefined) throw new Error(`no row ${flag("row")}`);
  for (let i = 0; i < 2; i++) await sample(row, checkouts[0]);
  const ms: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    collect();
    ms.push(await sample(row, checkouts[0]));
  }
  console.log(JSON.stringify(ms));
  process.exit(0);
}

/** The command that runs this script again in this runtime, as a child timing one row of one checkout. */
function childCommand(checkout: "A" | "B", row: string): [string, string[]] {
  const script = fileURLToPath(import.meta.url);
  const args = [
    ...process.argv.slice(2).filter((a) => a !== "--child"),
    "--child",
    "--checkout",
    checkout,
    "--row",
    row,
  ];
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  if (deno !== undefined) return [deno.execPath(), ["run", "-A", "--v8-flags=--expose-gc", script, ...args]];
  return [process.execPath, [...process.execArgv, script, ...args]];
}

log(`${runtime.name} ${runtime.version}: A = ${flag("a")}, B = ${flag("b")}; ${rows.length} rows, ${ROUNDS} rounds`);
// Each row: ROUNDS processes of each checkout, alternating which goes first; each process times SAMPLES runs.
const childBests = rows.map(() => [[] as number[], [] as number[]]);
for (let i = 0; i < rows.length; i++) {
  for (let round = 0; round < ROUNDS; round++) {
    for (const k of round % 2 === 0 ? [0, 1] : [1, 0]) {
      const [command, args] = childCommand(k === 0 ? "A" : "B", rows[i].name);
      const result = spawnSync(command, args, { encoding: "utf8", maxBuffer: 1 << 24 });
      if (result.status !== 0) throw new Error(`child failed: ${result.stderr}`);
      const ms = JSON.parse(result.stdout.trim().split("\n").pop()!) as number[];
      childBests[i][k].push(Math.min(...ms));
    }
  }
  log(`${rows[i].name}: done`);
}

const lines: string[] = [];
lines.push(
  `${runtime.name} ${runtime.version}; A = ${flag("a")}, B = ${
    flag("b")
  }; ${ROUNDS} processes of each, ${SAMPLES} runs in each`,
);
lines.push("");
lines.push(
  "| row | A ms (best, median of processes' best) | B ms (same) | B's speed vs A: best | by processes' best (IQR of pairs) |",
);
lines.push("| --- | ---: | ---: | ---: | ---: |");
rows.forEach((row, i) => {
  const [a, b] = childBests[i];
  const ratios = a.map((x, j) => x / b[j]);
  const best = (v: number[]) => Math.min(...v);
  lines.push(
    `| ${row.name} | ${best(a).toFixed(1)}, ${median(a).toFixed(1)} | ${best(b).toFixed(1)}, ${
      median(b).toFixed(1)
    } | ${(best(a) / best(b)).toFixed(2)}x | ${(median(a) / median(b)).toFixed(2)}x (${
      quantile(ratios, 0.25).toFixed(2)
    }–${quantile(ratios, 0.75).toFixed(2)}) |`,
  );
});

if (only.has("memory")) {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const heap = () => {
    const usage = process.memoryUsage();
    return runtime.name === "bun" ? usage.heapUsed : usage.heapUsed + usage.external;
  };
  lines.push("");
  lines.push("| store after a sync, bytes per object | A | B | B / A |");
  lines.push("| --- | ---: | ---: | ---: |");
  for (const r of recorded.filter((r) => r.format === "protobuf")) {
    const per = checkouts.map(() => [] as number[]);
    // The informer measured; emptied before each baseline, so that no earlier store is counted in it.
    const held: unknown[] = [];
    for (let round = 0; round < 3; round++) {
      for (const k of round % 2 === 0 ? [0, 1] : [1, 0]) {
        held.length = 0;
        await sleep(100);
        collect();
        collect();
        const before = heap();
        held.push((await throughInformer(checkouts[k], r, false))[1]);
        await sleep(100);
        collect();
        collect();
        per[k].push((heap() - before) / r.list.items.length);
      }
    }
    held.length = 0;
    const [a, b] = per.map(median);
    lines.push(`| ${label(r)} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(2)} |`);
  }
}
console.log(lines.join("\n"));
