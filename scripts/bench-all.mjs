#!/usr/bin/env node
// Runs the benchmarks in bench/ under Node (`node --import tsx`: the Node running npm, and the current LTS from
// scripts/node-lts.mjs), Deno (`deno run -A`) and Bun, one process per benchmark and runtime, one after another (the
// machine has few cores), collects the JSON result each prints as its last stdout line, and writes bench/RESULTS.md
// (overwritten every run, but for the sections between `<!-- NAME:start -->` and `<!-- NAME:end -->` markers that
// other programs write, such as bench/informer_run.ts's: those are kept).
//
//   npm run bench                      everything (about 7-10 minutes on 2 cores)
//   npm run bench -- --quick           small inputs, few rounds: a smoke run of the whole thing
//   npm run bench -- node chunked      filter: words naming runtimes (node, node-lts, deno, bun) and/or benchmarks
//                                      (a prefix or part of the name: ndjson, client, chunked, memory); also
//                                      --runtime=a,b and --bench=a,b
//   npm run bench -- alternatives      the optional appendix (prototypes of speed-ups), not in the default run
//   npm run bench -- --all             the default run plus the appendix (about 1.5 minutes more)
//   npm run bench -- node node-lts deno bun chromium firefox
//                                      also in headless Chromium and Firefox (Debian's chromium and firefox-esr;
//                                      scripts/browser-bench.ts), which run only when named, and only the benchmarks
//                                      that need no Node API but node:fs and node:process (`browser: true`)
//
// Nothing here asserts on timings: a missed target is reported in RESULTS.md, the exit code only says whether every
// benchmark ran.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { nodeLtsPath } from "./node-lts.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = (name) => `${root}node_modules/.bin/${name}`;

const BENCHMARKS = [
  {
    name: "ndjson_pipeline",
    browser: true, // uses no Node API but node:fs and node:process, which scripts/browser-bench.ts stands in for
    file: "bench/ndjson_pipeline.bench.ts",
    title: "1. NDJSON → WatchEvent pipeline vs `JSON.parse` (the limit)",
    about: [
      "Input: the NDJSON bytes of the events as 64 KiB reads (copies) from a pull-based `ReadableStream`, through " +
      "`JsonWatchEventDecoderStream`. Baseline: `JSON.parse` in a plain loop over the same events already split into " +
      "strings. Ratio = pipeline throughput / baseline throughput (≥ 0.9x wanted).",
      "`NdjsonLineParser` + `toWatchEvent` (the same work with no stream) shows what the Web Streams machinery costs. " +
      "The breakdown rows time sub-steps on their own, in the same rounds; their last column is the share of the " +
      "`for await` pipeline's time, so decode + split + parse + streams should roughly add up to 100%.",
      "The batches row is the same decoding handing on one array of events per read (`BatchDecoderStream` of " +
      "`JsonWatchEventDecoder`, as `decodeWatchResponseBatches` does), read with `for await` over the batches and a " +
      "loop over each: one stream item per read instead of one per event.",
    ],
  },
  {
    name: "client_node_baseline",
    file: "bench/client_node_baseline.bench.ts",
    title: "2. watchwire vs the way @kubernetes/client-node reads a watch",
    about: [
      "Baseline, as in client-node's `Watch.watch` (https://github.com/kubernetes-client/javascript/blob/main/src/watch.ts): `createInterface(Readable.fromWeb(body))` from " +
      "`node:readline`, and per `line` event `JSON.parse(line.toString())` then a callback with `data.type`, " +
      "`data.object`. Candidate: `body.pipeThrough(new JsonWatchEventDecoderStream())`. Both read the same 64 KiB " +
      "reads from the same kind of pull-based `ReadableStream`. Ratio = watchwire / baseline (≥ 1.3x wanted).",
      "The ceiling row times, in the same rounds, only the `JSON.parse` of every event over the lines already split " +
      "into strings: no bytes, no streams, no checks. A decoder that parses every event does at least that much, so " +
      "its ratio vs client-node cannot exceed the ceiling's: where the ceiling is under 1.3x, so is any such decoder. " +
      "(Parsing a read's events in one `JSON.parse` of a joined array instead was measured slower in all four " +
      "runtimes.) The batches row: the same decoding with one array of events per read (`BatchDecoderStream`).",
    ],
  },
  {
    name: "chunked",
    browser: true,
    file: "bench/chunked.bench.ts",
    title: "3. HTTP/1.1 chunked decoding vs a plain copy",
    about: [
      "A chunk-coded body (payload: NDJSON Pod events) with 1 KiB and with 16 KiB HTTP chunks, delivered as 64 KiB " +
      "reads. Throughput counts wire bytes. Two separate comparisons, each against its own baseline (≥ 0.5x wanted):",
      "**(a) streams**: `ReadableStream` → `ChunkedDecoderStream` → `reader.read()` of every payload view, vs the " +
      "same reads → an identity `TransformStream` that copies each read into a destination buffer with " +
      "`Uint8Array.prototype.set` and enqueues the copy → the same `reader.read()` consumer.",
      "**(b) cores, no streams**: a `ChunkedDecoder.push(read, onPayload)` loop vs a bare loop of " +
      "`dest.set(read, offset)`.",
      "The (a) ceiling row is a `TransformStream` that enqueues, for each read, the very payload views " +
      "`ChunkedDecoderStream` hands on (located beforehand), parsing nothing: the cost of delivering one zero-copy " +
      "view per HTTP chunk through a stream, against the same baseline. A decoder that hands each chunk's payload on " +
      "as a view, never concatenated (issue 2), delivers at least those items, so its ratio cannot exceed this row's.",
    ],
  },
  {
    name: "memory",
    file: "bench/memory.bench.ts",
    title: "4. Memory: a long chunked JSON watch body",
    about: [
      "A child process per runtime decodes a chunked JSON watch body generated lazily by a pull-based " +
      "`ReadableStream` (64 KiB reads, never held in memory; each event its own HTTP chunk as the API server sends " +
      "them; mostly ~1 KB Pods, some ~30 KB Pods and ConfigMaps, and one ~4 MiB ConfigMap a third of the way in) " +
      "through `ChunkedDecoderStream` then `JsonWatchEventDecoderStream`, events counted and dropped. RSS is sampled " +
      "every ~50 ms; the baseline is taken after start-up and a full GC. Target: peak rise ≤ largest event + 16 MiB.",
      "The peak depends on when the engine's garbage collector runs, which differs between runs of the same code (in " +
      "V8 by 10 MiB and more), so the 1 GB runs are made three times, alternating with the control's, and judged by " +
      "the median run; every run's rise is listed.",
      "The control is a second child doing the least any decoder must do with the same body: decode each event's " +
      "bytes with `TextDecoder` and `JSON.parse` them (no streams, no wire buffering), so the difference between the " +
      "two is what watchwire itself adds. Both are also run once on a shorter body whose large event has some non-ASCII " +
      "text (JavaScript engines then store its decoded text and strings with two bytes per character).",
    ],
  },
  {
    name: "hpack",
    file: "bench/hpack.bench.ts",
    title: "5. HPACK decoding vs hpack.js",
    about: [
      "Every header block of the hpack-test-case corpus (../shared/conformance/hpack-test-case/: all stories of all " +
      "encoder folders, one decoder per story, cases in order so the dynamic table carries over). Baselines: hpack.js " +
      "through its public (stream) API, and hpack.js's decoder with its stream bypassed (the stronger one). Both " +
      "decoders are checked to give identical fields first. Ratio = watchwire / hpack.js (≥ 2x wanted).",
    ],
  },
  {
    name: "http2",
    browser: true,
    file: "bench/http2.bench.ts",
    title: "6. HTTP/2 frames and DATA delivery vs a plain copy",
    about: [
      "A server-to-client HTTP/2 byte stream: SETTINGS, a HEADERS block of HPACK literals per stream, then ~32 MB of " +
      "DATA frames with 16384-byte payloads (END_STREAM on the last), as 64 KiB reads; once all on stream 1, once " +
      "with streams 1 and 3 interleaved frame by frame. Throughput counts wire bytes. Two separate comparisons, each " +
      "against its own baseline (≥ 0.5x wanted):",
      "**(a) cores, no streams**: an `Http2FrameDecoder.push(read, onFrame)` loop summing DATA payload lengths vs a " +
      "bare loop of `dest.set(read, offset)`.",
      "**(b) streams**: `ReadableStream` → `Http2ConnectionDecoderStream` → every message's `body` read to its end " +
      "with `reader.read()` (concurrently when streams interleave), vs the same reads → an identity `TransformStream` " +
      "that copies each read with `Uint8Array.prototype.set` and enqueues the copy → the same `reader.read()` loop.",
    ],
  },
  {
    name: "etcd",
    file: "bench/etcd.bench.ts",
    title: "7. etcd watch decoding vs node:http2",
    about: [
      "A recording built by the benchmark (deterministic): the server-to-client bytes of one etcd `Watch` call as " +
      "grpc-go sends them (SETTINGS, SETTINGS ACK, response HEADERS of HPACK literals, ~20 MB of gRPC-framed " +
      "`WatchResponse` messages of 1–128 events with ~1 KB values, each message in its own DATA frames of ≤ 16384 " +
      "bytes, trailers with END_STREAM). No target: the ratios are reported.",
      "Baseline: the runtime's `node:http2` client (`http2.connect`, nghttp2 in Node; Deno and Bun have their own " +
      "implementations) against a loopback `node:net` server that waits for the client's request HEADERS and then " +
      "writes the recorded bytes; the response's DATA is consumed with `data` events counting bytes only (no gRPC " +
      "or protobuf parsing). The client announces a 2^31-1 stream window and raises its connection window, so no " +
      "WINDOW_UPDATE round trips are needed.",
      "Candidates: `Http2ConnectionDecoderStream` → `body` → `GrpcMessageDecoderStream` → `EtcdWatchDecoderStream`, " +
      "events counted, fed (1) by a `node:net` socket to the same server (the recorded client bytes are sent first) " +
      "and (2) from memory as 64 KiB reads. The breakdown rows stop after HTTP/2 and after gRPC framing.",
      "Before any timing, an initial sync decodes every message (`decodeEtcdWatchResponse`) and keeps and reads the " +
      "responses, as a cache of etcd's keys would, so that every row is timed in a process whose first decoded " +
      "objects were kept (V8 pretenures literals' allocation sites once most of what they make survives: see " +
      "src/codec/value_constructors.ts). The kept rows decode each message with no streams, with every run's " +
      "responses kept until the next run ends, against the same not kept, in rounds of their own.",
    ],
  },
  {
    name: "kubernetes_protobuf",
    browser: true,
    file: "bench/kubernetes_protobuf.bench.ts",
    title: "8. Kubernetes protobuf watch vs the JSON watch of the same objects",
    about: [
      "The hand-written realistic objects of the refgen fixtures (fixtures/kubernetes/streams/v1.{Pod,ConfigMap,Node}, " +
      "written by the Kubernetes serializers): each stream's ADDED event repeated into ~6 MB of JSON and the same " +
      "number of protobuf frames, as 64 KiB reads. Baseline: `JsonWatchEventDecoderStream`. Candidates: " +
      "`KubernetesProtobufWatchBodyDecoderStream` (full decoding to the same plain objects; ≥ 1.0x events/s wanted) and the " +
      'same in `mode: "metadata"` (≥ 5x of full wanted). The core rows time `JSON.parse` of each line against the ' +
      "generated decoder of each object, without streams; the reference rows are the same framing and stream delivery " +
      "with nothing decoded: the floor under full mode, and under metadata mode, which leaves a frame that spans reads " +
      "in their views rather than copying it together (its ratio vs full bounds what metadata mode can reach), and " +
      "that floor with each frame also copied into a pool where metadata mode, by default, copies its object's bytes " +
      "(the reads are too large to keep a view of): what the copy alone costs before anything is decoded; and that, " +
      "with each item carrying a new object made as metadata mode makes the event's ObjectMeta, its values already " +
      "decoded (its scalars set, then the own accessors of its collections defined, descriptors shared as the " +
      "decoder's are): the floor of metadata mode's design (an item per event, the retention bound, collections left " +
      "to first read), what is left of its time being the decoding itself (the envelope, ObjectMeta's values). The " +
      "same object repeats, so the strings the protobuf decoder interns (ASCII up to " +
      "32 bytes, any up to 128) are found again every time: the best case for that cache, as for a stream of objects " +
      "that share names, labels, images and messages; a string of 33-128 bytes seen for the first time costs 30-160 " +
      "ns more than without the cache (distinct strings of 48 and 100 bytes, in the four runtimes). Likewise each " +
      "`managedFields[].fieldsV1` (JSON in the protobuf bytes) repeats: from its third sighting its tree is made again " +
      "from the keys recorded at its second, with no decoding or parsing, as it would be for a stream of objects whose " +
      "managers write the same fields (a Node's kubelet at every status update, the Pods of one Deployment). The " +
      "distinct-objects rows (not judged) run JSON, full and metadata mode over copies of the event that are each a " +
      "distinct object, as in a real watch: the values that differ from one object to the next (name or its random " +
      "suffix, uid, resourceVersion, and a Pod's or Node's IPs and IDs) replaced in each copy by values of its own, of " +
      "the same length in both encodings; the benchmark decodes both bodies and compares every event before the timing, " +
      "keeping them all until compared, so that the process's first decoded objects are kept, as an informer keeps its " +
      "initial list. " +
      "Their strings are new in every event, the rest repeats: a stream between the two ends above. The row " +
      "'distinct objects kept' runs full decoding of them with every event kept until the next run ends, as an " +
      "informer's store keeps them, against the same not kept, in rounds of their own after the other cases.",
      "The last six core rows decode the whole event (`decodeWatchEventFrame`, envelope included) without streams or " +
      "framing: in full; in full with every `fieldsV1` as if never seen before (what was recorded of them is forgotten " +
      "before each event, so each is parsed as `JSON.parse` parses it and copied as a first sighting: the other end " +
      "of that cache); and in metadata mode with the object keeping a view of the frame or a copy of its bytes. " +
      "Metadata mode keeps views of the reads that hold a frame when they are at most four times the object's size " +
      "plus 32 KiB, else a copy, so that a kept object never keeps alive more than that. The next one also reads " +
      "what an informer's indexes read, `labels`, `annotations` and `ownerReferences`, which metadata mode decodes " +
      "on first read (as it does `finalizers` and `managedFields`, and each `managedFields[].fieldsV1`). The last " +
      "one decodes `metadata` whole at once, as full mode does, collections and `fieldsV1` included: the issue's " +
      '"decode apiVersion, kind and metadata now" taken literally, with the same view and nothing else changed. Its ' +
      "ratio vs full bounds what a metadata mode of that design can reach.",
      "The batched rows run the same decoders with one array of events per 64 KiB read instead of one stream item " +
      "per event (`BatchDecoderStream` of `JsonWatchEventDecoder` and of `KubernetesProtobufWatchBodyDecoder`, as " +
      "`decodeWatchResponseBatches` does), read with `for await` over the batches and a loop over each; their " +
      "ratios compare batched with batched (protobuf vs JSON, metadata vs full), and the JSON row batched with one " +
      "by one. They are checked against the same targets, as separate lines of the table above.",
    ],
  },
  {
    name: "msgpack",
    browser: true,
    file: "bench/msgpack.bench.ts",
    title: "9. msgpack event streams vs JSON: size and speed",
    about: [
      "The same events (parsed once) through `MsgpackEventEncoderStream` → `MsgpackEventDecoderStream` and through the " +
      'NDJSON pipeline (a `TransformStream` writing `JSON.stringify(event) + "\\n"` as UTF-8 → ' +
      "`JsonWatchEventDecoderStream`): round trip, and each half alone (decoders read 64 KiB reads; both decoders in " +
      "batches too, `BatchDecoderStream` of `JsonWatchEventDecoder` and of `MsgpackEventDecoder`); then loops without " +
      "streams: the msgpack cores vs `JSON.parse(JSON.stringify(event))`, and msgpackr alone (same options, lossy). No " +
      "target: size ratios (also gzip'd) in each table's note, speed ratios (msgpack/JSON events/s, same rounds) in the " +
      "last column.",
    ],
  },
  {
    name: "alternatives",
    file: "bench/alternatives.bench.ts",
    optional: true,
    title: "Appendix: prototypes of possible speed-ups (not targets)",
    about: [
      "Measured evidence for changes to src/, prototyped in bench code against the current implementation in the " +
      "same rounds (see bench/alternatives.bench.ts). Only run when asked for: `npm run bench -- alternatives` " +
      "(alone) or `npm run bench -- --all` (with everything else).",
    ],
  },
];

const RUNTIMES = [
  { name: "node", command: process.execPath, args: ["--expose-gc", "--import", "tsx"], version: () => process.version },
  {
    name: "node-lts",
    // Resolved (and installed on first use) only when this runtime is selected.
    get command() {
      return nodeLtsPath();
    },
    args: ["--expose-gc", "--import", "tsx"],
    version: () => firstLine(nodeLtsPath(), ["--version"]),
  },
  {
    name: "deno",
    command: bin("deno"),
    args: ["run", "-A", "--v8-flags=--expose-gc"],
    version: () => firstLine(bin("deno"), ["--version"]),
  },
  { name: "bun", command: bin("bun"), args: [], version: () => `bun ${firstLine(bin("bun"), ["--version"])}` },
  // Browsers (Debian's packages, not from npm): only when named. Each runs the benchmarks marked `browser: true`.
  ...[["chromium", "chromium"], ["firefox", "firefox-esr"]].map(([name, command]) => ({
    name,
    browser: true,
    command: process.execPath,
    args: ["--import", "tsx", "scripts/browser-bench.ts", command],
    version: () => firstLine(command, ["--version"]),
  })),
];

// ---- arguments ----
const argv = process.argv.slice(2);
const quick = argv.includes("--quick");
const all = argv.includes("--all");
const wantRuntimes = new Set();
const wantBenches = new Set();
for (const arg of argv) {
  if (arg === "--quick" || arg === "--all") continue;
  const [flag, value] = arg.startsWith("--") ? arg.slice(2).split("=") : [undefined, arg];
  for (const word of (value ?? "").split(",").filter(Boolean)) {
    if (flag === "runtime" || (flag === undefined && RUNTIMES.some((r) => r.name === word))) wantRuntimes.add(word);
    else if (flag === "bench" || flag === undefined) wantBenches.add(word);
    else throw new Error(`unknown option ${arg}`);
  }
}
// Browsers run only when named.
const runtimes = RUNTIMES.filter((r) => wantRuntimes.size === 0 ? !r.browser : wantRuntimes.has(r.name));
// Optional benchmarks run only when named.
const benches = BENCHMARKS.filter((b) =>
  wantBenches.size === 0 ? all || !b.optional : [...wantBenches].some((w) => b.name.includes(w))
);
if (runtimes.length === 0 || benches.length === 0) {
  console.error(
    `nothing selected (runtimes: ${RUNTIMES.map((r) => r.name)}; benchmarks: ${BENCHMARKS.map((b) => b.name)})`,
  );
  process.exit(2);
}

function firstLine(command, args) {
  try {
    // stderr ignored: Debian's chromium launcher prints a shell warning there on some machines.
    return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).split("\n")[0].trim();
  } catch (error) {
    return `unknown (${error.message.split("\n")[0]})`;
  }
}

/** Runs one benchmark file under one runtime; resolves with its result object or an error description. */
function run(runtime, bench) {
  const timeoutMs = (quick ? 2 : 8) * 60_000;
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(runtime.command, [...runtime.args, bench.file, ...(quick ? ["--quick"] : [])], {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      process.stderr.write(chunk);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    const finish = (error) => {
      clearTimeout(timer);
      const wall = (Date.now() - started) / 1e3;
      if (error !== undefined) return resolve({ ok: false, wall, error });
      try {
        const last = stdout.trim().split("\n").pop();
        resolve({ ok: true, wall, result: JSON.parse(last) });
      } catch {
        resolve({ ok: false, wall, error: `no JSON result on stdout; stderr ends: ${stderr.trim().slice(-600)}` });
      }
    };
    child.on("error", (error) => finish(String(error)));
    child.on("close", (code, signal) => {
      if (signal === "SIGKILL") finish(`killed after ${timeoutMs / 1e3} s`);
      else if (code !== 0) finish(`exit ${code}; stderr ends: ${stderr.trim().slice(-600)}`);
      else finish();
    });
  });
}

// ---- run ----
const startedAt = new Date();
const loadBefore = os.loadavg();
const outcomes = new Map(); // `${bench}/${runtime}` -> outcome
for (const bench of benches) {
  for (const runtime of runtimes) {
    if (runtime.browser && !bench.browser) {
      outcomes.set(`${bench.name}/${runtime.name}`, { ok: false, skipped: true });
      continue;
    }
    console.error(`\n=== ${bench.name} on ${runtime.name}${quick ? " (quick)" : ""} ===`);
    const outcome = await run(runtime, bench);
    outcomes.set(`${bench.name}/${runtime.name}`, outcome);
    console.error(outcome.ok ? `--- done in ${outcome.wall.toFixed(1)} s` : `--- FAILED: ${outcome.error}`);
  }
}
const wallSeconds = (Date.now() - startedAt.getTime()) / 1e3;

// ---- report ----
const cell = (text) => String(text).replaceAll("|", "\\|").replaceAll("\n", " ");
const table = (columns, rows, numeric = true) =>
  [
    `| ${columns.map(cell).join(" | ")} |`,
    `| ${columns.map((_, i) => (i === 0 || !numeric ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ].join("\n");

const versions = Object.fromEntries(runtimes.map((r) => [r.name, r.version()]));
const cpus = os.cpus();
const git = (args) => firstLine("git", ["-C", root, ...args]);
const changed = (() => {
  try {
    return execFileSync("git", ["-C", root, "diff", "--name-only", "HEAD", "--", "src", "mod.ts"], { encoding: "utf8" })
      .trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
})();

const md = [];
md.push("# watchwire benchmark results", "");
md.push(
  `Written by \`npm run bench${quick ? " -- --quick" : ""}\` (scripts/bench-all.mjs) on ${startedAt.toISOString()}; ` +
    `${quick ? "**quick smoke run: small inputs, few rounds; the figures are not meaningful**" : "full run"}; ` +
    `${wallSeconds.toFixed(0)} s in all. Overwritten by every run.`,
  "",
);
md.push("## Environment", "");
md.push(table(["", ""], [
  ["machine", `${os.availableParallelism?.() ?? cpus.length} CPUs (nproc), ${cpus[0]?.model ?? "unknown CPU"}`],
  ["memory", `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`],
  ["OS", `${os.type()} ${os.release()} ${os.arch()}`],
  ["load average before the run (1/5/15 min)", loadBefore.map((l) => l.toFixed(2)).join(" / ")],
  ...runtimes.map((r) => [r.name, versions[r.name]]),
  [
    "code measured",
    `commit ${git(["rev-parse", "--short", "HEAD"])}${
      changed.length > 0 ? ` plus uncommitted changes to ${changed.join(", ")}` : ""
    }`,
  ],
], false));
md.push("");

// Summary of targets: one row per check id, one column per runtime.
const checkRows = new Map();
for (const bench of benches) {
  for (const runtime of runtimes) {
    const o = outcomes.get(`${bench.name}/${runtime.name}`);
    if (!o?.ok) continue;
    for (const c of o.result.checks) {
      if (!checkRows.has(c.id)) checkRows.set(c.id, { label: c.label, target: c.target, by: {} });
      checkRows.get(c.id).by[runtime.name] = `${c.value ?? `${c.ratio.toFixed(2)}x`} ${c.met ? "yes" : "**no**"}`;
    }
  }
}
md.push("## Targets", "");
md.push("Each cell: the measured ratio (median over paired rounds) or value, then whether the target is met.", "");
if (checkRows.size === 0) md.push("(No targets in this selection.)", "");
else {md.push(table(
    ["check", "target", ...runtimes.map((r) => r.name)],
    [...checkRows.values()].map((c) => [c.label, c.target, ...runtimes.map((r) => c.by[r.name] ?? "not run")]),
  ));}
md.push("");

md.push("## Method", "");
md.push(
  "- Every runtime measures baseline and candidate in the same process and the same rounds. Each round runs every " +
    "case once, in an order rotated from round to round; short cases are repeated inside a sample until it takes " +
    "≥ 40 ms. Warmup runs come first and check every case's count (events or bytes); one full GC follows them " +
    "(none between samples: forcing one before every sample slowed the following sample several-fold in V8). " +
    "Nothing asserts on time.",
  "- Absolute figures are medians over the rounds. MB = 10^6 bytes. A ratio is the median, over rounds, of the " +
    "candidate's throughput over the baseline's in the same round; (IQR) gives its 25th–75th percentiles, a " +
    "measure of noise.",
  "- Data (bench/data.ts) are generated deterministically with a seeded PRNG: `pod-1k` (lean Pods, ~1.1 KB: " +
    "metadata with labels, annotations, ownerReferences and managedFields, one container, status), `pod-30k` (full " +
    "Pods with 11 containers with env, probes, mounts, statuses and per-container managedFields, ~30 KB) and " +
    "`configmap-30k` (ConfigMaps with ~29 KB of properties files, some lines non-ASCII).",
  "- The machine is shared and small: treat differences of a few percent as noise; the IQR column shows how " +
    "steady each ratio was.",
  ...(runtimes.some((r) => r.browser)
    ? [
      "- Browsers (`chromium`, `firefox`: Debian's packages, headless; only when named): scripts/browser-bench.ts " +
      "bundles the benchmark with esbuild, `node:fs` and `node:process` replaced by bench/browser/, and runs it in " +
      "a dedicated module Worker of a cross-origin isolated page on loopback (so `performance.now()` has the finest " +
      "resolution the browser gives: Firefox's profile also turns off its rounding to 1 ms). Chromium runs with " +
      "`--js-flags=--expose-gc`, so the one full GC after warmup happens there as in Node and Deno; Firefox exposes " +
      "none, so it has none. The same code as in the other runtimes, the same inputs, the same rounds.",
    ]
    : []),
  "",
);

for (const bench of benches) {
  md.push(`## ${bench.title}`, "");
  for (const line of bench.about) md.push(line, "");
  for (const runtime of runtimes) {
    const o = outcomes.get(`${bench.name}/${runtime.name}`);
    if (o.skipped) {
      md.push(`### ${runtime.name}`, "", "Not run: this benchmark needs Node APIs a browser does not have.", "");
      continue;
    }
    if (!o.ok) {
      md.push(`### ${runtime.name}`, "", `**Did not run**: ${cell(o.error)}`, "");
      continue;
    }
    const r = o.result;
    md.push(
      `### ${runtime.name} ${r.runtime.version} (${r.runtime.engine})`,
      "",
      `${r.seconds.toFixed(1)} s measuring, ${o.wall.toFixed(1)} s with start-up. Parameters: ${
        Object.entries(r.params).map(([k, v]) => `${k} ${v}`).join(", ")
      }.`,
      "",
    );
    for (const s of r.sections) {
      md.push(`**${s.title}**`, "");
      if (s.note) md.push(s.note, "");
      md.push(table(s.columns, s.rows), "");
    }
    for (const note of r.notes ?? []) md.push(`> ${note}`, "");
  }
}

// Sections other programs write between markers (bench/informer_run.ts's `<!-- informer-bench:start -->` ...
// `<!-- informer-bench:end -->`, which needs a cluster) are kept from the last RESULTS.md, after this run's.
const resultsPath = `${root}bench/RESULTS.md`;
const previous = existsSync(resultsPath) ? readFileSync(resultsPath, "utf8") : "";
for (const [block] of previous.matchAll(/<!-- ([\w-]+):start -->[\s\S]*?<!-- \1:end -->\n?/g)) md.push(block);
writeFileSync(resultsPath, md.join("\n"));
const failed = [...outcomes.entries()].filter(([, o]) => !o.ok && !o.skipped);
console.error(
  `\nwrote bench/RESULTS.md (${wallSeconds.toFixed(0)} s)${failed.length ? `; failed: ${failed.map(([k]) => k)}` : ""}`,
);
process.exit(failed.length > 0 ? 1 : 0);
