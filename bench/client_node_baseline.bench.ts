/**
 * Benchmark 2: watchwire against the way `@kubernetes/client-node` reads a watch (its `Watch.watch`, in
 * https://github.com/kubernetes-client/javascript/blob/main/src/watch.ts): the body as a Node `Readable`,
 * `node:readline`'s `createInterface(body)`, and on every `line` event
 * `JSON.parse(line.toString())` then `callback(data.type, data.object, data)`. Here the body is a Web `ReadableStream`
 * turned into a `Readable` with `Readable.fromWeb`. Both sides get the same bytes as the same 64 KiB reads from the
 * same pull-based `ReadableStream`.
 *
 * Run: `node --expose-gc --import tsx bench/client_node_baseline.bench.ts [--quick]` (or `deno run -A`, `bun`).
 */
import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
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
const TARGET = 1.3;
const BYTES = quick ? 1_000_000 : 6_000_000;
const OPTIONS = quick ? { warmup: 1, rounds: 3, minSampleMs: 5 } : { warmup: 3, rounds: 15, minSampleMs: 40 };

/** client-node's loop, callback counting events; resolves with the count when readline closes. */
function clientNodeWatch(body: ReadableStream<Uint8Array>): Promise<number> {
  return new Promise((resolve, reject) => {
    let events = 0;
    let invalid = 0;
    const callback = (type: unknown, object: unknown) => {
      if (type !== undefined && object !== undefined) events++;
    };
    const input = Readable.fromWeb(body as unknown as NodeReadableStream<Uint8Array>);
    input.on("error", reject);
    const lines = createInterface(input);
    lines.on("line", (line: string) => {
      try {
        const data = JSON.parse(line.toString());
        callback(data.type, data.object);
      } catch {
        invalid++; // client-node ignores lines that do not parse; the count check below would catch any here
      }
    });
    lines.on("close", () => resolve(invalid === 0 ? events : -invalid));
  });
}

const sections: Section[] = [];
const checks: Check[] = [];
const notes: string[] = [];

for (const name of DATASET_NAMES) {
  const d = makeDataset(name, BYTES);
  const reads = splitReads(d.ndjson);
  log(`${name}: ${d.events} events, mean ${d.meanEventBytes.toFixed(0)} B`);
  const cases: Case[] = [
    { name: "client-node", expect: d.events, run: () => clientNodeWatch(streamOf(reads)) },
    ...watchwireCases(reads, d.events),
    {
      // No bytes, no streams: only the `JSON.parse` that any decoder of these events must do, over the lines already
      // split into strings. Its ratio vs client-node is the ceiling of that ratio, measured in the same rounds.
      name: "json-parse",
      expect: d.events,
      run: () => {
        let n = 0;
        for (const line of d.lines) if (JSON.parse(line).type !== undefined) n++;
        return n;
      },
    },
  ];
  let t;
  try {
    t = await measure(cases, OPTIONS);
  } catch (error) {
    notes.push(`${name}: could not run the client-node baseline here: ${String(error)}`);
    continue;
  }
  const ms = (k: string) => median(t[k]);
  const row = (label: string, k: string, target?: number): string[] => {
    // target 0: a reference row, its ratio shown with no target.
    const r = target === undefined ? undefined : pairedRatio(t, "client-node", k);
    const judged = target !== undefined && target > 0 && r !== undefined;
    return [
      label,
      fmt.mbps(d.ndjson.length, ms(k)),
      fmt.rate(d.events, ms(k)),
      fmt.us(ms(k), d.events),
      r === undefined ? "1.00x" : fmt.ratio(r),
      judged ? `≥ ${target}x` : "",
      judged ? (r.median >= target ? "yes" : "**no**") : "",
    ];
  };
  sections.push({
    title: `${name}: ${d.describe}; ${d.events} events, mean ${d.meanEventBytes.toFixed(0)} B, ${
      fmt.mb(d.ndjson.length)
    } MB in ${reads.length} reads of 64 KiB`,
    columns: ["case", "MB/s", "events/s", "µs/event", "ratio vs client-node (IQR)", "target", "met"],
    rows: [
      row("baseline: `Readable.fromWeb` + `readline` + `JSON.parse` per line (client-node)", "client-node"),
      row("watchwire `JsonWatchEventDecoderStream`, `for await`", "for-await", TARGET),
      row("watchwire `JsonWatchEventDecoderStream`, `reader.read()` loop", "reader", TARGET),
      row("watchwire in batches (`BatchDecoderStream` of `JsonWatchEventDecoder`), `for await`", "batches", TARGET),
      row(
        "ceiling: `JSON.parse` alone over the lines already split into strings (no bytes, no streams, no checks)",
        "json-parse",
        0,
      ),
    ],
  });
  const labels = { "for-await": "`for await`", reader: "`reader.read()`", batches: "in batches, `for await`" };
  for (const k of ["for-await", "reader", "batches"] as const) {
    const r = pairedRatio(t, "client-node", k);
    checks.push(
      ratioCheck(
        `client-node/${name}/${k}`,
        `watchwire ${labels[k]} vs client-node, ${name}`,
        r,
        TARGET,
      ),
    );
  }
}

emit({
  benchmark: "client_node_baseline",
  runtime: runtimeInfo(),
  quick,
  seconds: (performance.now() - started) / 1e3,
  params: { bytesPerDataset: BYTES, readSize: 65536, ...OPTIONS },
  sections,
  checks,
  notes,
});
