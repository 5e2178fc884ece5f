/**
 * Runs the informer benchmark end to end and writes its section of bench/RESULTS.md: a cluster of its own with 5,000
 * ConfigMaps and 5,000 Pods (bench/informer_cluster.ts), client-go's informers (tools/informer-bench, built with
 * `go build` into ~/.cache/watchwire/informer-bench), then bench/informer.bench.ts in each runtime asked for, one
 * process per part (and per memory case), one after another: the same machine, server and objects for all.
 *
 *   node --import tsx bench/informer_run.ts [--runtimes node-lts,node,deno,bun] [--rounds 5] [--reuse] [--keep]
 *       [--objects 5000] [--print]
 *
 * `--reuse`: a cluster left running in the directory by an earlier `--keep` (or `bench/informer_cluster.ts start`) is
 * used as it is. `--print`: the section goes to stdout, RESULTS.md is left alone. The section replaces the one between
 * its markers in RESULTS.md, or is appended. (`npm run bench` rewrites the rest of RESULTS.md and keeps it.)
 *
 * @module
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { attachCluster, type Cluster, stopCluster } from "../scripts/kube/cluster.mjs";
import { type BenchResource, OBJECTS, RESOURCES, setUp } from "./informer_cluster.ts";
import { median, quantile } from "./harness.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = argv.indexOf(`--${name}`);
  return at < 0 ? fallback : argv[at + 1];
};
const has = (name: string) => argv.includes(`--${name}`);
const ROUNDS = Number(option("rounds", "5"));
const CHURN_ROUNDS = 2 * ROUNDS + 1;
const OBJECT_COUNT = Number(option("objects", String(OBJECTS)));
const RUNTIMES = option("runtimes", "node-lts").split(",");
const dir = resolve(option("dir", join(root, ".cache", "informer-bench")));
/** The LTS Node's binary (scripts/node-lts.mjs, which installs it on first use). */
let ltsPath: string | undefined;
const nodeLtsPath = () =>
  ltsPath ??= execFileSync(process.execPath, [join(root, "scripts/node-lts.mjs"), "--path"], { encoding: "utf8" })
    .trim();
const say = (message: string) => process.stderr.write(`== ${message}\n`);

const JS_RUNTIMES: Record<string, { command: () => string; args: string[]; version: () => string }> = {
  node: { command: () => process.execPath, args: ["--expose-gc", "--import", "tsx"], version: () => process.version },
  "node-lts": {
    command: nodeLtsPath,
    args: ["--expose-gc", "--import", "tsx"],
    version: () => execFileSync(nodeLtsPath(), ["--version"], { encoding: "utf8" }).trim(),
  },
  deno: {
    command: () => join(root, "node_modules/.bin/deno"),
    args: ["run", "-A", "--v8-flags=--expose-gc"],
    version: () =>
      execFileSync(join(root, "node_modules/.bin/deno"), ["--version"], { encoding: "utf8" }).split("\n")[0],
  },
  bun: {
    command: () => join(root, "node_modules/.bin/bun"),
    args: [],
    version: () =>
      `bun ${execFileSync(join(root, "node_modules/.bin/bun"), ["--version"], { encoding: "utf8" }).trim()}`,
  },
};

/** Runs a command; its last stdout line as JSON. */
function runJson(command: string, args: string[], env: Record<string, string> = {}): Record<string, unknown> {
  const result = spawnSync(command, args, {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024,
    timeout: 20 * 60_000,
  });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")}: exit ${result.status ?? result.signal}`);
  return JSON.parse(result.stdout.trim().split("\n").pop()!);
}

// ---- the cluster ----
const started = Date.now();
/** The code measured: the commit, and the files of src/ that differ from it when the run starts. */
const codeMeasured = (() => {
  // Not trimmed: porcelain lines start with a status column that may be a space (" M src/...").
  const git = (args: string[]) => execFileSync("git", ["-C", root, ...args], { encoding: "utf8" });
  try {
    const changed = git(["status", "--porcelain", "--", "src", "mod.ts", "wire.ts", "kubernetes.ts", "capture.ts"])
      .split("\n").filter(Boolean)
      .map((line) => line.slice(3));
    return `commit ${git(["rev-parse", "--short", "HEAD"]).trim()}${
      changed.length > 0 ? ` plus uncommitted changes to ${changed.join(", ")}` : ""
    }`;
  } catch {
    return "unknown (no git)";
  }
})();
const loadBefore = os.loadavg();
mkdirSync(dir, { recursive: true });
let cluster: Cluster;
if (has("reuse") && existsSync(join(dir, "cluster.json")) && existsSync(join(dir, "churn-pods.pb"))) {
  cluster = attachCluster(dir);
  say(`reusing the cluster in ${dir}: ${cluster.server}`);
} else {
  cluster = await setUp(dir, OBJECT_COUNT, say);
}
const kubeconfig = cluster.kubeconfig;

try {
  // ---- client-go ----
  const goDir = join(os.homedir(), ".cache", "watchwire", "informer-bench");
  mkdirSync(goDir, { recursive: true });
  const goBinary = join(goDir, "informer-bench");
  say("go build tools/informer-bench");
  execFileSync("go", ["build", "-o", goBinary, "."], { cwd: join(root, "tools/informer-bench"), stdio: "inherit" });
  const goVersion = execFileSync("go", ["version"], { encoding: "utf8" }).trim();

  type GoSync = { syncMs: number[]; objects: number; watchList: boolean };
  type GoMemory = { inusePerObject: number; allocPerObject: number; objects: number };
  const goSync: Record<string, GoSync> = {};
  const goMemory: Record<string, GoMemory> = {};
  for (const resource of RESOURCES) {
    for (const mode of ["json", "protobuf", "metadata"]) {
      for (const watchList of [true, false]) {
        say(`client-go ${resource} ${mode} ${watchList ? "streaming" : "list"}`);
        goSync[`${resource}/${mode}/${watchList ? "streaming" : "list"}`] = runJson(goBinary, [
          "-kubeconfig",
          kubeconfig,
          "-resource",
          resource,
          "-mode",
          mode,
          "-warmup",
          "1",
          "-rounds",
          String(ROUNDS),
        ], { KUBE_FEATURE_WatchListClient: String(watchList) }) as unknown as GoSync;
      }
      goMemory[`${resource}/${mode}`] = runJson(goBinary, [
        "-kubeconfig",
        kubeconfig,
        "-resource",
        resource,
        "-mode",
        mode,
        "-memory",
      ]) as unknown as GoMemory;
    }
  }

  // ---- JavaScript runtimes ----
  type Sync = { sync: Record<BenchResource, { objects: number; ms: Record<string, number[]> }> };
  type Memory = { memory: { perObject: number; objects: number } };
  type Churn = {
    churn: Record<
      string,
      { events: number; bytes: number; informerMs: number[]; decodeMs: number[]; keepMs: number[] }
    >;
  };
  const js: Record<string, { version: string; sync: Sync; memory: Record<string, Memory>; churn: Churn }> = {};
  for (const name of RUNTIMES) {
    const runtime = JS_RUNTIMES[name];
    const bench = (args: string[]) =>
      runJson(runtime.command(), [
        ...runtime.args,
        "bench/informer.bench.ts",
        "--kubeconfig",
        kubeconfig,
        "--dir",
        dir,
        "--objects",
        String(OBJECT_COUNT),
        ...args,
      ]);
    say(`${name}: sync`);
    const sync = bench(["--part", "sync", "--rounds", String(ROUNDS), "--warmup", "1"]) as unknown as Sync;
    const memory: Record<string, Memory> = {};
    const cases = ["watchwire JSON, streaming", "watchwire protobuf, streaming", "watchwire metadata, streaming"];
    if ("client-node makeInformer (JSON)" in sync.sync.pods.ms) cases.push("client-node makeInformer (JSON)");
    for (const resource of RESOURCES) {
      for (const c of cases) {
        say(`${name}: memory ${resource} ${c}`);
        memory[`${resource}/${c}`] = bench([
          "--part",
          "memory",
          "--case",
          c,
          "--resource",
          resource,
        ]) as unknown as Memory;
      }
    }
    say(`${name}: churn`);
    const churn = bench(["--part", "churn", "--rounds", String(CHURN_ROUNDS), "--warmup", "3"]) as unknown as Churn;
    js[name] = { version: runtime.version(), sync, memory, churn };
  }

  // ---- the section ----
  const seconds = (Date.now() - started) / 1e3;
  const ms = (values: number[]) => median(values);
  const iqr = (values: number[]) => `${quantile(values, 0.25).toFixed(0)}–${quantile(values, 0.75).toFixed(0)}`;
  const x = (value: number) => `${value.toFixed(2)}x`;
  const yes = (met: boolean) => (met ? "yes" : "**no**");
  /** Met or not; a goal the same run's ceiling misses too is out of reach, reported, not chased. */
  const verdict = (met: boolean, ceilingMet: boolean) =>
    met ? "yes" : ceilingMet ? "**no**" : "**no**: out of reach (the ceiling misses it too)";
  const cell = (text: string) => text.replaceAll("|", "\\|");
  const table = (columns: string[], rows: string[][]) =>
    [
      `| ${columns.join(" | ")} |`,
      `| ${columns.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
      ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
    ].join("\n");
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  const wire: Record<string, { json: number; pb: number }> = {};
  for (const resource of RESOURCES) {
    const events = js[RUNTIMES[0]].churn.churn[`${resource} JSON`].events;
    wire[resource] = {
      json: readFileSync(join(dir, `churn-${resource}.json`)).length / events,
      pb: readFileSync(join(dir, `churn-${resource}.pb`)).length / events,
    };
  }

  const md: string[] = [];
  md.push("<!-- informer-bench:start -->", "## 10. Informer: initial sync, memory per cached object, churn", "");
  md.push(
    "Reproduce (about 20 minutes on 2 cores with three runtimes; needs Go, and the kube-apiserver and etcd that scripts/kube/build.mjs " +
      "builds into ~/.cache/watchwire):",
    "",
    "```sh",
    `node --import tsx bench/informer_run.ts --runtimes ${RUNTIMES.join(",")} --rounds ${ROUNDS}`,
    "# parts alone, against a cluster left running:",
    "node --import tsx bench/informer_cluster.ts start            # prints export KUBECONFIG=...",
    "(cd tools/informer-bench && go build -o ~/.cache/watchwire/informer-bench/informer-bench .)",
    "~/.cache/watchwire/informer-bench/informer-bench -kubeconfig $KUBECONFIG -resource pods -mode protobuf",
    "node --expose-gc --import tsx bench/informer.bench.ts --part sync --kubeconfig $KUBECONFIG --dir .cache/informer-bench",
    "```",
    "",
  );
  md.push(
    `Written by bench/informer_run.ts on ${new Date(started).toISOString()}; ${
      seconds.toFixed(0)
    } s in all; one run: ` +
      `one kube-apiserver v1.37.2 + etcd on 127.0.0.1 (scripts/kube/cluster.mjs, watch cache on), the same ` +
      `${OBJECT_COUNT} ConfigMaps and ${OBJECT_COUNT} Pods in namespace \`bench\` for every client. Machine: ` +
      `${os.availableParallelism()} CPUs (${os.cpus()[0]?.model}), shared with the server (and with other work: load ` +
      `average ${loadBefore.map((l) => l.toFixed(2)).join(" / ")} before the run). Clients: ${goVersion} with ` +
      `client-go v0.37.2 (tools/informer-bench); ${
        RUNTIMES.map((r) => `${r} ${js[r].version}`).join(", ")
      } with watchwire (${codeMeasured}) and @kubernetes/client-node 2.0.1 (Node ≥ 22.19 only).`,
    "",
    `Objects as stored (with managedFields of three managers: create, status, one change): a ConfigMap ` +
      `${kb(wire.configmaps.json)} of JSON / ${kb(wire.configmaps.pb)} of protobuf, a Pod (3 containers with env, ` +
      `resources, probes; a running Pod's status) ${kb(wire.pods.json)} / ${kb(wire.pods.pb)} (the mean watch event ` +
      `of the churn recordings).`,
    "",
    "**Method.** Initial sync: from the informer's creation to synced (watchwire: `synced` resolved, every object " +
      "given to an `add` handler; client-go: `HasSynced()` of the informer and of the no-op handler's registration, " +
      "polled every 200 µs; client-node: its `add` handler given every object), then the informer stopped. " +
      `${ROUNDS} timed syncs after one untimed, a full GC (untimed) before each; median ms, (p25–p75). Each JS ` +
      "runtime runs every case in one process, round by round in a rotated order; client-go runs one process per " +
      "mode, one after another. A ratio of times between processes is a ratio of medians. watchwire asks with " +
      "HTTP/1.1 (undici, one connection per request), client-go with HTTP/2. Lists: `limit=500` pages (watchwire: " +
      "no resourceVersion, a consistent read; client-go: resourceVersion=0 first); a streaming list is one watch " +
      "with `sendInitialEvents=true` (client-go's default in v0.37: WatchListClient on; " +
      "`KUBE_FEATURE_WatchListClient=false` for its list rows); client-node makes one list request, unpaginated, " +
      "and its model classes (`ObjectSerializer`, dates as `Date`). client-go JSON/protobuf: the typed " +
      "SharedInformer with `ContentType` JSON (client-go's default) or protobuf (what kube-controller-manager sets); " +
      "client-go metadata: `metadatainformer` (the server sends PartialObjectMetadata, a fraction of the bytes); " +
      'watchwire metadata: `format: "protobuf", protobuf: { mode: "metadata" }` (the server sends whole objects, ' +
      "decoded as far as their metadata). The ceilings are the same requests, made through watchwire's connection, " +
      "with their bodies read and thrown away (list pages: the continue token taken from the first bytes; a " +
      "streaming list: read until the bytes of its `k8s.io/initial-events-end` bookmark go by), and for JSON lists " +
      "also decoded to text and `JSON.parse`d: no client that reads those requests can be faster.",
    "",
    'Not measured: watchwire metadata-only with `initialSync: "list"`: `list()` with `protobuf: { mode: ' +
      '"metadata" }` decodes each page as a List, its metadata the ListMeta and its items left as bytes, and ' +
      "returns no items, so that informer syncs empty (src/cluster/list.ts). client-node in Deno and Bun (not tried), " +
      "and in Node 20 (client-node 2.0.1 needs Node ≥ 22.19): the Node rows are the LTS Node's.",
    "",
  );

  // Goals, then details per runtime.
  const goals: string[][] = [];
  for (const name of RUNTIMES) {
    const r = js[name];
    for (const resource of RESOURCES) {
      const t = r.sync.sync[resource].ms;
      const label = resource === "pods" ? "Pods" : "ConfigMaps";
      for (const sync of ["streaming", "list"] as const) {
        const go = ms(goSync[`${resource}/protobuf/${sync}`].syncMs);
        const ww = ms(t[`watchwire protobuf, ${sync}`]);
        const ceiling = ms(t[`ceiling: protobuf ${sync === "list" ? "list pages" : "streaming list"} read`]);
        goals.push([
          `${name}: ${label}, protobuf ${sync} sync, time vs client-go protobuf ${sync}`,
          "≤ 1.2x",
          x(ww / go),
          `${x(ceiling / go)} (requests read, nothing decoded)`,
          verdict(ww / go <= 1.2, ceiling / go <= 1.2),
        ]);
      }
      const cn = t["client-node makeInformer (JSON)"];
      if (cn !== undefined) {
        for (const sync of ["streaming", "list"] as const) {
          const ww = ms(t[`watchwire protobuf, ${sync}`]);
          const ceiling = ms(t[`ceiling: protobuf ${sync === "list" ? "list pages" : "streaming list"} read`]);
          goals.push([
            `${name}: ${label}, protobuf ${sync} sync, speed vs client-node makeInformer`,
            "≥ 2x",
            x(ms(cn) / ww),
            `${x(ms(cn) / ceiling)} (requests read, nothing decoded)`,
            verdict(ms(cn) / ww >= 2, ms(cn) / ceiling >= 2),
          ]);
        }
      }
      const meta = r.memory[`${resource}/watchwire metadata, streaming`].memory.perObject;
      const goFull = goMemory[`${resource}/protobuf`].inusePerObject;
      goals.push([
        `${name}: ${label}, memory per cached object, watchwire metadata-only vs client-go full objects`,
        "≤ 1x",
        `${x(meta / goFull)} (${kb(meta)} vs ${kb(goFull)})`,
        "",
        yes(meta <= goFull),
      ]);
      for (const format of ["JSON", "protobuf", "protobuf metadata"]) {
        const c = r.churn.churn[`${resource} ${format}`];
        const ratios = c.informerMs.map((m, i) => c.decodeMs[i] / m);
        const ceiling = c.keepMs.map((m, i) => c.decodeMs[i] / m);
        goals.push([
          `${name}: ${label} churn, ${format}: informer (decode + store + handler) vs decoding alone`,
          "≥ 0.8x",
          x(median(ratios)),
          `${x(median(ceiling))} (decoding + each object kept in a Map)`,
          verdict(median(ratios) >= 0.8, median(ceiling) >= 0.8),
        ]);
      }
    }
  }
  md.push(
    "**Goals** (issue 36). Ceiling: the same ratio for the ceiling row (sync: the same requests, nothing decoded; " +
      "churn: decoding, and keeping each object in a Map by key, which any cache must do).",
    "",
  );
  md.push(table(["goal", "target", "measured", "ceiling", "met"], goals), "");

  for (const resource of RESOURCES) {
    const label = resource === "pods" ? "Pods" : "ConfigMaps";
    const n = js[RUNTIMES[0]].sync.sync[resource].objects;
    md.push(`### Initial sync of ${n} ${label}`, "");
    const goStreaming = ms(goSync[`${resource}/protobuf/streaming`].syncMs);
    const rows: string[][] = [];
    for (const mode of ["json", "protobuf", "metadata"]) {
      for (const sync of ["streaming", "list"]) {
        const g = goSync[`${resource}/${mode}/${sync}`];
        if (g.objects !== n) throw new Error(`client-go ${resource} ${mode} ${sync}: ${g.objects} objects`);
        rows.push([
          `client-go ${mode === "metadata" ? "metadatainformer (PartialObjectMetadata, protobuf)" : mode}, ${sync}`,
          ms(g.syncMs).toFixed(0),
          iqr(g.syncMs),
          (n / ms(g.syncMs) * 1e3).toFixed(0),
          x(ms(g.syncMs) / goStreaming),
        ]);
      }
    }
    for (const name of RUNTIMES) {
      for (const [c, times] of Object.entries(js[name].sync.sync[resource].ms)) {
        rows.push([
          `${name}: ${c}`,
          ms(times).toFixed(0),
          iqr(times),
          (n / ms(times) * 1e3).toFixed(0),
          x(ms(times) / goStreaming),
        ]);
      }
    }
    md.push(table(["case", "ms", "(p25–p75)", "objects/s", "time vs client-go protobuf, streaming"], rows), "");
  }

  md.push("### Memory per cached object after sync", "");
  md.push(
    "One process per case: a first sync (dropped) warms code and caches, a full GC, the heap measured; one more " +
      "sync (streaming where there is a choice), the informer stopped with its store kept, a full GC after 0.5 s " +
      "(Go) / 0.3 s (JS), the heap measured again; the rise over the number of objects. Go: `HeapInuse` (spans in " +
      "use; the goal's measure) and `HeapAlloc` (live bytes). Node and Deno: `process.memoryUsage()`'s `heapUsed + " +
      "external` (V8 keeps ArrayBuffers' bytes, what metadata mode keeps of each object, outside `heapUsed`). Bun: " +
      "`heapUsed` (JavaScriptCore counts them in it), and no first sync: its conservative stack scan kept the " +
      "dropped informer alive at the baseline (the rise was then ~0).",
    "",
  );
  const memoryRows: string[][] = [];
  for (const resource of RESOURCES) {
    for (const mode of ["json", "protobuf", "metadata"]) {
      const g = goMemory[`${resource}/${mode}`];
      memoryRows.push([
        `${resource}: client-go ${mode}${mode === "metadata" ? " (PartialObjectMetadata)" : ""}`,
        kb(g.inusePerObject),
        `HeapAlloc ${kb(g.allocPerObject)}`,
      ]);
    }
    for (const name of RUNTIMES) {
      for (const [key, m] of Object.entries(js[name].memory)) {
        if (!key.startsWith(`${resource}/`)) continue;
        memoryRows.push([`${resource}: ${name}: ${key.slice(resource.length + 1)}`, kb(m.memory.perObject), ""]);
      }
    }
  }
  md.push(table(["client", "per object", "note"], memoryRows), "");

  md.push("### Churn: MODIFIED events through the informer vs decoding alone", "");
  md.push(
    "A real watch recorded from the server (every object changed once: a merge patch of one annotation; the bodies " +
      "of one watch from before the changes, JSON and protobuf), replayed from memory as 64 KiB reads. Informer: an " +
      "`Informer` of a ListWatchSource whose list gives the objects as before the changes and whose first watch is " +
      "`decodeWatchResponse` of the recording: timed from the first read to the last `update` handler call (decode " +
      "+ store + a no-op handler). Decoding alone: `decodeWatchResponse` of the same reads, `for await`, events " +
      "counted. Ceiling: the same decoding, each object then kept in a Map by namespace/name (filled with the " +
      "list's objects first), as any cache must: those objects outlive the loop, which costs the garbage collector " +
      `what decoding alone does not pay. ${CHURN_ROUNDS} rounds (the three in a rotated order, a full GC before ` +
      "each) after 3 untimed; ratio = informer events/s over decoding's, median over the rounds (p25–p75); the " +
      "ceiling ratio likewise.",
    "",
  );
  const churnRows: string[][] = [];
  for (const name of RUNTIMES) {
    for (const [key, c] of Object.entries(js[name].churn.churn)) {
      const ratios = c.informerMs.map((m, i) => c.decodeMs[i] / m);
      const ceiling = c.keepMs.map((m, i) => c.decodeMs[i] / m);
      churnRows.push([
        `${name}: ${key}`,
        String(c.events),
        (c.events / ms(c.decodeMs) * 1e3 / 1e3).toFixed(1) + " k",
        (c.events / ms(c.keepMs) * 1e3 / 1e3).toFixed(1) + " k",
        (c.events / ms(c.informerMs) * 1e3 / 1e3).toFixed(1) + " k",
        `${x(median(ratios))} (${quantile(ratios, 0.25).toFixed(2)}–${quantile(ratios, 0.75).toFixed(2)})`,
        x(median(ceiling)),
        "≥ 0.8x",
        verdict(median(ratios) >= 0.8, median(ceiling) >= 0.8),
      ]);
    }
  }
  md.push(
    table(
      [
        "stream",
        "events",
        "decoding alone, events/s",
        "decoding + kept in a Map, events/s",
        "informer, events/s",
        "ratio",
        "ceiling ratio",
        "target",
        "met",
      ],
      churnRows,
    ),
    "",
  );
  md.push("<!-- informer-bench:end -->", "");
  const section = md.join("\n");

  if (has("print")) process.stdout.write(section);
  else {
    const file = join(root, "bench/RESULTS.md");
    const text = readFileSync(file, "utf8");
    const start = text.indexOf("<!-- informer-bench:start -->");
    const end = text.indexOf("<!-- informer-bench:end -->");
    const next = start >= 0 && end > start
      ? text.slice(0, start) + section + text.slice(end + "<!-- informer-bench:end -->\n".length)
      : text.trimEnd() + "\n\n" + section;
    writeFileSync(file, next);
    say(`wrote the informer section of bench/RESULTS.md (${seconds.toFixed(0)} s)`);
  }
  writeFileSync(join(dir, "results.json"), JSON.stringify({ goSync, goMemory, js }, null, 1));
} finally {
  if (!has("keep") && !has("reuse")) await stopCluster(dir);
}
process.exit(0);
