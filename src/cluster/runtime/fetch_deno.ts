/**
 * The TLS fetch adapter for Deno: `Deno.createHttpClient({ caCerts, cert, key, http2 })`, passed to fetch as `client`.
 * Needs only `--allow-net` for the server.
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
 * client accepts it, and Deno's fetch, which decompresses by itself whatever the request says, can end such a body at
 * the first flushed gzip block, long before the watch ends: the rest of a streaming list, its bookmark and every later
 * event would be lost with no error (tests/servers/kube_apiserver.test.ts found it). A whole body (a list)
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

/** A fetch whose connections use `settings` (no `tlsServerName` nor `insecureSkipTlsVerify`: the module's note). */
export function openTlsFetch(settings: TlsSettings): TlsFetch {
  if (settings.insecureSkipTlsVerify || settings.tlsServerName !== undefined) {
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
    fetch: async (input, init) => {
      const response = await fetch(input, { ...withoutCompressedWatch(input, init), client } as RequestInit);
      return init?.signal ? abortableBody(response, init.signal) : response;
    },
    close: () => {
      if (!closed) client.close();
      closed = true;
      return Promise.resolve();
    },
  };
}

/**
 * `response` whose body errors with the signal's reason when `signal` aborts. Deno's fetch stops following the
 * signal once its Request is garbage-collected, so after a collection an abort (the connection's `close()`) left a
 * watch's body open until the server ended it; this follows the signal for as long as the body is read.
 */
function abortableBody(response: Response, signal: AbortSignal): Response {
  if (response.body === null) return response;
  const reader = response.body.getReader();
  const stop = () => {
    reader.cancel(signal.reason).catch(() => {});
  };
  let onAbort: (() => void) | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      onAbort = () => {
        controller.error(signal.reason);
        stop();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    },
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          signal.removeEventListener("abort", onAbort!);
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        signal.removeEventListener("abort", onAbort!);
        controller.error(signal.aborted ? signal.reason : error);
      }
    },
    cancel(reason) {
      signal.removeEventListener("abort", onAbort!);
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  const wrapped = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(wrapped, "url", { value: response.url });
  return wrapped;
}
