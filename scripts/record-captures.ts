/**
 * Records real capture files of watches on loopback for tests/capture_decode.test.ts (issue 38): tcpdump writes the
 * packets while curl watches a Node server; curl writes the body it received (what the client itself got) and, for
 * TLS, its key log (`SSLKEYLOGFILE`).
 *
 *   node --import tsx scripts/record-captures.ts      (as root: tcpdump captures on `lo`)
 *
 * For each variant it writes, in fixtures/captures/:
 *   capture-<variant>.pcap or .pcapng   tcpdump's file (pcapng with the key log in a Decryption Secrets Block, made by
 *                                       `editcap --inject-secrets`, for the `-dsb` variant)
 *   capture-<variant>.keys.txt          curl's key log (TLS variants without -dsb)
 *   capture-<variant>.body              the response body as curl received it and wrote it (`-o`)
 *   capture-<variant>.json              the request: path, the response's content type, curl's and the server's versions
 *
 * Variants: HTTP/1.1 in the clear, JSON (chunked); HTTP/1.1 over TLS 1.2, JSON; HTTP/2 over TLS 1.3, protobuf (the
 * refgen fixture's Pod watch frames); HTTP/2 over TLS 1.3, JSON, keys in the pcapng. The events are those of
 * tests/peers/watch_events.ts (JSON) and fixtures/kubernetes/streams/v1.Pod.pb (protobuf), written one at a time with
 * a pause, so that they come in packets of their own, as a live watch's do.
 *
 * Needs tcpdump, editcap (Wireshark), curl and openssl (Debian: `apt-get install tcpdump tshark curl openssl`).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { ndjsonLines, podWatchEvents } from "../tests/peers/watch_events.ts";
import { selfSignedCertificate } from "./self-signed.mjs";

const OUT = fileURLToPath(new URL("../fixtures/captures/", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "watchwire-captures-"));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const { keyFile: key, certFile: cert } = selfSignedCertificate(tmp, "ec", "watchwire.test");

const JSON_TYPE = "application/json";
const PROTOBUF_TYPE = "application/vnd.kubernetes.protobuf;stream=watch";
const PATH = "/api/v1/namespaces/default/pods?watch=1";

/** The body's pieces, each written on its own after a pause: JSON lines, or protobuf frames. */
function pieces(type: string): Uint8Array[] {
  if (type === JSON_TYPE) return ndjsonLines(podWatchEvents()).map((line) => new TextEncoder().encode(line));
  const stream = new Uint8Array(readFileSync(new URL("../fixtures/kubernetes/streams/v1.Pod.pb", import.meta.url)));
  const frames: Uint8Array[] = [];
  for (let at = 0; at < stream.length;) {
    const length = new DataView(stream.buffer, stream.byteOffset + at).getUint32(0);
    frames.push(stream.subarray(at, at + 4 + length));
    at += 4 + length;
  }
  return frames;
}

async function writeSlowly(write: (bytes: Uint8Array) => void, end: () => void, type: string) {
  for (const piece of pieces(type)) {
    write(piece);
    await sleep(20);
  }
  end();
}

interface Variant {
  name: string;
  tls: "1.2" | "1.3" | undefined;
  http: "1.1" | "2";
  type: string;
  dsb: boolean;
}

const VARIANTS: Variant[] = [
  { name: "http1-json", tls: undefined, http: "1.1", type: JSON_TYPE, dsb: false },
  { name: "tls12-http1-json", tls: "1.2", http: "1.1", type: JSON_TYPE, dsb: false },
  { name: "tls13-h2-protobuf", tls: "1.3", http: "2", type: PROTOBUF_TYPE, dsb: false },
  { name: "tls13-h2-json-dsb", tls: "1.3", http: "2", type: JSON_TYPE, dsb: true },
];

/** A server for `v`: plain node:http, or node:http2's secure server (which answers HTTP/1.1 too) for TLS. */
async function serve(v: Variant): Promise<{ port: number; close: () => Promise<void> }> {
  // Both response kinds have writeHead, write and end; their union's methods are not callable as one type.
  type Writable = {
    writeHead(status: number, headers: Record<string, string>): unknown;
    write(b: Uint8Array): unknown;
    end(): unknown;
  };
  const handler = (_request: unknown, response: Writable) => {
    response.writeHead(200, { "content-type": v.type });
    void writeSlowly((b) => response.write(b), () => response.end(), v.type);
  };
  const server = v.tls === undefined ? http.createServer(handler) : http2.createSecureServer({
    key: readFileSync(key),
    cert: readFileSync(cert),
    allowHTTP1: true,
    minVersion: v.tls === "1.2" ? "TLSv1.2" : "TLSv1.3",
    maxVersion: v.tls === "1.2" ? "TLSv1.2" : "TLSv1.3",
  }, handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function run(command: string, args: string[], env: Record<string, string> = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, ...env } });
    child.on("exit", (code) => code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`)));
  });
}

const versionOf = (command: string, args: string[]) => execFileSync(command, args, { encoding: "utf8" }).split("\n")[0];

for (const v of VARIANTS) {
  const server = await serve(v);
  const pcap = join(tmp, `${v.name}.pcap`);
  const keys = join(tmp, `${v.name}.keys.txt`);
  const body = join(OUT, `capture-${v.name}.body`);
  // -U and --immediate-mode: each packet written as it comes; the filter keeps the capture to this server's port.
  const tcpdump = spawn("tcpdump", ["-i", "lo", "-U", "--immediate-mode", "-w", pcap, `tcp port ${server.port}`], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve) => tcpdump.stderr.on("data", (d) => String(d).includes("listening") && resolve()));
  const scheme = v.tls === undefined ? "http" : "https";
  await run("curl", [
    "-s",
    "-S",
    "-k",
    v.http === "2" ? "--http2" : "--http1.1",
    ...(v.tls === "1.2" ? ["--tlsv1.2", "--tls-max", "1.2"] : v.tls === "1.3" ? ["--tlsv1.3"] : []),
    "-H",
    `Accept: ${v.type === PROTOBUF_TYPE ? "application/vnd.kubernetes.protobuf;stream=watch" : "application/json"}`,
    "-o",
    body,
    `${scheme}://127.0.0.1:${server.port}${PATH}`,
  ], v.tls === undefined ? {} : { SSLKEYLOGFILE: keys });
  await server.close();
  // tcpdump drops what the kernel still holds for it when it is stopped: it is given time to take everything first.
  await sleep(1000);
  tcpdump.kill("SIGINT");
  await new Promise((resolve) => tcpdump.on("exit", resolve));
  if (v.dsb) {
    execFileSync("editcap", ["--inject-secrets", `tls,${keys}`, pcap, join(OUT, `capture-${v.name}.pcapng`)]);
  } else {
    writeFileSync(join(OUT, `capture-${v.name}.pcap`), readFileSync(pcap));
    if (v.tls !== undefined) writeFileSync(join(OUT, `capture-${v.name}.keys.txt`), readFileSync(keys));
  }
  writeFileSync(
    join(OUT, `capture-${v.name}.json`),
    JSON.stringify(
      {
        path: PATH,
        contentType: v.type,
        http: v.http,
        tls: v.tls ?? null,
        curl: versionOf("curl", ["--version"]),
        tcpdump: versionOf("tcpdump", ["--version"]),
        server: `Node.js ${process.version} node:${v.tls === undefined ? "http" : "http2 (secure, allowHTTP1)"}`,
      },
      null,
      2,
    ) + "\n",
  );
  console.log(`capture-${v.name}: written`);
}
rmSync(tmp, { recursive: true, force: true });
