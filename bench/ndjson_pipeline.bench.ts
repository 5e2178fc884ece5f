/**
 * Benchmark 1: the NDJSON to WatchEvent pipeline against its limit, `JSON.parse` of the same events already split into
 * strings. The pipeline gets the NDJSON bytes as 64 KiB reads from a pull-based `ReadableStream`, through
 * `JsonWatchEventDecoderStream`, consumed with `for await` and with a `reader.read()` loop, and in batches (one array
 * of events per read: `BatchDecoderStream` of `JsonWatchEventDecoder`); `NdjsonLineParser` (with the same
 * `toWatchEvent` mapping, no stream) shows what the Web Streams machinery costs. Breakdown rows time the sub-steps
 * alone: UTF-8 decoding, decoding plus line splitting, and the stream carrying pre-parsed events.
 *
 * Run: `node --expose-gc --import tsx bench/ndjson_pipeline.bench.ts [--quick]` (or `deno run -A`, `bun`).
 */
// Straight from the modules (all are re-exported by mod.ts), so work in progress elsewhere cannot break the benchmark.
import { NdjsonLineParser } from "../src/codec/ndjson_decoder_stream.ts";
import { toWatchEvent } from "../src/codec/watch_event_decoder_stream.ts";
import { type DatasetName, makeDataset, splitReads, streamOf } from "./data.ts";
import { watchwireCases } from "./watchwire_cases.ts";
import {
  type Case,
  type Check,
  emit,
  fmt,
  log,
  measure,
  median,
  pairedRatio,
  quick,
  ratioCheck,
  runtimeInfo,
  type Section,
} from "./harness.ts";

const started = performance.now();
const DATASET_NAMES: DatasetName[] = ["pod-1k", "pod-30k", "configmap-30k"];
const TARGET = 0.9;
const BYTES = quick ? 1_000_000 : 6_000_000;
const OPTIONS = quick ? { warmup: 1, rounds: 3, minSampleMs: 5 } : { warmup: 3, rounds: 15, minSampleMs: 40 };

const sections: Section[] = [];
const checks: Check[] = [];
const LF = 10;

for (const name of DATASET_NAMES) {
  const d = makeDataset(name, BYTES);
  const reads = splitReads(d.ndjson);
  const lfPerRead = reads.map((r) => {
    let n = 0;
    for (let at = r.indexOf(LF); at !== -1; at = r.indexOf(LF, at + 1)) n++;
    return n;
  });
  // A few parsed events to hand out again and again: holding every parsed event would bloat the heap for all cases.
  const parsed = d.lines.slice(0, 64).map((line) => JSON.parse(line));
  log(`${name}: ${d.events} events, mean ${d.meanEventBytes.toFixed(0)} B, ${reads.length} reads`);

  const cases: Case[] = [
    {
      name: "baseline",
      expect: d.events,
      run: () => {
        let n = 0;
        for (const line of d.lines) {
          const value = JSON.parse(line);
          if (value !== null) n++;
        }
        return n;
      },
    },
    ...watchwireCases(reads, d.events),
    {
      name: "core",
      expect: d.events,
      run: () => {
        const parser = new NdjsonLineParser({ map: toWatchEvent });
        let n = 0;
        const onEvent = () => {
          n++;
        };
        for (const read of reads) parser.push(read, onEvent);
        parser.finish(onEvent);
        return n;
      },
    },
    {
      name: "decode",
      expect: d.ndjson.length,
      run: () => {
        const text = new TextDecoder();
        let n = 0;
        for (const read of reads) n += text.decode(read).length > 0 ? read.length : 0;
        return n;
      },
    },
    {
      name: "decode+split",
      expect: d.events,
      run: () => {
        // What NdjsonLineParser does before JSON.parse: one decode per read, then indexOf/slice per line.
        const text = new TextDecoder();
        let n = 0;
        let keep = 0;
        for (const read of reads) {
          const s = text.decode(read);
          for (let from = 0;;) {
            const lf = s.indexOf("\n", from);
            if (lf === -1) break;
            keep += s.slice(from, lf).length;
            n++;
            from = lf + 1;
          }
        }
        return keep > 0 ? n : -1;
      },
    },
    {
      name: "ideal",
      expect: d.events,
      run: () => {
        // The bound for any decoder that starts from bytes: the whole body decoded at once (no reads, no carry),
        // split and parsed, no validation, no streams. What it costs over the baseline is UTF-8 decoding and slicing.
        const s = new TextDecoder().decode(d.ndjson);
        let n = 0;
        for (let from = 0;;) {
          const lf = s.indexOf("\n", from);
          if (lf === -1) break;
          if (JSON.parse(s.slice(from, lf)) !== null) n++;
          from = lf + 1;
        }
        return n;
      },
    },
    {
      name: "streams-only",
      expect: d.events,
      run: async () => {
        // The Web Streams cost alone: the same reads and pipeThrough, but the transform enqueues pre-parsed events.
        let next = 0;
        let r = 0;
        const carry = new TransformStream<Uint8Array, unknown>({
          transform(_read, controller) {
            for (let k = lfPerRead[r++]; k > 0; k--) controller.enqueue(parsed[next++ % parsed.length]);
          },
        });
        let n = 0;
        for await (const value of streamOf(reads).pipeThrough(carry)) if (value !== null) n++;
        return n;
      },
    },
  ];

  const t = await measure(cases, OPTIONS);
  const ms = (k: string) => median(t[k]);
  const row = (label: string, k: string, ratioOf?: string, target?: number): string[] => {
    const r = ratioOf === undefined ? undefined : pairedRatio(t, "baseline", ratioOf);
    return [
      label,
      fmt.mbps(d.ndjson.length, ms(k)),
      fmt.rate(d.events, ms(k)),
      fmt.us(ms(k), d.events),
      r === undefined ? "1.00x" : fmt.ratio(r),
      target === undefined ? "" : `≥ ${target}x`,
      target === undefined || r === undefined ? "" : r.median >= target ? "yes" : "**no**",
    ];
  };
  const streamRows = [
    row("baseline: `JSON.parse` loop over pre-split strings", "baseline"),
    row("`JsonWatchEventDecoderStream`, `for await`", "for-await", "for-await", TARGET),
    row("`JsonWatchEventDecoderStream`, `reader.read()` loop", "reader", "reader", TARGET),
    row("in batches: `BatchDecoderStream` of `JsonWatchEventDecoder`, `for await`", "batches", "batches", TARGET),
    row("`NdjsonLineParser` + `toWatchEvent`, no stream (the core)", "core", "core"),
    row("reference: whole body decoded once, split, `JSON.parse` (no reads, streams or checks)", "ideal", "ideal"),
  ];
  const breakdown = (label: string, k: string): string[] => [
    label,
    fmt.mbps(d.ndjson.length, ms(k)),
    "",
    fmt.us(ms(k), d.events),
    `${((ms(k) / ms("for-await")) * 100).toFixed(0)}%`,
    "",
    "",
  ];
  sections.push({
    title: `${name}: ${d.describe}; ${d.events} events, mean ${d.meanEventBytes.toFixed(0)} B, ${
      fmt.mb(d.ndjson.length)
    } MB in ${reads.length} reads of 64 KiB`,
    columns: ["case", "MB/s", "events/s", "µs/event", "ratio vs baseline (IQR)", "target", "met"],
    rows: [
      ...streamRows,
      ["*breakdown (ratio column: share of the `for await` pipeline's time)*", "", "", "", "", "", ""],
      breakdown("sub-step: `TextDecoder.decode` of each read", "decode"),
      breakdown("sub-step: decode + `indexOf`/`slice` into lines (no parse)", "decode+split"),
      breakdown("sub-step: `JSON.parse` only (= baseline)", "baseline"),
      breakdown(
        "sub-step: plain `TransformStream`, same reads, carrying pre-parsed events (enqueue + `for await`)",
        "streams-only",
      ),
    ],
  });
  const labels = { "for-await": "`for await`", reader: "`reader.read()`", batches: "in batches, `for await`" };
  for (const k of ["for-await", "reader", "batches"] as const) {
    const r = pairedRatio(t, "baseline", k);
    checks.push(
      ratioCheck(
        `ndjson/${name}/${k}`,
        `NDJSON→WatchEvent ${labels[k]} vs JSON.parse, ${name}`,
        r,
        TARGET,
      ),
    );
  }
}

emit({
  benchmark: "ndjson_pipeline",
  runtime: runtimeInfo(),
  quick,
  seconds: (performance.now() - started) / 1e3,
  params: { bytesPerDataset: BYTES, readSize: 65536, ...OPTIONS },
  sections,
  checks,
});
