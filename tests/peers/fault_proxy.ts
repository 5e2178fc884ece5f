/**
 * A fault-injecting HTTPS proxy on 127.0.0.1 in front of a real kube-apiserver, for chaos tests of the watch loop
 * and the informer. It terminates TLS with a certificate of its own signed by the cluster's test CA (SAN 127.0.0.1,
 * so a kubeconfig that trusts the cluster trusts it), serves HTTP/1.1 and HTTP/2 (ALPN; `node:http2`'s secure server
 * with `allowHTTP1`), and forwards each request to the server over TLS (trusting the CA, the client's Authorization
 * and other end-to-end headers passed through). Being the TLS end, it can fault at the HTTP level, per request, by a
 * seeded random schedule or by explicit commands:
 *
 * - `cut`: the connection closed (TCP FIN) after `afterBytes` bytes of the response body (0: before any answer);
 * - `reset`: the same with a TCP RST;
 * - `stall`: nothing forwarded for `ms` after `afterBytes` bytes (0: the response's headers held back);
 * - `truncate`: the body ended properly (the last chunk, END_STREAM) after `afterBytes` bytes, inside an event;
 * - `status429`: `429` with `Retry-After` and kube-apiserver's text body (its priority-and-fairness answer), the server
 *   not asked; `status500`: `500` with an InternalError Status; `gone`: `410` with an Expired Status (a watch from a
 *   resourceVersion only);
 * - HTTP/2 clients only: `goaway` (GOAWAY, then the connection closed, after `afterBytes`) and `rstStream`
 *   (RST_STREAM INTERNAL_ERROR on the request's stream alone); the schedule gives them to HTTP/2 requests only, and
 *   queued for an HTTP/1.1 request they cut.
 *
 * It counts requests by kind (`list`, `watch`, `watchFromVersion`, `streamingList`) and logs each one with its time,
 * fault and outcome, so a test can tell a resume from a relist and check waits against Retry-After.
 *
 * The proxy always runs as a child Node process (this file, run by `node --import tsx`), started the same way from
 * Node, Deno and Bun (Bun's `node:http2` server and Deno's are not what this needs: TLS-terminating HTTP/2 with
 * GOAWAY, RST_STREAM and the raw TCP socket for a reset). The test talks to it over plain HTTP on a control port.
 */
import { Buffer } from "node:buffer";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  constants as h2,
  createSecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from "node:http2";
import { Agent, request as httpsRequest } from "node:https";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** What a request is, for the watch loop: a list (page), a watch, a watch from a resourceVersion, a streaming list. */
export type RequestKind = "list" | "watch" | "watchFromVersion" | "streamingList";

/** The faults the proxy injects. */
export type FaultName =
  | "cut"
  | "reset"
  | "stall"
  | "truncate"
  | "status429"
  | "status500"
  | "gone"
  | "goaway"
  | "rstStream";

/** One fault, for one request. */
export interface Fault {
  name: FaultName;
  /** cut, reset, stall, truncate, goaway, rstStream: after this many bytes of the response body; 0 (default): at once. */
  afterBytes?: number;
  /** stall: how long nothing is forwarded. */
  ms?: number;
  /** status429: the Retry-After header's seconds (default 1). */
  retryAfterSeconds?: number;
}

/** A seeded random schedule: for each request (in the order they arrive) at most one fault. */
export interface FaultSchedule {
  seed: number;
  /** The chance of each fault per request (the rest pass untouched); faults that do not apply to it are left out. */
  chances: Partial<Record<FaultName, number>>;
  /** Kinds of request that may be faulted (default: all). */
  kinds?: RequestKind[];
  /** The chances of a kind of request scaled by this (default 1 each). */
  scale?: Partial<Record<RequestKind, number>>;
  /** The range of `afterBytes` (default [0, 4096]). */
  afterBytes?: [number, number];
  /** The chance that a fault comes at once, before any answer (`afterBytes` 0; default 0.25). */
  atOnce?: number;
  /** The range of a stall's `ms` (default [100, 3000]). */
  stallMs?: [number, number];
  /** Retry-After of a 429 (default 1). */
  retryAfterSeconds?: number;
}

/** One request through the proxy. */
export interface ProxiedRequest {
  /** 1, 2, ... in order of arrival. */
  n: number;
  kind: RequestKind;
  /** Path and query. */
  path: string;
  http2: boolean;
  /** The query's resourceVersion, if any. */
  resourceVersion?: string;
  /** A list page after the first (a `continue` token). */
  continued: boolean;
  /** Date.now() at arrival. */
  at: number;
  /** The fault chosen for it, if any. */
  fault?: Fault;
  /** Date.now() when the fault took effect (absent: the response ended before it was due). */
  faultAt?: number;
  /** The status answered (absent: no answer). */
  status?: number;
  /** Body bytes forwarded. */
  bytes: number;
  /** Date.now() at its end, and how it ended. */
  endedAt?: number;
  end?: "complete" | "fault" | "client" | "upstream";
}

/** What the proxy did so far. */
export interface ProxyStats {
  /** Requests by kind. */
  counts: Record<RequestKind, number>;
  /** Faults that took effect, by name. */
  faults: Record<FaultName, number>;
  requests: ProxiedRequest[];
}

/** A running fault proxy (a child process). */
export interface FaultProxy {
  /** `https://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Sets the random schedule (replacing the last; its generator starts from its seed), or none. */
  schedule(schedule: FaultSchedule | null): Promise<void>;
  /** Queues a fault for the next request of one of `kinds` (default any); queued faults come before the schedule. */
  enqueue(fault: Fault, kinds?: RequestKind[]): Promise<void>;
  stats(): Promise<ProxyStats>;
  /** The first 256 KiB of the body the proxy forwarded for request `n` (1, 2, ...). */
  body(n: number): Promise<Uint8Array>;
  /** Ends the child process (every connection with it). */
  close(): Promise<void>;
}

/** A small fast PRNG (sfc32) seeded from one 32-bit number: the same numbers in every runtime. */
export function seededRandom(seed: number): () => number {
  let a = 0x9e3779b9, b = 0x243f6a88, c = 0xb7e15162, d = seed >>> 0;
  const next = () => {
    a |= 0, b |= 0, c |= 0, d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return next;
}

/** The kind of a request, from its query. */
export function requestKind(url: URL): RequestKind {
  const flag = (name: string) => ["1", "true"].includes(url.searchParams.get(name) ?? "");
  if (!flag("watch")) return "list";
  if (flag("sendInitialEvents")) return "streamingList";
  const rv = url.searchParams.get("resourceVersion");
  return rv === null || rv === "" ? "watch" : "watchFromVersion";
}

// ---------------------------------------------------------------------------------------------------------------------
// The test's side: start the child, talk to it.

const RUNTIME = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * Starts the proxy in front of `upstream` (kube-apiserver's https URL), with a serving certificate signed by the CA
 * (`ca`, `caKey`: the cluster's `pki.ca` and `pki.caKey` files). Node runs it: this process's in Node, else `node` on
 * the PATH (`WATCHWIRE_NODE` to choose another).
 */
export async function startFaultProxy(options: { upstream: string; ca: string; caKey: string }): Promise<FaultProxy> {
  const node = process.env.WATCHWIRE_NODE ?? (RUNTIME === "node" ? process.execPath : "node");
  const child: ChildProcess = spawn(
    node,
    ["--import", "tsx", fileURLToPath(import.meta.url), JSON.stringify(options)],
    {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, WATCHWIRE_FAULT_PROXY_CHILD: "1" },
    },
  );
  let stderr = "";
  child.stderr!.on("data", (data: Uint8Array) => {
    stderr = (stderr + new TextDecoder().decode(data)).slice(-8000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ports = await new Promise<{ port: number; control: number }>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`the fault proxy did not start in 30 s: ${stderr}`)), 30_000);
    child.stdout!.on("data", (data: Uint8Array) => {
      out += new TextDecoder().decode(data);
      const line = out.indexOf("\n");
      if (line >= 0) {
        clearTimeout(timer);
        resolve(JSON.parse(out.slice(0, line)));
      }
    });
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the fault proxy exited (${code}) before it was ready: ${stderr}`));
    });
  });
  const control = async (path: string, body?: unknown) => {
    const response = await fetch(`http://127.0.0.1:${ports.control}${path}`, {
      method: body === undefined ? "GET" : "POST",
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`fault proxy ${path}: ${response.status} ${text}`);
    return text === "" ? undefined : JSON.parse(text);
  };
  let closing: Promise<void> | undefined;
  return {
    url: `https://127.0.0.1:${ports.port}`,
    port: ports.port,
    schedule: (schedule) => control("/schedule", schedule),
    enqueue: (fault, kinds) => control("/enqueue", { fault, kinds: kinds ?? null }),
    stats: () => control("/stats"),
    body: async (n) => {
      const response = await fetch(`http://127.0.0.1:${ports.control}/body?n=${n}`);
      if (!response.ok) throw new Error(`fault proxy /body: ${response.status} ${await response.text()}`);
      return new Uint8Array(await response.arrayBuffer());
    },
    close() {
      closing ??= (async () => {
        child.stdin!.end(); // the child ends when its stdin does
        const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
        await exited;
        clearTimeout(timer);
      })();
      return closing;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// The child's side: the proxy itself (Node).

/** A key and a serving certificate for 127.0.0.1 signed by the CA, made with openssl in a temporary directory. */
function servingCertificate(caFile: string, caKeyFile: string): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "watchwire-fault-proxy-"));
  try {
    const run = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "proxy.key"]);
    run(["req", "-new", "-key", "proxy.key", "-subj", "/CN=watchwire-fault-proxy", "-out", "proxy.csr"]);
    writeFileSync(
      join(dir, "proxy.ext"),
      "basicConstraints = CA:false\nkeyUsage = critical, digitalSignature, keyEncipherment\n" +
        "extendedKeyUsage = serverAuth\nsubjectAltName = IP:127.0.0.1, DNS:localhost\n",
    );
    const serial = String(1 + Math.floor(Math.random() * 2 ** 40));
    run([
      ...["x509", "-req", "-in", "proxy.csr", "-CA", caFile, "-CAkey", caKeyFile, "-set_serial", serial],
      ...["-days", "2", "-extfile", "proxy.ext", "-out", "proxy.crt"],
    ]);
    return { cert: readFileSync(join(dir, "proxy.crt"), "utf8"), key: readFileSync(join(dir, "proxy.key"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "http2-settings",
  "host",
]);

type AnyRequest = IncomingMessage | Http2ServerRequest;
type AnyResponse = ServerResponse | Http2ServerResponse;

const statusBody = (code: number, reason: string, message: string) =>
  JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code });

/** Runs the proxy; resolves to its ports. */
async function serveFaultProxy(options: { upstream: string; ca: string; caKey: string }) {
  const upstream = new URL(options.upstream);
  const ca = readFileSync(options.ca, "utf8");
  const { cert, key } = servingCertificate(options.ca, options.caKey);
  const agent = new Agent({ keepAlive: true, ca });

  const counts: Record<RequestKind, number> = { list: 0, watch: 0, watchFromVersion: 0, streamingList: 0 };
  const fired: Record<FaultName, number> = {
    cut: 0,
    reset: 0,
    stall: 0,
    truncate: 0,
    status429: 0,
    status500: 0,
    gone: 0,
    goaway: 0,
    rstStream: 0,
  };
  const requests: ProxiedRequest[] = [];
  /** The first TAP_BYTES of each response body, by request number. */
  const bodies = new Map<number, Uint8Array[]>();
  const TAP_BYTES = 256 * 1024;
  const queue: { fault: Fault; kinds: RequestKind[] | null }[] = [];
  let schedule: FaultSchedule | null = null;
  let random = Math.random;

  const applies = (name: FaultName, kind: RequestKind, http2: boolean) =>
    (name !== "goaway" && name !== "rstStream" || http2) && (name !== "gone" || kind === "watchFromVersion");

  function choose(kind: RequestKind, http2: boolean): Fault | undefined {
    const queued = queue.findIndex((q) => q.kinds === null || q.kinds.includes(kind));
    if (queued >= 0) return queue.splice(queued, 1)[0].fault;
    if (schedule === null) return undefined;
    // Drawn for every request, faulted or not, so the numbers follow the order of requests alone.
    const [roll, bytesRoll, msRoll, onceRoll] = [random(), random(), random(), random()];
    if (schedule.kinds !== undefined && !schedule.kinds.includes(kind)) return undefined;
    let at = 0;
    for (const [name, chance] of Object.entries(schedule.chances) as [FaultName, number][]) {
      if (!applies(name, kind, http2)) continue;
      at += chance * (schedule.scale?.[kind] ?? 1);
      if (roll >= at) continue;
      const [bMin, bMax] = schedule.afterBytes ?? [0, 4096];
      const [sMin, sMax] = schedule.stallMs ?? [100, 3000];
      return {
        name,
        afterBytes: onceRoll < (schedule.atOnce ?? 0.25) ? 0 : bMin + Math.floor(bytesRoll * (bMax - bMin + 1)),
        ms: sMin + Math.floor(msRoll * (sMax - sMin + 1)),
        retryAfterSeconds: schedule.retryAfterSeconds ?? 1,
      };
    }
    return undefined;
  }

  /** The TCP socket under a request's TLS socket. */
  const rawSocket = (request: AnyRequest): Socket | undefined => {
    const tls = request.socket as Socket & { _parent?: Socket };
    return tls?._parent ?? tls;
  };

  function handle(req: AnyRequest, res: AnyResponse): void {
    const url = new URL(req.url ?? "/", "https://proxy.invalid");
    const kind = requestKind(url);
    const http2 = req.httpVersionMajor === 2;
    const session: Http2Session | undefined = http2 ? (req as Http2ServerRequest).stream.session : undefined;
    const record: ProxiedRequest = {
      n: requests.length + 1,
      kind,
      path: url.pathname + url.search,
      http2,
      continued: url.searchParams.has("continue"),
      at: Date.now(),
      bytes: 0,
    };
    const rv = url.searchParams.get("resourceVersion");
    if (rv !== null) record.resourceVersion = rv;
    requests.push(record);
    const tapped: Uint8Array[] = [];
    bodies.set(record.n, tapped);
    const tap = (chunk: Uint8Array) => {
      if (record.bytes < TAP_BYTES) tapped.push(new Uint8Array(chunk.subarray(0, TAP_BYTES - record.bytes)));
      record.bytes += chunk.length;
    };
    counts[kind]++;
    const fault = choose(kind, http2);
    if (fault !== undefined) record.fault = fault;
    let upstreamRequest: ReturnType<typeof httpsRequest> | undefined = undefined;
    const finish = (end: ProxiedRequest["end"]) => {
      if (record.end !== undefined) return;
      record.end = end;
      record.endedAt = Date.now();
    };
    /** The fault takes effect. */
    const fire = () => {
      record.faultAt = Date.now();
      fired[fault!.name]++;
    };
    /** ... and ends the request. */
    const take = () => {
      fire();
      finish("fault");
    };
    res.on("close", () => {
      finish("client");
      upstreamRequest?.destroy();
    });

    /** The fault that ends the connection or stream, now. */
    const kill = () => {
      upstreamRequest?.destroy();
      const name = fault!.name;
      if (name === "rstStream" && http2) {
        (req as Http2ServerRequest).stream.close(h2.NGHTTP2_INTERNAL_ERROR);
      } else if (name === "goaway" && session !== undefined) {
        const stream = (req as Http2ServerRequest).stream;
        // Before any answer: the request's stream not processed; after some: it was, and then the connection goes.
        session.goaway(h2.NGHTTP2_NO_ERROR, record.bytes === 0 ? Math.max(0, (stream.id ?? 1) - 2) : stream.id);
        setTimeout(() => session.destroy(), 30);
      } else {
        const raw = rawSocket(req);
        if (name === "reset" && raw !== undefined && typeof raw.resetAndDestroy === "function") raw.resetAndDestroy();
        else raw?.destroy();
      }
    };
    /** Writes `chunk`, then calls `then` once it left (a moment later, so the client has read it). */
    const writeThen = (chunk: Uint8Array, then: () => void) => {
      if (chunk.length === 0) return void setTimeout(then, 30);
      tap(chunk);
      (res as ServerResponse).write(chunk, () => setTimeout(then, 30));
    };

    if (fault?.name === "status429") {
      take();
      record.status = 429;
      (res as ServerResponse).writeHead(429, {
        "content-type": "text/plain; charset=utf-8",
        "x-content-type-options": "nosniff",
        "retry-after": String(fault.retryAfterSeconds ?? 1),
      });
      res.end("Too many requests, please try again later.\n");
      return;
    }
    if (fault?.name === "status500" || fault?.name === "gone") {
      take();
      record.status = fault.name === "gone" ? 410 : 500;
      (res as ServerResponse).writeHead(record.status, { "content-type": "application/json" });
      res.end(
        fault.name === "gone"
          ? statusBody(410, "Expired", `too old resource version: ${rv} (injected by the fault proxy)`)
          : statusBody(500, "InternalError", "an internal error injected by the fault proxy"),
      );
      return;
    }
    const killing = fault !== undefined && fault.name !== "stall" && fault.name !== "truncate";
    if (killing && (fault.afterBytes ?? 0) === 0) {
      take();
      kill();
      return;
    }

    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (name.startsWith(":") || HOP_BY_HOP.has(name) || value === undefined) continue;
      headers[name] = value;
    }
    upstreamRequest = httpsRequest({
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: record.path,
      headers,
      agent,
    });
    upstreamRequest.on("error", () => {
      if (record.end === undefined) {
        finish("upstream");
        res.destroy();
      }
    });
    req.pipe(upstreamRequest);
    upstreamRequest.on("response", async (answer) => {
      const stalled = fault?.name === "stall" && (fault.afterBytes ?? 0) === 0;
      if (stalled) {
        fire();
        answer.pause();
        await new Promise((r) => setTimeout(r, fault!.ms ?? 1000));
        if (record.end !== undefined) return answer.destroy();
      }
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
      }
      record.status = answer.statusCode ?? 0;
      (res as ServerResponse).writeHead(record.status, out);
      (res as { flushHeaders?: () => void }).flushHeaders?.();
      let pending = fault !== undefined && !stalled;
      /** A fault is under way: the upstream's end waits for it (a stall), or never comes (a cut). */
      let holding = false;
      let upstreamEnded = false;
      const complete = () => {
        if (record.end !== undefined) return;
        finish("complete");
        res.end();
      };
      const write = (chunk: Uint8Array) => {
        tap(chunk);
        if (!(res as ServerResponse).write(chunk)) {
          answer.pause();
          res.once("drain", () => answer.resume());
        }
      };
      answer.on("data", (chunk: Uint8Array) => {
        if (record.end !== undefined) return;
        if (!pending || record.bytes + chunk.length < (fault!.afterBytes ?? 0)) return write(chunk);
        pending = false;
        const head = chunk.subarray(0, (fault!.afterBytes ?? 0) - record.bytes);
        const tail = chunk.subarray(head.length);
        holding = true;
        answer.pause();
        if (fault!.name === "stall") {
          writeThen(head, () => {
            fire();
            setTimeout(() => {
              if (record.end !== undefined) return;
              if (tail.length > 0) write(tail);
              holding = false;
              if (upstreamEnded) complete();
              else answer.resume();
            }, fault!.ms ?? 1000);
          });
          return;
        }
        if (fault!.name === "truncate") {
          take();
          upstreamRequest?.destroy();
          if (head.length > 0) tap(head);
          res.end(head);
          return;
        }
        writeThen(head, () => {
          take();
          kill();
        });
      });
      answer.on("end", () => {
        upstreamEnded = true;
        if (!holding) complete();
      });
      answer.on("error", () => {
        if (record.end !== undefined) return;
        finish("upstream");
        res.destroy();
      });
      // Paused explicitly for the stall: a "data" listener does not set it flowing again.
      if (stalled) answer.resume();
    });
  }

  const secure = createSecureServer({ cert, key, allowHTTP1: true }, handle);
  secure.on("sessionError", () => {});
  secure.on("tlsClientError", () => {});
  const raw = createNetServer((socket) => {
    socket.setNoDelay(true);
    socket.on("error", () => {});
    secure.emit("connection", socket);
  });
  await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", () => resolve()));

  const control = createHttpServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const input = body === "" ? undefined : JSON.parse(body);
    const send = (value: unknown) => {
      (res as ServerResponse).writeHead(200, { "content-type": "application/json" });
      res.end(value === undefined ? "" : JSON.stringify(value));
    };
    const path = new URL(req.url ?? "/", "http://control.invalid");
    switch (path.pathname) {
      case "/schedule":
        schedule = input ?? null;
        random = schedule === null ? Math.random : seededRandom(schedule.seed);
        return send(undefined);
      case "/enqueue":
        queue.push({ fault: input.fault, kinds: input.kinds });
        return send(undefined);
      case "/body": {
        const parts = bodies.get(Number(path.searchParams.get("n"))) ?? [];
        (res as ServerResponse).writeHead(200, { "content-type": "application/octet-stream" });
        return res.end(Buffer.concat(parts));
      }
      case "/stats":
        return send({ counts, faults: fired, requests } satisfies ProxyStats);
      default:
        (res as ServerResponse).writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", () => resolve()));
  return {
    port: (raw.address() as AddressInfo).port,
    control: (control.address() as AddressInfo).port,
  };
}

if (process.env.WATCHWIRE_FAULT_PROXY_CHILD === "1" && process.argv[2]?.startsWith("{")) {
  const ports = await serveFaultProxy(JSON.parse(process.argv[2]));
  process.stdout.write(JSON.stringify(ports) + "\n");
  // Ends with the test that started it: when its stdin closes (the test closed it, or ended).
  process.stdin.on("data", () => {});
  process.stdin.on("close", () => process.exit(0));
  process.stdin.on("end", () => process.exit(0));
}
