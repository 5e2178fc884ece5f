/**
 * The TLS fetch adapter for Deno: `Deno.createHttpClient({ caCerts, cert, key, http2 })` (stable in Deno 2, no flag),
 * passed to fetch as `client`. Needs only `--allow-net` for the server.
 *
 * Deno's client cannot skip verification or verify another name than the URL's host, so a config with
 * `insecureSkipTlsVerify` or `tlsServerName` uses the undici adapter instead (`fetch_undici.ts`, through Deno's
 * `node:tls`). Note that Deno's `caCerts` are trusted in addition to Deno's root store, where Node and Bun trust the
 * given CA alone. Loaded only by dynamic import in Deno (`../connection/adapters.ts`). Internal.
 *
 * @module
 */
import type { TlsFetch, TlsSettings } from "../connection/adapters.ts";

/** The part of the Deno namespace used here. */
interface DenoHttp {
  createHttpClient(options: {
    caCerts?: string[];
    cert?: string;
    key?: string;
    http1?: boolean;
    http2?: boolean;
  }): { close(): void };
}

/**
 * `init` asking a watch (`watch=true` or `1` in the URL) not to be compressed. kube-apiserver gzips a watch when the
 * client accepts it, and Deno's fetch (2.9), which decompresses by itself whatever the request says, ends such a
 * body at the first flushed gzip block, long before the watch ends: the rest of a streaming list, its bookmark and
 * every later event are lost with no error (tests/servers/kube_apiserver.test.ts found it). A whole body (a list)
 * decompresses right and stays compressed.
 */
function withoutCompressedWatch(input: string | URL | Request, init: RequestInit | undefined): RequestInit | undefined {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const watch = url.searchParams.get("watch");
  if (watch !== "true" && watch !== "1") return init;
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  headers.set("accept-encoding", "identity");
  return { ...init, headers };
}

/** A fetch whose connections use `settings` (no `serverName`, `rejectUnauthorized` true: see the module's note). */
export function openTlsFetch(settings: TlsSettings): TlsFetch {
  if (!settings.rejectUnauthorized || settings.serverName !== undefined) {
    throw new Error("Deno's HTTP client can neither skip verification nor verify another name: use fetch_undici.ts");
  }
  const deno = (globalThis as unknown as { Deno: DenoHttp }).Deno;
  const client = deno.createHttpClient({
    ...(settings.ca === undefined ? {} : { caCerts: [settings.ca] }),
    ...(settings.cert === undefined ? {} : { cert: settings.cert, key: settings.key }),
    http1: true,
    http2: settings.http2,
  });
  let closed = false;
  return {
    fetch: (input, init) => fetch(input, { ...withoutCompressedWatch(input, init), client } as RequestInit),
    close: () => {
      if (!closed) client.close();
      closed = true;
      return Promise.resolve();
    },
  };
}
