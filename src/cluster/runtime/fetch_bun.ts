/**
 * The TLS fetch adapter for Bun: Bun's own `fetch` with its `tls` option (`ca`, `cert`, `key`, `rejectUnauthorized`,
 * `serverName`). Bun's fetch speaks HTTP/1.1 only and keeps its own connection pool, so there is nothing to close.
 * Loaded only by dynamic import in Bun (`../connection/adapters.ts`). Internal.
 *
 * @module
 */
import type { TlsFetch, TlsSettings } from "../connection/adapters.ts";

/** Bun's extension of fetch's init. */
interface BunTlsInit extends RequestInit {
  tls?: { ca?: string; cert?: string; key?: string; rejectUnauthorized?: boolean; serverName?: string };
}

/** A fetch whose connections use `settings`. */
export function openTlsFetch(settings: TlsSettings): TlsFetch {
  const tls: BunTlsInit["tls"] = { rejectUnauthorized: !settings.insecureSkipTlsVerify };
  if (settings.ca !== undefined) tls.ca = settings.ca;
  if (settings.cert !== undefined) tls.cert = settings.cert;
  if (settings.key !== undefined) tls.key = settings.key;
  if (settings.tlsServerName !== undefined) tls.serverName = settings.tlsServerName;
  return {
    fetch: (input, init) => fetch(input, { ...init, tls } as BunTlsInit),
    close: () => Promise.resolve(),
  };
}
