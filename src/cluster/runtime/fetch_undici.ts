/**
 * The TLS fetch adapter for Node (and for Deno when the config asks what Deno's own client cannot do: skip
 * verification, a TLS server name): the `undici` package's own `fetch` with its own `Agent`, whose `connect` options
 * carry the CA, the client certificate and key, `rejectUnauthorized` and `servername`.
 *
 * undici's `fetch`, not Node's global one: an `Agent` from the undici package given as `dispatcher` to Node's global
 * fetch (the undici bundled in Node, of whatever version that Node has) works only while the two speak the same
 * dispatcher protocol, which changes between undici's major versions; a fetch and an Agent from one package always
 * do. Its responses are undici's `Response` (not `instanceof` the global one; the same API, the body a web
 * `ReadableStream`).
 * Loaded only by dynamic import (`../connection/adapters.ts`). Internal.
 *
 * @module
 */
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from "undici";
import type { TlsFetch, TlsSettings } from "../connection/adapters.ts";

/** undici's fetch takes its own Request only: a global Request is passed as its URL and init. */
function split(input: string | URL | Request, init: RequestInit | undefined): [string, RequestInit] {
  if (typeof input === "string" || input instanceof URL) return [String(input), init ?? {}];
  const fromRequest: RequestInit & { duplex?: "half" } = {
    method: input.method,
    headers: input.headers,
    signal: input.signal,
    redirect: input.redirect,
  };
  if (input.body !== null) {
    fromRequest.body = input.body;
    fromRequest.duplex = "half";
  }
  return [input.url, { ...fromRequest, ...init }];
}

/** undici's `connect` options (its TLS) for `settings`: also the WebSocket adapter's (`websocket_undici.ts`). */
export function undiciConnectOptions(settings: TlsSettings) {
  return {
    ca: settings.ca,
    cert: settings.cert,
    key: settings.key,
    rejectUnauthorized: !settings.insecureSkipTlsVerify,
    servername: settings.tlsServerName,
  };
}

/** A fetch whose connections use `settings`. */
export function openTlsFetch(settings: TlsSettings): TlsFetch {
  const agent = new Agent({
    allowH2: settings.http2,
    // undici opens a new connection for a request while each one it has carries `pipelining` requests: with 1 (its
    // default), HTTP/2 connections would never carry two streams. On a server without HTTP/2 this pipelines HTTP/1.1
    // requests instead (a watch would hold up those behind it): `http2` is for servers that speak it (kube-apiserver).
    ...(settings.http2 ? { pipelining: 100 } : {}),
    connect: undiciConnectOptions(settings),
  });
  return {
    fetch: async (input, init) => {
      const [url, rest] = split(input, init);
      const response = await undiciFetch(url, {
        ...(rest as UndiciRequestInit),
        headers: rest.headers === undefined ? undefined : [...new Headers(rest.headers)],
        dispatcher: agent,
      });
      return response as unknown as Response;
    },
    close: (force) => force ? agent.destroy() : agent.close(),
  };
}
