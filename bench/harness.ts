/**
 * The benchmarks' measuring loop and result format, the same in Node, Deno, Bun and browsers: plain `performance.now()`
 * timing, warmup, cases interleaved round by round in a rotating order (so drift in CPU speed and GC debt hit baseline
 * and candidate alike), and medians. Each benchmark prints one {@linkcode BenchResult} as JSON on the last line of
 * stdout; progress goes to stderr.
 *
 * @module
 */
import process from "node:process";

/** Which runtime this is. */
export interface RuntimeInfo {
  name: "node" | "deno" | "bun" | "chromium" | "firefox";
  version: string;
  engine: string;
}

export function runtimeInfo(): RuntimeInfo {
  const v = process.versions as Record<string, string | undefined>;
  if (v.bun !== undefined) return { name: "bun", version: v.bun, engine: "JavaScriptCore" };
  if (v.deno !== undefined) return { name: "deno", version: v.deno, engine: `V8 ${v.v8}` };
  if (v.node !== undefined) return { name: "node", version: v.node, engine: `V8 ${v.v8}` };
  // A browser (scripts/browser-bench.ts; its `process` has no versions): what its user agent says.
  const agent = navigator.userAgent;
  const firefox = /Firefox\/([\d.]+)/.exec(agent);
  if (firefox !== null) return { name: "firefox", version: firefox[1], engine: "SpiderMonkey" };
  const chrome = /Chrome\/([\d.]+)/.exec(agent);
  return { name: "chromium", version: chrome?.[1] ?? agent, engine: "V8" };
}

/** `--quick`: small inputs and few rounds, for a smoke run. */
export const quick: boolean = process.argv.includes("--quick");

/** A full garbage collection, if the runtime exposes one (Node/Deno with `--expose-gc`, Bun always). */
export function collect(): void {
  const g = globalThis as { gc?: () => void; Bun?: { gc(force: boolean): void } };
  if (typeof g.gc === "function") g.gc();
  else if (g.Bun !== undefined) g.Bun.gc(true);
}

export function log(message: string): void {
  process.stderr.write(`[${runtimeInfo().name}] ${message}\n`);
}

/** One thing to time. `run` returns a count that must equal `expect` (checked during warmup, never timed). */
export interface Case {
  name: string;
  run: () => number | Promise<number>;
  expect: number;
}

export interface MeasureOptions {
  warmup: number;
  rounds: number;
  /** Runs are repeated inside one sample until a sample takes at least this long. */
  minSampleMs: number;
}

/** Milliseconds per run of each case, one entry per round. */
export type Timings = Record<string, number[]>;

/** Warms every case up, then times them round by round, each round in a rotated order. */
export async function measure(cases: Case[], options: MeasureOptions): Promise<Timings> {
  const inner: Record<string, number> = {};
  for (const c of cases) {
    let last = Infinity;
    for (let w = 0; w < Math.max(1, options.warmup); w++) {
      const t0 = performance.now();
      const got = await c.run();
      last = performance.now() - t0;
      if (got !== c.expect) throw new Error(`${c.name}: counted ${got}, expected ${c.expect}`);
    }
    inner[c.name] = Math.max(1, Math.ceil(options.minSampleMs / Math.max(last, 0.001)));
  }
  const timings: Timings = Object.fromEntries(cases.map((c) => [c.name, []]));
  // One full GC before the rounds, none between samples: a forced GC before every sample made V8 (Node 20) run the
  // following sample several times slower (the chunked-decoder core dropped from ~6 GB/s to ~1.3 GB/s), an artefact
  // worse than the GC debt one case may leave to the next, which the rotating order spreads evenly.
  collect();
  for (let r = 0; r < options.rounds; r++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(k + r) % cases.length];
      const n = inner[c.name];
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await c.run();
      timings[c.name].push((performance.now() - t0) / n);
    }
  }
  return timings;
}

export function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

export function median(values: number[]): number {
  return quantile(values, 0.5);
}

/** Candidate throughput over baseline throughput, from the times of the same rounds: median and interquartile range. */
export function pairedRatio(timings: Timings, baseline: string, candidate: string): Ratio {
  const b = timings[baseline];
  const c = timings[candidate];
  const ratios = b.map((t, i) => t / c[i]);
  return { median: median(ratios), p25: quantile(ratios, 0.25), p75: quantile(ratios, 0.75) };
}

export interface Ratio {
  median: number;
  p25: number;
  p75: number;
}

/** A table of the report. `rows` are already formatted cells. */
export interface Section {
  title: string;
  note?: string;
  columns: string[];
  rows: string[][];
}

/** A target of the brief and whether this run met it. */
export interface Check {
  /** Stable key, the same in every runtime (the summary's row). */
  id: string;
  label: string;
  ratio?: number;
  target: string;
  met: boolean;
  value?: string;
}

/** A "ratio ≥ target" check: the form every speed target of the issues takes. */
export function ratioCheck(id: string, label: string, ratio: Ratio, target: number): Check {
  return { id, label, ratio: ratio.median, target: `≥ ${target}x`, met: ratio.median >= target };
}

/** What every benchmark prints. */
export interface BenchResult {
  benchmark: string;
  runtime: RuntimeInfo;
  quick: boolean;
  seconds: number;
  params: Record<string, unknown>;
  sections: Section[];
  checks: Check[];
  notes?: string[];
}

export function emit(result: BenchResult): void {
  process.stdout.write(JSON.stringify(result) + "\n");
}

export const fmt = {
  mbps: (bytes: number, ms: number): string => (bytes / 1e3 / ms).toFixed(1),
  rate: (count: number, ms: number): string => {
    const perSecond = count / (ms / 1e3);
    return perSecond >= 1e6
      ? `${(perSecond / 1e6).toFixed(2)} M`
      : perSecond >= 1e3
      ? `${(perSecond / 1e3).toFixed(1)} k`
      : perSecond.toFixed(0);
  },
  us: (ms: number, count: number): string => ((ms * 1e3) / count).toFixed(2),
  ratio: (r: Ratio): string => `${r.median.toFixed(2)}x (${r.p25.toFixed(2)}–${r.p75.toFixed(2)})`,
  mb: (bytes: number): string => (bytes / 1e6).toFixed(1),
};
