/**
 * Real HTTP/2 servers of the runtimes themselves, over h2c (cleartext, prior knowledge), streaming JSON watch events
 * (tests/peers/web_handler.ts); the connection is recorded by a proxy and the recorded bytes decoded with
 * decodeHttp2Exchanges and decodeWatchResponse. Only cleartext counts: a TLS capture cannot be decoded without its
 * keys.
 *
 * - node:http2 (nghttp2 in Node; Deno's and Bun's own node:http2) is covered by http2_connection.test.ts, which runs in
 *   all three runtimes.
 * - Deno.serve speaks h2c: it answers a client preface with HTTP/2 (hyper's auto connection builder). Registered only
 *   under Deno.
 * - Bun.serve does not: it answers the client preface with `HTTP/1.1 400 Bad Request` and closes, so a node:http2
 *   client's request fails. That fact is checked here (registered only under Bun), so a Bun release that adds h2c
 *   fails this test and it can become a decode test.
 *
 * Under Node this file registers no test (its server, node:http2, is tested elsewhere).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DecodeError, decodeWatchResponse } from "../mod.ts";
import { decodeHttp2Exchanges } from "../capture.ts";
import { drain, streamOf } from "./_util.ts";
import { startBunServer } from "./peers/bun_server.ts";
import { startDenoServer } from "./peers/deno_server.ts";
import { probeH2cPreface, recordH2c } from "./peers/h2_client.ts";
import type { WatchServer } from "./peers/node_http_server.ts";
import { ndjsonLines, watchEvents, type WatchResource } from "./peers/watch_events.ts";

const isDeno = (globalThis as { Deno?: unknown }).Deno !== undefined;
const isBun = (globalThis as { Bun?: unknown }).Bun !== undefined;

const PATHS: Record<WatchResource, string> = {
  pods: "/api/v1/namespaces/default/pods?watch=1",
  configmaps: "/api/v1/namespaces/default/configmaps?watch=1",
};
const RESOURCES: WatchResource[] = ["pods", "configmaps"];

async function withServer<T>(start: () => Promise<WatchServer>, run: (server: WatchServer) => Promise<T>): Promise<T> {
  const server = await start();
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

if (isDeno) {
  test("runtime servers: Deno.serve over h2c streams two watches on one connection; decoded from recorded bytes", async () => {
    await withServer(startDenoServer, async (server) => {
      const paths = RESOURCES.map((r) => PATHS[r]);
      const recording = await recordH2c(server.port, paths);

      // What the client itself got: HTTP/2 responses with the exact watch bodies.
      assert.equal(recording.sessionError, undefined);
      for (const [i, r] of recording.results.entries()) {
        assert.equal(r.error, undefined, `${r.path}: ${r.error}`);
        assert.equal(r.headers?.[":status"], 200);
        assert.equal(r.body, ndjsonLines(watchEvents(RESOURCES[i])).join(""));
      }
      // The server spoke HTTP/2 (a SETTINGS frame first), not HTTP/1.1.
      assert.equal(recording.s2c[3], 4, "the server's first frame is SETTINGS");
      assert.notEqual(new TextDecoder().decode(recording.s2c.subarray(0, 5)), "HTTP/");

      // The recorded bytes, both directions: one exchange per watch, in stream order, each request paired.
      const exchanges = await drain(decodeHttp2Exchanges(streamOf([recording.s2c]), streamOf([recording.c2s])));
      assert.equal(exchanges.error, undefined, String(exchanges.error));
      assert.deepEqual(
        exchanges.values.map((x) => [x.streamId, x.request?.method, x.request?.path]),
        [[1, "GET", PATHS.pods], [3, "GET", PATHS.configmaps]],
      );
      for (const [i, x] of exchanges.values.entries()) {
        const headers = new Map(x.response.headers ?? []);
        assert.equal(headers.get(":status"), "200");
        assert.equal(headers.get("content-type"), "application/json");
        assert.equal(headers.get("audit-id"), "3f6b1f0e-9d1c-4b7e-8a52-0c2e6f1d9a47");
        assert.equal(headers.has("content-encoding"), false, "no Accept-Encoding was sent: no compression");
        const events = await drain(decodeWatchResponse(x.response.toResponse()));
        assert.equal(events.error, undefined, String(events.error));
        assert.deepEqual(events.values, watchEvents(RESOURCES[i]));
        assert.deepEqual(await x.response.end, { reason: "end-stream" });
      }
    });
  });
}

if (isBun) {
  test("runtime servers: Bun.serve does not speak h2c: the client preface gets HTTP/1.1 400, the request fails", async () => {
    await withServer(startBunServer, async (server) => {
      // Raw: the preface and an empty SETTINGS frame get an HTTP/1.1 response and the connection closes.
      const reply = new TextDecoder("latin1").decode(await probeH2cPreface(server.port));
      assert.match(reply, /^HTTP\/1\.1 400 /, `Bun.serve replied ${JSON.stringify(reply.slice(0, 80))}`);

      // A node:http2 client with prior knowledge: no response headers, the request fails (a protocol error).
      const recording = await recordH2c(server.port, [PATHS.pods]);
      const [result] = recording.results;
      assert.equal(result.headers, undefined);
      assert.equal(result.body, "");
      assert.notEqual(result.error ?? recording.sessionError, undefined, "the h2c request fails");

      // The recorded server bytes are no HTTP/2: decoding them faults at once, no exchange.
      assert.match(new TextDecoder("latin1").decode(recording.s2c), /^HTTP\/1\.1 400 /);
      const exchanges = await drain(decodeHttp2Exchanges(streamOf([recording.s2c]), streamOf([recording.c2s])));
      assert.equal(exchanges.values.length, 0);
      assert.ok(exchanges.error instanceof DecodeError, String(exchanges.error));
      // Read as a frame header, "HTTP/1.1 " declares a 0x485454-byte payload that never comes.
      assert.equal(`${exchanges.error.code}@${exchanges.error.offset}`, `TRUNCATED@${recording.s2c.length}`);
    });
  });

  test("runtime servers: Bun.serve still serves the same watch over HTTP/1.1 on that port (the server works)", async () => {
    await withServer(startBunServer, async (server) => {
      const response = await fetch(`${server.url}${PATHS.pods}`);
      assert.equal(response.status, 200);
      const events = await drain(decodeWatchResponse(response));
      assert.equal(events.error, undefined);
      assert.deepEqual(events.values, watchEvents("pods"));
    });
  });
}
