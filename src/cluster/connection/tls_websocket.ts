/**
 * {@linkcode openTlsWebSocket}: WebSockets with a config's TLS in this runtime (undici's WebSocket and Agent in Node,
 * Deno's WebSocket with an HTTP client, Bun's with `tls`), as `tls_fetch.ts` opens fetch. Internal.
 *
 * @module
 */
import { ClusterAccessError } from "../errors.ts";
import { loadAdapter, type TlsSettings, type TlsWebSocket } from "./adapters.ts";
import type { RuntimeName } from "./runtime_name.ts";

/** The TLS WebSockets of `runtime` for `settings`; `web` has none (its WebSocket trusts the platform's roots only). */
export async function openTlsWebSocket(
  runtime: RuntimeName,
  settings: TlsSettings,
  source?: string,
): Promise<TlsWebSocket> {
  switch (runtime) {
    case "node":
      return (await loadAdapter("webSocketUndici", source)).openTlsWebSocket(settings);
    case "bun":
      return (await loadAdapter("webSocketBun", source)).openTlsWebSocket(settings);
    case "deno":
      // Deno's own client cannot skip verification nor check another name; undici (through node:tls) can.
      if (settings.insecureSkipTlsVerify || settings.tlsServerName !== undefined) {
        return (await loadAdapter("webSocketUndici", source)).openTlsWebSocket(settings);
      }
      return (await loadAdapter("webSocketDeno", source)).openTlsWebSocket(settings);
    case "web":
      throw new ClusterAccessError(
        "UNSUPPORTED",
        "this runtime (not Node, Deno or Bun) has no way to give a WebSocket a CA, a client certificate, " +
          "tls-server-name or insecure-skip-tls-verify",
        { source },
      );
  }
}
