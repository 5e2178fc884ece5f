/**
 * Benchmark 4: memory while decoding a long chunked JSON watch body. Starts bench/memory_child.ts in fresh processes
 * of the same runtime (so nothing this process allocated counts):
 *
 * 1. watchwire decodes a lazily generated body of 1 GB (50 MB with `--quick`) holding one ~4 MiB ASCII event; RSS
 *    before and during decoding. The target: the rise of peak RSS over the baseline stays within the largest event
 *    plus 16 MiB. Three runs (one with `--quick`), judged by the median one.
 * 2. the control does the least any decoder must do with the same body (see memory_child.ts), as a reference, run as
 *    often, alternating with 1.
 * 3. both again on 200 MB (20 MB with `--quick`) with the large event holding some non-ASCII text, which doubles what
 *    its decoded text and parsed strings take in every engine.
 *
 * Run: `node --expose-gc --import tsx bench/memory.bench.ts [--quick]` (or `deno run -A`, `bun`).
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { type Check, emit, fmt, log, quick, runtimeInfo } from "./harness.ts";

const started = performance.now();
const TOTAL_BYTES = quick ? 50_000_000 : 1_000_000_000;
const VARIANT_BYTES = quick ? 20_000_000 : 200_000_000;
const LARGE_EVENT_BYTES = 4 * 1024 * 1024;
const SLACK_BYTES = 16 * 1024 * 1024;
const REPEATS = quick ? 1 : 3;

interface ChildResult {
  mode: "watchwire" | "control";
  localized: boolean;
  totalBytes: number;
  events: number;
  expectedEvents: number;
  largestEventBytes: number;
  seconds: number;
  baselineRss: number;
  peakRss: number;
  peakRssBeforeLarge: number;
  finalRss: number;
  samples: number;
  maxRssBefore: number | null;
  maxRssAfter: number | null;
}

const runtime = runtimeInfo();
const child = fileURLToPath(new URL("./memory_child.ts", import.meta.url));

function runChild(mode: "watchwire" | "control", totalBytes: number, localized: boolean): Promise<ChildResult> {
  const args = [String(totalBytes), String(LARGE_EVENT_BYTES), mode, localized ? "localized" : "ascii"];
  const argv = runtime.name === "node"
    ? ["--expose-gc", "--import", "tsx", child, ...args]
    : runtime.name === "deno"
    ? ["run", "-A", "--v8-flags=--expose-gc", child, ...args]
    : [child, ...args];
  log(`${mode}: decoding ${fmt.mb(totalBytes)} MB in a child process${localized ? " (non-ASCII large event)" : ""}`);
  return new Promise<ChildResult>((resolve, reject) => {
    const proc = spawn(process.execPath, argv, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    const text = new TextDecoder();
    proc.stdout.on("data", (chunk: Uint8Array) => {
      out += text.decode(chunk, { stream: true });
    });
    proc.on("error", reject);
    proc.on("close", (code: number | null) => {
      if (code !== 0) reject(new Error(`memory child (${mode}) exited with ${code}`));
      else resolve(JSON.parse(out.trim().split("\n").pop()!) as ChildResult);
    });
  });
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Peak RSS while decoding: the sampled peak, or maxRSS if that high-water mark rose while decoding. */
function peakOf(r: ChildResult): { peak: number; maxRssPeak: number | null; rise: number } {
  const maxRssPeak = r.maxRssAfter !== null && r.maxRssBefore !== null && r.maxRssAfter > r.maxRssBefore
    ? r.maxRssAfter
    : null;
  const peak = Math.max(r.peakRss, maxRssPeak ?? 0);
  return { peak, maxRssPeak, rise: peak - r.baselineRss };
}

// The peak follows when the engine's garbage collector runs, which differs from run to run of the same code (in V8 by
// 10 MiB and more): the 1 GB runs are repeated, alternating with the control's, and judged by the median run.
const watchwireRuns: ChildResult[] = [];
const controlRuns: ChildResult[] = [];
for (let i = 0; i < REPEATS; i++) {
  watchwireRuns.push(await runChild("watchwire", TOTAL_BYTES, false));
  controlRuns.push(await runChild("control", TOTAL_BYTES, false));
}
const variant = await runChild("watchwire", VARIANT_BYTES, true);
const variantControl = await runChild("control", VARIANT_BYTES, true);

/** The run with the median peak rise (the lower middle one of an even number). */
const medianRun = (runs: ChildResult[]): ChildResult =>
  [...runs].sort((a, b) => peakOf(a).rise - peakOf(b).rise)[(runs.length - 1) >> 1];
/** Each run's peak rise, in the order they ran. */
const eachRun = (runs: ChildResult[]): string => runs.map((r) => mib(peakOf(r).rise)).join(" / ");
const result = medianRun(watchwireRuns);
const control = medianRun(controlRuns);

const { maxRssPeak, rise } = peakOf(result);
const limit = result.largestEventBytes + SLACK_BYTES;
const met = rise <= limit && watchwireRuns.every((r) => r.events === r.expectedEvents);
const complete = [...watchwireRuns, ...controlRuns, variant, variantControl].every((r) =>
  r.events === r.expectedEvents
);

const check: Check = {
  id: "memory/peak-rise",
  label: `memory: peak RSS rise ≤ largest event + 16 MiB (1 GB body, ASCII 4 MiB event${
    REPEATS > 1 ? `; median of ${REPEATS} runs` : ""
  })`,
  target: `≤ ${mib(limit)}`,
  value: mib(rise),
  met,
};

const steady = (r: ChildResult) => mib(r.peakRssBeforeLarge - r.baselineRss);
const summary = (r: ChildResult) =>
  `rise **${mib(peakOf(r).rise)}** (steady state before the large event ${steady(r)}); baseline ${
    mib(r.baselineRss)
  }; ${r.seconds.toFixed(1)} s`;

emit({
  benchmark: "memory",
  runtime,
  quick,
  seconds: (performance.now() - started) / 1e3,
  params: {
    totalBytes: TOTAL_BYTES,
    variantBytes: VARIANT_BYTES,
    largeEventBytes: LARGE_EVENT_BYTES,
    slackBytes: SLACK_BYTES,
  },
  sections: [
    {
      title: `watchwire: ${
        fmt.mb(result.totalBytes)
      } MB chunked JSON watch body, ${result.events} events (expected ${result.expectedEvents}), \`ChunkedDecoderStream\` → \`JsonWatchEventDecoderStream\` → \`for await\`, events counted and dropped`,
      columns: ["measure", "value"],
      rows: [
        [
          "time to decode",
          `${result.seconds.toFixed(1)} s (${fmt.mbps(result.totalBytes, result.seconds * 1e3)} MB/s)`,
        ],
        ["largest event", `${mib(result.largestEventBytes)} (${result.largestEventBytes} B, ASCII)`],
        ["baseline RSS before decoding", mib(result.baselineRss)],
        ["peak RSS during decoding (sampled every ~50 ms)", `${mib(result.peakRss)} (${result.samples} samples)`],
        [
          "peak RSS from `process.resourceUsage().maxRSS`",
          result.maxRssAfter === null
            ? "not available"
            : maxRssPeak === null
            ? `${mib(result.maxRssAfter)} (reached before decoding started; not informative)`
            : mib(maxRssPeak),
        ],
        ["RSS after decoding", mib(result.finalRss)],
        ["steady-state peak rise, before the large event went on the wire", steady(result)],
        ["**peak rise over baseline**", `**${mib(rise)}**`],
        [`peak rise of each run, in order (this table: the median run)`, eachRun(watchwireRuns)],
        ["limit: largest event + 16 MiB", mib(limit)],
        ["met", met ? "yes" : "**no**"],
      ],
    },
    {
      title: "References: the control (no watchwire), and a large event with non-ASCII text",
      columns: ["run", "peak RSS rise over baseline"],
      rows: [
        [
          `control, same ${fmt.mb(control.totalBytes)} MB body (the median run; each run in order: ${
            eachRun(controlRuns)
          })`,
          summary(control),
        ],
        ["watchwire's rise minus the control's", mib(rise - peakOf(control).rise)],
        [
          `watchwire, ${fmt.mb(variant.totalBytes)} MB body, large event (${
            mib(variant.largestEventBytes)
          }) with some non-ASCII text`,
          summary(variant),
        ],
        [`control, the same ${fmt.mb(variantControl.totalBytes)} MB body`, summary(variantControl)],
      ],
    },
  ],
  checks: [check],
  notes: complete ? [] : ["Some run did not deliver every event: see the event counts."],
});
