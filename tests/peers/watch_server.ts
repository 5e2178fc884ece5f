/**
 * The watch server that tests/workerd.test.ts and scripts/browser-check.ts point a runtime without Node APIs at
 * (tests/peers/watch_checks.ts runs there): Node's http on loopback, serving the refgen stream pairs and a live watch.
 *
 * - `/streams/NAME.pb` and `/streams/NAME.json`: the fixture, with its watch Content-Type, chunked, written in uneven
 *   pieces of 1 to 4096 bytes (many HTTP chunks, uneven reads).
 * - `/names`: `{ names, live }`, the names of the stream pairs and of the live watch.
 * - `/live/NAME`: the protobuf stream's frames one at a time: the first at once, frame K+1 when `/ack?n=K` comes, the
 *   end after the last ack; after 10 s without an ack the watch ends (so that a reader that waits for more bytes than
 *   an event's gets fewer events rather than hanging).
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { KUBERNETES_PROTOBUF_MEDIA_TYPE } from "../../kubernetes.ts";
import type { StreamPair } from "../_kubernetes_streams.ts";
import { framesOf } from "../_protobuf.ts";
import { piecesOf } from "./pieces.ts";

export const fixtures = fileURLToPath(new URL("../../fixtures/kubernetes/", import.meta.url));
/** Every refgen stream pair (one per built-in kind). */
export const streamPairs: StreamPair[] = JSON.parse(readFileSync(join(fixtures, "index.json"), "utf8"));
/** A stream pair's name in the server's paths, e.g. `v1.Pod`. */
export const pairName = (pair: StreamPair): string => pair.pb.replace(/^streams\//, "").replace(/\.pb$/, "");
/** The live watch: the Pod stream's frames (ADDED, MODIFIED, BOOKMARK, DELETED, ERROR), one at a time. */
export const LIVE = "v1.Pod";
export const LIVE_EVENTS = ["ADDED", "MODIFIED", "BOOKMARK", "DELETED", "ERROR"];
export const PROTOBUF_WATCH = `${KUBERNETES_PROTOBUF_MEDIA_TYPE};stream=watch`;
export const JSON_WATCH = "application/json;stream=watch";

/** Writes `bytes` as chunks of 1 to 4096 bytes (half of them at most 64), sizes from a fixed sequence. */
function writeInPieces(res: ServerResponse, bytes: Uint8Array, seed: number): void {
  for (const piece of piecesOf(bytes, seed)) res.write(piece);
  res.end();
}

/** Answers a request the watch server does not (true if it did). */
export type ExtraRoute = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean;

/** Starts the watch server on a free loopback port; `extra` answers other paths first. */
export function startWatchServer(extra?: ExtraRoute): Promise<Server> {
  let live: { res: ServerResponse; frames: Uint8Array[] } | undefined;
  let quiet: ReturnType<typeof setTimeout> | undefined;
  const watchUntilQuiet = (res: ServerResponse) => {
    clearTimeout(quiet);
    quiet = setTimeout(() => res.end(), 10_000);
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (extra?.(req, res, url)) return;
    const streams = /^\/streams\/([\w.-]+)\.(pb|json)$/.exec(decodeURIComponent(url.pathname));
    if (streams !== null) {
      const bytes = new Uint8Array(readFileSync(join(fixtures, "streams", `${streams[1]}.${streams[2]}`)));
      res.writeHead(200, { "content-type": streams[2] === "pb" ? PROTOBUF_WATCH : JSON_WATCH });
      writeInPieces(res, bytes, streams[1].length * 7919 + bytes.length);
    } else if (url.pathname === "/names") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ names: streamPairs.map(pairName), live: LIVE }));
    } else if (url.pathname === `/live/${LIVE}`) {
      res.writeHead(200, { "content-type": PROTOBUF_WATCH });
      live = { res, frames: framesOf(new Uint8Array(readFileSync(join(fixtures, "streams", `${LIVE}.pb`)))) };
      res.write(live.frames[0]);
      watchUntilQuiet(res);
    } else if (url.pathname === "/ack" && live !== undefined) {
      const n = Number(url.searchParams.get("n"));
      clearTimeout(quiet);
      if (n < live.frames.length) {
        live.res.write(live.frames[n]);
        watchUntilQuiet(live.res);
      } else live.res.end();
      res.end("ok");
    } else {
      res.writeHead(404).end();
    }
  });
  server.on("close", () => clearTimeout(quiet));
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/** Closes the server and every connection it still has. */
export async function stopWatchServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
