/**
 * The memory benchmark's measured process (started by memory.bench.ts in the same runtime): decodes a lazily generated
 * chunked JSON watch body of `<totalBytes>` with one event of about `<largeEventBytes>`, through
 * `ChunkedDecoderStream` then `JsonWatchEventDecoderStream`, counting and dropping the events, while sampling RSS every
 * ~50 ms. Prints one JSON object on stdout.
 *
 * With `control` as third argument it does the least work any decoder must do instead, as a reference: the same body
 * is generated read by read and dropped, and each event's bytes (from the generator's pool, so never buffered from the
 * wire) are decoded with `TextDecoder` and `JSON.parse`d; no streams, no watchwire.
 *
 * With `localized` as fourth argument the large event has some non-ASCII text (so it decodes to two bytes per
 * character).
 *
 * Usage: `memory_child.ts <totalBytes> <largeEventBytes> [watchwire|control] [ascii|localized]`
 */
import process from "node:process";
import { JsonWatchEventDecoderStream } from "../src/codec/json_watch_event_decoder_stream.ts";
import { ChunkedDecoderStream } from "../src/transport/chunked_decoder_stream.ts";
import { LazyWatchBody } from "./data.ts";
import { collect } from "./harness.ts";

const totalBytes = Number(process.argv[2] ?? 1e9);
const largeEventBytes = Number(process.argv[3] ?? 4 * 1024 * 1024);
const mode = process.argv[4] === "control" ? "control" : "watchwire";
const localized = process.argv[5] === "localized";

const rss: () => number = typeof process.memoryUsage.rss === "function"
  ? () => process.memoryUsage.rss()
  : () => process.memoryUsage().rss;
/** Peak RSS of the process so far (bytes), where the runtime reports it. */
const maxRss = (): number | null => {
  try {
    return typeof process.resourceUsage === "function" ? process.resourceUsage().maxRSS * 1024 : null;
  } catch {
    return null;
  }
};

const body = new LazyWatchBody({ totalBytes, largeEventBytes, largeEventLocalized: localized });
// Settle: collect the generator's garbage, let the runtime finish its start-up work, then take the baseline.
for (let i = 0; i < 3; i++) {
  collect();
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const baselineRss = rss();
const maxRssBefore = maxRss();

let peakRss = baselineRss;
/** Peak before the large event went on the wire: the steady state of ordinary events. */
let peakRssBeforeLarge = baselineRss;
let samples = 0;
let lastSample = performance.now();
const sample = () => {
  const now = rss();
  if (now > peakRss) peakRss = now;
  if (!body.largeEventQueued && now > peakRssBeforeLarge) peakRssBeforeLarge = now;
  samples++;
  lastSample = performance.now();
};
// The timer catches pauses; the check in `pull` keeps sampling while decoding runs as one long chain of microtasks.
const timer = setInterval(sample, 50);
const started = performance.now();
let events = 0;
if (mode === "watchwire") {
  const input = body.stream(() => {
    if (performance.now() - lastSample >= 50) sample();
  });
  const decoded = input.pipeThrough(new ChunkedDecoderStream()).pipeThrough(new JsonWatchEventDecoderStream());
  for await (const event of decoded) {
    if (event.type !== undefined) events++;
  }
} else {
  const text = new TextDecoder();
  body.onEvent = (line) => {
    const event = JSON.parse(text.decode(line));
    if (event.type !== undefined) events++;
  };
  for (;;) {
    if (performance.now() - lastSample >= 50) sample();
    if (body.nextRead() === undefined) break;
  }
}
const seconds = (performance.now() - started) / 1e3;
clearInterval(timer);
sample();
const maxRssAfter = maxRss();

process.stdout.write(
  JSON.stringify({
    mode,
    localized,
    totalBytes: body.produced,
    events,
    expectedEvents: body.events,
    largestEventBytes: body.largestEventBytes,
    seconds,
    baselineRss,
    peakRss,
    peakRssBeforeLarge,
    finalRss: rss(),
    samples,
    maxRssBefore,
    maxRssAfter,
  }) + "\n",
);
