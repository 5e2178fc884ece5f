/**
 * {@linkcode connectCluster}: a {@linkcode ClusterConnection} from a {@linkcode ClusterConfig}, with the TLS and
 * credentials of the config done right in each runtime.
 *
 * @module
 */
import type { ClusterConfig, ClusterConnection } from "../cluster_config.ts";
import { ClusterAccessError } from "../errors.ts";
import type { Host } from "../host.ts";
import type { FetchFunction, TlsFetch, TlsSettings } from "./adapters.ts";
import { ConnectionWebSockets } from "./connection_websockets.ts";
import { Credentials, type RequestCredentials } from "./credentials.ts";
import { defaultHost } from "../host.ts";
import { detectRuntime, type RuntimeName } from "./runtime_name.ts";
import { openTlsFetch, requestFailure } from "./tls_fetch.ts";
import { DEFAULT_TOKEN_FILE_REREAD_MS } from "./token_file.ts";

/**
 * Options of {@linkcode connectCluster}.
 *
 * @example
 * ```ts
 * import type { ConnectClusterOptions } from "watchwire";
 *
 * // In a Cloudflare Worker, `env.KUBE` would be an mTLS certificate binding that presents the cluster's client
 * // certificate; a stand-in here.
 * const env = { KUBE: { fetch: (input: Request | string | URL, init?: RequestInit) => fetch(input, init) } };
 * const options: ConnectClusterOptions = {
 *   fetch: (input, init) => env.KUBE.fetch(input, init),
 *   fetchHasClientCertificate: true,
 * };
 * console.log(Object.keys(options)); // [ "fetch", "fetchHasClientCertificate" ]
 * ```
 */
export interface ConnectClusterOptions {
  /**
   * A fetch that does the cluster's TLS itself (a Workers mTLS binding, a proxy): used instead of the runtime's
   * adapter, and the config's CA, `tlsServerName` and `insecureSkipTlsVerify` are then its job. Needed in runtimes
   * without an adapter (browsers, Workers) when the config has TLS settings.
   */
  fetch?: FetchFunction;
  /**
   * With `fetch`: that the fetch presents the config's client certificate itself. Without it, a config (or an exec
   * plugin) with a client certificate is an error (`CLIENT_CERTIFICATE_NOT_APPLIED`) rather than a certificate
   * silently left out.
   */
  fetchHasClientCertificate?: boolean;
  /** The runtime whose adapters to use; detected by default ({@linkcode detectRuntime}). */
  runtime?: RuntimeName;
  /** The clock, in milliseconds since the epoch, for token file re-reads and exec credential expiry: `Date.now`. */
  now?: () => number;
  /** How long a token read from `tokenFile` is used before the file is read again: 60 000 ms (client-go's). */
  tokenFileRereadMs?: number;
  /**
   * Offer HTTP/2 (ALPN) to the server where the adapter can (undici's `allowH2` in Node, Deno's client; Bun's fetch
   * has none), and carry concurrent requests (watches) as streams of one connection: false by default, each request
   * then on an HTTP/1.1 connection of its own while it lasts. For servers that speak HTTP/2 (kube-apiserver does):
   * in Node, a server without it would get pipelined HTTP/1.1 requests.
   */
  http2?: boolean;
  /** Files (the token file) and environment: the runtime's own (`node:fs/promises`, `node:process`) by default. */
  host?: Host;
}

/** The server URL without a trailing slash; `CONFIG_INVALID` if it is not an http(s) URL. */
function baseUrl(config: ClusterConfig): string {
  let url: URL;
  try {
    url = new URL(config.server);
  } catch (e) {
    throw new ClusterAccessError("CONFIG_INVALID", `server ${JSON.stringify(config.server)} is not a URL`, {
      source: config.source,
      cause: e,
    });
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ClusterAccessError("CONFIG_INVALID", `server ${config.server} is not an http: or https: URL`, {
      source: config.source,
    });
  }
  return url.href.replace(/\/+$/, "");
}

/** The TLS settings of a config (PEM as text). */
function tlsSettings(config: ClusterConfig, http2: boolean): TlsSettings {
  if ((config.clientCertificateData === undefined) !== (config.clientKeyData === undefined)) {
    throw new ClusterAccessError(
      "CONFIG_INVALID",
      `the config has a client ${
        config.clientKeyData === undefined ? "certificate but no key" : "key but no certificate"
      }`,
      { source: config.source },
    );
  }
  const text = (bytes: Uint8Array | undefined) => bytes === undefined ? undefined : new TextDecoder().decode(bytes);
  const settings: TlsSettings = { insecureSkipTlsVerify: config.insecureSkipTlsVerify === true, http2 };
  const ca = text(config.caData);
  if (ca !== undefined && !config.insecureSkipTlsVerify) settings.ca = ca;
  if (config.clientCertificateData !== undefined) {
    settings.cert = text(config.clientCertificateData);
    settings.key = text(config.clientKeyData);
  }
  if (config.tlsServerName !== undefined) settings.tlsServerName = config.tlsServerName;
  return settings;
}

/**
 * A request's own signal, aborted when any of `signals` is: `AbortSignal.any` where the runtime has it, which adds no
 * listener to them (the runtime links the signals and lets go of them with the request), else the same by hand, whose
 * listeners are removed once it aborts. Never one of `signals` itself: the runtime's fetch adds an `abort` listener to
 * the signal it is given, which stays until the request is garbage-collected (undici), so handing every request the
 * connection's one closing signal would pile up a listener per request on it (undici then warns,
 * `MaxListenersExceededWarning`).
 */
function requestSignal(signals: AbortSignal[]): AbortSignal {
  if (typeof AbortSignal.any === "function") return AbortSignal.any(signals);
  const any = new AbortController();
  const unfollow = () => {
    for (const [signal, follow] of followed) signal.removeEventListener("abort", follow);
  };
  const followed = new Map<AbortSignal, () => void>();
  for (const signal of signals) {
    if (signal.aborted) {
      any.abort(signal.reason);
      break;
    }
    const follow = () => {
      unfollow();
      any.abort(signal.reason);
    };
    followed.set(signal, follow);
    signal.addEventListener("abort", follow, { once: true });
  }
  if (any.signal.aborted) unfollow();
  return any.signal;
}

/** Whether a request's body can be sent twice (for a retry after a 401). */
function replayable(input: string | URL | Request, init: RequestInit | undefined): boolean {
  if (typeof input === "object" && !(input instanceof URL) && input.body !== null && init?.body === undefined) {
    return false;
  }
  const body = init?.body;
  return body === undefined || body === null || !(body instanceof ReadableStream);
}

/**
 * Connects to a cluster: checks the config and returns a {@linkcode ClusterConnection} whose `fetch` does the config's
 * TLS in this runtime and adds its credentials to each request.
 *
 * - TLS, per runtime: Node, the `undici` package's fetch with an `Agent` whose `connect` has the CA, client
 *   certificate and key, `rejectUnauthorized` and `servername`; Deno, `Deno.createHttpClient({ caCerts, cert, key })`
 *   (no flag; `--allow-net`; its `caCerts` are trusted beside Deno's roots), or undici through `node:tls` for
 *   `insecureSkipTlsVerify` and `tlsServerName`, which Deno's client cannot do; Bun, fetch's `tls` option. Elsewhere (browsers, Workers) pass `options.fetch`; without
 *   one, a config with TLS settings is an `UNSUPPORTED` error, and one without uses the global fetch.
 * - Credentials: basic auth; a bearer token; a token file, read again at the first request 60 s after the last read,
 *   and after a 401 (`tokenFileRereadMs`, `now`); an exec credential plugin, run at the first request and kept until its
 *   expiration, run again after it and after a 401 (its client certificate, if it gives one, is used by a fetch made
 *   for it); impersonation (`Impersonate-User`, one `Impersonate-Group`, `Impersonate-Uid`).
 * - `fetch(input, init)`: a string input starting with `/` is a path under the server URL (its path prefix kept); the
 *   credential headers are set on the request (over the caller's of the same names); a 401 after which a token file or
 *   exec credential was renewed is retried once with the new one (not for a streamed request body). A request that
 *   fails before a response is a `ClusterAccessError` (`SERVER_CERTIFICATE_REJECTED`, `REQUEST_FAILED`) that names
 *   the method, the URL and the cause; an abort stays an `AbortError`.
 * - `openWebSocket(url, handshake)` (Node, Deno and Bun, without `options.fetch`): the WebSocket of a watch over
 *   WebSocket (`webSocketWatch`, `transport: "websocket"`, which use it when not given their own) with the same TLS as
 *   `fetch`: in Node the `undici` package's WebSocket with an `Agent` of its own (HTTP/1.1) whose `connect` has the CA,
 *   client certificate and key, `rejectUnauthorized` and `servername`; in Deno its WebSocket with `client`
 *   (`Deno.createHttpClient`), or undici's for `insecureSkipTlsVerify` and `tlsServerName`; in Bun its WebSocket's
 *   `tls`. The handshake sends the credentials as headers (a token file's and an exec plugin's token too, and an exec
 *   plugin's client certificate as its TLS); a 401 is not retried with a renewed token there (the watch fails, and
 *   the next one has it). Absent in browsers and Workers (their WebSocket trusts the platform, and a Worker upgrades
 *   `fetch`) and with `options.fetch` (whose TLS a WebSocket cannot share).
 * - `close()` aborts the requests and responses in flight (with a `CLOSED` error), ends the WebSockets open (each
 *   gets an `error` event with the `CLOSED` error, then closes) and releases the agent or HTTP client; `fetch` then
 *   fails (`CLOSED`).
 *
 * @example
 * ```ts
 * import { connectCluster } from "watchwire";
 *
 * // A fake server through a custom fetch; in Node, Deno and Bun leave `fetch` out to use the config's TLS.
 * const connection = await connectCluster(
 *   { server: "https://kube.example:6443", token: "abc", impersonate: { user: "jane" }, namespace: "dev" },
 *   { fetch: async (input, init) => Response.json({ url: String(input), headers: [...new Headers(init?.headers)] }) },
 * );
 * const response = await connection.fetch("/api/v1/namespaces/dev/pods");
 * const seen: { url: string; headers: [string, string][] } = await response.json();
 * console.log(seen.url); // https://kube.example:6443/api/v1/namespaces/dev/pods
 * console.log(Object.fromEntries(seen.headers)); // { authorization: "Bearer abc", "impersonate-user": "jane" }
 * console.log(connection.namespace); // dev
 * await connection.close();
 * ```
 */
export async function connectCluster(
  config: ClusterConfig,
  options: ConnectClusterOptions = {},
): Promise<ClusterConnection> {
  const source = config.source;
  const server = baseUrl(config);
  const runtime = options.runtime ?? detectRuntime();
  const now = options.now ?? Date.now;
  const settings = tlsSettings(config, options.http2 ?? false);
  const host = options.host;
  const credentials = new Credentials(
    config,
    runtime,
    now,
    host === undefined ? defaultHost : () => Promise.resolve(host),
    options.tokenFileRereadMs ?? DEFAULT_TOKEN_FILE_REREAD_MS,
  );

  const callerFetch = options.fetch;
  const certificateNotApplied = (from: string) =>
    new ClusterAccessError(
      "CLIENT_CERTIFICATE_NOT_APPLIED",
      `${from} has a client certificate, which connectCluster cannot give to a caller's fetch: present it in that ` +
        "fetch (e.g. a Workers mTLS certificate binding) and pass fetchHasClientCertificate: true",
      { source },
    );
  if (callerFetch !== undefined && settings.cert !== undefined && options.fetchHasClientCertificate !== true) {
    throw certificateNotApplied("the config");
  }
  const needsTls = settings.ca !== undefined || settings.cert !== undefined || settings.insecureSkipTlsVerify ||
    settings.tlsServerName !== undefined;
  /** The fetch for the config's own TLS settings. */
  let base: TlsFetch;
  if (callerFetch !== undefined) {
    base = { fetch: callerFetch, close: () => Promise.resolve() };
  } else if (runtime === "web" && !needsTls) {
    base = { fetch: (input, init) => fetch(input, init), close: () => Promise.resolve() };
  } else {
    base = await openTlsFetch(runtime, settings, source);
  }

  /** The fetch made for the exec plugin's client certificate in hand, and which certificate it is for. */
  let execTransport: { cert: string; key: string; transport: Promise<TlsFetch> } | undefined;
  const retired: Promise<TlsFetch>[] = [];
  let closed = false;
  /** Aborted by close(): ends requests and responses in flight, in every runtime alike. */
  const closing = new AbortController();

  function transportFor(credentials: RequestCredentials): Promise<TlsFetch> {
    const certificate = credentials.clientCertificate;
    if (certificate === undefined) return Promise.resolve(base);
    if (callerFetch !== undefined) {
      if (options.fetchHasClientCertificate === true) return Promise.resolve(base);
      throw certificateNotApplied(`exec plugin ${config.exec?.command}`);
    }
    if (execTransport?.cert === certificate.cert && execTransport.key === certificate.key) {
      return execTransport.transport;
    }
    // A new certificate: a fetch for it; the old one finishes what it has in flight, then closes.
    if (execTransport !== undefined) {
      const old = execTransport.transport;
      retired.push(old);
      old.then((t) => t.close(false), () => {});
    }
    const transport = openTlsFetch(runtime, { ...settings, cert: certificate.cert, key: certificate.key }, source);
    execTransport = { ...certificate, transport };
    return transport;
  }

  async function send(input: string | URL | Request, init: RequestInit | undefined): Promise<Response> {
    if (closed) throw new ClusterAccessError("CLOSED", "the cluster connection is closed", { source });
    const target = typeof input === "string" && input.startsWith("/") ? server + input : input;
    const request = typeof target === "object" && !(target instanceof URL) ? target : undefined;
    const method = init?.method ?? request?.method ?? "GET";
    const url = request?.url ?? String(target);
    const canRetry = replayable(target, init);
    for (let attempt = 0;; attempt++) {
      const current = await credentials.current();
      const headers = new Headers(init?.headers ?? request?.headers);
      for (const [name, value] of current.headers) headers.set(name, value);
      let response: Response;
      try {
        const transport = await transportFor(current);
        const callerSignal = init?.signal ?? request?.signal;
        const signal = requestSignal(callerSignal ? [callerSignal, closing.signal] : [closing.signal]);
        response = await transport.fetch(target, { ...init, headers, signal });
      } catch (e) {
        throw requestFailure(e, method, url, source);
      }
      if (response.status !== 401 || attempt > 0 || current.renew === undefined) return response;
      const renewed = await current.renew();
      if (!renewed || !canRetry) return response;
      await response.body?.cancel().catch(() => {});
    }
  }

  // WebSockets with the config's TLS where the runtime's adapters can give it; a caller's fetch does the TLS itself,
  // and browsers and Workers open theirs by webSocketOpener()'s defaults.
  const webSockets = callerFetch === undefined && runtime !== "web"
    ? new ConnectionWebSockets(runtime, settings, () => credentials.current(), source)
    : undefined;

  const connection: ClusterConnection = {
    server,
    namespace: config.namespace,
    async headers() {
      const headers = new Headers();
      for (const [name, value] of (await credentials.current()).headers) headers.set(name, value);
      return headers;
    },
    fetch: send,
    async close() {
      if (closed) return;
      closed = true;
      closing.abort(new ClusterAccessError("CLOSED", "the cluster connection was closed", { source }));
      const all = [Promise.resolve(base), ...retired, ...(execTransport ? [execTransport.transport] : [])];
      await Promise.all([...all.map((t) => t.then((f) => f.close(true), () => {})), webSockets?.close()]);
    },
  };
  if (webSockets !== undefined) connection.openWebSocket = webSockets.open;
  return connection;
}
