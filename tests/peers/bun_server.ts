/**
 * The test API (see node_http_server.ts and web_handler.ts) on `Bun.serve`, 127.0.0.1, ephemeral port. Only usable
 * under Bun: {@linkcode bunServeAvailable} says whether it is.
 */
import type { WatchServer } from "./node_http_server.ts";
import { handleWatchRequest } from "./web_handler.ts";

/** The part of the `Bun` namespace used here (declared locally, so the file also type-checks under tsc and Deno). */
interface BunServeApi {
  version: string;
  revision: string;
  serve(options: {
    hostname: string;
    port: number;
    fetch: (request: Request) => Response | Promise<Response>;
  }): { port: number; stop(closeActiveConnections?: boolean): Promise<void> | void };
}

function bun(): BunServeApi | undefined {
  return (globalThis as { Bun?: BunServeApi }).Bun;
}

/** True when running under Bun. */
export function bunServeAvailable(): boolean {
  return typeof bun()?.serve === "function";
}

/** `Bun x.y.z`, for fixture provenance. */
export function bunVersion(): string {
  return `Bun ${bun()!.version}`;
}

/** Starts the Bun.serve watch server. */
export function startBunServer(): Promise<WatchServer> {
  const api = bun();
  if (api === undefined) throw new Error("Bun.serve is only available under Bun");
  const server = api.serve({ hostname: "127.0.0.1", port: 0, fetch: handleWatchRequest });
  const port = server.port;
  let closing: Promise<void> | undefined;
  return Promise.resolve({
    url: `http://127.0.0.1:${port}`,
    port,
    close() {
      closing ??= Promise.resolve(server.stop(true));
      return closing;
    },
  });
}
