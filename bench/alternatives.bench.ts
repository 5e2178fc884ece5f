/**
 * Not part of the default run (`npm run bench -- alternatives` runs it): measured evidence for possible speed-ups of
 * the decoders, each prototype written here in bench code against the unchanged src/ implementation it would
 * replace, in the same rounds. Nothing here is used by watchwire.
 *
 * - A. delivering events: the current `JsonWatchEventDecoderStream` (`DecoderStream`, one enqueue per event) vs a
 *   plain `TransformStream` around the same `NdjsonLineParser`, vs one enqueue per input chunk (an array of events),
 *   vs an async generator over the body's reader;
 * - B. where the core's time goes: `JSON.parse` of flat strings vs of `slice`s of one decoded chunk, and the cost of
 *   `toWatchEvent`;
 * - C. UTF-8 decoding of text with some non-ASCII: `TextDecoder` per 64 KiB read vs `node:buffer`'s `toString` vs
 *   `TextDecoder` per line;
 * - D. `ChunkedDecoderStream` with 1 KiB HTTP chunks: one enqueue per payload view (current) vs the views of one read
 *   copied into one buffer and enqueued once;
 * - E. memory for one large line: growing one buffer by doubling (as `LineBuffer`) vs keeping the reads and
 *   concatenating once (peak of live bytes, computed, not measured).
 *
 * Run: `node --expose-gc --import tsx bench/alternatives.bench.ts [--quick]` (or `deno run -A`, `bun`).
 */
import { Buffer } from "node:buffer";
import { JsonWatchEventDecoderStream } from "../src/codec/json_watch_event_decoder_stream.ts";
import { NdjsonLineParser } from "../src/codec/ndjson_decoder_stream.ts";
import { toWatchEvent } from "../src/codec/watch_event_decoder_stream.ts";
import type { WatchEvent } from "../src/events.ts";
import { ChunkedDecoder } from "../src/transport/chunked_decoder.ts";
import { ChunkedDecoderStream } from "../src/transport/chunked_decoder_stream.ts";
import { chunkedEncode, type Dataset, makeDataset, splitReads, streamOf } from "./data.ts";
import {
  type Case,
  emit,
  fmt,
  log,
  measure,
  median,
  pairedRatio,
  quick,
  runtimeInfo,
  type Section,
  type Timings,
} from "./harness.ts";

const started = performance.now();
const BYTES = quick ? 1_000_000 : 6_000_000;
const OPTIONS = quick ? { warmup: 1, rounds: 3, minSampleMs: 5 } : { warmup: 3, rounds: 15, minSampleMs: 40 };
const sections: Section[] = [];
const LF = 10;

/** A table of `cases` against `baseline`: MB/s and µs per item from medians, ratio from paired rounds. */
function section(
  title: string,
  t: Timings,
  baseline: string,
  labels: Record<string, string>,
  bytes: number,
  items: number,
): Section {
  return {
    title,
    columns: ["case", "MB/s", "µs/item", "ratio vs first row (IQR)"],
    rows: Object.entries(labels).map(([k, label]) => [
      label,
      fmt.mbps(bytes, median(t[k])),
      fmt.us(median(t[k]), items),
      k === baseline ? "1.00x" : fmt.ratio(pairedRatio(t, baseline, k)),
    ]),
  };
}

async function countEvents(stream: ReadableStream<unknown>): Promise<number> {
  let n = 0;
  for await (const value of stream) if (value !== null) n++;
  return n;
}

/** The pre-DecoderStream implementation: a plain `TransformStream` around the parser. */
function plainTransform(): TransformStream<Uint8Array, WatchEvent> {
  const parser = new NdjsonLineParser<WatchEvent>({ map: toWatchEvent });
  return new TransformStream({
    transform(chunk, controller) {
      parser.push(chunk, (event) => controller.enqueue(event));
    },
    flush(controller) {
      parser.finish((event) => controller.enqueue(event));
    },
  });
}

/** One enqueue per input chunk: the chunk's events as an array. */
function batchTransform(): TransformStream<Uint8Array, WatchEvent[]> {
  const parser = new NdjsonLineParser<WatchEvent>({ map: toWatchEvent });
  return new TransformStream({
    transform(chunk, controller) {
      const batch: WatchEvent[] = [];
      parser.push(chunk, (event) => batch.push(event));
      if (batch.length > 0) controller.enqueue(batch);
    },
    flush(controller) {
      const batch: WatchEvent[] = [];
      parser.finish((event) => batch.push(event));
      if (batch.length > 0) controller.enqueue(batch);
    },
  });
}

/** An async generator over the body's reader, yielding each event. */
async function* eventsOf(body: ReadableStream<Uint8Array>): AsyncGenerator<WatchEvent> {
  const parser = new NdjsonLineParser<WatchEvent>({ map: toWatchEvent });
  const reader = body.getReader();
  const batch: WatchEvent[] = [];
  const push = (event: WatchEvent) => batch.push(event);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) parser.finish(push);
    else parser.push(value, push);
    for (const event of batch) yield event;
    batch.length = 0;
    if (done) return;
  }
}

/** What `ReadableStream.from` does (not in every runtime's type definitions): a pull stream over an iterator. */
function streamFrom<T>(iterator: AsyncIterator<T>): ReadableStream<T> {
  return new ReadableStream<T>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
}

async function experimentA(d: Dataset): Promise<void> {
  const reads = splitReads(d.ndjson);
  const cases: Case[] = [
    {
      name: "baseline",
      expect: d.events,
      run: () => {
        let n = 0;
        for (const line of d.lines) if (JSON.parse(line) !== null) n++;
        return n;
      },
    },
    {
      name: "current",
      expect: d.events,
      run: () => countEvents(streamOf(reads).pipeThrough(new JsonWatchEventDecoderStream())),
    },
    { name: "plain", expect: d.events, run: () => countEvents(streamOf(reads).pipeThrough(plainTransform())) },
    {
      name: "batch",
      expect: d.events,
      run: async () => {
        let n = 0;
        for await (const batch of streamOf(reads).pipeThrough(batchTransform())) {
          for (const event of batch) if (event.type !== undefined) n++;
        }
        return n;
      },
    },
    { name: "generator", expect: d.events, run: () => countEvents(streamFrom(eventsOf(streamOf(reads)))) },
    {
      name: "generator-direct",
      expect: d.events,
      run: async () => {
        let n = 0;
        for await (const event of eventsOf(streamOf(reads))) if (event.type !== undefined) n++;
        return n;
      },
    },
  ];
  const t = await measure(cases, OPTIONS);
  sections.push(section(
    `A. delivering events, ${d.name} (${d.events} events, ${fmt.mb(d.ndjson.length)} MB); µs/item = per event`,
    t,
    "baseline",
    {
      baseline: "`JSON.parse` loop over pre-split strings (benchmark 1's baseline)",
      current: "current `JsonWatchEventDecoderStream` (`DecoderStream`), `for await`",
      plain: "plain `TransformStream` + `NdjsonLineParser`, one enqueue per event, `for await`",
      batch: "`TransformStream` enqueuing one `WatchEvent[]` per read, `for await` + inner loop",
      generator:
        "async generator over `body.getReader()`, wrapped in a pull `ReadableStream` (as `ReadableStream.from`), `for await`",
      "generator-direct": "the same async generator, `for await` on it directly",
    },
    d.ndjson.length,
    d.events,
  ));
}

async function experimentB(d: Dataset): Promise<void> {
  const reads = splitReads(d.ndjson);
  // The lines as slices of one decoded string per read region, as NdjsonLineParser makes them.
  const sliced: string[] = [];
  const text = new TextDecoder();
  let carry = "";
  for (const read of reads) {
    const s = carry + text.decode(read, { stream: true });
    let from = 0;
    for (let lf = s.indexOf("\n"); lf !== -1; lf = s.indexOf("\n", from)) {
      sliced.push(s.slice(from, lf));
      from = lf + 1;
    }
    carry = s.slice(from);
  }
  const core = (map: boolean) => () => {
    const parser = new NdjsonLineParser(map ? { map: toWatchEvent } : {});
    let n = 0;
    const onValue = () => {
      n++;
    };
    for (const read of reads) parser.push(read, onValue);
    parser.finish(onValue);
    return n;
  };
  const parseAll = (lines: string[]) => () => {
    let n = 0;
    for (const line of lines) if (JSON.parse(line) !== null) n++;
    return n;
  };
  const cases: Case[] = [
    { name: "flat", expect: d.events, run: parseAll(d.lines) },
    { name: "sliced", expect: d.events, run: parseAll(sliced) },
    { name: "core-map", expect: d.events, run: core(true) },
    { name: "core-nomap", expect: d.events, run: core(false) },
  ];
  const t = await measure(cases, OPTIONS);
  sections.push(section(
    `B. the core's cost, ${d.name} (${d.events} events); µs/item = per event`,
    t,
    "flat",
    {
      flat: "`JSON.parse` of flat strings (benchmark 1's baseline)",
      sliced: "`JSON.parse` of the same lines as `slice`s of one decoded string per read",
      "core-map": "`NdjsonLineParser` with `map: toWatchEvent` (as in the pipeline)",
      "core-nomap": "`NdjsonLineParser` without `map`",
    },
    d.ndjson.length,
    d.events,
  ));
}

async function experimentC(d: Dataset): Promise<void> {
  const reads = splitReads(d.ndjson);
  // Complete-line regions per read, as NdjsonLineParser decodes them (carry ignored: the timing is what matters).
  const regions = reads.map((r) => r.subarray(r.indexOf(LF) + 1, r.lastIndexOf(LF)));
  const expect = regions.reduce((n, r) => n + r.length, 0);
  const text = new TextDecoder("utf-8", { ignoreBOM: true });
  const cases: Case[] = [
    {
      name: "textdecoder",
      expect,
      run: () => {
        let n = 0;
        for (const r of regions) n += text.decode(r).length > 0 ? r.length : 0;
        return n;
      },
    },
    {
      name: "buffer",
      expect,
      run: () => {
        let n = 0;
        for (const r of regions) {
          n += Buffer.from(r.buffer, r.byteOffset, r.length).toString("utf8").length > 0 ? r.length : 0;
        }
        return n;
      },
    },
    {
      name: "per-line",
      expect,
      run: () => {
        let n = 0;
        for (const r of regions) {
          for (let from = 0; from < r.length;) {
            let lf = r.indexOf(LF, from);
            if (lf === -1) lf = r.length;
            if (text.decode(r.subarray(from, lf)).length > 0) n += lf - from;
            n += lf < r.length ? 1 : 0;
            from = lf + 1;
          }
        }
        return n;
      },
    },
  ];
  const t = await measure(cases, OPTIONS);
  sections.push(section(
    `C. UTF-8 decoding, ${d.name} (${fmt.mb(expect)} MB of whole-line regions); µs/item = per 64 KiB read`,
    t,
    "textdecoder",
    {
      textdecoder: "`TextDecoder.decode` of each read's whole-line region (current)",
      buffer: '`Buffer.from(view).toString("utf8")` of the same regions',
      "per-line": "`TextDecoder.decode` of each line separately",
    },
    expect,
    regions.length,
  ));
}

/** Runs ChunkedDecoder on each read and enqueues the read's payload copied into one buffer. */
function coalescingChunked(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new ChunkedDecoder();
  const views: Uint8Array[] = [];
  let size = 0;
  const collect = (view: Uint8Array) => {
    views.push(view);
    size += view.length;
  };
  return new TransformStream({
    transform(chunk, controller) {
      decoder.push(chunk, collect);
      if (views.length === 1) {
        controller.enqueue(views[0]);
      } else if (views.length > 1) {
        const out = new Uint8Array(size);
        let at = 0;
        for (const v of views) {
          out.set(v, at);
          at += v.length;
        }
        controller.enqueue(out);
      }
      views.length = 0;
      size = 0;
    },
    flush() {
      decoder.finish();
    },
  });
}

async function experimentD(): Promise<void> {
  const payload = makeDataset("pod-1k", quick ? 2_000_000 : 16_000_000).ndjson;
  for (const httpChunk of [1024, 16384]) {
    const wire = chunkedEncode(payload, httpChunk);
    const reads = splitReads(wire);
    const drain = async (stream: ReadableStream<Uint8Array>) => {
      const reader = stream.getReader();
      let n = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return n;
        n += value.length;
      }
    };
    const cases: Case[] = [
      {
        name: "current",
        expect: payload.length,
        run: () => drain(streamOf(reads).pipeThrough(new ChunkedDecoderStream())),
      },
      { name: "coalesce", expect: payload.length, run: () => drain(streamOf(reads).pipeThrough(coalescingChunked())) },
    ];
    const t = await measure(cases, OPTIONS);
    sections.push(section(
      `D. chunked decoding as a stream, ${httpChunk / 1024} KiB HTTP chunks (${
        fmt.mb(wire.length)
      } MB wire, ${reads.length} reads); µs/item = per read`,
      t,
      "current",
      {
        current: "current `ChunkedDecoderStream`: one enqueue per payload view",
        coalesce: "prototype: a read's payload views copied into one buffer, one enqueue per read",
      },
      wire.length,
      reads.length,
    ));
  }
}

function experimentE(): void {
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
  const rows: string[][] = [];
  // 4,350,066 B is the memory benchmark's large event; 16 MiB - 1 the longest line NdjsonLineParser accepts by default.
  for (const line of [1_000_000, 4_350_066, 16 * 2 ** 20 - 1]) {
    // Doubling from 256 bytes: at the last growth the old buffer and the new one are both live.
    let cap = 256;
    while (cap < line) cap *= 2;
    const doubling = cap + cap / 2;
    const parts = 2 * line; // the reads kept until the end, plus the one exact-size copy
    rows.push([mib(line), mib(doubling), mib(parts)]);
  }
  sections.push({
    title: "E. live bytes while assembling one long line from 64 KiB reads (arithmetic, not a measurement)",
    columns: ["line", "grow by doubling (LineBuffer): old + new buffer", "keep the reads, concatenate once"],
    rows,
  });
}

for (const name of ["pod-1k", "pod-30k"] as const) {
  log(`A: ${name}`);
  await experimentA(makeDataset(name, BYTES));
}
for (const name of ["pod-1k", "pod-30k", "configmap-30k"] as const) {
  log(`B: ${name}`);
  await experimentB(makeDataset(name, BYTES));
}
log("C: configmap-30k");
await experimentC(makeDataset("configmap-30k", BYTES));
log("D");
await experimentD();
experimentE();

emit({
  benchmark: "alternatives",
  runtime: runtimeInfo(),
  quick,
  seconds: (performance.now() - started) / 1e3,
  params: { bytesPerDataset: BYTES, ...OPTIONS },
  sections,
  checks: [],
});
