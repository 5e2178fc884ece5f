/**
 * The TLS WebSocket adapter for Bun: Bun's `WebSocket` with its `tls` option (`ca`, `cert`, `key`,
 * `rejectUnauthorized`, `servername`: Bun's WebSocket names the server name as `node:tls` does, where its fetch says
 * `serverName`) and the handshake's headers (`headers`, which Bun's WebSocket sends as given). Each WebSocket has its
 * own connection, so there is nothing to release. Loaded only by dynamic import in Bun (`../connection/adapters.ts`).
 * Internal.
 *
 * @module
 */
import type { TlsSettings, TlsWebSocket } from "../connection/adapters.ts";
import type { WebSocketLike } from "../websocket_watch.ts";

/** Bun's `tls` member of the WebSocket init. */
interface BunWebSocketTls {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
  servername?: string;
}

/** Bun's WebSocket constructor, with its init dictionary. */
type BunWebSocket = new (
  url: string,
  init: { protocols: string[]; headers: Headers; tls: BunWebSocketTls },
) => WebSocketLike & EventTarget;

/** WebSockets whose connections use `settings`. */
export function openTlsWebSocket(settings: TlsSettings): TlsWebSocket {
  const tls: BunWebSocketTls = { rejectUnauthorized: !settings.insecureSkipTlsVerify };
  if (settings.ca !== undefined) tls.ca = settings.ca;
  if (settings.cert !== undefined) tls.cert = settings.cert;
  if (settings.key !== undefined) tls.key = settings.key;
  if (settings.tlsServerName !== undefined) tls.servername = settings.tlsServerName;
  const WebSocketClass = (globalThis as unknown as { WebSocket: BunWebSocket }).WebSocket;
  return {
    open: (url, protocols, headers) => new WebSocketClass(url, { protocols, headers, tls }),
    close: () => Promise.resolve(),
  };
}
