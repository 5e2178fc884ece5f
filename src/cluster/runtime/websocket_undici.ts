/**
 * The TLS WebSocket adapter for Node (and for Deno when the config asks what Deno's own client cannot do: skip
 * verification, a TLS server name): the `undici` package's `WebSocket` with an `Agent` of the same package as its
 * `dispatcher`, whose `connect` options carry the CA, the client certificate and key, `rejectUnauthorized` and
 * `servername`, as `fetch_undici.ts` does for fetch.
 *
 * undici's own `WebSocket`, not Node's global one: a Node may have none, and one that has it (from its bundled undici)
 * need not take the package's `Agent` (see `fetch_undici.ts`). An `Agent` of its own, not the fetch's: with `allowH2`
 * (the connection's `http2`) undici would open a WebSocket as an HTTP/2 extended CONNECT, which kube-apiserver does
 * not offer. Loaded only by dynamic import (`../connection/adapters.ts`). Internal.
 *
 * @module
 */
import { Agent, WebSocket } from "undici";
import type { TlsSettings, TlsWebSocket } from "../connection/adapters.ts";
import type { WebSocketLike } from "../websocket_watch.ts";
import { undiciConnectOptions } from "./fetch_undici.ts";

/** WebSockets whose connections use `settings`. */
export function openTlsWebSocket(settings: TlsSettings): TlsWebSocket {
  const agent = new Agent({ connect: undiciConnectOptions(settings) });
  return {
    open: (url, protocols, headers) =>
      new WebSocket(url, { protocols, headers: [...headers], dispatcher: agent }) as unknown as
        & WebSocketLike
        & EventTarget,
    close: () => agent.close(),
  };
}
