/**
 * A real etcd session for tests and for scripts/record-etcd-fixture.ts: starts `etcd` (the built v3.7.3, or Debian's) on
 * loopback with its own temporary data dir and free ports, runs `etcdctl watch --prefix /k -w json --prev-kv` and a
 * plain `etcdctl watch --prefix /k` through the loopback recording proxy while another etcdctl puts and deletes keys
 * (a value over 16 KB, a JSON object, a `k8s\0` protobuf-looking binary value included), and returns what etcdctl
 * printed with the recorded bytes of each watch's connection. Also: decoding a recorded Watch stream and turning the
 * decoded responses into the shape etcdctl prints, for comparison.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  etcdEventToJson,
  type EtcdKeyValueJson,
  EtcdWatchDecoderStream,
  type EtcdWatchResponse,
  GrpcMessageDecoderStream,
} from "../../wire.ts";
import { decodeHttp2Exchanges, type Http2Exchange } from "../../capture.ts";
import { freePort } from "../../scripts/free-port.mjs";
import { binaryPaths } from "../../scripts/kube/build.mjs";
import { type RecordedConnection, startRecordingProxy } from "./recording_proxy.ts";

/** How to get etcd: the one the server tests build (etcd v3.7.3, scripts/kube/build.mjs). */
export const ETCD_INSTALL = "node scripts/kube/build.mjs";

/**
 * The etcd and etcdctl binaries: those scripts/kube/build.mjs built, else the ones on PATH (Debian's etcd-server and
 * etcd-client, which scripts/record-etcd-fixture.ts recorded the committed fixture with).
 */
const binaries = (() => {
  const built = binaryPaths();
  return existsSync(built.etcd) && existsSync(built.etcdctl)
    ? { etcd: built.etcd, etcdctl: built.etcdctl }
    : { etcd: "etcd", etcdctl: "etcdctl" };
})();
export const WATCH_JSON_ARGS = ["watch", "--prefix", "/k", "-w", "json", "--prev-kv"];
export const WATCH_PLAIN_ARGS = ["watch", "--prefix", "/k"];

/** The versions of etcd and etcdctl, or an Error naming the install command if either is missing. */
export function etcdVersions(): { etcd: string; etcdctl: string } {
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { encoding: "utf8", env: { ...process.env, ETCDCTL_API: "3" } });
    if (r.error || r.status !== 0) {
      throw new Error(
        `${cmd} is not installed or does not run (${r.error?.message ?? r.stderr}); ` +
          `the real etcd test needs etcd: ${ETCD_INSTALL}`,
      );
    }
    return r.stdout.trim();
  };
  return { etcd: run(binaries.etcd, ["--version"]), etcdctl: run(binaries.etcdctl, ["version"]) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const env = () => ({ ...process.env, ETCDCTL_API: "3" });

/** Runs etcdctl to completion; `input` goes to its stdin. */
function etcdctl(endpoint: string, args: string[], input?: Uint8Array): Promise<{ status: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(binaries.etcdctl, ["--endpoints", endpoint, ...args], { env: env(), stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (status) => {
      if (status === 0) resolve({ status, stdout });
      else reject(new Error(`etcdctl ${args.join(" ")} exited ${status}: ${stderr}`));
    });
    child.stdin.end(input ?? new Uint8Array(0));
  });
}

/** A long-running etcdctl whose stdout is collected as bytes. */
function background(endpoint: string, args: string[]) {
  const child = spawn(binaries.etcdctl, ["--endpoints", endpoint, ...args], {
    env: env(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out: Uint8Array[] = [];
  let stderr = "";
  child.stdout.on("data", (d: Uint8Array) => out.push(new Uint8Array(d)));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
  return {
    stdout: () => {
      const all = new Uint8Array(out.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of out) {
        all.set(p, at);
        at += p.length;
      }
      return all;
    },
    stderr: () => stderr,
    async stop() {
      child.kill("SIGTERM");
      await closed;
    },
  };
}

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, ms = 20000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The operations, in order; 9 events under /k (the last command deletes three keys in one revision). */
export const BIG_VALUE = "0123456789abcdef".repeat(1300); // 20800 bytes
export const POD_JSON = '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web","namespace":"default"}}';
export const K8S_PROTO = Uint8Array.of(
  0x6b,
  0x38,
  0x73,
  0x00,
  0x0a,
  0x0d,
  0x0a,
  0x02,
  0x76,
  0x31,
  0x12,
  0x03,
  0x50,
  0x6f,
  0x64,
  0xff,
);
export const EXPECTED_EVENTS = 9;

/** What one session produced. */
export interface EtcdSession {
  versions: { etcd: string; etcdctl: string };
  /** stdout of `etcdctl watch --prefix /k -w json --prev-kv`. */
  jsonOutput: string;
  /** stdout of `etcdctl watch --prefix /k` (bytes: values may be binary). */
  plainOutput: Uint8Array;
  /** The recorded connection of the JSON watch. */
  jsonConnection: RecordedConnection;
  /** The recorded connection of the plain watch. */
  plainConnection: RecordedConnection;
}

/** Runs the session (about two seconds). Throws, naming the install command, if etcd is not installed. */
export async function runEtcdSession(): Promise<EtcdSession> {
  const versions = etcdVersions();
  const dir = await mkdtemp(join(tmpdir(), "watchwire-etcd-"));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const server = spawn(binaries.etcd, [
    "--name",
    "watchwire",
    "--data-dir",
    join(dir, "data"),
    "--listen-client-urls",
    client,
    "--advertise-client-urls",
    client,
    "--listen-peer-urls",
    peer,
    "--initial-advertise-peer-urls",
    peer,
    "--initial-cluster",
    `watchwire=${peer}`,
    "--log-level",
    "error",
  ], { stdio: ["ignore", "ignore", "pipe"] });
  let serverLog = "";
  server.stderr.setEncoding("utf8").on("data", (d: string) => (serverLog += d));
  const serverClosed = new Promise<void>((resolve) => server.on("close", () => resolve()));
  const proxy = await startRecordingProxy(clientPort);
  const watchers: Array<ReturnType<typeof background>> = [];
  try {
    const direct = `127.0.0.1:${clientPort}`;
    await waitFor("etcd to serve", async () => {
      try {
        await etcdctl(direct, ["endpoint", "health"]);
        return true;
      } catch {
        return false;
      }
    }).catch((e) => {
      throw new Error(`${(e as Error).message}; etcd log: ${serverLog}`);
    });
    // Every event after the current revision, however late a watch is established.
    const revision = JSON.parse((await etcdctl(direct, ["get", "/", "-w", "json"])).stdout).header.revision as number;
    const viaProxy = `127.0.0.1:${proxy.port}`;
    const rev = `--rev=${revision + 1}`;
    const json = background(viaProxy, [...WATCH_JSON_ARGS, rev]);
    watchers.push(json);
    await waitFor("the JSON watch's connection", () => proxy.connections().length >= 1);
    const plain = background(viaProxy, [...WATCH_PLAIN_ARGS, rev]);
    watchers.push(plain);
    await waitFor("the plain watch's connection", () => proxy.connections().length >= 2);

    await etcdctl(direct, ["put", "/k/a", "hello"]);
    await etcdctl(direct, ["put", "/k/a", "world"]);
    await etcdctl(direct, ["put", "/other", "not watched"]);
    await etcdctl(direct, ["put", "/k/big", BIG_VALUE]);
    await etcdctl(direct, ["put", "/k/pod", POD_JSON]);
    await etcdctl(direct, ["put", "/k/proto"], K8S_PROTO); // the value from stdin: binary
    await etcdctl(direct, ["del", "/k/a"]);
    await etcdctl(direct, ["del", "--prefix", "/k/"]);

    const countJson = () =>
      json.stdout().length === 0 ? 0 : new TextDecoder().decode(json.stdout()).trim().split("\n")
        .reduce((n, line) => n + (JSON.parse(line).Events?.length ?? 0), 0);
    await waitFor("etcdctl -w json to print every event", () => {
      const out = new TextDecoder().decode(json.stdout());
      return out.endsWith("\n") && countJson() >= EXPECTED_EVENTS;
    }).catch((e) => {
      throw new Error(`${(e as Error).message}: ${new TextDecoder().decode(json.stdout())} ${json.stderr()}`);
    });
    await waitFor("the plain etcdctl watch to print every event", () => {
      const out = new TextDecoder().decode(plain.stdout());
      return out.endsWith("DELETE\n/k/proto\n\n");
    }).catch((e) => {
      throw new Error(`${(e as Error).message}: ${new TextDecoder().decode(plain.stdout())} ${plain.stderr()}`);
    });
    await sleep(200); // let the proxy see the last bytes etcdctl already printed
    for (const w of watchers.splice(0)) await w.stop();
    const [jsonConnection, plainConnection] = proxy.connections();
    return {
      versions,
      jsonOutput: new TextDecoder().decode(json.stdout()),
      plainOutput: plain.stdout(),
      jsonConnection,
      plainConnection,
    };
  } finally {
    for (const w of watchers) await w.stop();
    await proxy.close();
    server.kill("SIGTERM");
    await serverClosed;
    await rm(dir, { recursive: true, force: true });
  }
}

export const ETCD_WATCH_PATH = "/etcdserverpb.Watch/Watch";

/**
 * Finds the one etcd Watch exchange of a recorded connection with the library's `decodeHttp2Exchanges` (both
 * directions, paired by stream id) by its request `:path`, and hands it to `consume` at once (a body left unread
 * would hold up the connection decoder); the other streams' bodies are cancelled. Throws unless there is exactly one.
 */
async function withRecordedWatch<T>(
  connection: RecordedConnection,
  consume: (exchange: Http2Exchange) => Promise<T>,
): Promise<T> {
  const bytes = (b: Uint8Array) => new Blob([b as Uint8Array<ArrayBuffer>]).stream();
  const results: Promise<T>[] = [];
  for await (
    const exchange of decodeHttp2Exchanges(bytes(connection.serverToClient), bytes(connection.clientToServer))
  ) {
    if (exchange.request?.path === ETCD_WATCH_PATH) {
      const result = consume(exchange);
      result.catch(() => {});
      results.push(result);
    } else await exchange.response.body.cancel();
  }
  if (results.length !== 1) throw new Error(`expected one ${ETCD_WATCH_PATH} stream, found ${results.length}`);
  return await results[0];
}

/** The `grpc-encoding` of an exchange's response (`undefined` when absent). */
function grpcEncodingOf(exchange: Http2Exchange): "identity" | "gzip" | undefined {
  const value = exchange.response.headers?.find(([n]) => n === "grpc-encoding")?.[1];
  if (value !== undefined && value !== "identity" && value !== "gzip") {
    throw new Error(`unexpected grpc-encoding ${value}`);
  }
  return value;
}

/** The server-to-client body (DATA) bytes of the recorded Watch stream, with its `grpc-encoding`. */
export function recordedWatchBody(
  connection: RecordedConnection,
): Promise<{ body: Uint8Array; encoding: "identity" | "gzip" | undefined }> {
  return withRecordedWatch(connection, async (exchange) => ({
    body: new Uint8Array(await new Response(exchange.response.body).arrayBuffer()),
    encoding: grpcEncodingOf(exchange),
  }));
}

/**
 * Decodes the etcd Watch stream of a recorded connection with the library only: `decodeHttp2Exchanges` on the recorded
 * bytes, the exchange whose request `:path` is the Watch call, then `GrpcMessageDecoderStream` (its `grpc-encoding`)
 * and `EtcdWatchDecoderStream`.
 */
export function decodeRecordedWatch(connection: RecordedConnection): Promise<EtcdWatchResponse[]> {
  return withRecordedWatch(connection, async (exchange) => {
    const responses: EtcdWatchResponse[] = [];
    const stream = exchange.response.body
      .pipeThrough(new GrpcMessageDecoderStream({ encoding: grpcEncodingOf(exchange) }))
      .pipeThrough(new EtcdWatchDecoderStream());
    for await (const r of stream) responses.push(r);
    return responses;
  });
}

/**
 * A decoded response as etcdctl's JSON printer writes it (Go's encoding/json of clientv3.WatchResponse): `type`
 * omitted for PUT and `1` for DELETE, header fields omitted when zero.
 */
export function toEtcdctlJson(r: EtcdWatchResponse, withCancelReason = false): unknown {
  const header: Record<string, number> = {};
  if (r.header.clusterId !== 0) header.cluster_id = r.header.clusterId;
  if (r.header.memberId !== 0) header.member_id = r.header.memberId;
  if (r.header.revision !== 0) header.revision = r.header.revision;
  if (r.header.raftTerm !== 0) header.raft_term = r.header.raftTerm;
  return {
    Header: header,
    Events: r.events.map((e) => {
      const { type, ...rest } = etcdEventToJson(e);
      return type === "DELETE" ? { type: 1, ...rest } : rest satisfies { kv: EtcdKeyValueJson };
    }),
    CompactRevision: r.compactRevision,
    Canceled: r.canceled,
    Created: r.created,
    // etcdctl 3.5 and later print the response's cancel reason too (3.4, the committed fixture's, does not).
    ...(withCancelReason ? { CancelReason: r.cancelReason } : {}),
  };
}

/** Whether `etcdctl version`'s output names a version that prints CancelReason (3.5 and later). */
export function printsCancelReason(etcdctlVersion: string): boolean {
  const [major, minor] = (/etcdctl version: (\d+)\.(\d+)/.exec(etcdctlVersion) ?? []).slice(1).map(Number);
  return major > 3 || (major === 3 && minor >= 5);
}

/** The responses etcdctl prints: those with events (it does not print the created response). */
export function printedResponses(responses: EtcdWatchResponse[], withCancelReason = false): unknown[] {
  return responses.filter((r) => r.events.length > 0).map((r) => toEtcdctlJson(r, withCancelReason));
}

/** What plain `etcdctl watch` prints for the decoded responses: per event its type, key and value lines. */
export function plainOutputOf(responses: EtcdWatchResponse[]): Uint8Array {
  const parts: number[] = [];
  const line = (bytes: Uint8Array | string) => {
    parts.push(...(typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes), 0x0a);
  };
  for (const r of responses) {
    for (const e of r.events) {
      line(e.type);
      line(e.kv.key);
      line(e.kv.value); // empty for a DELETE: an empty line
    }
  }
  return Uint8Array.from(parts);
}
