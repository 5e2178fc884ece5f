/**
 * The module that scripts/browser-websocket-check.ts runs in Chromium or Firefox, bundled with watchwire by esbuild: a
 * watch over WebSocket of the real kube-apiserver's ConfigMaps in one namespace, from one resourceVersion, through the
 * browser's own `WebSocket` (`webSocketWatch` with its default opener: in a browser, the bearer token as the
 * subprotocol `base64url.bearer.authorization.k8s.io.<token>` beside `v4.channel.k8s.io`, and the page's `Origin`).
 * It reads `/config` (the server, the token, the namespace, the resourceVersion), POSTs `/open` once the server has
 * accepted the handshake (with the subprotocols asked and the one the server chose), then each event to `/event`
 * as it comes, in order; a fault goes to `/failed`.
 *
 * @module
 */
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";
import { type WebSocketLike, webSocketOpener, webSocketWatch } from "../../src/cluster/websocket_watch.ts";

const post = (path: string, body: unknown) => fetch(path, { method: "POST", body: JSON.stringify(body) });

/** What `/config` gives. */
interface PageConfig {
  server: string;
  token: string;
  namespace: string;
  resourceVersion: string;
}

try {
  const { server, token, namespace, resourceVersion } = (await (await fetch("/config")).json()) as PageConfig;
  const connection: ClusterConnection = {
    server,
    headers: () => Promise.resolve(new Headers({ authorization: `Bearer ${token}` })),
    fetch: (input, init) => fetch(input, init),
    close: () => Promise.resolve(),
  };
  // A browser's default opener over its own WebSocket, watched to tell what it asked for and what the server chose.
  const asked: string[] = [];
  let socket: (WebSocketLike & { protocol?: string; url?: string }) | undefined;
  const events = await webSocketWatch(connection, { version: "v1", resource: "configmaps", namespace }, {
    resourceVersion,
    openWebSocket: async (url, handshake) => {
      const NativeWebSocket = globalThis.WebSocket;
      const recording = class extends NativeWebSocket {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols);
          asked.push(...(typeof protocols === "string" ? [protocols] : protocols ?? []));
        }
      };
      socket = await webSocketOpener({ WebSocket: recording })(url, handshake);
      return socket;
    },
  });
  await post("/open", {
    url: socket?.url,
    asked: asked.map((p) => p.startsWith("base64url.bearer.") ? "base64url.bearer.authorization.k8s.io.<token>" : p),
    tokenProtocol: asked.some((p) =>
      p ===
        `base64url.bearer.authorization.k8s.io.${
          btoa(token).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
        }`
    ),
    chosen: socket?.protocol,
    userAgent: navigator.userAgent,
  });
  for await (const event of events) await post("/event", event);
  await post("/ended", {});
} catch (error) {
  await post("/failed", { error: error instanceof Error ? `${error.stack ?? error}` : String(error) });
}
