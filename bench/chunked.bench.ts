/**
 * Benchmark 3: HTTP/1.1 chunked decoding against a plain copy of the same bytes. The body (NDJSON Pod events) is
 * chunk-coded with 1 KiB and with 16 KiB HTTP chunks and delivered as 64 KiB network reads. Two comparisons:
 *
 * - (a) streams: the reads from a pull-based `ReadableStream` through `ChunkedDecoderStream` (every payload view read
 *   with `reader.read()`) vs the same reads through an identity `TransformStream` that copies each read into a
 *   destination buffer with `Uint8Array.prototype.set` and passes the copy on (same harness, same consumer);
 * - (b) cores, no streams: a `ChunkedDecoder.push` loop vs a bare loop of `set` of each read into a destination buffer.
 *
 * Reference for (a): the same payload views, located beforehand, enqueued read by read with nothing parsed, against
 * the same baseline: the ratio no decoder that hands on one view per HTTP chunk can exceed.
 *
 * Throughput counts wire bytes (chunk framing included) for every case.
 *
 * Run: `node --expose-gc --import tsx bench/chunked.bench.ts [--quick]` (or `deno run -A`, `bun`).
 */
import { ChunkedDecoder } from "../src/transport/chunked_decoder.ts";
import { ChunkedDecoderStream } from "../src/transport/chunked_decoder_stream.ts";
import { chunkedEncode, copyingStream, drainBytes, makeDataset, splitReads, streamOf } from "./data.ts";
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
const TARGET = 0.5;
const PAYLOAD_BYTES = quick ? 2_000_000 : 8_000_000;
const OPTIONS = quick ? { warmup: 1, rounds: 3, minSampleMs: 5 } : { warmup: 3, rounds: 15, minSampleMs: 40 };
const payload = makeDataset("pod-1k", PAYLOAD_BYTES).ndjson;

/** For each read, the payload views `ChunkedDecoder` hands on for it, as [start, end) pairs within the read. */
function payloadViews(reads: readonly Uint8Array[]): number[][] {
  const decoder = new ChunkedDecoder();
  return reads.map((read) => {
    const ranges: number[] = [];
    decoder.push(read, (view) => {
      if (view.buffer !== read.buffer) throw new Error("a payload view that is not a view of its read");
      const start = view.byteOffset - read.byteOffset;
      ranges.push(start, start + view.length);
    });
    return ranges;
  });
}

/** A stream that hands on, for the i-th read, the views `views[i]` of it: one item per HTTP chunk, nothing parsed. */
function viewsStream(views: readonly number[][]): TransformStream<Uint8Array, Uint8Array> {
  let i = 0;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(read, controller) {
      const ranges = views[i++];
      for (let k = 0; k < ranges.length; k += 2) controller.enqueue(read.subarray(ranges[k], ranges[k + 1]));
    },
  });
}

const sections: Section[] = [];
const checks: Check[] = [];

for (const httpChunk of [1024, 16384]) {
  const label = `${httpChunk / 1024} KiB`;
  const wire = chunkedEncode(payload, httpChunk);
  const reads = splitReads(wire);
  const dest = new Uint8Array(wire.length);
  const views = payloadViews(reads);
  log(`HTTP chunks of ${label}: ${wire.length} wire bytes, ${reads.length} reads`);
  const cases: Case[] = [
    {
      name: "a-copy",
      expect: wire.length,
      run: () => {
        return drainBytes(streamOf(reads).pipeThrough(copyingStream(dest)));
      },
    },
    {
      name: "a-chunked",
      expect: payload.length,
      run: () => drainBytes(streamOf(reads).pipeThrough(new ChunkedDecoderStream())),
    },
    {
      // The ceiling of (a): the same payload views, located beforehand, enqueued read by read with nothing parsed.
      name: "a-views",
      expect: payload.length,
      run: () => drainBytes(streamOf(reads).pipeThrough(viewsStream(views))),
    },
    {
      name: "b-copy",
      expect: wire.length,
      run: () => {
        let at = 0;
        for (const read of reads) {
          dest.set(read, at);
          at += read.length;
        }
        return at;
      },
    },
    {
      name: "b-chunked",
      expect: payload.length,
      run: () => {
        const decoder = new ChunkedDecoder();
        let n = 0;
        const onPayload = (view: Uint8Array) => {
          n += view.length;
        };
        for (const read of reads) decoder.push(read, onPayload);
        decoder.finish();
        return n;
      },
    },
  ];
  const t = await measure(cases, OPTIONS);
  const ms = (k: string) => median(t[k]);
  // judged false: a reference row, its ratio shown with no target.
  const row = (text: string, k: string, base?: string, judged = true): string[] => {
    const r = base === undefined ? undefined : pairedRatio(t, base, k);
    return [
      text,
      fmt.mbps(wire.length, ms(k)),
      fmt.rate(reads.length, ms(k)),
      r === undefined ? "1.00x" : fmt.ratio(r),
      r === undefined || !judged ? "" : `≥ ${TARGET}x`,
      r === undefined || !judged ? "" : r.median >= TARGET ? "yes" : "**no**",
    ];
  };
  sections.push({
    title: `HTTP chunks of ${label}: ${fmt.mb(wire.length)} MB on the wire (${
      fmt.mb(payload.length)
    } MB payload) in ${reads.length} reads of 64 KiB`,
    columns: ["case", "MB/s (wire)", "reads/s", "ratio vs its baseline (IQR)", "target", "met"],
    rows: [
      row("(a) baseline: identity `TransformStream` copying each read with `set`", "a-copy"),
      row("(a) `ChunkedDecoderStream`, payload views read with `reader.read()`", "a-chunked", "a-copy"),
      row(
        "(a) ceiling: the same payload views enqueued one by one, nothing parsed (any zero-copy decoder's limit)",
        "a-views",
        "a-copy",
        false,
      ),
      row("(b) baseline: bare loop, `set` of each read into a buffer", "b-copy"),
      row("(b) `ChunkedDecoder.push` loop, no stream", "b-chunked", "b-copy"),
    ],
  });
  for (const [k, base, what] of [["a-chunked", "a-copy", "(a) streams"], ["b-chunked", "b-copy", "(b) cores"]]) {
    const r = pairedRatio(t, base, k);
    checks.push(
      ratioCheck(`chunked/${httpChunk}/${k}`, `${what}: chunked decode vs copy, ${label} HTTP chunks`, r, TARGET),
    );
  }
}

emit({
  benchmark: "chunked",
  runtime: runtimeInfo(),
  quick,
  seconds: (performance.now() - started) / 1e3,
  params: { payloadBytes: PAYLOAD_BYTES, readSize: 65536, ...OPTIONS },
  sections,
  checks,
});
