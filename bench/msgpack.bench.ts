/**
 * Benchmark: the msgpack event stream pair against JSON (`JSON.stringify` + `\n`, `JSON.parse`) on the same events,
 * size and speed. Events are the benchmark data sets' Pods (~1 KB and ~30 KB) and ConfigMaps (~30 KB of config
 * text), parsed once up front.
 *
 * Streams (the comparison that matters for recording and forwarding): events → `MsgpackEventEncoderStream` →
 * `MsgpackEventDecoderStream` → events, against events → a `TransformStream` writing `JSON.stringify(event) + "\n"`
 * as UTF-8 → `JsonWatchEventDecoderStream` (the NDJSON pipeline) → events; also each half alone (the decoders read
 * the encoded bytes as 64 KiB reads), and the decoder of `watchwire/msgpack-no-eval` (msgpackr's build without code
 * generation: no compiled record readers, and in Node, Deno and Bun no native string extraction). Loops without streams: watchwire's msgpack encoding and decoding (the same code
 * as the streams, fed directly) against `JSON.parse(JSON.stringify(event))` (strings only, no bytes: the strongest
 * JSON baseline), and msgpackr alone with the same options (which loses `-0`, lone surrogates and `__proto__` keys:
 * the price of losslessness and validation). Sizes are exact byte counts; gzip sizes use `CompressionStream`.
 *
 * Run: `node --expose-gc --import tsx bench/msgpack.bench.ts [--quick]` (or `deno run -A`, `bun`).
 */
// Straight from the modules, so work in progress elsewhere (mod.ts) cannot break the benchmark.
import { isNativeAccelerationEnabled } from "msgpackr";
import { JsonWatchEventDecoder } from "../src/codec/json_watch_event_decoder.ts";
import { JsonWatchEventDecoderStream } from "../src/codec/json_watch_event_decoder_stream.ts";
import { BatchDecoderStream } from "../src/streams/batch_decoder_stream.ts";
import { MsgpackEventEncoderStream } from "../src/codec/msgpack/msgpack_event_encoder_stream.ts";
import { MsgpackEventDecoderStream } from "../src/codec/msgpack/msgpack_event_decoder_stream.ts";
import { MsgpackEventReader } from "../src/codec/msgpack/msgpack_event_reader.ts";
import { MsgpackEventWriter, msgpackrPackr, newPackr } from "../src/codec/msgpack/msgpack_event_writer.ts";
import { msgpackrUnpackr, newUnpackr } from "../src/codec/msgpack/unpackr.ts";
import { MsgpackEventDecoder } from "../src/codec/msgpack/msgpack_event_decoder.ts";
import { MsgpackEventDecoderStream as NoEvalMsgpackEventDecoderStream } from "../msgpack_no_eval.ts";
import type { WatchEvent } from "../src/events.ts";
import { type DatasetName, makeDataset, splitReads, streamOf } from "./data.ts";
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
  runtimeInfo,
  type Section,
} from "./harness.ts";

const started = performance.now();
// msgpackr loads when a stream first needs it; the loops below use its encoder and decoder directly.
await Promise.all([msgpackrPackr.load(), msgpackrUnpackr.load()]);
const DATASET_NAMES: DatasetName[] = ["pod-1k", "pod-30k", "configmap-30k"];
const BYTES = quick ? 500_000 : 3_000_000;
const OPTIONS = quick ? { warmup: 1, rounds: 3, minSampleMs: 5 } : { warmup: 3, rounds: 15, minSampleMs: 40 };

const sections: Section[] = [];
const checks: Check[] = [];
const notes: string[] = [];
const utf8 = new TextEncoder();

/** A pull-based stream of `items`, one per pull (as a source of events would deliver them). */
function itemsStream<T>(items: readonly T[]): ReadableStream<T> {
  let next = 0;
  return new ReadableStream<T>({
    pull(controller) {
      if (next < items.length) controller.enqueue(items[next++]);
      else controller.close();
    },
  }, { highWaterMark: 0 });
}

/** The NDJSON writer every JSON watch recorder has: one `JSON.stringify(event) + "\n"` chunk per event, as UTF-8. */
function ndjsonEncoderStream(): TransformStream<WatchEvent, Uint8Array> {
  return new TransformStream<WatchEvent, Uint8Array>({
    transform(event, controller) {
      controller.enqueue(utf8.encode(JSON.stringify(event) + "\n"));
    },
  });
}

async function countItems(stream: ReadableStream<unknown>): Promise<number> {
  const reader = stream.getReader();
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return n;
    if (value !== undefined) n++;
  }
}

/** The items of a stream of batches, read as `countItems` reads single items. */
async function countBatched(stream: ReadableStream<unknown[]>): Promise<number> {
  const reader = stream.getReader();
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return n;
    for (const item of value) if (item !== undefined) n++;
  }
}

async function countBytes(stream: ReadableStream<Uint8Array>): Promise<number> {
  const reader = stream.getReader();
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return n;
    n += value.length;
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function gzipSize(bytes: Uint8Array): Promise<number> {
  const gz = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("gzip"));
  return (await new Response(gz).arrayBuffer()).byteLength;
}

if (!isNativeAccelerationEnabled) {
  notes.push(
    `msgpackr decodes strings in JavaScript here (its optional native addon, msgpackr-extract, is not loaded).`,
  );
} else {
  notes.push(`msgpackr decodes strings with its optional native addon (msgpackr-extract) here.`);
}

for (const name of DATASET_NAMES) {
  const d = makeDataset(name, BYTES);
  const events = d.lines.map((line) => JSON.parse(line) as WatchEvent);
  const ndjson = d.ndjson;
  const msgpackChunks: Uint8Array[] = [];
  {
    const writer = new MsgpackEventWriter();
    for (const e of events) writer.push(e, (bytes) => msgpackChunks.push(bytes));
  }
  const msgpack = concat(msgpackChunks);
  const ndjsonReads = splitReads(ndjson);
  const msgpackReads = splitReads(msgpack);
  const [ndjsonGz, msgpackGz] = [await gzipSize(ndjson), await gzipSize(msgpack)];
  log(`${name}: ${d.events} events, NDJSON ${ndjson.length} B, msgpack ${msgpack.length} B`);

  const n = d.events;
  const cases: Case[] = [
    {
      name: "json-rt",
      expect: n,
      run: () =>
        countItems(
          itemsStream(events).pipeThrough(ndjsonEncoderStream()).pipeThrough(new JsonWatchEventDecoderStream()),
        ),
    },
    {
      name: "mp-rt",
      expect: n,
      run: () =>
        countItems(
          itemsStream(events).pipeThrough(new MsgpackEventEncoderStream()).pipeThrough(new MsgpackEventDecoderStream()),
        ),
    },
    {
      name: "json-enc",
      expect: ndjson.length,
      run: () => countBytes(itemsStream(events).pipeThrough(ndjsonEncoderStream())),
    },
    {
      name: "mp-enc",
      expect: msgpack.length,
      run: () => countBytes(itemsStream(events).pipeThrough(new MsgpackEventEncoderStream())),
    },
    {
      name: "json-dec",
      expect: n,
      run: () => countItems(streamOf(ndjsonReads).pipeThrough(new JsonWatchEventDecoderStream())),
    },
    {
      name: "mp-dec",
      expect: n,
      run: () => countItems(streamOf(msgpackReads).pipeThrough(new MsgpackEventDecoderStream())),
    },
    {
      name: "mp-dec-no-eval",
      expect: n,
      run: () => countItems(streamOf(msgpackReads).pipeThrough(new NoEvalMsgpackEventDecoderStream())),
    },
    {
      name: "json-dec-batch",
      expect: n,
      run: () => countBatched(streamOf(ndjsonReads).pipeThrough(new BatchDecoderStream(new JsonWatchEventDecoder()))),
    },
    {
      name: "mp-dec-batch",
      expect: n,
      run: () => countBatched(streamOf(msgpackReads).pipeThrough(new BatchDecoderStream(new MsgpackEventDecoder()))),
    },
    {
      name: "json-loop",
      expect: n,
      run: () => {
        let k = 0;
        for (const e of events) if (JSON.parse(JSON.stringify(e)) !== null) k++;
        return k;
      },
    },
    {
      name: "mp-loop",
      expect: n,
      run: () => {
        // The encoder and decoder cores (what the streams run), chunk by chunk, no streams.
        const writer = new MsgpackEventWriter();
        const reader = new MsgpackEventReader({}, newUnpackr);
        let k = 0;
        const onEvent = () => {
          k++;
        };
        const onBytes = (bytes: Uint8Array) => reader.push(bytes, onEvent);
        for (const e of events) writer.push(e, onBytes);
        reader.finish();
        return k;
      },
    },
    {
      name: "msgpackr-loop",
      expect: n,
      run: () => {
        // msgpackr alone, the options of the streams, no framing, no JSON checks: lossy for the values above.
        const packr = newPackr();
        const unpackr = newUnpackr();
        let k = 0;
        for (const e of events) if (unpackr.unpack(packr.pack(e)) !== null) k++;
        return k;
      },
    },
  ];

  const t = await measure(cases, OPTIONS);
  const ms = (k: string) => median(t[k]);
  const row = (label: string, k: string, baseline?: string, bytes?: number): string[] => [
    label,
    fmt.rate(n, ms(k)),
    fmt.us(ms(k), n),
    bytes === undefined ? "" : fmt.mbps(bytes, ms(k)),
    baseline === undefined ? "1.00x" : fmt.ratio(pairedRatio(t, baseline, k)),
  ];
  sections.push({
    title: `${name}: ${d.describe}; ${n} events, mean ${d.meanEventBytes.toFixed(0)} B of JSON`,
    note: `Size: NDJSON ${ndjson.length} B, msgpack stream ${msgpack.length} B (**${
      (msgpack.length / ndjson.length).toFixed(3)
    }x**, ${(msgpack.length / n).toFixed(0)} B/event); gzip'd: NDJSON ${ndjsonGz} B, msgpack ${msgpackGz} B (${
      (msgpackGz / ndjsonGz).toFixed(3)
    }x). Speed ratio: msgpack events/s over JSON events/s in the same rounds (> 1: msgpack faster).`,
    columns: ["case", "events/s", "µs/event", "MB/s (encoded bytes)", "ratio vs JSON (IQR)"],
    rows: [
      row("JSON round trip: NDJSON writer stream → `JsonWatchEventDecoderStream`", "json-rt", undefined, ndjson.length),
      row(
        "msgpack round trip: `MsgpackEventEncoderStream` → `MsgpackEventDecoderStream`",
        "mp-rt",
        "json-rt",
        msgpack.length,
      ),
      row("JSON encode: NDJSON writer stream (`JSON.stringify` + `\\n`, UTF-8)", "json-enc", undefined, ndjson.length),
      row("msgpack encode: `MsgpackEventEncoderStream`", "mp-enc", "json-enc", msgpack.length),
      row("JSON decode: `JsonWatchEventDecoderStream`, 64 KiB reads", "json-dec", undefined, ndjson.length),
      row("msgpack decode: `MsgpackEventDecoderStream`, 64 KiB reads", "mp-dec", "json-dec", msgpack.length),
      row(
        "msgpack decode without code generation: `watchwire/msgpack-no-eval`'s `MsgpackEventDecoderStream`, 64 KiB reads",
        "mp-dec-no-eval",
        "json-dec",
        msgpack.length,
      ),
      row(
        "JSON decode in batches: `BatchDecoderStream` of `JsonWatchEventDecoder`, 64 KiB reads",
        "json-dec-batch",
        undefined,
        ndjson.length,
      ),
      row(
        "msgpack decode in batches: `BatchDecoderStream` of `MsgpackEventDecoder`, 64 KiB reads",
        "mp-dec-batch",
        "json-dec-batch",
        msgpack.length,
      ),
      row("loop: `JSON.parse(JSON.stringify(event))` (strings, no bytes)", "json-loop", undefined),
      row("loop: msgpack encoder + decoder cores, no streams", "mp-loop", "json-loop", msgpack.length),
      row("loop: msgpackr alone (same options; loses -0, lone surrogates, `__proto__`)", "msgpackr-loop", "json-loop"),
    ],
  });
}

emit({
  benchmark: "msgpack",
  runtime: runtimeInfo(),
  quick,
  seconds: (performance.now() - started) / 1e3,
  params: { bytesPerDataset: BYTES, readSize: 65536, ...OPTIONS },
  sections,
  checks,
  notes,
});
