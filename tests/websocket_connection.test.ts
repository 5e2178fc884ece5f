/**
 * The WebSockets of a `connectCluster` connection: opened with the config's TLS and credentials by the runtime's
 * adapter (undici's WebSocket and Agent in Node, Deno's WebSocket with an HTTP client or undici's for
 * `insecureSkipTlsVerify` and `tlsServerName`, Bun's with `tls`), used by `webSocketWatch` when it is given no opener,
 * and ended with the connection. Against a TLS WebSocket server on 127.0.0.1 with a CA and certificates from
 * scripts/kube/pki.mjs, in a Node child process in every runtime (as tests/cluster_connection.test.ts's, for the peer
 * certificate Bun's node:https cannot tell); the real kube-apiserver is in tests/servers/websocket_informer.test.ts.
 * Also, with stand-in connections and sockets: which opener is used, and a `CLOSED` error event.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { makePki, type Pki } from "../scripts/kube/pki.mjs";
import type { ClusterConfig, ClusterConnection } from "../src/cluster/cluster_config.ts";
import { connectCluster } from "../src/cluster/connection/connect_cluster.ts";
import { detectRuntime } from "../src/cluster/connection/runtime_name.ts";
import { ClusterAccessError } from "../src/cluster/errors.ts";
import { type WebSocketLike, type WebSocketOpener, webSocketWatch } from "../src/cluster/websocket_watch.ts";
import type { KubernetesObject, WatchEvent } from "../src/events.ts";
import { drain, firstLineOf, within } from "./_util.ts";

const runtime = detectRuntime();
/** Node itself in Node; the `node` on PATH (npm's) in Deno and Bun. */
const NODE = runtime === "node" ? process.execPath : "node";

const work = mkdtempSync(join(tmpdir(), "watchwire-ws-connection-"));
after(() => rmSync(work, { recursive: true, force: true }));
let made: Pki | undefined;
/** The test PKI (made once), with a client certificate for `admin`. */
const pki = (): Pki => made ??= makePki(join(work, "pki"), { clients: { admin: { user: "admin" } } });
const bytes = (path: string) => new Uint8Array(readFileSync(path));

/**
 * A TLS server that takes every WebSocket upgrade: it sends one JSON watch event whose annotations say what it saw
 * (the client certificate's CN, the headers, the path, the subprotocols asked), then a close frame 1000 (unless the
 * path has `hold`: then it waits for the client's close). A plain GET is answered 200 with the same event; an
 * `Authorization: Bearer refused` is answered 401 either way.
 */
const SERVER = `
import https from "node:https";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
const [dir] = process.argv.slice(2);
const server = https.createServer({
  ca: readFileSync(dir + "/ca.crt"),
  cert: readFileSync(dir + "/server.crt"),
  key: readFileSync(dir + "/server.key"),
  requestCert: true,
  rejectUnauthorized: false,
}, (req, res) => {
  if (req.headers.authorization === "Bearer refused") {
    res.writeHead(401, { "content-type": "application/json" });
    res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", reason: "Unauthorized", code: 401 }));
    return;
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(event(req, req.socket)) + "\\n");
});
function event(req, socket) {
  const peer = socket.getPeerCertificate();
  const h = req.headers;
  const annotations = {
    cn: peer && peer.subject ? peer.subject.CN : "",
    path: req.url,
    authorization: h.authorization ?? "",
    impersonateUser: h["impersonate-user"] ?? "",
    origin: h.origin ?? "",
    accept: h.accept ?? "",
    protocols: h["sec-websocket-protocol"] ?? "",
  };
  return { type: "ADDED", object: { kind: "ConfigMap", apiVersion: "v1", metadata: { name: "seen", resourceVersion: "1", annotations } } };
}
function frame(opcode, payload) {
  const head = payload.length < 126 ? [0x80 | opcode, payload.length] : [0x80 | opcode, 126, payload.length >> 8, payload.length & 255];
  return Buffer.concat([Buffer.from(head), payload]);
}
server.on("upgrade", (req, socket) => {
  if (req.headers.authorization === "Bearer refused") {
    socket.end("HTTP/1.1 401 Unauthorized\\r\\ncontent-length: 0\\r\\nconnection: close\\r\\n\\r\\n");
    return;
  }
  const accept = createHash("sha1").update(req.headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
  socket.write("HTTP/1.1 101 Switching Protocols\\r\\nupgrade: websocket\\r\\nconnection: Upgrade\\r\\nsec-websocket-accept: " + accept + "\\r\\n\\r\\n");
  socket.write(frame(1, Buffer.from(JSON.stringify(event(req, socket)) + "\\n")));
  if (!req.url.includes("hold")) socket.write(frame(8, Buffer.from([0x03, 0xe8])));
  // The client's close frame (or anything it sends): the connection ends.
  socket.on("data", () => socket.end());
  socket.on("error", () => {});
});
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
`;

/** Runs `body` with the server of the test PKI, stopped after. */
async function withServer(body: (url: string) => Promise<void>): Promise<void> {
  const script = join(work, "server.mjs");
  writeFileSync(script, SERVER);
  const child: ChildProcess = spawn(NODE, [script, pki().ca.replace(/\/ca\.crt$/, "")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    const { port } = await firstLineOf<{ port: number }>(child, "the WebSocket server's port");
    await body(`https://127.0.0.1:${port}`);
  } finally {
    child.kill();
    await exited;
  }
}

const CONFIGMAPS = { version: "v1", resource: "configmaps", namespace: "default" };

type Seen = Record<"cn" | "path" | "authorization" | "impersonateUser" | "origin" | "accept" | "protocols", string>;

/** What the server saw of one watch over WebSocket through `config`'s connection (which is closed after). */
async function seenOverWebSocket(config: ClusterConfig): Promise<Seen> {
  const c = await connectCluster(config);
  try {
    const events = await webSocketWatch(c, CONFIGMAPS);
    const { values, error } = await within(drain(events), 10_000, "the watch");
    assert.equal(error, undefined);
    assert.equal(values.length, 1);
    return (values[0] as WatchEvent & { type: "ADDED" }).object.metadata!.annotations as Seen;
  } finally {
    await c.close();
  }
}

const nodeDenoBun = runtime !== "web";

test("websocket connection: the config's CA, client certificate and credentials, with no opener given", async () => {
  assert.ok(nodeDenoBun);
  await withServer(async (server) => {
    const seen = await seenOverWebSocket({
      server,
      caData: bytes(pki().ca),
      clientCertificateData: bytes(pki().clients.admin.cert),
      clientKeyData: bytes(pki().clients.admin.key),
      token: "abc",
      impersonate: { user: "jane" },
    });
    assert.deepEqual(seen, {
      cn: "admin",
      path: "/api/v1/namespaces/default/configmaps?watch=true",
      authorization: "Bearer abc",
      impersonateUser: "jane",
      origin: server,
      accept: "application/json",
      protocols: "",
    });
  });
});

test("websocket connection: insecureSkipTlsVerify and tlsServerName as the fetch has them; no CA is rejected", async () => {
  await withServer(async (server) => {
    // Deno's WebSocket cannot do these two: undici's does them there (through node:tls), as for fetch.
    assert.equal((await seenOverWebSocket({ server, insecureSkipTlsVerify: true })).cn, "");
    const ca = bytes(pki().ca);
    assert.equal((await seenOverWebSocket({ server, caData: ca, tlsServerName: "localhost" })).cn, "");
    for (const config of [{ server, caData: ca, tlsServerName: "elsewhere" }, { server }]) {
      await assert.rejects(
        seenOverWebSocket(config),
        (e) => e instanceof ClusterAccessError && e.code === "SERVER_CERTIFICATE_REJECTED",
      );
    }
  });
});

test("websocket connection: a refused handshake is the plain request's Status, as with any opener", async () => {
  await withServer(async (server) => {
    const c = await connectCluster({ server, caData: bytes(pki().ca), token: "refused" });
    try {
      const { values, error } = await within(drain(await webSocketWatch(c, CONFIGMAPS)), 10_000);
      assert.equal(error, undefined);
      assert.deepEqual(values.map((e) => [e.type, (e.object as { code?: number }).code]), [["ERROR", 401]]);
    } finally {
      await c.close();
    }
  });
});

test("websocket connection: close() ends a watch in flight with CLOSED, and opens no WebSocket after", async () => {
  await withServer(async (server) => {
    const c = await connectCluster({ server, caData: bytes(pki().ca) });
    const events = await webSocketWatch(c, { ...CONFIGMAPS, resource: "holds" });
    const reader = events.getReader();
    assert.equal((await within(reader.read(), 10_000)).value?.type, "ADDED");
    const next = reader.read();
    await c.close();
    await assert.rejects(within(next, 10_000), (e) => e instanceof ClusterAccessError && e.code === "CLOSED");
    await assert.rejects(webSocketWatch(c, CONFIGMAPS), (e) => e instanceof ClusterAccessError && e.code === "CLOSED");
  });
});

test("websocket connection: none of its own with a caller's fetch, nor in a runtime without adapters", async () => {
  const opener = (c: ClusterConnection) => c.openWebSocket;
  const own = await connectCluster({ server: "https://127.0.0.1:1" });
  const withFetch = await connectCluster({ server: "https://127.0.0.1:1" }, { fetch: () => Promise.reject() });
  const web = await connectCluster({ server: "https://127.0.0.1:1" }, { runtime: "web" });
  assert.equal(typeof opener(own), "function");
  assert.equal(opener(withFetch), undefined);
  assert.equal(opener(web), undefined);
  await Promise.all([own.close(), withFetch.close(), web.close()]);
});

// ---------------------------------------------------------------------------------------------------------------
// Stand-ins

/** A socket that opens, sends one event, then does what `then` says. */
class StandInSocket extends EventTarget implements WebSocketLike {
  binaryType = "blob";
  readyState = 0;
  closed: (number | undefined)[] = [];
  constructor(then: (socket: StandInSocket) => void) {
    super();
    setTimeout(() => {
      this.readyState = 1;
      this.dispatchEvent(new Event("open"));
      const data = '{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"8"}}}';
      this.dispatchEvent(new MessageEvent("message", { data }));
      setTimeout(() => then(this), 1);
    }, 1);
  }
  close(code?: number): void {
    this.closed.push(code);
    this.readyState = 3;
  }
}

const closeCleanly = (socket: StandInSocket) =>
  socket.dispatchEvent(Object.assign(new Event("close"), { code: 1000, reason: "", wasClean: true }));

/** A connection whose requests fail, with `openWebSocket` if given. */
function standInConnection(openWebSocket?: WebSocketOpener): ClusterConnection {
  return {
    server: "https://127.0.0.1:6443",
    headers: () => Promise.resolve(new Headers({ authorization: "Bearer abc" })),
    fetch: () => Promise.reject(new TypeError("not reached")),
    close: () => Promise.resolve(),
    ...(openWebSocket === undefined ? {} : { openWebSocket }),
  } as ClusterConnection;
}

test("websocket connection: webSocketWatch uses the connection's opener unless given one", async () => {
  const used: string[] = [];
  const opener = (name: string): WebSocketOpener => (_url, handshake) => {
    used.push(`${name} ${handshake.headers.get("authorization")}`);
    return new StandInSocket(closeCleanly);
  };
  const c = standInConnection(opener("connection's"));
  const read = async (events: ReadableStream<WatchEvent<KubernetesObject>>) =>
    (await within(drain(events), 2000)).values.map((e) => e.type);
  assert.deepEqual(await read(await webSocketWatch(c, CONFIGMAPS)), ["ADDED"]);
  assert.deepEqual(await read(await webSocketWatch(c, CONFIGMAPS, { openWebSocket: opener("given") })), ["ADDED"]);
  assert.deepEqual(used, ["connection's Bearer abc", "given Bearer abc"]);
});

test("websocket connection: an error event with a CLOSED ClusterAccessError ends the watch with it at once", async () => {
  const closed = new ClusterAccessError("CLOSED", "the cluster connection was closed");
  let made: StandInSocket | undefined;
  const c = standInConnection(() =>
    made = new StandInSocket((socket) => socket.dispatchEvent(Object.assign(new Event("error"), { error: closed })))
  );
  const { values, error } = await within(drain(await webSocketWatch(c, CONFIGMAPS)), 2000);
  assert.deepEqual(values.map((e) => e.type), ["ADDED"]);
  assert.equal(error, closed);
  assert.deepEqual(made?.closed, [1000]);

  // Before the handshake is done: the watch rejects with it, and no plain HTTP request is made.
  class NeverOpens extends EventTarget implements WebSocketLike {
    binaryType = "blob";
    readyState = 0;
    constructor() {
      super();
      setTimeout(() => this.dispatchEvent(Object.assign(new Event("error"), { error: closed })), 1);
    }
    close(): void {}
  }
  await assert.rejects(webSocketWatch(standInConnection(() => new NeverOpens()), CONFIGMAPS), (e) => e === closed);
});

test("websocket connection: a handshake refused by the connection's opener where plain HTTP is accepted says so", async () => {
  class Refused extends EventTarget implements WebSocketLike {
    binaryType = "blob";
    readyState = 0;
    constructor() {
      super();
      setTimeout(() => {
        this.dispatchEvent(Object.assign(new Event("error"), { message: "non-101 status code" }));
        this.dispatchEvent(Object.assign(new Event("close"), { code: 1006, reason: "", wasClean: false }));
      }, 1);
    }
    close(): void {}
  }
  const c = {
    ...standInConnection(() => new Refused()),
    fetch: () => Promise.resolve(new Response("", { status: 200 })),
  } as ClusterConnection;
  await assert.rejects(
    webSocketWatch(c, CONFIGMAPS),
    (e) =>
      e instanceof ClusterAccessError && e.code === "REQUEST_FAILED" && /renewed after a 401/.test(e.message) &&
      !/webSocketOpener\(\{ init \}\)/.test(e.message),
  );
});
