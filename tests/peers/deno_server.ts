/**
 * The test API (see node_http_server.ts and web_handler.ts) on `Deno.serve`, 127.0.0.1, ephemeral port. Only
 * usable under Deno: {@linkcode denoServeAvailable} says whether it is. Deno.serve compresses responses on its own
 * when the request accepts gzip or br; the watch body of a client that sends no Accept-Encoding goes uncompressed.
 */
import type { WatchServer } from "./node_http_server.ts";
import { handleWatchRequest } from "./web_handler.ts";

/** The part of the `Deno` namespace used here (declared locally, so the file also type-checks under tsc). */
interface DenoServeApi {
  version: { deno: string };
  serve(
    options: { hostname: string; port: number; onListen?: (addr: unknown) => void },
    handler: (request: Request) => Response | Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void>; finished: Promise<void> };
}

function deno(): DenoServeApi | undefined {
  return (globalThis as { Deno?: DenoServeApi }).Deno;
}

/** True when running under Deno. */
export function denoServeAvailable(): boolean {
  return typeof deno()?.serve === "function";
}

/** `Deno x.y.z`, for fixture provenance. */
export function denoVersion(): string {
  return `Deno ${deno()!.version.deno}`;
}

/** Starts the Deno.serve watch server. */
export function startDenoServer(): Promise<WatchServer> {
  const api = deno();
  if (api === undefined) throw new Error("Deno.serve is only available under Deno");
  const server = api.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handleWatchRequest);
  const port = server.addr.port;
  let closing: Promise<void> | undefined;
  return Promise.resolve({
    url: `http://127.0.0.1:${port}`,
    port,
    close() {
      closing ??= server.shutdown().then(() => server.finished);
      return closing;
    },
  });
}
