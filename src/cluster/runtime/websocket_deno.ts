/**
 * The TLS WebSocket adapter for Deno: Deno's `WebSocket` with `client`, an HTTP client from
 * `Deno.createHttpClient({ caCerts, cert, key })` (as `fetch_deno.ts` makes for fetch), and the handshake's headers
 * (`headers`, which Deno's WebSocket sends as given). Needs only `--allow-net` for the server.
 *
 * Like Deno's fetch, it can neither skip verification nor verify another name than the URL's host: a config with
 * `insecureSkipTlsVerify` or `tlsServerName` uses the undici adapter instead (`websocket_undici.ts`, through Deno's
 * `node:tls`). Loaded only by dynamic import in Deno (`../connection/adapters.ts`). Internal.
 *
 * @module
 */
import type { TlsSettings, TlsWebSocket } from "../connection/adapters.ts";
import type { WebSocketLike } from "../websocket_watch.ts";

/** The part of the Deno namespace used here. */
interface DenoHttp {
  createHttpClient(options: { caCerts?: string[]; cert?: string; key?: string; http2?: boolean }): { close(): void };
}

/** Deno's WebSocket constructor, with its init dictionary. */
type DenoWebSocket = new (
  url: string,
  init: { protocols: string[]; headers: Headers; client: unknown },
) => WebSocketLike & EventTarget;

/** WebSockets whose connections use `settings` (no `tlsServerName` nor `insecureSkipTlsVerify`: the module's note). */
export function openTlsWebSocket(settings: TlsSettings): TlsWebSocket {
  if (settings.insecureSkipTlsVerify || settings.tlsServerName !== undefined) {
    throw new Error(
      "Deno's HTTP client can neither skip verification nor verify another name: use websocket_undici.ts",
    );
  }
  const deno = (globalThis as unknown as { Deno: DenoHttp }).Deno;
  const client = deno.createHttpClient({
    ...(settings.ca === undefined ? {} : { caCerts: [settings.ca] }),
    ...(settings.cert === undefined ? {} : { cert: settings.cert, key: settings.key }),
    http2: false,
  });
  const WebSocketClass = (globalThis as unknown as { WebSocket: DenoWebSocket }).WebSocket;
  let closed = false;
  return {
    open: (url, protocols, headers) => new WebSocketClass(url, { protocols, headers, client }),
    close: () => {
      if (!closed) client.close();
      closed = true;
      return Promise.resolve();
    },
  };
}
