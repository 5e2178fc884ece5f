/**
 * The shapes of the runtime adapters in `src/cluster/runtime/` (TLS fetch, TLS WebSocket, running a command, files), in
 * web-standard types, and {@linkcode loadAdapter}, which imports one when it is needed. The adapters that need `node:*`
 * or `undici` are imported by a specifier that TypeScript and bundlers do not follow, so that a browser or Worker
 * bundle of the library, and `tsc` without Node's types, never see them. Internal.
 *
 * @module
 */
import { ClusterAccessError } from "../errors.ts";
import type { Host } from "../host.ts";
import type { WebSocketLike } from "../websocket_watch.ts";

/** A fetch function, as `globalThis.fetch` is called. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * The TLS a connection's fetch needs, as PEM text; `insecureSkipTlsVerify` and `tlsServerName` by the config's names,
 * which each adapter gives its runtime by the runtime's own (`rejectUnauthorized`, `servername`, `serverName`).
 */
export interface TlsSettings {
  /** CA bundle the server's certificate must chain to; the runtime's roots when absent. */
  ca?: string;
  /** Client certificate and key, for mutual TLS. */
  cert?: string;
  key?: string;
  /** Accept any server certificate (`insecure-skip-tls-verify`). */
  insecureSkipTlsVerify: boolean;
  /** The name the server's certificate must carry, sent as SNI (`tls-server-name`). */
  tlsServerName?: string;
  /** Offer HTTP/2 (ALPN `h2`) as well as HTTP/1.1. */
  http2: boolean;
}

/** A fetch with its TLS settings, and what releases it. */
export interface TlsFetch {
  fetch: FetchFunction;
  /** Releases the client or agent: in-flight responses end (`force`) or finish first (not `force`). */
  close(force: boolean): Promise<void>;
}

/** A TLS fetch adapter module (`runtime/fetch_*.ts`). */
export interface TlsFetchModule {
  openTlsFetch(settings: TlsSettings): TlsFetch;
}

/** WebSockets with TLS settings, and what releases them. */
export interface TlsWebSocket {
  /**
   * A WebSocket to `url` (`wss:` or `ws:`) asking for `protocols`, whose handshake sends `headers` as they are, over a
   * connection of its own with the settings' TLS (HTTP/1.1: the upgrade is an HTTP/1.1 request).
   */
  open(url: string, protocols: string[], headers: Headers): WebSocketLike & EventTarget;
  /** Releases the agent or client (WebSockets open keep their connections; their owner closes them). */
  close(): Promise<void>;
}

/** A TLS WebSocket adapter module (`runtime/websocket_*.ts`). */
export interface TlsWebSocketModule {
  openTlsWebSocket(settings: TlsSettings): TlsWebSocket;
}

/** What a command did. */
export interface CommandResult {
  /** Exit status, or null if a signal ended it. */
  status: number | null;
  signal: string | null;
  stdout: Uint8Array;
  stderr: Uint8Array;
}

/** A command-running adapter module (`runtime/spawn_*.ts`). */
export interface SpawnModule {
  /**
   * Runs `command` with `args`, the process's environment plus `env`, no standard input; rejects with an error whose
   * `code` is `ENOENT` (or whose `name` is `NotFound`) when the command does not exist.
   */
  runCommand(command: string, args: string[], env: Record<string, string>): Promise<CommandResult>;
}

/** What each adapter module exports. */
export interface AdapterModules {
  undici: TlsFetchModule;
  deno: TlsFetchModule;
  bun: TlsFetchModule;
  webSocketUndici: TlsWebSocketModule;
  webSocketDeno: TlsWebSocketModule;
  webSocketBun: TlsWebSocketModule;
  spawnNode: SpawnModule;
  spawnDeno: SpawnModule;
  /** Files and environment variables through `node:fs/promises` and `node:process` (Node, Bun). */
  host: Host;
  /** Files and environment variables through `Deno.readFile` and `Deno.env`. */
  hostDeno: Host;
}

/**
 * Imports an adapter that needs `node:*` or `undici`, by a specifier that is a variable, not a literal, on purpose:
 * TypeScript then does not pull it (nor Node's types) into a program without them (tsconfig.lib.json), and esbuild
 * leaves the `import()` as it is rather than bundle `undici` and `node:*` into a browser bundle. TypeScript's emit still
 * rewrites `.ts` to `.js` for dist/. (Deno would ask `--allow-read` to load such an import, so the Deno adapters are
 * imported by literal specifiers: they use only `Deno.*`, which type-checks and bundles anywhere.)
 */
function importHidden(specifier: string): Promise<unknown> {
  return import(specifier);
}

/** How each adapter is imported. */
const IMPORTS: { [K in keyof AdapterModules]: () => Promise<unknown> } = {
  undici: () => importHidden("../runtime/fetch_undici.ts"),
  webSocketUndici: () => importHidden("../runtime/websocket_undici.ts"),
  spawnNode: () => importHidden("../runtime/spawn_node.ts"),
  host: () => importHidden("../runtime/host_node.ts"),
  deno: (): Promise<TlsFetchModule> => import("../runtime/fetch_deno.ts"),
  bun: (): Promise<TlsFetchModule> => import("../runtime/fetch_bun.ts"),
  webSocketDeno: (): Promise<TlsWebSocketModule> => import("../runtime/websocket_deno.ts"),
  webSocketBun: (): Promise<TlsWebSocketModule> => import("../runtime/websocket_bun.ts"),
  spawnDeno: (): Promise<SpawnModule> => import("../runtime/spawn_deno.ts"),
  hostDeno: (): Promise<Host> => import("../runtime/host_deno.ts"),
};

const loaded = new Map<keyof AdapterModules, Promise<unknown>>();

/** Imports a runtime adapter (once); an `UNSUPPORTED` error that names it if it cannot be loaded. */
export function loadAdapter<K extends keyof AdapterModules>(name: K, source?: string): Promise<AdapterModules[K]> {
  let module = loaded.get(name);
  if (module === undefined) {
    module = IMPORTS[name]().catch((e) => {
      loaded.delete(name);
      throw new ClusterAccessError(
        "UNSUPPORTED",
        `cannot load watchwire's ${name} runtime adapter (src/cluster/runtime/, beside ${import.meta.url}): ${
          (e as Error).message
        } (a bundle of watchwire for Node must keep src/cluster/runtime/ beside it, or leave watchwire external)`,
        { source, cause: e },
      );
    });
    loaded.set(name, module);
  }
  return module as Promise<AdapterModules[K]>;
}
