/**
 * Watches over WebSocket against the real kube-apiserver: in JSON and in protobuf they give the same events as the
 * plain HTTP watch of the same range (ConfigMaps changed by kubectl, watched from one resourceVersion), through each
 * runtime's WebSocket with the cluster's TLS (undici's in Node, with a dispatcher; Deno's with an HTTP client; Bun's
 * with `tls`), with a token as a header, as a browser's subprotocol, and with a client certificate; a refused
 * handshake is its Status; the informer takes `transport: "websocket"`. What the server's handshake takes and refuses
 * is checked on a raw TLS socket.
 *
 * With WATCHWIRE_RECORD_WEBSOCKET=1 (in Node) it also writes fixtures/kubernetes/websocket/: the server's bytes after
 * the `101` of one watch in JSON and one in protobuf (a raw TLS client that asks for them and reads to the server's
 * close), the handshakes, and the body of the plain HTTP watch of the same range.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import * as tls from "node:tls";
import { fileURLToPath } from "node:url";
import { connectCluster } from "../../src/cluster/connection/connect_cluster.ts";
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";
import { ClusterAccessError } from "../../src/cluster/errors.ts";
import { loadKubeconfig } from "../../src/cluster/kubeconfig/load_kubeconfig.ts";
import { resourcePath, type ResourceRef } from "../../src/cluster/resource.ts";
import { informer } from "../../src/cluster/resource_source.ts";
import { watch } from "../../src/cluster/watch.ts";
import {
  type WebSocketConstructorLike,
  type WebSocketOpener,
  webSocketOpener,
  webSocketWatch,
} from "../../src/cluster/websocket_watch.ts";
import { builtinDecoders } from "../../src/codec/kubernetes/generated/all.ts";
import type { Status, WatchEvent } from "../../src/events.ts";
import type { Cluster } from "../../scripts/kube/cluster.mjs";
import { startWorker } from "../../scripts/workerd.mjs";
import { drain, within } from "../_util.ts";
import { kubectl, namespaceName, RUNTIME, sharedCluster } from "./_cluster.ts";
import { changeConfigMaps } from "../peers/configmap_changes.ts";

const FIXTURES = fileURLToPath(new URL("../../fixtures/kubernetes/websocket/", import.meta.url));
const RECORD = process.env.WATCHWIRE_RECORD_WEBSOCKET === "1";

async function connect(cluster: Cluster, context?: string): Promise<ClusterConnection> {
  return connectCluster(await loadKubeconfig({ path: cluster.kubeconfig, ...(context ? { context } : {}) }));
}

const configmaps = (namespace: string): ResourceRef => ({ version: "v1", resource: "configmaps", namespace });

/** What a runtime needs for the cluster's TLS: the CA, and a client certificate and key if given. */
interface Tls {
  ca: string;
  cert?: string;
  key?: string;
}

const closers: (() => void)[] = [];

/**
 * This runtime's WebSocket with the cluster's TLS: undici's in Node (an Agent as dispatcher: Node 20 has no global
 * WebSocket, and a later Node's bundled undici may not take the npm package's Agent), Deno's global one with an HTTP
 * client, Bun's global one with `tls`. `browser`: a WebSocket that takes protocols only and sends `Origin` by itself,
 * as a browser's does (its TLS given by the subclass), for the subprotocol handshake.
 */
async function runtimeWebSocket(t: Tls, browser?: { origin: string }): Promise<WebSocketOpener> {
  const pem = { ca: t.ca, ...(t.cert ? { cert: t.cert, key: t.key } : {}) };
  let Base: WebSocketConstructorLike;
  let init: Record<string, unknown>;
  if (RUNTIME === "deno") {
    const deno = (globalThis as unknown as {
      Deno: { createHttpClient(o: { caCerts: string[]; cert?: string; key?: string }): { close(): void } };
    }).Deno;
    const client = deno.createHttpClient({ caCerts: [t.ca], ...(t.cert ? { cert: t.cert, key: t.key } : {}) });
    closers.push(() => client.close());
    Base = (globalThis as unknown as { WebSocket: WebSocketConstructorLike }).WebSocket;
    init = { client };
  } else if (RUNTIME === "bun") {
    Base = (globalThis as unknown as { WebSocket: WebSocketConstructorLike }).WebSocket;
    init = { tls: pem };
  } else {
    const undici = await import("undici");
    const agent = new undici.Agent({ connect: pem });
    closers.push(() => void agent.close());
    Base = undici.WebSocket as unknown as WebSocketConstructorLike;
    init = { dispatcher: agent };
  }
  if (browser === undefined) return webSocketOpener({ WebSocket: Base, handshake: "headers", init });
  class BrowserLike extends Base {
    constructor(url: string, protocols?: string[]) {
      super(url, { ...init, protocols: protocols ?? [], headers: { origin: browser!.origin } });
    }
  }
  return webSocketOpener({ WebSocket: BrowserLike, handshake: "subprotocol" });
}

function tlsOf(cluster: Cluster, client?: "admin"): Tls {
  const read = (path: string) => readFileSync(path, "utf8");
  const t: Tls = { ca: read(cluster.pki.ca) };
  if (client) {
    t.cert = read(cluster.pki.clients[client].cert);
    t.key = read(cluster.pki.clients[client].key);
  }
  return t;
}

/** The events of `stream` up to the one at resourceVersion `last` (then the stream is cancelled). */
async function eventsUntil<T>(stream: ReadableStream<WatchEvent<T>>, last: string): Promise<WatchEvent<T>[]> {
  const out: WatchEvent<T>[] = [];
  const reader = stream.getReader();
  await within(
    (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the watch ended before resourceVersion ${last}: ${out.length} events`);
        out.push(value);
        if ((value.object as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion === last) return;
      }
    })(),
    30_000,
    `the watch up to resourceVersion ${last}`,
  );
  await reader.cancel().catch(() => {});
  return out;
}

/** Events as plain data (protobuf objects as what JSON makes of them). */
const plain = (events: WatchEvent<unknown>[]) => JSON.parse(JSON.stringify(events));

const resourceVersionOf = (output: string) => {
  assert.match(output, /^\d+$/, output);
  return output;
};

/**
 * ConfigMaps of namespace `ns` changed by kubectl: a first one (`from`, where the watches start: they give every
 * change after it), then an added one with text and binary data, updates, a label, a delete, and an annotation, the
 * last change (`to`).
 */
function makeChanges(cluster: Cluster, ns: string): { from: string; to: string } {
  const rv = ["-o", "jsonpath={.metadata.resourceVersion}"];
  const from = resourceVersionOf(
    kubectl(cluster, ["create", "configmap", "start", "-n", ns, "--from-literal=k=v", ...rv]),
  );
  const to = changeConfigMaps((args, input) => kubectl(cluster, args, input), ns);
  return { from, to };
}

test("websocket (real kube-apiserver): watches in JSON and protobuf equal the plain HTTP watch of the same range", async () => {
  const cluster = await sharedCluster();
  const c = await connect(cluster);
  const ns = namespaceName("ws");
  try {
    kubectl(cluster, ["create", "namespace", ns]);
    const { from, to } = makeChanges(cluster, ns);
    const ref = configmaps(ns);
    const http = plain(await eventsUntil(await watch(c, ref, { resourceVersion: from }), to));
    assert.deepEqual(
      http.map((e: { type: string; object: { metadata: { name: string } } }) => `${e.type} ${e.object.metadata.name}`),
      ["ADDED a", "ADDED b", "MODIFIED a", "MODIFIED b", "DELETED a", "MODIFIED b"],
    );
    const openWebSocket = await runtimeWebSocket(tlsOf(cluster));
    const json = await eventsUntil(await webSocketWatch(c, ref, { resourceVersion: from, openWebSocket }), to);
    assert.deepEqual(plain(json), http);
    const protobuf = await eventsUntil(
      await webSocketWatch(c, ref, {
        resourceVersion: from,
        format: "protobuf",
        protobuf: { decoders: builtinDecoders },
        openWebSocket,
      }),
      to,
    );
    assert.deepEqual(plain(protobuf), http);
    // Metadata mode over WebSocket: the same metadata.
    const metadata = await eventsUntil(
      await webSocketWatch(c, ref, {
        resourceVersion: from,
        format: "protobuf",
        protobuf: { mode: "metadata" },
        openWebSocket,
      }),
      to,
    );
    assert.deepEqual(
      metadata.map((e) => JSON.parse(JSON.stringify(e.object.metadata))),
      http.map((e: { object: { metadata: unknown } }) => e.object.metadata),
    );

    if (RECORD && RUNTIME === "node") await record(cluster, c, ns, from, http);
  } finally {
    kubectl(cluster, ["delete", "namespace", ns, "--wait=false"]);
    await c.close();
    while (closers.length > 0) closers.pop()!();
  }
});

test("websocket (real kube-apiserver): a browser's handshake (the token as a subprotocol) and a client certificate", async () => {
  const cluster = await sharedCluster();
  const c = await connect(cluster);
  const byCertificate = await connect(cluster, "certificate");
  const ns = namespaceName("wsauth");
  try {
    kubectl(cluster, ["create", "namespace", ns]);
    const { from, to } = makeChanges(cluster, ns);
    const ref = configmaps(ns);
    const http = plain(await eventsUntil(await watch(c, ref, { resourceVersion: from }), to));
    const browser = await runtimeWebSocket(tlsOf(cluster), { origin: "https://console.example" });
    const viaSubprotocol = await eventsUntil(
      await webSocketWatch(c, ref, { resourceVersion: from, openWebSocket: browser }),
      to,
    );
    assert.deepEqual(plain(viaSubprotocol), http);
    assert.equal((await byCertificate.headers()).get("authorization"), null);
    const viaCertificate = await eventsUntil(
      await webSocketWatch(byCertificate, ref, {
        resourceVersion: from,
        openWebSocket: await runtimeWebSocket(tlsOf(cluster, "admin")),
      }),
      to,
    );
    assert.deepEqual(plain(viaCertificate), http);
  } finally {
    kubectl(cluster, ["delete", "namespace", ns, "--wait=false"]);
    await c.close();
    await byCertificate.close();
    while (closers.length > 0) closers.pop()!();
  }
});

test("websocket (real kube-apiserver): a refused handshake is its Status; a WebSocket without the CA says so", async () => {
  const cluster = await sharedCluster();
  const nobody = await connectCluster({
    server: cluster.server,
    caData: readFileSync(cluster.pki.ca),
    token: cluster.nobodyToken,
  });
  const admin = await connect(cluster);
  try {
    const openWebSocket = await runtimeWebSocket(tlsOf(cluster));
    const { values: [event, ...rest], error } = await within(
      drain(await webSocketWatch(nobody, configmaps("default"), { openWebSocket })),
      30_000,
    );
    assert.equal(error, undefined);
    assert.equal(rest.length, 0);
    assert.equal(event.type, "ERROR");
    const status = event.object as Status;
    assert.equal(status.code, 403);
    assert.equal(status.reason, "Forbidden");
    assert.match(status.message ?? "", /cannot watch resource "configmaps"/);

    // The runtime's own WebSocket, without the cluster's CA (Node 20 has none at all).
    const bare = webSocketOpener({ handshake: "headers" });
    await assert.rejects(
      webSocketWatch(admin, configmaps("default"), { openWebSocket: bare, timeoutSeconds: 1 }),
      (e) =>
        e instanceof ClusterAccessError &&
        (typeof WebSocket === "undefined"
          ? e.code === "UNSUPPORTED"
          : e.code === "REQUEST_FAILED" && /plain HTTP was answered 200/.test(e.message)),
    );
  } finally {
    await nobody.close();
    await admin.close();
    while (closers.length > 0) closers.pop()!();
  }
});

test("websocket (real kube-apiserver): an informer with transport websocket syncs and follows changes", async () => {
  const cluster = await sharedCluster();
  const c = await connect(cluster);
  const ns = namespaceName("wsinf");
  try {
    kubectl(cluster, ["create", "namespace", ns]);
    kubectl(cluster, ["create", "configmap", "one", "-n", ns, "--from-literal=k=v"]);
    for (const format of ["json", "protobuf"] as const) {
      const errors: unknown[] = [];
      const cms = informer(c, configmaps(ns), {
        transport: "websocket",
        openWebSocket: await runtimeWebSocket(tlsOf(cluster)),
        format,
        protobuf: { decoders: builtinDecoders },
        onError: (e) => errors.push(e),
      });
      const running = cms.start();
      await within(cms.synced, 30_000, "the informer's sync");
      assert.deepEqual(cms.store.keys(), [`${ns}/one`]);
      kubectl(cluster, ["create", "configmap", `two-${format}`, "-n", ns, "--from-literal=k=v"]);
      await within(
        (async () => {
          while (cms.store.get(`${ns}/two-${format}`) === undefined) await new Promise((r) => setTimeout(r, 50));
        })(),
        30_000,
        "the change in the store",
      );
      cms.stop();
      await running;
      kubectl(cluster, ["delete", "configmap", `two-${format}`, "-n", ns]);
      assert.deepEqual(errors, [], format);
    }
  } finally {
    kubectl(cluster, ["delete", "namespace", ns, "--wait=false"]);
    await c.close();
    while (closers.length > 0) closers.pop()!();
  }
});

/** A Worker that watches ConfigMaps over WebSocket with the default opener (in workerd: the fetch handshake). */
const WORKER = `
import { webSocketWatch } from "./src/cluster/websocket_watch.ts";
import { coreV1, createKubernetesDecoders } from "./kubernetes.ts";
const decoders = createKubernetesDecoders([coreV1]);
export default {
  async fetch(request, env) {
    const q = new URL(request.url).searchParams;
    const connection = {
      server: env.KUBE_SERVER,
      headers: async () => new Headers({ authorization: "Bearer " + env.KUBE_TOKEN }),
      fetch: (input, init) => env.KUBE.fetch(input, init),
      close: async () => {},
    };
    const ref = { version: "v1", resource: "configmaps", namespace: q.get("namespace") };
    try {
      const events = [];
      const options = { resourceVersion: q.get("from"), timeoutSeconds: 2, format: q.get("format"), protobuf: { decoders } };
      for await (const event of await webSocketWatch(connection, ref, options)) events.push(event);
      return Response.json(events);
    } catch (error) {
      return new Response(String(error), { status: 500 });
    }
  },
};`;

test("websocket (real kube-apiserver): in a Worker (workerd), the fetch handshake through a TLS service binding", async () => {
  const cluster = await sharedCluster();
  const c = await connect(cluster);
  const ns = namespaceName("wsworker");
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const built = spawnSync(
    join(root, "node_modules", ".bin", "esbuild"),
    ["--bundle", "--format=esm", "--platform=neutral", "--log-level=error", "--sourcefile=worker.ts", "--loader=ts"],
    { cwd: root, input: WORKER, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  assert.equal(built.status, 0, built.stderr);
  const worker = await startWorker({
    module: built.stdout,
    bindings: { KUBE_SERVER: cluster.server, KUBE_TOKEN: cluster.adminToken },
    httpsServices: [{
      binding: "KUBE",
      address: new URL(cluster.server).host,
      ca: readFileSync(cluster.pki.ca, "utf8"),
      certificateHost: "localhost",
    }],
  });
  try {
    kubectl(cluster, ["create", "namespace", ns]);
    const { from, to } = makeChanges(cluster, ns);
    const http = plain(await eventsUntil(await watch(c, configmaps(ns), { resourceVersion: from }), to));
    for (const format of ["json", "protobuf"]) {
      const query = new URLSearchParams({ namespace: ns, from, format });
      const response = await Promise.race([fetch(`${worker.url}/?${query}`), worker.exited]);
      const body = await response.text();
      assert.equal(response.status, 200, `${format}: ${body}\n${worker.log()}`);
      // The watch ran until the server ended it (timeoutSeconds): the same events, then nothing.
      assert.deepEqual(JSON.parse(body), http, format);
    }
  } finally {
    worker.stop();
    kubectl(cluster, ["delete", "namespace", ns, "--wait=false"]);
    await c.close();
  }
});

// ---------------------------------------------------------------------------------------------------------------
// The server's handshake, on a raw TLS socket

/**
 * One WebSocket handshake by hand: the request, the response's head, and the bytes after it (until the server closes
 * the connection, with `untilClosed`; else briefly).
 */
function rawHandshake(
  cluster: Cluster,
  path: string,
  headers: Record<string, string>,
  untilClosed = false,
): Promise<{ request: string; head: string; rest: Uint8Array }> {
  const server = new URL(cluster.server);
  const request = [
    `GET ${path} HTTP/1.1`,
    `Host: ${server.host}`,
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    "",
    "",
  ].join("\r\n");
  return within(
    new Promise((resolve, reject) => {
      const chunks: Uint8Array[] = [];
      const socket = tls.connect({
        host: server.hostname,
        port: Number(server.port),
        ca: readFileSync(cluster.pki.ca),
        ALPNProtocols: ["http/1.1"],
      }, () => socket.write(request));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = () => {
        clearTimeout(timer);
        socket.destroy();
        const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const chunk of chunks) {
          all.set(chunk, at);
          at += chunk.length;
        }
        const text = new TextDecoder("latin1").decode(all);
        const end = text.indexOf("\r\n\r\n");
        resolve({ request, head: text.slice(0, end), rest: all.subarray(end + 4) });
      };
      socket.on("data", (chunk: Uint8Array) => {
        chunks.push(new Uint8Array(chunk));
        if (!untilClosed && new TextDecoder("latin1").decode(chunks.at(-1)).includes("\r\n\r\n")) {
          timer ??= setTimeout(done, 200);
        }
      });
      socket.on("end", done);
      socket.on("close", done);
      socket.on("error", reject);
    }),
    30_000,
    `the handshake of ${path}`,
  );
}

const bearerProtocol = (token: string) =>
  "base64url.bearer.authorization.k8s.io." +
  btoa(token).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

test("websocket (real kube-apiserver): the handshake needs an Origin; a token subprotocol needs exactly one other", async () => {
  const cluster = await sharedCluster();
  const path = "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1";
  const status = (head: string) => head.split("\r\n")[0];
  const token = cluster.adminToken;
  const noOrigin = await rawHandshake(cluster, path, { Authorization: `Bearer ${token}` });
  assert.equal(status(noOrigin.head), "HTTP/1.1 403 Forbidden");
  const nullOrigin = await rawHandshake(cluster, path, { Authorization: `Bearer ${token}`, Origin: "null" });
  assert.equal(status(nullOrigin.head), "HTTP/1.1 403 Forbidden");
  const origin = { Origin: "https://console.example" };
  const alone = await rawHandshake(cluster, path, { ...origin, "Sec-WebSocket-Protocol": bearerProtocol(token) });
  assert.equal(status(alone.head), "HTTP/1.1 401 Unauthorized");
  const two = await rawHandshake(cluster, path, {
    ...origin,
    "Sec-WebSocket-Protocol": `${bearerProtocol(token)}, v4.channel.k8s.io, v5.channel.k8s.io`,
  });
  assert.equal(status(two.head), "HTTP/1.1 400 Bad Request");
  const one = await rawHandshake(cluster, path, {
    ...origin,
    "Sec-WebSocket-Protocol": `${bearerProtocol(token)}, v4.channel.k8s.io`,
  });
  assert.equal(status(one.head), "HTTP/1.1 101 Switching Protocols");
  assert.match(one.head, /\r\nSec-WebSocket-Protocol: v4\.channel\.k8s\.io(\r\n|$)/);
});

// ---------------------------------------------------------------------------------------------------------------
// Fixtures

/**
 * Writes the fixtures: each format's server bytes after the 101 and its handshake, and the body of the plain HTTP watch
 * of the same range as the server sent it (its transfer coding removed), which must parse to the events `http` has.
 */
async function record(
  cluster: Cluster,
  c: ClusterConnection,
  ns: string,
  from: string,
  http: unknown[],
): Promise<void> {
  mkdirSync(FIXTURES, { recursive: true });
  // The server ends each watch after timeoutSeconds (over WebSocket with a close frame): every event since `from` is
  // sent before.
  const path = `${resourcePath(configmaps(ns))}?watch=true&resourceVersion=${from}&timeoutSeconds=3`;
  for (
    const [name, accept] of [
      ["configmaps-json", "application/json"],
      ["configmaps-protobuf", "application/vnd.kubernetes.protobuf"],
    ] as const
  ) {
    const { request, head, rest } = await rawHandshake(cluster, path, {
      Authorization: `Bearer ${cluster.adminToken}`,
      Origin: "https://watchwire.test",
      Accept: accept,
    }, true);
    assert.match(head, /^HTTP\/1\.1 101 /);
    writeFileSync(`${FIXTURES}${name}.s2c.bin`, rest);
    writeFileSync(`${FIXTURES}${name}.handshake.txt`, `${request}${head}\r\n\r\n`);
  }
  const headers = await c.headers();
  headers.set("accept", "application/json");
  const response = await c.fetch(new URL(path, c.server), { headers });
  assert.equal(response.status, 200);
  const body = new Uint8Array(await response.arrayBuffer());
  const lines = new TextDecoder().decode(body).trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(lines, http);
  writeFileSync(`${FIXTURES}configmaps-http.body.ndjson`, body);
}
