/**
 * A Kubernetes-like watch server on `node:http` (Node, and the node:http of Deno and Bun), listening on 127.0.0.1 on
 * an ephemeral port:
 *
 * - `GET /api/v1/namespaces/default/{pods,configmaps}?watch=1`: the generated watch events as a JSON watch body
 *   (`Content-Type: application/json`, chunked, one `write` per event, with a short pause after every third);
 *   with `&gzip=1` the body is `Content-Encoding: gzip`, flushed after every event so each event still leaves at once.
 * - `GET /api/v1/namespaces/default/{pods,configmaps}` (no watch): the list, with a `Content-Length`.
 * - `...&expired=1`: `410 Gone` with the `Expired` Status as body (with a `Content-Length`).
 * - anything else: `404` with a NotFound Status.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { constants as zlibConstants, createGzip } from "node:zlib";
import { delayAfter, expiredStatus, listOf, ndjsonLines, watchEvents, type WatchResource } from "./watch_events.ts";

/** A running test server. */
export interface WatchServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Stops listening, ends every open connection, and resolves once the server is closed. */
  close(): Promise<void>;
}

/** The path of a resource's collection in the default namespace. */
export function collectionPath(resource: WatchResource): string {
  return `/api/v1/namespaces/default/${resource}`;
}

/** Parses a request target of the test API; `undefined` for an unknown path. */
export function route(
  target: string,
): { resource: WatchResource; watch: boolean; gzip: boolean; expired: boolean } | undefined {
  const url = new URL(target, "http://127.0.0.1");
  const match = /^\/api\/v1\/namespaces\/default\/(pods|configmaps)$/.exec(url.pathname);
  if (match === null) return undefined;
  const flag = (name: string) => url.searchParams.get(name) === "1" || url.searchParams.get(name) === "true";
  return { resource: match[1] as WatchResource, watch: flag("watch"), gzip: flag("gzip"), expired: flag("expired") };
}

/** Headers an API server puts on every response (fixed values, so captures only differ in what the server adds). */
export const API_HEADERS: Record<string, string> = {
  "Audit-Id": "3f6b1f0e-9d1c-4b7e-8a52-0c2e6f1d9a47",
  "Cache-Control": "no-cache, private",
  "X-Kubernetes-Pf-Flowschema-Uid": "7b9f2c31-5d4e-4a8b-9c61-2e3f4a5b6c7d",
  "X-Kubernetes-Pf-Prioritylevel-Uid": "1a2b3c4d-5e6f-4789-8abc-def012345678",
};

/** A body for status `code` (404, 410) as the API server writes it. */
export function statusBody(code: 404 | 410, path: string): string {
  if (code === 410) return JSON.stringify(expiredStatus());
  return JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `the server could not find the requested resource (get ${path})`,
    reason: "NotFound",
    details: {},
    code: 404,
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function serveWatch(response: ServerResponse, resource: WatchResource, gzip: boolean): Promise<void> {
  const lines = ndjsonLines(watchEvents(resource));
  response.writeHead(200, {
    ...API_HEADERS,
    "Content-Type": "application/json",
    ...(gzip ? { "Content-Encoding": "gzip" } : {}),
  });
  response.flushHeaders();
  const gz = gzip ? createGzip() : undefined;
  gz?.pipe(response);
  for (let i = 0; i < lines.length; i++) {
    if (response.destroyed) return;
    if (gz === undefined) {
      response.write(lines[i]);
    } else {
      gz.write(lines[i]);
      // Z_SYNC_FLUSH: everything written so far leaves the compressor now, as a server streaming events must do.
      await new Promise<void>((resolve) => gz.flush(zlibConstants.Z_SYNC_FLUSH, () => resolve()));
    }
    const delay = delayAfter(i);
    if (delay > 0) await sleep(delay);
  }
  if (gz === undefined) response.end();
  else gz.end();
}

function handle(request: IncomingMessage, response: ServerResponse): void {
  const target = request.url ?? "/";
  const r = request.method === "GET" ? route(target) : undefined;
  if (r === undefined || r.expired) {
    const code = r === undefined ? 404 : 410;
    const body = statusBody(code, target);
    response.writeHead(code, {
      ...API_HEADERS,
      "Content-Type": "application/json",
      "Content-Length": String(Buffer.byteLength(body)),
    });
    response.end(body);
    return;
  }
  if (!r.watch) {
    const body = JSON.stringify(listOf(r.resource));
    response.writeHead(200, {
      ...API_HEADERS,
      "Content-Type": "application/json",
      "Content-Length": String(Buffer.byteLength(body)),
    });
    response.end(body);
    return;
  }
  serveWatch(response, r.resource, r.gzip).catch((error) => response.destroy(error));
}

/** Starts the node:http watch server on 127.0.0.1, port 0. */
export async function startNodeHttpServer(): Promise<WatchServer> {
  const server = createServer(handle);
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      return closing;
    },
  };
}
