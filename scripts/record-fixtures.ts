/**
 * Records HTTP/1.1 watch traffic from a real server into fixtures/: the server of the runtime this script runs in
 * (node:http under Node, Deno.serve under Deno, Bun.serve under Bun) serves the generated watch events of
 * tests/peers/watch_events.ts; a raw node:net client (fixed request bytes) talks to it through the loopback recording
 * proxy; the bytes the proxy saw are written as they were.
 *
 *   node --import tsx scripts/record-fixtures.ts
 *   deno run -A scripts/record-fixtures.ts
 *   bun scripts/record-fixtures.ts
 *
 * For each variant it writes
 *   fixtures/<server>-<variant>.http          the server-to-client bytes of the connection
 *   fixtures/<server>-<variant>.request.http  the client-to-server bytes of the connection
 *   fixtures/<server>-<variant>.events.ndjson the expected events, from the generator (never from the decoder): one
 *                                             line per event, {"response": <index on the connection>, "status":
 *                                             <HTTP status>, "event": <the watch event>}
 * and prints the runtime version that produced the bytes (for fixtures/README.md).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { bunServeAvailable, bunVersion, startBunServer } from "../tests/peers/bun_server.ts";
import { denoServeAvailable, denoVersion, startDenoServer } from "../tests/peers/deno_server.ts";
import { collectionPath, startNodeHttpServer, type WatchServer } from "../tests/peers/node_http_server.ts";
import { getRequest, rawRequests } from "../tests/peers/raw_http_client.ts";
import { startRecordingProxy } from "../tests/peers/recording_proxy.ts";
import { expiredStatus, watchEvents, type WatchResource } from "../tests/peers/watch_events.ts";
import type { WatchEvent } from "../mod.ts";

interface Expected {
  response: number;
  status: number;
  event: WatchEvent;
}

interface Variant {
  name: string;
  /** Request targets, sent one after the other on one connection; the last asks for `Connection: close`. */
  targets: string[];
  expected: () => Expected[];
}

const PODS = collectionPath("pods");
const CONFIGMAPS = collectionPath("configmaps");

const watched = (resources: WatchResource[]): Expected[] =>
  resources.flatMap((resource, response) => watchEvents(resource).map((event) => ({ response, status: 200, event })));

const WATCH: Variant = {
  name: "watch",
  targets: [`${PODS}?watch=1`, `${CONFIGMAPS}?watch=1`],
  expected: () => watched(["pods", "configmaps"]),
};
const WATCH_GZIP: Variant = {
  name: "watch-gzip",
  targets: [`${PODS}?watch=1&gzip=1`, `${CONFIGMAPS}?watch=1&gzip=1`],
  expected: () => watched(["pods", "configmaps"]),
};
const EXPIRED: Variant = {
  name: "expired",
  targets: [`${PODS}?watch=1&resourceVersion=1&expired=1`],
  expected: () => [{ response: 0, status: 410, event: { type: "ERROR", object: expiredStatus() } }],
};

interface Recorder {
  server: string;
  producer: string;
  start(): Promise<WatchServer>;
  variants: Variant[];
}

function recorder(): Recorder {
  if (denoServeAvailable()) {
    return {
      server: "deno-serve",
      producer: `${denoVersion()} Deno.serve`,
      start: startDenoServer,
      variants: [WATCH, EXPIRED],
    };
  }
  if (bunServeAvailable()) {
    return {
      server: "bun-serve",
      producer: `${bunVersion()} Bun.serve`,
      start: startBunServer,
      variants: [WATCH, EXPIRED],
    };
  }
  return {
    server: "node-http",
    producer: `Node.js ${process.version} node:http`,
    start: startNodeHttpServer,
    variants: [WATCH, WATCH_GZIP, EXPIRED],
  };
}

const MAX_FIXTURE_BYTES = 200 * 1024;

async function record(server: WatchServer, variant: Variant): Promise<{ request: Uint8Array; response: Uint8Array }> {
  const proxy = await startRecordingProxy(server.port);
  try {
    const requests = variant.targets.map((target, i) =>
      getRequest(target, { close: i === variant.targets.length - 1 })
    );
    // The proxy records each chunk before passing it on: once the client has every response, so has the record.
    await rawRequests(proxy.port, requests, 10_000);
    const connections = proxy.connections();
    if (connections.length !== 1) throw new Error(`expected one connection, saw ${connections.length}`);
    return { request: connections[0].clientToServer, response: connections[0].serverToClient };
  } finally {
    await proxy.close();
  }
}

async function main(): Promise<void> {
  const { server: serverName, producer, start, variants } = recorder();
  const dir = fileURLToPath(new URL("../fixtures/", import.meta.url));
  await mkdir(dir, { recursive: true });
  console.log(`recording with ${producer}`);
  const server = await start();
  try {
    for (const variant of variants) {
      const { request, response } = await record(server, variant);
      if (response.length > MAX_FIXTURE_BYTES) {
        throw new Error(`${variant.name}: ${response.length} bytes, over the limit`);
      }
      const base = `${serverName}-${variant.name}`;
      const lines = variant.expected().map((e) => JSON.stringify(e) + "\n").join("");
      await writeFile(`${dir}${base}.http`, response);
      await writeFile(`${dir}${base}.request.http`, request);
      await writeFile(`${dir}${base}.events.ndjson`, lines);
      console.log(
        `  fixtures/${base}.http (${response.length} bytes), ${base}.request.http (${request.length} bytes), ` +
          `${base}.events.ndjson (${variant.expected().length} events)`,
      );
    }
  } finally {
    await server.close();
  }
  console.log(`bytes produced by: ${producer}`);
}

await main();
