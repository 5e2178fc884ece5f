/**
 * decodeHttp1Exchanges: both directions of HTTP/1.1 connections, from hand-written bytes (the rules one by one) and
 * from real node:http clients and servers recorded by a loopback proxy (HEAD, a watch, request bodies, CONNECT and
 * Upgrade).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import http from "node:http";
import fc from "fast-check";
import { DecodeError, decodeWatchResponse } from "../mod.ts";
import { decodeHttp1Exchanges, type Http1Exchange, Http1ResponseDecoderStream } from "../capture.ts";
import { bytewise, cutsFor, drain, errorKey, splitAt, streamOf, text, utf8 } from "./_util.ts";
import { startRecordingProxy } from "./peers/recording_proxy.ts";

interface ExchangeSummary {
  request: string | undefined;
  status: number;
  framing: string;
  body: string;
}

/** Decodes both directions, reading each response body in turn, into comparable summaries. */
function summarize(s2c: ReadableStream<Uint8Array>, c2s?: ReadableStream<Uint8Array>): ReadableStream<ExchangeSummary> {
  return decodeHttp1Exchanges(s2c, c2s).pipeThrough(
    new TransformStream<Http1Exchange, ExchangeSummary>({
      async transform({ request, response }, controller) {
        const { values, error } = await drain(response.body);
        if (error !== undefined) throw error;
        controller.enqueue({
          request: request === undefined ? undefined : `${request.method} ${request.target}`,
          status: response.status,
          framing: response.framing,
          body: text(values),
        });
      },
    }),
  );
}

const headThenGet = {
  c2s: "HEAD /api/v1/pods HTTP/1.1\r\nHost: k\r\n\r\nGET /api/v1/pods HTTP/1.1\r\nHost: k\r\n\r\n",
  s2c: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n" +
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n" + '{"items":[]}\n',
};

test("http1 exchanges: a response to HEAD has no body whatever its Content-Length says", async () => {
  const { values, error } = await drain(
    summarize(streamOf([utf8(headThenGet.s2c)]), streamOf([utf8(headThenGet.c2s)])),
  );
  assert.equal(error, undefined);
  assert.deepEqual(values, [
    { request: "HEAD /api/v1/pods", status: 200, framing: "none", body: "" },
    { request: "GET /api/v1/pods", status: 200, framing: "content-length", body: '{"items":[]}\n' },
  ]);
  // Without the requests the next response's head is taken as the body: why the client's bytes matter.
  const alone = await drain(summarize(streamOf([utf8(headThenGet.s2c)])));
  assert.equal(alone.values[0].body, "HTTP/1.1 200 ");
  assert.ok(alone.error instanceof DecodeError);
});

test("http1 exchanges: toResponse of a HEAD response has a null body", async () => {
  const { values } = await drain(
    decodeHttp1Exchanges(streamOf([utf8(headThenGet.s2c)]), streamOf([utf8(headThenGet.c2s)])),
  );
  const head = values[0].response.toResponse();
  assert.equal(head.body, null);
  assert.equal(head.headers.get("content-length"), "13");
  assert.deepEqual(await values[1].response.toResponse().json(), { items: [] });
});

const connectAndUpgrade = {
  c2s: "CONNECT proxy.test:443 HTTP/1.1\r\nHost: proxy.test:443\r\n\r\n" +
    "GET /after-refusal HTTP/1.1\r\nHost: k\r\n\r\n" +
    "CONNECT api.test:443 HTTP/1.1\r\nHost: api.test:443\r\n\r\n" + "client tunnel bytes",
  s2c: "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 6\r\n\r\ndenied" +
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" +
    "HTTP/1.1 200 Connection Established\r\n\r\n" + "server tunnel bytes",
};

test("http1 exchanges: a 2xx to CONNECT starts a tunnel; a refused CONNECT leaves HTTP/1.1 going on both sides", async () => {
  const s2c = utf8(connectAndUpgrade.s2c);
  const c2s = utf8(connectAndUpgrade.c2s);
  for (const [server, client] of [[[s2c], [c2s]], [bytewise(s2c), bytewise(c2s)]]) {
    const { values, error } = await drain(summarize(streamOf(server), streamOf(client)));
    assert.equal(error, undefined);
    assert.deepEqual(values, [
      { request: "CONNECT proxy.test:443", status: 407, framing: "content-length", body: "denied" },
      { request: "GET /after-refusal", status: 200, framing: "content-length", body: "ok" },
      { request: "CONNECT api.test:443", status: 200, framing: "upgrade", body: "server tunnel bytes" },
    ]);
  }
});

test("http1 exchanges: 100 Continue and 101 Switching Protocols pair with their requests", async () => {
  const c2s = "POST /upload HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc" +
    "GET /chat HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x05hello";
  const s2c = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n" +
    "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x02hi";
  const { values, error } = await drain(summarize(streamOf([utf8(s2c)]), streamOf([utf8(c2s)])));
  assert.equal(error, undefined);
  assert.deepEqual(values, [
    { request: "POST /upload", status: 100, framing: "none", body: "" },
    { request: "POST /upload", status: 201, framing: "content-length", body: "" },
    { request: "GET /chat", status: 101, framing: "upgrade", body: "\x81\x02hi" },
  ]);
  const exchanges = await drain(decodeHttp1Exchanges(streamOf([utf8(s2c)]), streamOf([utf8(c2s)])));
  assert.deepEqual(exchanges.values.map((e) => [e.response.index, e.response.requestIndex, e.request?.index]), [
    [0, 0, 0],
    [1, 0, 0],
    [2, 1, 1],
  ]);
  for (const e of exchanges.values) await e.response.body.cancel();
});

test("http1 exchanges: pipelined requests, and responses beyond the captured requests", async () => {
  const c2s = "GET /a HTTP/1.1\r\n\r\nHEAD /b HTTP/1.1\r\n\r\n"; // a third request was not captured
  const s2c = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na" + "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n" +
    "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nc";
  const { values, error } = await drain(summarize(streamOf([utf8(s2c)]), streamOf([utf8(c2s)])));
  assert.equal(error, undefined);
  assert.deepEqual(values, [
    { request: "GET /a", status: 200, framing: "content-length", body: "a" },
    { request: "HEAD /b", status: 200, framing: "none", body: "" },
    { request: undefined, status: 200, framing: "content-length", body: "c" },
  ]);
});

/** Reads exchanges one at a time (each body in full before the next), so nothing read is lost to a later fault. */
async function readInTurn(exchanges: ReadableStream<Http1Exchange>): Promise<{ bodies: string[]; error: unknown }> {
  const bodies: string[] = [];
  try {
    for await (const { response } of exchanges) bodies.push(await new Response(response.body).text());
  } catch (error) {
    return { bodies, error };
  }
  return { bodies, error: undefined };
}

test("http1 exchanges: a fault in the client's bytes fails the result after the exchanges before it, marked as theirs", async () => {
  const c2s = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/9.9\r\n\r\n";
  const s2c = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na" + "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb";
  const { bodies, error } = await readInTurn(decodeHttp1Exchanges(streamOf([utf8(s2c)]), streamOf([utf8(c2s)])));
  assert.deepEqual(bodies, ["a"]);
  assert.ok(error instanceof DecodeError);
  assert.equal(error.code, "REQUEST_LINE_INVALID");
  assert.equal(error.offset, c2s.indexOf("9.9"));
  assert.equal(error.context, "client-to-server bytes: head of request 2");
  // Past the last response, a client fault still fails the result.
  const late = await readInTurn(
    decodeHttp1Exchanges(streamOf([utf8(s2c.slice(0, s2c.indexOf("HTTP", 1)))]), streamOf([utf8(c2s)])),
  );
  assert.deepEqual(late.bodies, ["a"]);
  assert.equal((late.error as DecodeError).code, "REQUEST_LINE_INVALID");
});

test("http1 exchanges: split invariance, each direction cut independently, down to single bytes", async () => {
  const cases = [headThenGet, connectAndUpgrade].map(({ s2c, c2s }) => ({ s2c: utf8(s2c), c2s: utf8(c2s) }));
  for (const { s2c, c2s } of cases) {
    const key = async (server: Uint8Array[], client: Uint8Array[]) => {
      const { values, error } = await drain(summarize(streamOf(server), streamOf(client)));
      return JSON.stringify({ values, error: errorKey(error) });
    };
    const expected = await key([s2c], [c2s]);
    assert.equal(await key(bytewise(s2c), bytewise(c2s)), expected);
    await fc.assert(
      fc.asyncProperty(cutsFor(s2c.length), cutsFor(c2s.length), async (a, b) => {
        assert.equal(await key(splitAt(s2c, a), splitAt(c2s, b)), expected);
      }),
      { numRuns: 60 },
    );
  }
});

// --- Real peers: node:http's server and client, recorded by the loopback proxy. ---

const WATCH_LINES = [
  { type: "ADDED", object: { kind: "Pod", apiVersion: "v1", metadata: { name: "a", resourceVersion: "1" } } },
  { type: "MODIFIED", object: { kind: "Pod", apiVersion: "v1", metadata: { name: "a", resourceVersion: "2" } } },
].map((e) => JSON.stringify(e) + "\n");

/** A node:http server: HEAD and GET of a list, a chunked watch, an echo of request bodies, CONNECT and Upgrade. */
async function startServer(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer(async (request, response) => {
    if (request.method === "POST") {
      const parts: Uint8Array[] = [];
      for await (const part of request) parts.push(part);
      response.writeHead(201, { "content-type": "application/json" });
      response.end(`{"received":${JSON.stringify(text(parts))}}`);
      return;
    }
    if (request.url?.includes("watch=1")) {
      response.writeHead(200, { "content-type": "application/json" }); // no length: chunked
      for (const line of WATCH_LINES) response.write(line);
      response.end();
      return;
    }
    const list = '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}';
    // HEAD: node:http sends the head with this Content-Length and no body.
    response.writeHead(200, { "content-type": "application/json", "content-length": String(list.length) });
    response.end(list);
  });
  server.on("connect", (_request, socket) => {
    socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    socket.on("data", (data: Uint8Array) => socket.end(`tunnel echo: ${text(data)}`));
  });
  server.on("upgrade", (_request, socket) => {
    socket.write("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n");
    socket.on("data", (data: Uint8Array) => socket.end(`upgraded echo: ${text(data)}`));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function send(agent: http.Agent, port: number, method: string, path: string, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port, method, path, agent }, async (response) => {
      const parts: Uint8Array[] = [];
      for await (const part of response) parts.push(part);
      resolve(text(parts));
    });
    request.on("error", reject);
    if (body !== undefined) request.write(body); // no Content-Length set: node:http sends it chunked
    request.end();
  });
}

/** Opens a CONNECT tunnel or an Upgrade, sends `payload` through it and returns what came back. */
function switchProtocols(port: number, kind: "CONNECT" | "Upgrade", payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      kind === "CONNECT"
        ? { host: "127.0.0.1", port, method: "CONNECT", path: "watch.test:443" }
        : { host: "127.0.0.1", port, path: "/stream", headers: { connection: "Upgrade", upgrade: "echo" } },
    );
    request.on("error", reject);
    request.on(kind === "CONNECT" ? "connect" : "upgrade", (_response, socket, head: Uint8Array) => {
      const parts: Uint8Array[] = head.length > 0 ? [head] : [];
      socket.on("data", (data: Uint8Array) => parts.push(data));
      socket.on("end", () => {
        socket.end();
        resolve(text(parts));
      });
      socket.write(payload);
    });
    request.end();
  });
}

test("http1 exchanges: a node:http client and server (HEAD, a watch, a chunked POST, CONNECT, Upgrade) recorded and decoded", async () => {
  const server = await startServer();
  const proxy = await startRecordingProxy(server.port);
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const received = [
      await send(agent, proxy.port, "HEAD", "/api/v1/pods"),
      await send(agent, proxy.port, "GET", "/api/v1/pods?watch=1"),
      await send(agent, proxy.port, "POST", "/api/v1/namespaces/default/configmaps", '{"kind":"ConfigMap"}'),
      await send(agent, proxy.port, "GET", "/api/v1/pods"),
    ];
    agent.destroy();
    assert.deepEqual(received.slice(0, 3), ["", WATCH_LINES.join(""), '{"received":"{\\"kind\\":\\"ConfigMap\\"}"}']);
    assert.equal(await switchProtocols(proxy.port, "CONNECT", "ping"), "tunnel echo: ping");
    assert.equal(await switchProtocols(proxy.port, "Upgrade", "ping"), "upgraded echo: ping");
    await new Promise((resolve) => setTimeout(resolve, 50)); // let the proxy see every byte
    const [keepAlive, connect, upgrade] = proxy.connections();

    // The keep-alive connection, cut at random as well as whole.
    const s2c = keepAlive.serverToClient;
    const c2s = keepAlive.clientToServer;
    const expected = [
      { request: "HEAD /api/v1/pods", status: 200, framing: "none", body: "" },
      { request: "GET /api/v1/pods?watch=1", status: 200, framing: "chunked", body: WATCH_LINES.join("") },
      {
        request: "POST /api/v1/namespaces/default/configmaps",
        status: 201,
        framing: "chunked",
        body: received[2],
      },
      { request: "GET /api/v1/pods", status: 200, framing: "content-length", body: received[3] },
    ];
    assert.deepEqual((await drain(summarize(streamOf([s2c]), streamOf([c2s])))).values, expected);
    await fc.assert(
      fc.asyncProperty(cutsFor(s2c.length), cutsFor(c2s.length), async (a, b) => {
        const { values, error } = await drain(summarize(streamOf(splitAt(s2c, a)), streamOf(splitAt(c2s, b))));
        assert.equal(error, undefined);
        assert.deepEqual(values, expected);
      }),
      { numRuns: 25 },
    );
    // The watch decodes from its exchange; the POST's body was sent chunked by the client.
    const exchanges = (await drain(decodeHttp1Exchanges(streamOf([s2c]), streamOf([c2s])))).values;
    const watched = await drain(decodeWatchResponse(exchanges[1].response.toResponse()));
    assert.deepEqual(watched.values.map((e) => e.type), ["ADDED", "MODIFIED"]);
    assert.equal(exchanges[2].request?.framing, "chunked");
    for (const e of exchanges) await e.response.body.cancel().catch(() => {});
    // Without the client's bytes the HEAD response's Content-Length would swallow the next response.
    const alone = await drain(streamOf([s2c]).pipeThrough(new Http1ResponseDecoderStream()));
    assert.equal(alone.values[0].framing, "content-length");

    // CONNECT and Upgrade: the tunnels' bytes follow each head.
    for (
      const [connection, request, framing, body] of [
        [connect, "CONNECT watch.test:443", "upgrade", "tunnel echo: ping"],
        [upgrade, "GET /stream", "upgrade", "upgraded echo: ping"],
      ] as const
    ) {
      const { values, error } = await drain(
        summarize(streamOf([connection.serverToClient]), streamOf([connection.clientToServer])),
      );
      assert.equal(error, undefined);
      assert.deepEqual(values.map((v) => [v.request, v.framing, v.body]), [[request, framing, body]]);
    }
  } finally {
    await proxy.close();
    await server.close();
  }
});

// --- A model of connections: random request/response sequences, written out and read back under random cuts. ---

type Step = {
  method: "GET" | "HEAD" | "POST" | "CONNECT" | "UPGRADE";
  requestBody: "none" | "length" | "chunked";
  continue100: boolean;
  status: number;
  responseBody: "length" | "chunked" | "none";
  text: string;
};

const step: fc.Arbitrary<Step> = fc.record({
  method: fc.constantFrom("GET", "HEAD", "POST", "CONNECT", "UPGRADE"),
  requestBody: fc.constantFrom("none", "length", "chunked"),
  continue100: fc.boolean(),
  status: fc.constantFrom(200, 201, 204, 304, 404, 407),
  responseBody: fc.constantFrom("length", "chunked", "none"),
  text: fc.string({ maxLength: 12 }).map((s) => s.replace(/[^\x20-\x7e]/g, "?")),
});

const chunked = (body: string) => (body === "" ? "" : `${utf8(body).length.toString(16)}\r\n${body}\r\n`) + "0\r\n\r\n";

/** The bytes of a connection in the model, and the exchanges a decoder must find in them. */
function writeConnection(steps: Step[], last: "none" | "connect" | "upgrade") {
  let c2s = "";
  let s2c = "";
  const expected: ExchangeSummary[] = [];
  steps.forEach((s, i) => {
    const target = s.method === "CONNECT" ? `host${i}:443` : `/r${i}`;
    const method = s.method === "UPGRADE" ? "GET" : s.method;
    const upgrade = s.method === "UPGRADE" ? "Connection: upgrade\r\nUpgrade: websocket\r\n" : "";
    const requestBody = `req${i}`;
    c2s += `${method} ${target} HTTP/1.1\r\nHost: k\r\n${upgrade}`;
    if (s.requestBody === "length") c2s += `Content-Length: ${requestBody.length}\r\n\r\n${requestBody}`;
    else if (s.requestBody === "chunked") c2s += `Transfer-Encoding: chunked\r\n\r\n${chunked(requestBody)}`;
    else c2s += "\r\n";
    const request = `${method} ${target}`;
    if (s.continue100) {
      s2c += "HTTP/1.1 100 Continue\r\n\r\n";
      expected.push({ request, status: 100, framing: "none", body: "" });
    }
    // Refused CONNECTs and Upgrades only: a 2xx to CONNECT would start a tunnel (the `last` step's business).
    const status = s.method === "CONNECT" && s.status < 300 ? 407 : s.status;
    const bodiless = method === "HEAD" || status === 204 || status === 304;
    const body = bodiless || s.responseBody === "none" ? "" : s.text;
    s2c += `HTTP/1.1 ${status} X\r\n`;
    let framing: string = s.responseBody === "chunked" ? "chunked" : "content-length";
    if (s.responseBody === "chunked") {
      s2c += "Transfer-Encoding: chunked\r\n\r\n" + (bodiless ? "" : chunked(body));
    } else {
      // A HEAD response's Content-Length is the GET's length: the bytes do not follow.
      s2c += `Content-Length: ${utf8(s.responseBody === "none" ? "" : s.text).length}\r\n\r\n` + (bodiless ? "" : body);
    }
    if (bodiless) framing = "none";
    expected.push({ request, status, framing, body });
  });
  if (last === "connect") {
    c2s += "CONNECT end:443 HTTP/1.1\r\nHost: end:443\r\n\r\nCLIENT TUNNEL GET / HTTP/1.1\r\n\r\n";
    s2c += "HTTP/1.1 200 Connection Established\r\n\r\nSERVER TUNNEL HTTP/1.1 200 OK\r\n\r\n";
    expected.push({
      request: "CONNECT end:443",
      status: 200,
      framing: "upgrade",
      body: "SERVER TUNNEL HTTP/1.1 200 OK\r\n\r\n",
    });
  } else if (last === "upgrade") {
    c2s += "GET /ws HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x02hi";
    s2c += "HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x02ok";
    expected.push({ request: "GET /ws", status: 101, framing: "upgrade", body: "\x81\x02ok" });
  }
  return { c2s: utf8(c2s), s2c: utf8(s2c), expected };
}

test("http1 exchanges: random connections (GET, HEAD, bodies, 100 Continue, refused and accepted CONNECT and Upgrade) under random cuts", async () => {
  const connection = fc.record({
    steps: fc.array(step, { maxLength: 8 }),
    last: fc.constantFrom("none" as const, "connect" as const, "upgrade" as const),
  }).chain(({ steps, last }) => {
    const { c2s, s2c, expected } = writeConnection(steps, last);
    return fc.record({
      c2s: fc.constant(c2s),
      s2c: fc.constant(s2c),
      expected: fc.constant(expected),
      c2sCuts: cutsFor(c2s.length),
      s2cCuts: cutsFor(s2c.length),
    });
  });
  await fc.assert(
    fc.asyncProperty(connection, async ({ c2s, s2c, expected, c2sCuts, s2cCuts }) => {
      const { values, error } = await drain(
        summarize(streamOf(splitAt(s2c, s2cCuts)), streamOf(splitAt(c2s, c2sCuts))),
      );
      assert.equal(error, undefined);
      assert.deepEqual(values, expected);
    }),
    { numRuns: 150 },
  );
});

test("http1 exchanges: this runtime's fetch (HEAD, then a GET watch) recorded through the proxy and decoded", async () => {
  const server = await startServer();
  const proxy = await startRecordingProxy(server.port);
  try {
    const base = `http://127.0.0.1:${proxy.port}`;
    const head = await fetch(`${base}/api/v1/pods`, { method: "HEAD" });
    assert.equal(head.status, 200);
    await head.body?.cancel();
    const watch = await fetch(`${base}/api/v1/pods?watch=1`);
    assert.equal(await watch.text(), WATCH_LINES.join(""));
    await new Promise((resolve) => setTimeout(resolve, 50)); // let the proxy see every byte
    // Deno's and Bun's fetch send both on one keep-alive connection (Node's, here, opens a second).
    const found: string[] = [];
    for (const connection of proxy.connections()) {
      const exchanges = decodeHttp1Exchanges(
        streamOf([connection.serverToClient]),
        streamOf([connection.clientToServer]),
      );
      for await (const { request, response } of exchanges) {
        const body = await new Response(response.body).text();
        found.push(`${request?.method} ${request?.target} ${response.status} ${response.framing} ${body.length}`);
        if (request?.method === "GET") {
          const events = await drain(
            decodeWatchResponse(new Response(body, { headers: { "content-type": "application/json" } })),
          );
          assert.deepEqual(events.values.map((e) => e.type), ["ADDED", "MODIFIED"]);
        }
      }
    }
    assert.deepEqual(found, [
      "HEAD /api/v1/pods 200 none 0",
      `GET /api/v1/pods?watch=1 200 chunked ${WATCH_LINES.join("").length}`,
    ]);
  } finally {
    await proxy.close();
    await server.close();
  }
});

test("http1 exchanges: Go net/http's HEAD responses on a keep-alive connection (fixtures/go-http1-head.*)", async () => {
  const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/${name}`, import.meta.url)));
  const s2c = fixture("go-http1-head.s2c.bin");
  const c2s = fixture("go-http1-head.c2s.bin");
  const list = '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[]}';
  const expected = [
    { request: "HEAD /api/v1/namespaces/default/pods", status: 200, framing: "none", body: "" },
    { request: "GET /api/v1/namespaces/default/pods", status: 200, framing: "content-length", body: list },
    { request: "HEAD /api/v1/namespaces/default/pods?watch=1", status: 200, framing: "none", body: "" },
  ];
  const { values, error } = await drain(summarize(streamOf([s2c]), streamOf([c2s])));
  assert.equal(error, undefined);
  assert.deepEqual(values.slice(0, 3), expected);
  assert.equal(values.length, 4);
  assert.equal(values[3].framing, "chunked");
  const events = await drain(
    decodeWatchResponse(new Response(values[3].body, { headers: { "content-type": "application/json" } })),
  );
  assert.deepEqual(events.values.map((e) => e.type === "ADDED" && e.object.metadata?.name), [
    "web-0",
    "web-1",
    "web-2",
  ]);
  // Split invariance of both directions.
  const key = JSON.stringify(values);
  await fc.assert(
    fc.asyncProperty(cutsFor(s2c.length), cutsFor(c2s.length), async (a, b) => {
      const got = await drain(summarize(streamOf(splitAt(s2c, a)), streamOf(splitAt(c2s, b))));
      assert.equal(got.error, undefined);
      assert.equal(JSON.stringify(got.values), key);
    }),
    { numRuns: 40 },
  );
  // The server's bytes alone: the first HEAD response's Content-Length takes in the head of the next response.
  const alone = await drain(summarize(streamOf([s2c])));
  assert.notDeepEqual(alone.values.slice(0, 3), expected);
  assert.ok(alone.values[0].body.startsWith("HTTP/1.1 200 OK"));
});
