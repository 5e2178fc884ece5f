/**
 * Benchmark: HPACK decoding, watchwire's `HpackDecoder` against hpack.js (the npm package `hpack.js`, used by
 * node-spdy). Input: every header block of the hpack-test-case corpus (`../shared/conformance/hpack-test-case/`, or
 * `$WATCHWIRE_CONFORMANCE/hpack-test-case/`): all stories of all encoder folders, each story with a fresh decoder and
 * its cases in order (the dynamic table carries over), `header_table_size` applied before its case. One run decodes
 * the whole corpus once; throughput counts wire octets and decoded fields.
 *
 * Cases:
 * - `hpackjs`: hpack.js's public API, `decompressor.create({ table: { maxSize: 4096 } })`, then per block `write`,
 *   `execute`, `read` until null (a Duplex stream in object mode); hpack.js has no call for a changed
 *   SETTINGS_HEADER_TABLE_SIZE, so `header_table_size` is set on its table's `protocolMaxSize` (what its
 *   constructor sets from `maxSize`);
 * - `hpackjs-core`: the same decompressor with the stream bypassed (octets handed to its internal decoder, fields
 *   collected by overriding `push`): hpack.js's decoding work alone, the stronger baseline;
 * - `watchwire`: `new HpackDecoder()` and `decode(block)` per block.
 *
 * Run: `node --expose-gc --import tsx bench/hpack.bench.ts [--quick]` (or `deno run -A`, `bun`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import process from "node:process";
import { HpackDecoder } from "../src/transport/hpack/hpack_decoder.ts";
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
const TARGET = 2;
const OPTIONS = quick ? { warmup: 2, rounds: 3, minSampleMs: 20 } : { warmup: 5, rounds: 15, minSampleMs: 100 };

// --- the corpus ---

interface Story {
  folder: string;
  blocks: Uint8Array[];
  /** SETTINGS_HEADER_TABLE_SIZE to apply before each block, or undefined. */
  tableSizes: (number | undefined)[];
  fields: number;
}

const conformance = process.env.WATCHWIRE_CONFORMANCE !== undefined
  ? new URL(`file://${process.env.WATCHWIRE_CONFORMANCE.replace(/\/?$/, "/")}`)
  : new URL("../../shared/conformance/", import.meta.url);
const corpusRoot = new URL("hpack-test-case/", conformance);
const hex = (s: string): Uint8Array => Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));

const stories: Story[] = [];
let folders: string[];
try {
  folders = readdirSync(corpusRoot, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
} catch (e) {
  throw new Error(`the HPACK corpus is missing at ${corpusRoot.pathname} (set WATCHWIRE_CONFORMANCE): ${e}`);
}
for (const folder of folders) {
  if (folder === "raw-data") continue; // header sets only, no wire
  for (const file of readdirSync(new URL(`${folder}/`, corpusRoot)).filter((f) => f.endsWith(".json")).sort()) {
    const json = JSON.parse(readFileSync(new URL(`${folder}/${file}`, corpusRoot), "utf8")) as {
      cases: { wire: string; header_table_size?: number | null; headers: unknown[] }[];
    };
    stories.push({
      folder,
      blocks: json.cases.map((c) => hex(c.wire)),
      tableSizes: json.cases.map((c) => c.header_table_size ?? undefined),
      fields: json.cases.reduce((n, c) => n + c.headers.length, 0),
    });
  }
}
const totalBlocks = stories.reduce((n, s) => n + s.blocks.length, 0);
const totalBytes = stories.reduce((n, s) => n + s.blocks.reduce((m, b) => m + b.length, 0), 0);
const totalFields = stories.reduce((n, s) => n + s.fields, 0);
log(`corpus: ${stories.length} stories, ${totalBlocks} blocks, ${totalBytes} octets, ${totalFields} fields`);

// --- hpack.js ---

interface HpackJsField {
  name: string;
  value: string;
}
interface HpackJsDecompressor {
  write(chunk: Uint8Array): boolean;
  execute(): void;
  read(): HpackJsField | null;
  _table: { protocolMaxSize: number };
  push(field: HpackJsField): boolean;
  _decoder: { push(chunk: Uint8Array): void };
}
interface HpackJs {
  decompressor: { create(options: { table: { maxSize: number } }): HpackJsDecompressor };
}

const require = createRequire(import.meta.url);
let hpackjs: HpackJs;
try {
  hpackjs = require("hpack.js") as HpackJs;
} catch (e) {
  throw new Error(`hpack.js is not installed (npm install --no-save hpack.js): ${e}`);
}
// hpack.js reads Buffers (obuf); hand it Buffers made once, outside the timing, as its users do.
const { Buffer } = require("node:buffer") as { Buffer: { from(b: Uint8Array): Uint8Array } };
const buffers = stories.map((s) => s.blocks.map((b) => Buffer.from(b)));

// --- cases ---

const cases: Case[] = [
  {
    name: "hpackjs",
    expect: totalFields,
    run: () => {
      let n = 0;
      for (let s = 0; s < stories.length; s++) {
        const story = stories[s];
        const d = hpackjs.decompressor.create({ table: { maxSize: 4096 } });
        const blocks = buffers[s];
        for (let c = 0; c < blocks.length; c++) {
          const size = story.tableSizes[c];
          if (size !== undefined) d._table.protocolMaxSize = size;
          d.write(blocks[c]);
          d.execute();
          while (d.read() !== null) n++;
        }
      }
      return n;
    },
  },
  {
    name: "hpackjs-core",
    expect: totalFields,
    run: () => {
      let n = 0;
      const count = () => {
        n++;
        return true;
      };
      for (let s = 0; s < stories.length; s++) {
        const story = stories[s];
        const d = hpackjs.decompressor.create({ table: { maxSize: 4096 } });
        d.push = count;
        const blocks = buffers[s];
        for (let c = 0; c < blocks.length; c++) {
          const size = story.tableSizes[c];
          if (size !== undefined) d._table.protocolMaxSize = size;
          d._decoder.push(blocks[c]);
          d.execute();
        }
      }
      return n;
    },
  },
  {
    name: "watchwire",
    expect: totalFields,
    run: () => {
      let n = 0;
      for (const story of stories) {
        const d = new HpackDecoder();
        const blocks = story.blocks;
        for (let c = 0; c < blocks.length; c++) {
          const size = story.tableSizes[c];
          if (size !== undefined) d.setMaxTableSize(size);
          n += d.decode(blocks[c]).length;
        }
      }
      return n;
    },
  },
];

// Both decoders must agree on every field before anything is timed.
{
  for (let s = 0; s < stories.length; s++) {
    const ours = new HpackDecoder();
    const theirs = hpackjs.decompressor.create({ table: { maxSize: 4096 } });
    for (let c = 0; c < stories[s].blocks.length; c++) {
      const size = stories[s].tableSizes[c];
      if (size !== undefined) {
        ours.setMaxTableSize(size);
        theirs._table.protocolMaxSize = size;
      }
      const a = ours.decode(stories[s].blocks[c]);
      theirs.write(buffers[s][c]);
      theirs.execute();
      const b: [string, string][] = [];
      for (let f = theirs.read(); f !== null; f = theirs.read()) b.push([f.name, f.value]);
      if (JSON.stringify(a) !== JSON.stringify(b)) {
        throw new Error(`watchwire and hpack.js disagree on ${stories[s].folder} story ${s} case ${c}`);
      }
    }
  }
}

const t = await measure(cases, OPTIONS);
const ms = (k: string) => median(t[k]);
const row = (text: string, k: string, base?: string): string[] => {
  const r = base === undefined ? undefined : pairedRatio(t, base, k);
  return [
    text,
    fmt.mbps(totalBytes, ms(k)),
    fmt.rate(totalFields, ms(k)),
    fmt.us(ms(k), totalBlocks),
    r === undefined ? "1.00x" : fmt.ratio(r),
  ];
};
const sections: Section[] = [{
  title: `HPACK decoding: ${stories.length} stories, ${totalBlocks} header blocks, ${fmt.mb(totalBytes)} MB, ${
    (totalFields / 1e3).toFixed(1)
  } k fields per run`,
  note: "Ratios: throughput over hpack.js's (the public stream API, then its core with the stream bypassed).",
  columns: ["case", "MB/s (wire)", "fields/s", "µs/block", "ratio (IQR)"],
  rows: [
    row("baseline: hpack.js decompressor, write/execute/read", "hpackjs"),
    row("hpack.js core, stream bypassed", "hpackjs-core", "hpackjs"),
    row("watchwire `HpackDecoder.decode` vs hpack.js (public API)", "watchwire", "hpackjs"),
    row("watchwire `HpackDecoder.decode` vs hpack.js core", "watchwire", "hpackjs-core"),
  ],
}];
const vsPublic = pairedRatio(t, "hpackjs", "watchwire");
const vsCore = pairedRatio(t, "hpackjs-core", "watchwire");
const checks: Check[] = [
  ratioCheck("hpack/decode-vs-hpackjs", "HPACK decode vs hpack.js", vsPublic, TARGET),
  ratioCheck("hpack/decode-vs-hpackjs-core", "HPACK decode vs hpack.js core (stream bypassed)", vsCore, TARGET),
];

emit({
  benchmark: "hpack",
  runtime: runtimeInfo(),
  quick,
  seconds: (performance.now() - started) / 1e3,
  params: { stories: stories.length, blocks: totalBlocks, bytes: totalBytes, fields: totalFields, ...OPTIONS },
  sections,
  checks,
});
