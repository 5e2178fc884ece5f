/**
 * Watches served by real HTTP servers (node:http everywhere, Deno.serve under Deno, Bun.serve under Bun) over
 * loopback: decoded from the runtime's own `fetch`, and from the raw bytes a recording proxy saw on the wire
 * (Http1ResponseDecoderStream then decodeWatchResponse), including split invariance of such captures.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeWatchResponse, decodeWatchResponseBatches, type WatchEvent } from "../mod.ts";
import { Http1ResponseDecoderStream } from "../capture.ts";
import fc from "fast-check";
import { bytewise, cutsFor, drain, splitAt, streamOf, text } from "./_util.ts";
import { bunServeAvailable, startBunServer } from "./peers/bun_server.ts";
import { type CapturedEvent, decodeCaptureBytes } from "./peers/decode_capture.ts";
import { denoServeAvailable, startDenoServer } from "./peers/deno_server.ts";
import { collectionPath, startNodeHttpServer, type WatchServer } from "./peers/node_http_server.ts";
import { getRequest, rawRequests } from "./peers/raw_http_client.ts";
import { type RecordingProxy, startRecordingProxy } from "./peers/recording_proxy.ts";
import { expiredStatus, listOf, NON_ASCII_TEXT, watchEvents, type WatchResource } from "./peers/watch_events.ts";

interface Peer {
  name: string;
  start(): Promise<WatchServer>;
}

const peers: Peer[] = [{ name: "node:http", start: startNodeHttpServer }];
if (denoServeAvailable()) peers.push({ name: "Deno.serve", start: startDenoServer });
if (bunServeAvailable()) peers.push({ name: "Bun.serve", start: startBunServer });

const PODS = collectionPath("pods");
const CONFIGMAPS = collectionPath("configmaps");
const TIME_LIMIT_MS = 8000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `body` with a started server, within a time limit, and closes the server however it ends. */
async function withServer<T>(
  peer: Peer,
  body: (server: WatchServer) => Promise<T>,
): Promise<T> {
  const server = await peer.start();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${peer.name}: no result after ${TIME_LIMIT_MS} ms`)), TIME_LIMIT_MS);
    });
    return await Promise.race([body(server), deadline]);
  } finally {
    clearTimeout(timer);
    await server.close();
  }
}

/** Runs `body` with a recording proxy in front of `server`, and closes the proxy however it ends. */
async function withProxy<T>(server: WatchServer, body: (proxy: RecordingProxy) => Promise<T>): Promise<T> {
  const proxy = await startRecordingProxy(server.port);
  try {
    return await body(proxy);
  } finally {
    await proxy.close();
  }
}

async function watchViaFetch(url: string, init?: RequestInit): Promise<WatchEvent[]> {
  const response = await fetch(url, init);
  assert.equal(response.status, 200);
  const { values, error } = await drain(decodeWatchResponse(response));
  assert.equal(error, undefined);
  return values;
}

/** The capture events expected for watches of `resources`, one response each, in order. */
function expectedCapture(resources: WatchResource[], status = 200): CapturedEvent[] {
  return resources.flatMap((resource, response) => watchEvents(resource).map((event) => ({ response, status, event })));
}

const gzipPath = `${PODS}?watch=1&gzip=1`;

test("watch_events: realistic, deterministic, with non-ASCII text, a ~40 KB event and every event type", () => {
  const pods = watchEvents("pods");
  assert.deepEqual(pods, watchEvents("pods"));
  const all = [...pods, ...watchEvents("configmaps")];
  const types = new Set(all.map((e) => e.type));
  assert.deepEqual([...types].sort(), ["ADDED", "BOOKMARK", "DELETED", "ERROR", "MODIFIED"]);
  const lines = all.map((e) => JSON.stringify(e));
  assert.ok(lines.some((l) => l.includes(NON_ASCII_TEXT)));
  assert.ok(lines.some((l) => new TextEncoder().encode(l).length >= 40 * 1024));
  assert.ok(
    pods.some((e) => e.type === "BOOKMARK" && e.object.metadata.annotations?.["k8s.io/initial-events-end"] === "true"),
  );
  assert.deepEqual(pods[pods.length - 1], { type: "ERROR", object: expiredStatus() });
});

for (const peer of peers) {
  test(`${peer.name}: the runtime's fetch, then decodeWatchResponse, gives the generated events`, async () => {
    await withServer(peer, async (server) => {
      assert.deepEqual(await watchViaFetch(`${server.url}${PODS}?watch=1`), watchEvents("pods"));
      assert.deepEqual(await watchViaFetch(`${server.url}${CONFIGMAPS}?watch=1`), watchEvents("configmaps"));
    });
  });

  test(`${peer.name}: the runtime's fetch, then decodeWatchResponseBatches, gives the same events in batches`, async () => {
    await withServer(peer, async (server) => {
      for (const resource of ["pods", "configmaps"] as const) {
        const response = await fetch(`${server.url}${collectionPath(resource)}?watch=1`);
        const { values, error } = await drain(decodeWatchResponseBatches(response));
        assert.equal(error, undefined);
        assert.ok(values.every((batch) => batch.length > 0), "no empty batch");
        assert.deepEqual(values.flat(), watchEvents(resource));
      }
    });
  });

  test(`${peer.name}: two keep-alive fetches through the recording proxy; the captured bytes decode to the same events`, async () => {
    await withServer(peer, (server) =>
      withProxy(server, async (proxy) => {
        const base = `http://127.0.0.1:${proxy.port}`;
        const init = { headers: { Connection: "keep-alive" } };
        assert.deepEqual(await watchViaFetch(`${base}${PODS}?watch=1`, init), watchEvents("pods"));
        await sleep(10); // lets the runtime put the connection back in its pool
        assert.deepEqual(await watchViaFetch(`${base}${CONFIGMAPS}?watch=1`, init), watchEvents("configmaps"));
        const connections = proxy.connections();
        // Every runtime here reuses the connection; if one ever does not, each connection is a capture of its own.
        assert.ok(connections.length === 1 || connections.length === 2, `${connections.length} connections`);
        const requests = text(proxy.clientToServer()).match(/^GET [^ ]+ HTTP\/1\.1\r$/gm);
        assert.deepEqual(requests, [`GET ${PODS}?watch=1 HTTP/1.1\r`, `GET ${CONFIGMAPS}?watch=1 HTTP/1.1\r`]);
        const events: WatchEvent[] = [];
        for (const connection of connections) {
          for (const e of await decodeCaptureBytes([connection.serverToClient])) {
            assert.equal(e.status, 200);
            events.push(e.event);
          }
        }
        assert.deepEqual(events, [...watchEvents("pods"), ...watchEvents("configmaps")]);
        if (connections.length === 1) {
          assert.deepEqual(await decodeCaptureBytes([proxy.serverToClient()]), expectedCapture(["pods", "configmaps"]));
        }
      }));
  });

  test(`${peer.name}: raw client, two GETs on one socket through the proxy; capture framing and events`, async () => {
    await withServer(peer, (server) =>
      withProxy(server, async (proxy) => {
        const received = await rawRequests(proxy.port, [
          getRequest(`${PODS}?watch=1`),
          getRequest(`${CONFIGMAPS}?watch=1`, { close: true }),
        ]);
        assert.equal(proxy.connections().length, 1);
        const capture = proxy.serverToClient();
        assert.deepEqual(capture, received);
        const heads: Array<{ status: number; framing: string }> = [];
        const responses = streamOf([capture]).pipeThrough(new Http1ResponseDecoderStream()).getReader();
        for (;;) {
          const r = await responses.read();
          if (r.done) break;
          heads.push({ status: r.value.status, framing: r.value.framing });
          await r.value.body.cancel();
        }
        assert.deepEqual(heads, [{ status: 200, framing: "chunked" }, { status: 200, framing: "chunked" }]);
        assert.deepEqual(await decodeCaptureBytes([capture]), expectedCapture(["pods", "configmaps"]));
      }));
  });

  test(`${peer.name}: a 410 response becomes a single ERROR event with code 410 (fetch and capture)`, async () => {
    await withServer(peer, async (server) => {
      const target = `${PODS}?watch=1&resourceVersion=1&expired=1`;
      const response = await fetch(`${server.url}${target}`);
      assert.equal(response.status, 410);
      const { values, error } = await drain(decodeWatchResponse(response));
      assert.equal(error, undefined);
      assert.deepEqual(values, [{ type: "ERROR", object: expiredStatus() }]);
      assert.equal(values[0].type === "ERROR" && values[0].object.code, 410);
      await withProxy(server, async (proxy) => {
        await rawRequests(proxy.port, [getRequest(target, { close: true })]);
        assert.deepEqual(await decodeCaptureBytes([proxy.serverToClient()]), [
          { response: 0, status: 410, event: { type: "ERROR", object: expiredStatus() } },
        ]);
      });
    });
  });

  test(`${peer.name}: a list response (Content-Length framing) through the proxy`, async () => {
    await withServer(peer, (server) =>
      withProxy(server, async (proxy) => {
        await rawRequests(proxy.port, [getRequest(PODS), getRequest(PODS, { close: true })]);
        const responses = streamOf([proxy.serverToClient()]).pipeThrough(new Http1ResponseDecoderStream()).getReader();
        let count = 0;
        for (;;) {
          const r = await responses.read();
          if (r.done) break;
          assert.equal(r.value.framing, "content-length");
          assert.deepEqual(await r.value.toResponse().json(), listOf("pods"));
          count++;
        }
        assert.equal(count, 2);
      }));
  });
}

test("node:http gzip: the runtime's fetch and the captured bytes (Content-Encoding: gzip) give the same events", async () => {
  const peer = peers[0];
  await withServer(peer, async (server) => {
    assert.deepEqual(await watchViaFetch(`${server.url}${gzipPath}`), watchEvents("pods"));
    await withProxy(server, async (proxy) => {
      await rawRequests(proxy.port, [
        getRequest(gzipPath),
        getRequest(`${CONFIGMAPS}?watch=1&gzip=1`, { close: true }),
      ]);
      const capture = proxy.serverToClient();
      const responses = streamOf([capture]).pipeThrough(new Http1ResponseDecoderStream()).getReader();
      const decoded: Array<string | undefined> = [];
      for (;;) {
        const r = await responses.read();
        if (r.done) break;
        decoded.push(r.value.decoded);
        assert.equal(r.value.toResponse().headers.get("content-encoding"), null);
        await r.value.body.cancel();
      }
      assert.deepEqual(decoded, ["gzip", "gzip"]);
      assert.deepEqual(await decodeCaptureBytes([capture]), expectedCapture(["pods", "configmaps"]));
    });
  });
});

/** Records the raw-client capture of `requests` from the node:http server. */
async function recordNodeCapture(requests: string[]): Promise<Uint8Array> {
  return await withServer(peers[0], (server) =>
    withProxy(server, async (proxy) => {
      await rawRequests(proxy.port, requests);
      return proxy.serverToClient();
    }));
}

/**
 * Split invariance of the whole capture pipeline: the capture whole, byte by byte (when `bytewise`), at a few random
 * sets of cut points (fast-check, fixed seed) and in dense pseudo-random pieces of 1 to 24 bytes all give `expected`.
 * (Byte by byte costs a few promises per byte, and node:test's async tracking makes that ~60 µs a byte under Node:
 * it is used on the smaller captures only.)
 */
async function assertCaptureSplitInvariant(
  capture: Uint8Array,
  expected: CapturedEvent[],
  options: { bytewise: boolean },
): Promise<void> {
  assert.deepEqual(await decodeCaptureBytes([capture.slice()]), expected, "whole");
  if (options.bytewise) assert.deepEqual(await decodeCaptureBytes(bytewise(capture)), expected, "byte by byte");
  for (const cuts of fc.sample(cutsFor(capture.length), { numRuns: 4, seed: 20250115 })) {
    assert.deepEqual(await decodeCaptureBytes(splitAt(capture, cuts)), expected, `cuts ${cuts}`);
  }
  const dense: number[] = [];
  for (let at = 0, step = 1; at < capture.length; step = (step * 7 + 3) % 24 + 1) dense.push(at += step);
  assert.deepEqual(await decodeCaptureBytes(splitAt(capture, dense)), expected, "dense pieces");
}

const expired410: CapturedEvent = { response: 1, status: 410, event: { type: "ERROR", object: expiredStatus() } };

test("capture split invariance: chunked watches of pods (~72 KB) and configmaps on one connection", async () => {
  const capture = await recordNodeCapture([
    getRequest(`${PODS}?watch=1`),
    getRequest(`${CONFIGMAPS}?watch=1`, { close: true }),
  ]);
  const expected = expectedCapture(["pods", "configmaps"]);
  await assertCaptureSplitInvariant(capture, expected, { bytewise: false });
  // Cuts inside the multi-byte UTF-8 sequences of the non-ASCII annotation.
  const at = new TextEncoder().encode(text(capture).slice(0, text(capture).indexOf("naïve"))).length;
  const cuts = [at + 3, at + 4, at + 7, at + 8, at + 13, at + 14, at + 30, at + 32];
  assert.deepEqual(await decodeCaptureBytes(splitAt(capture, cuts)), expected);
});

test("capture split invariance, byte by byte too: chunked configmaps watch, then a 410 (Content-Length)", async () => {
  const capture = await recordNodeCapture([
    getRequest(`${CONFIGMAPS}?watch=1`),
    getRequest(`${PODS}?watch=1&expired=1`, { close: true }),
  ]);
  await assertCaptureSplitInvariant(capture, [...expectedCapture(["configmaps"]), expired410], { bytewise: true });
});

test("capture split invariance, byte by byte too: gzip pods watch, then a 410", async () => {
  const capture = await recordNodeCapture([
    getRequest(`${PODS}?watch=1&gzip=1`),
    getRequest(`${PODS}?watch=1&expired=1`, { close: true }),
  ]);
  await assertCaptureSplitInvariant(capture, [...expectedCapture(["pods"]), expired410], { bytewise: true });
});
