/**
 * watchwire in workerd, Cloudflare Workers' runtime (the `workerd` npm package ships its binary, as `deno` and `bun`
 * do theirs). tests/peers/workerd_worker.ts, bundled with the library by esbuild, runs there as a Worker with no
 * Node compatibility: `fetch`, Web Streams and nothing else. It fetches watch streams from a Node http server on
 * loopback (HTTP/1.1 chunked, written in uneven pieces) through workerd's own HTTP client, and answers with what
 * `decodeWatchResponse` made of them. The tests check that:
 * - code generation from strings is forbidden there, so the decoders run where `Function` is;
 * - for every refgen stream pair (every built-in kind), the protobuf stream decodes in workerd to exactly the events
 *   of the JSON stream, which decodes to what this runtime makes of it; metadata mode gives the same apiVersion,
 *   kind and metadata, and `decode()` the whole object;
 * - a watch whose server sends each event only after the Worker has received the one before is decoded to the end:
 *   events are delivered as their bytes arrive.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { JsonWatchEventDecoderStream } from "../mod.ts";
import { type RunningWorker, startWorker } from "../scripts/workerd.mjs";
import type { StreamPair } from "./_kubernetes_streams.ts";
import { drain, streamOf } from "./_util.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const fixtures = join(root, "fixtures", "kubernetes");
const index: StreamPair[] = JSON.parse(readFileSync(join(fixtures, "index.json"), "utf8"));
const PROTOBUF_WATCH = "application/vnd.kubernetes.protobuf;stream=watch";
const JSON_WATCH = "application/json;stream=watch";
// The live watch: the Pod stream's protobuf frames (ADDED, MODIFIED, BOOKMARK, DELETED, ERROR), one at a time.
const LIVE = "v1.Pod";

/** Writes `bytes` as chunks of 1 to 4096 bytes, sizes from a fixed sequence: many HTTP chunks, uneven reads. */
function writeInPieces(res: ServerResponse, bytes: Uint8Array, seed: number): void {
  let state = seed | 1;
  for (let at = 0; at < bytes.length;) {
    state = Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) ^ 0x9e3779b9;
    const size = 1 + ((state >>> 8) % (state & 1 ? 4096 : 64));
    res.write(bytes.subarray(at, at + size));
    at += size;
  }
  res.end();
}

/** The frames of a length-prefixed protobuf watch stream, each with its 4-byte prefix. */
function frames(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at < bytes.length;) {
    const end = at + 4 + view.getUint32(at);
    out.push(bytes.subarray(at, end));
    at = end;
  }
  return out;
}

/**
 * The watch server: `/streams/NAME.pb|json` (a fixture, in pieces), `/live/NAME` (its frames one at a time: the first
 * at once, frame K+1 when `/ack?n=K` comes, the end after the last ack).
 */
function startServer(): Promise<Server> {
  let live: { res: ServerResponse; frames: Uint8Array[] } | undefined;
  let quiet: ReturnType<typeof setTimeout> | undefined;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const streams = /^\/streams\/(.+)\.(pb|json)$/.exec(decodeURIComponent(url.pathname));
    if (streams !== null) {
      const bytes = new Uint8Array(readFileSync(join(fixtures, "streams", `${streams[1]}.${streams[2]}`)));
      res.writeHead(200, { "content-type": streams[2] === "pb" ? PROTOBUF_WATCH : JSON_WATCH });
      writeInPieces(res, bytes, streams[1].length * 7919 + bytes.length);
    } else if (url.pathname === `/live/${LIVE}`) {
      res.writeHead(200, { "content-type": PROTOBUF_WATCH });
      live = { res, frames: frames(new Uint8Array(readFileSync(join(fixtures, "streams", `${LIVE}.pb`)))) };
      live.res.write(live.frames[0]);
      // Without an ack, the watch ends after 10 s: the Worker then has fewer events (rather than the test hanging).
      quiet = setTimeout(() => res.end(), 10_000);
    } else if (url.pathname === "/ack" && live !== undefined) {
      clearTimeout(quiet);
      const n = Number(url.searchParams.get("n"));
      if (n < live.frames.length) {
        live.res.write(live.frames[n]);
        const watch = live.res;
        quiet = setTimeout(() => watch.end(), 10_000);
      } else live.res.end();
      res.end("ok");
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

interface Decoded {
  type: string;
  events: unknown[];
  error?: { name: string; code?: string };
}

test(
  "workerd (Cloudflare Workers' runtime): code generation is forbidden; every kind's protobuf watch decodes there as its JSON watch; events arrive as they are sent",
  {
    timeout: 300_000,
  },
  async () => {
    const server = await startServer();
    const outbound = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    let worker: RunningWorker | undefined;
    try {
      const built = spawnSync(
        join(root, "node_modules", ".bin", "esbuild"),
        [
          join(root, "tests", "peers", "workerd_worker.ts"),
          "--bundle",
          "--format=esm",
          "--platform=neutral",
        ],
        { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      );
      assert.equal(built.status, 0, `esbuild failed: ${built.stderr}`);
      const running = worker = await startWorker({ module: built.stdout, outbound });
      const origin = `http://${outbound}`;
      const ask = async <T = Record<string, unknown>>(path: string): Promise<T> => {
        const response = await Promise.race([fetch(`${running.url}${path}`), running.exited]);
        if (response.status !== 200) {
          assert.fail(`${path}: ${response.status} ${await response.text()}\n${running.log()}`);
        }
        return (await response.json()) as T;
      };

      const codegen = await ask("/codegen");
      assert.match(String(codegen.eval), /EvalError/, "eval is forbidden in a Worker");
      assert.match(String(codegen.Function), /EvalError/, "new Function is forbidden in a Worker");

      let kept = 0;
      for (const pair of index) {
        const name = pair.pb.replace(/^streams\//, "").replace(/\.pb$/, "");
        const { json, full, metadata } = await ask<{ json: Decoded; full: Decoded; metadata: Decoded }>(
          `/pair?origin=${encodeURIComponent(origin)}&name=${encodeURIComponent(name)}`,
        );
        assert.equal(json.type, JSON_WATCH);
        assert.equal(full.type, PROTOBUF_WATCH);
        // The JSON stream decodes in workerd as here.
        const here = await drain(
          streamOf([new Uint8Array(readFileSync(join(fixtures, pair.json)))]).pipeThrough(
            new JsonWatchEventDecoderStream<unknown>(),
          ),
        );
        assert.deepEqual(json.events, JSON.parse(JSON.stringify(here.values)), `${name}: JSON in workerd`);
        assert.equal(json.error?.code, (here.error as { code?: string } | undefined)?.code, `${name}: JSON's end`);
        // The protobuf stream: exactly the JSON stream's events, and the same end (kinds that are not objects refuse
        // the BOOKMARK in both).
        assert.deepEqual(full.events, json.events, `${name}: protobuf vs JSON`);
        assert.equal(full.error === undefined, json.error === undefined, `${name}: ${JSON.stringify(full.error)}`);
        assert.ok(full.events.length >= (full.error === undefined ? 5 : 2), `${name}: ${full.events.length} events`);
        // Metadata mode: the same events; an object kept as bytes has the full object's apiVersion, kind and metadata,
        // and decode() gives the full object.
        assert.deepEqual(metadata.error, full.error, `${name}: metadata mode's end`);
        assert.equal(metadata.events.length, full.events.length, `${name}: metadata mode's events`);
        metadata.events.forEach((event, i) => {
          const expected = full.events[i] as { type: string; object: Record<string, unknown> };
          const partial = (event as { kept?: Record<string, unknown> }).kept;
          if (partial === undefined) return assert.deepEqual(event, expected, `${name} event ${i}`);
          kept++;
          assert.equal((event as { type: string }).type, expected.type);
          const { apiVersion, kind, metadata } = expected.object;
          assert.deepEqual(
            { apiVersion: partial.apiVersion, kind: partial.kind, metadata: partial.metadata },
            { apiVersion, kind, metadata },
            `${name} event ${i}: metadata`,
          );
          assert.deepEqual(partial.decoded, expected.object, `${name} event ${i}: decode()`);
        });
      }
      // Metadata mode kept most objects as bytes: ADDED, MODIFIED and DELETED of every kind that is an object.
      assert.ok(kept > 2 * index.length, `${kept} objects kept as bytes`);

      const live = await ask<Omit<Decoded, "type">>(`/live?origin=${encodeURIComponent(origin)}&name=${LIVE}`);
      assert.equal(live.error, undefined);
      assert.deepEqual(
        live.events.map((e) => (e as { type: string }).type),
        ["ADDED", "MODIFIED", "BOOKMARK", "DELETED", "ERROR"],
      );
    } finally {
      worker?.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  },
);
