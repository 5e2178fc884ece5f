/**
 * Issue 38's capture benchmark: events per second from a large capture file (TLS 1.3, HTTP/2, many connections, each a
 * Kubernetes protobuf watch) through `decodeCapture`, against tshark dissecting the same file (its own TCP reassembly
 * and TLS decryption, down to HTTP/2 DATA), in one run; and this process's peak memory, which must stay bounded
 * whatever the file's size.
 *
 *   node --import tsx bench/capture_vs_tshark.ts [--mb 256] [--connections 8] [--keep]
 *
 * Making the capture (once, kept in .cache/capture-bench/ with `--keep`): a node:http2 secure server streams the refgen
 * fixture's Pod watch frames (fixtures/kubernetes/streams/v1.Pod.pb, repeated) to `--connections` curl clients at once
 * (`--http2 --tlsv1.3`, SSLKEYLOGFILE), paced (the stream's copy every 20 ms per connection) so that tcpdump
 * (`-i lo -U --immediate-mode -B 262144`) drops nothing, until the file holds `--mb` MiB. Needs tcpdump, tshark, curl and openssl, and root.
 *
 * Timed, in one process: `decodeCapture` of the file read as a stream (64 KiB reads), events counted, with the Pods
 * decoded in full and then in metadata mode; `tshark -r FILE -o tls.keylog_file:KEYS -Y http2.data.data -T fields -e
 * http2.streamid` (output discarded), which reassembles, decrypts and dissects every packet to its HTTP/2 DATA; and the
 * ceiling, the work no reader can avoid, alone: the same watch bodies decoded by `decodeWatchResponse` (both modes), and
 * AES-128-GCM of the file's bytes in 16 KiB records through WebCrypto. Prints one JSON line: seconds and ratios, the
 * best ratio the ceiling allows, and this process's peak RSS (`process.resourceUsage().maxRSS`).
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { createReadStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import process from "node:process";
import { decodeCapture } from "../capture.ts";
import { decodeWatchResponse } from "../mod.ts";
import { builtinDecoders } from "../kubernetes.ts";
import { log } from "./harness.ts";
import { selfSignedCertificate } from "../scripts/self-signed.mjs";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : process.argv[at + 1];
}

const MB = Number(flag("mb", "256"));
const CONNECTIONS = Number(flag("connections", "8"));
const dir = ".cache/capture-bench";
const pcap = join(dir, `watch-${MB}mb-${CONNECTIONS}c.pcap`);
const keys = join(dir, `watch-${MB}mb-${CONNECTIONS}c.keys.txt`);
const PB_WATCH = "application/vnd.kubernetes.protobuf;stream=watch";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function record(): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const { key, cert } = selfSignedCertificate(dir, "ec", "watchwire.test");
  const stream = readFileSync(new URL("../fixtures/kubernetes/streams/v1.Pod.pb", import.meta.url));
  let stop = false;
  const server = http2.createSecureServer(
    { key, cert },
    (_request, response) => {
      response.writeHead(200, { "content-type": PB_WATCH });
      // A stream's copy every 20 ms per connection: tcpdump must keep up, or the kernel drops packets (gaps).
      const write = () => {
        if (stop) return void response.end();
        response.write(stream);
        setTimeout(write, 20);
      };
      write();
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const tcpdump = spawn("tcpdump", [
    "-i",
    "lo",
    "-U",
    "--immediate-mode",
    "-B",
    "262144",
    "-w",
    pcap,
    `tcp port ${port}`,
  ], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve) => tcpdump.stderr.on("data", (d) => String(d).includes("listening") && resolve()));
  const clients = Array.from({ length: CONNECTIONS }, () =>
    spawn("curl", [
      "-s",
      "-k",
      "--http2",
      "--tlsv1.3",
      "-o",
      "/dev/null",
      `https://127.0.0.1:${port}/api/v1/namespaces/default/pods?watch=1`,
    ], { stdio: "ignore", env: { ...process.env, SSLKEYLOGFILE: keys } }));
  while (!existsSync(pcap) || statSync(pcap).size < MB * 1024 * 1024) await sleep(200);
  stop = true;
  for (const c of clients) c.kill("SIGINT");
  await sleep(1000);
  tcpdump.kill("SIGINT");
  await new Promise((resolve) => tcpdump.on("exit", resolve));
  server.close();
}

if (!existsSync(pcap)) {
  log(`recording ${pcap}`);
  await record();
}
const bytes = statSync(pcap).size;
log(`${pcap}: ${(bytes / 1048576).toFixed(0)} MiB`);

// watchwire, objects decoded in full and in metadata mode (each in a fresh decodeCapture; one process).
async function ours(mode: "full" | "metadata"): Promise<{ events: number; seconds: number; problems: number }> {
  const t0 = performance.now();
  let events = 0;
  let problems = 0;
  const items = decodeCapture(
    Readable.toWeb(createReadStream(pcap, { highWaterMark: 64 * 1024 })) as ReadableStream<Uint8Array>,
    { keyLog: readFileSync(keys, "utf8"), protobuf: { decoders: builtinDecoders, mode } },
  );
  for await (const item of items) {
    if (item.kind === "event") events++;
    else if (item.kind === "problem") problems++;
  }
  const seconds = (performance.now() - t0) / 1000;
  log(`watchwire ${mode}: ${events} events in ${seconds.toFixed(2)} s (${problems} problems)`);
  return { events, seconds, problems };
}
const full = await ours("full");
const metadata = await ours("metadata");
const events = full.events;
const maxRss = process.resourceUsage().maxRSS * 1024;

// The ceiling: the work no reader of this capture can avoid, measured alone in this process. Decoding the same watch
// bodies (the stream's copies, as many events) with the same decoders, outside any capture; and AES-128-GCM of the
// file's bytes in 16 KiB records through WebCrypto (records must be opened in order on a connection: one at a time).
async function decodeAlone(mode: "full" | "metadata"): Promise<number> {
  const stream = readFileSync(new URL("../fixtures/kubernetes/streams/v1.Pod.pb", import.meta.url));
  const copies = Math.ceil(events / 5);
  const body = new Uint8Array(stream.length * copies);
  for (let i = 0; i < copies; i++) body.set(stream, i * stream.length);
  const t0 = performance.now();
  const chunks = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < body.length; at += 16384) controller.enqueue(body.subarray(at, at + 16384));
      controller.close();
    },
  });
  const response = new Response(chunks, { headers: { "content-type": PB_WATCH } });
  let n = 0;
  for await (const _ of decodeWatchResponse(response, { protobuf: { decoders: builtinDecoders, mode } })) n++;
  const seconds = (performance.now() - t0) / 1000;
  log(`decode alone ${mode}: ${n} events in ${seconds.toFixed(2)} s`);
  return seconds;
}
async function aesAlone(): Promise<number> {
  const key = await crypto.subtle.importKey("raw", new Uint8Array(16), "AES-GCM", false, ["encrypt", "decrypt"]);
  const iv = new Uint8Array(12);
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, new Uint8Array(16384)));
  const records = Math.ceil(bytes / 16384);
  const t0 = performance.now();
  for (let i = 0; i < records; i++) await crypto.subtle.decrypt({ name: "AES-GCM", iv }, key, sealed);
  const seconds = (performance.now() - t0) / 1000;
  log(`AES-128-GCM alone (WebCrypto): ${records} records of 16 KiB in ${seconds.toFixed(2)} s`);
  return seconds;
}
const decodeFull = await decodeAlone("full");
const decodeMetadata = await decodeAlone("metadata");
const aes = await aesAlone();

// tshark, to HTTP/2 DATA.
const t1 = performance.now();
const tshark = spawnSync("tshark", [
  "-r",
  pcap,
  "-o",
  `tls.keylog_file:${keys}`,
  "-Y",
  "http2.data.data",
  "-T",
  "fields",
  "-e",
  "http2.streamid",
], { stdio: ["ignore", "pipe", "ignore"], maxBuffer: 1 << 30 });
const theirs = (performance.now() - t1) / 1000;
const dataFrames = String(tshark.stdout).split("\n").filter((l) => l !== "").length;
log(`tshark: ${dataFrames} HTTP/2 DATA frames in ${theirs.toFixed(1)} s`);

const round = (x: number) => Math.round(x * 1000) / 1000;
const result = {
  file: pcap,
  bytes,
  connections: CONNECTIONS,
  events,
  problems: full.problems + metadata.problems,
  tsharkSeconds: round(theirs),
  tsharkDataFrames: dataFrames,
  full: { seconds: round(full.seconds), ratio: round(theirs / full.seconds) },
  metadata: { seconds: round(metadata.seconds), ratio: round(theirs / metadata.seconds) },
  ceiling: {
    decodeFullSeconds: round(decodeFull),
    decodeMetadataSeconds: round(decodeMetadata),
    aesSeconds: round(aes),
    bestRatioFull: round(theirs / (decodeFull + aes)),
    bestRatioMetadata: round(theirs / (decodeMetadata + aes)),
  },
  maxRssBytes: maxRss,
};
if (process.argv.includes("--keep")) writeFileSync(join(dir, "result.json"), JSON.stringify(result, null, 2));
console.log(JSON.stringify(result));
