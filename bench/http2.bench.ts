/**
 * Benchmark 6: HTTP/2 frame decoding and per-stream DATA delivery against a plain copy of the same bytes. Input: a
 * server-to-client HTTP/2 byte stream (SETTINGS, a HEADERS block of HPACK literals per stream, then ~32 MB of DATA
 * frames with 16384-byte payloads, the last with END_STREAM) delivered as 64 KiB reads, in two variants: all DATA on
 * stream 1, and DATA of streams 1 and 3 interleaved frame by frame. Two comparisons:
 *
 * - (a) cores, no streams: an `Http2FrameDecoder.push` loop over the reads summing the DATA payload lengths vs a bare
 *   loop of `Uint8Array.prototype.set` of each read into a destination buffer;
 * - (b) streams: the reads from a pull-based `ReadableStream` through `Http2ConnectionDecoderStream`, every message's
 *   `body` read to its end (concurrently when streams interleave) vs the same reads through an identity
 *   `TransformStream` that copies each read with `set` and enqueues the copy, read with the same `reader.read()` loop.
 *
 * Throughput counts wire bytes (frame headers included) for every case.
 *
 * Run: `node --expose-gc --import tsx bench/http2.bench.ts [--quick]` (or `deno run -A`, `bun`).
 */
import { Http2ConnectionDecoderStream } from "../src/transport/http2/connection_decoder_stream.ts";
import { Http2FrameDecoder } from "../src/transport/http2/frame_decoder.ts";
import type { Http2Frame } from "../src/transport/http2/frames.ts";
import { encodeHttp2Frame } from "../src/transport/http2/frame_encoder.ts";
import { copyingStream, drainBytes, splitReads, streamOf } from "./data.ts";
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
import { concat, dataFrames, filler, literalHeaderBlock } from "./http2_data.ts";

const started = performance.now();
const TARGET = 0.5;
const FRAME = 16384;
const DATA_BYTES = quick ? 4 * FRAME * 64 : 32 * FRAME * 64; // 4 MiB / 32 MiB
const OPTIONS = quick ? { warmup: 1, rounds: 3, minSampleMs: 5 } : { warmup: 3, rounds: 21, minSampleMs: 60 };
const payload = filler(DATA_BYTES);

const RESPONSE_HEADERS = [
  [":status", "200"],
  ["content-type", "application/octet-stream"],
  ["date", "Sun, 22 Nov 2026 16:30:00 GMT"],
] as const;

/** The server-to-client bytes: SETTINGS, HEADERS per stream, DATA (interleaved frame by frame across `streams`). */
function buildWire(streams: number[]): Uint8Array {
  const parts: Uint8Array[] = [
    encodeHttp2Frame({ type: "SETTINGS", streamId: 0, parameters: [[3, 100], [4, 65535]] }),
  ];
  for (const id of streams) {
    parts.push(
      encodeHttp2Frame({
        type: "HEADERS",
        streamId: id,
        endHeaders: true,
        fragment: literalHeaderBlock(RESPONSE_HEADERS),
      }),
    );
  }
  const share = payload.length / streams.length;
  const perStream = streams.map((id, k) => dataFrames(id, payload.subarray(k * share, (k + 1) * share), FRAME, true));
  for (let i = 0; i < perStream[0].length; i++) for (const frames of perStream) parts.push(frames[i]);
  return concat(parts);
}

const sections: Section[] = [];
const checks: Check[] = [];

for (const streams of [[1], [1, 3]]) {
  const label = streams.length === 1 ? "1 stream" : `${streams.length} interleaved streams`;
  const key = `${streams.length}-stream${streams.length > 1 ? "s" : ""}`;
  const wire = buildWire(streams);
  const reads = splitReads(wire);
  const dest = new Uint8Array(wire.length);
  log(`${label}: ${wire.length} wire bytes, ${payload.length} DATA bytes, ${reads.length} reads`);
  const cases: Case[] = [
    {
      name: "a-copy",
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
      name: "a-h2",
      expect: payload.length,
      run: () => {
        const decoder = new Http2FrameDecoder({ preface: "none" });
        let n = 0;
        const onFrame = (frame: Http2Frame) => {
          if (frame.type === "DATA") n += frame.data.length;
        };
        for (const read of reads) decoder.push(read, onFrame);
        decoder.finish();
        return n;
      },
    },
    {
      name: "b-copy",
      expect: wire.length,
      run: () => {
        return drainBytes(streamOf(reads).pipeThrough(copyingStream(dest)));
      },
    },
    {
      name: "b-h2",
      expect: payload.length,
      run: async () => {
        const reader = streamOf(reads).pipeThrough(new Http2ConnectionDecoderStream()).getReader();
        const bodies: Promise<number>[] = [];
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          bodies.push(drainBytes(value.body));
        }
        return (await Promise.all(bodies)).reduce((a, b) => a + b, 0);
      },
    },
  ];
  const t = await measure(cases, OPTIONS);
  const ms = (k: string) => median(t[k]);
  const frames = payload.length / FRAME;
  const row = (text: string, k: string, base?: string): string[] => {
    const r = base === undefined ? undefined : pairedRatio(t, base, k);
    return [
      text,
      fmt.mbps(wire.length, ms(k)),
      k.endsWith("h2") ? fmt.rate(frames, ms(k)) : "",
      r === undefined ? "1.00x" : fmt.ratio(r),
      r === undefined ? "" : `≥ ${TARGET}x`,
      r === undefined ? "" : r.median >= TARGET ? "yes" : "**no**",
    ];
  };
  sections.push({
    title:
      `${label}: ${fmt.mb(wire.length)} MB on the wire (${frames} DATA frames of 16384 bytes) in ${reads.length} ` +
      `reads of 64 KiB`,
    columns: ["case", "MB/s (wire)", "DATA frames/s", "ratio vs its baseline (IQR)", "target", "met"],
    rows: [
      row("(a) baseline: bare loop, `set` of each read into a buffer", "a-copy"),
      row("(a) `Http2FrameDecoder.push` loop, DATA lengths summed, no stream", "a-h2", "a-copy"),
      row("(b) baseline: identity `TransformStream` copying each read with `set`", "b-copy"),
      row("(b) `Http2ConnectionDecoderStream`, every `body` read with `reader.read()`", "b-h2", "b-copy"),
    ],
  });
  for (const [k, base, what] of [["a-h2", "a-copy", "(a) cores"], ["b-h2", "b-copy", "(b) streams"]]) {
    const r = pairedRatio(t, base, k);
    checks.push(
      ratioCheck(`http2/${key}/${k}`, `${what}: HTTP/2 DATA delivery vs copy, 16 KB frames, ${label}`, r, TARGET),
    );
  }
}

emit({
  benchmark: "http2",
  runtime: runtimeInfo(),
  quick,
  seconds: (performance.now() - started) / 1e3,
  params: { dataBytes: DATA_BYTES, frameSize: FRAME, readSize: 65536, ...OPTIONS },
  sections,
  checks,
});
