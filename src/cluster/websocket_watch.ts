/**
 * {@linkcode webSocketWatch}: one watch request over WebSocket, through the runtime's `WebSocket`, to a stream of typed
 * events; {@linkcode webSocketOpener}: how the WebSocket is opened in each runtime.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../events.ts";
import { DecodeError } from "../errors.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../limits.ts";
import { WebSocketWatchEventDecoder } from "../watch/websocket/websocket_watch_event_decoder.ts";
import { decodeWatchResponse } from "../watch/decode_watch_response.ts";
import type { ClusterConnection } from "./cluster_config.ts";
import { detectRuntime } from "./connection/runtime_name.ts";
import { ClusterAccessError, describeCauses } from "./errors.ts";
import { ACCEPT } from "./list.ts";
import { checkProtobufDecoders } from "./check_protobuf_decoders.ts";
import { type ResourceRef, watchUrl } from "./resource.ts";
import type { WatchOptions } from "./watch.ts";

/**
 * The part of the WebSocket API a watch uses: what the global `WebSocket` of browsers, Deno, Bun, Workers and Node
 * (where it has one: docs/runtimes-and-bundles.md) has, and undici's `WebSocket`.
 *
 * @example
 * ```ts
 * import type { WebSocketLike } from "watchwire";
 *
 * // What a watch needs of a socket; a global WebSocket (Deno, Bun, browsers, Workers, most Node versions) has it.
 * function closeWhenDone(socket: WebSocketLike, done: Promise<void>): void {
 *   socket.binaryType = "arraybuffer";
 *   done.then(() => socket.close(1000));
 * }
 * console.log(typeof closeWhenDone); // function
 * ```
 */
export interface WebSocketLike {
  /** Set to `"arraybuffer"` before any message. */
  binaryType: string;
  /** 0 while connecting, 1 once open (a socket an opener returns open gets no `open` event), 2 closing, 3 closed. */
  readonly readyState: number;
  /** `open`, `message`, `error` and `close` are listened to. */
  addEventListener(type: string, listener: (event: unknown) => void): void;
  close(code?: number, reason?: string): void;
}

/**
 * What a {@linkcode WebSocketOpener} is given: the handshake the API server should see.
 *
 * @example
 * ```ts
 * import type { WebSocketHandshake } from "watchwire";
 *
 * const handshake: WebSocketHandshake = {
 *   headers: new Headers({ accept: "application/json", origin: "https://127.0.0.1:6443", authorization: "Bearer abc" }),
 *   protocols: [],
 *   fetch: (input, init) => fetch(input, init),
 * };
 * console.log(handshake.headers.get("origin")); // https://127.0.0.1:6443
 * ```
 */
export interface WebSocketHandshake {
  /**
   * The request's headers: the connection's credentials (`Authorization`, `Impersonate-*`), `Accept` (the wire
   * format), and `Origin` (the server's own origin: kube-apiserver refuses a WebSocket handshake without one, 403).
   */
  headers: Headers;
  /** Subprotocols to ask for besides any the opener adds. */
  protocols: string[];
  /** The connection's fetch (its TLS and credentials), for an opener that upgrades a fetch (Workers). */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
}

/**
 * Opens the WebSocket of a watch: `url` is the watch URL (`wss:` or `ws:`). May return a promise, and a socket that
 * is open already (a Worker's `response.webSocket`, accepted). A failure (thrown, or the socket's `error` and `close`
 * before `open`) is looked into by the same request over plain HTTP; a `ClusterAccessError` `UNSUPPORTED` or `CLOSED`
 * it throws is passed on as it is, and so is one that is the `error` of the socket's `error` event (`connectCluster`'s
 * opener ends its sockets so when the connection closes).
 *
 * @example
 * ```ts
 * import type { WebSocketOpener } from "watchwire";
 *
 * // Where the runtime has no global WebSocket, undici's (`import { WebSocket } from "undici"`) takes the same init.
 * const open: WebSocketOpener = (url, { headers, protocols }) =>
 *   new WebSocket(url, { protocols, headers } as unknown as string[]);
 * console.log(typeof open); // function
 * ```
 */
export type WebSocketOpener = (url: string, handshake: WebSocketHandshake) => WebSocketLike | Promise<WebSocketLike>;

/**
 * A WebSocket class: the global `WebSocket`, undici's, or one that takes an init dictionary the same way.
 *
 * @example
 * ```ts
 * import type { WebSocketConstructorLike } from "watchwire";
 *
 * const constructor: WebSocketConstructorLike | undefined = globalThis.WebSocket;
 * console.log(constructor === undefined ? "none" : "a global WebSocket"); // a global WebSocket (in Deno)
 * ```
 */
// deno-lint-ignore no-explicit-any
export type WebSocketConstructorLike = new (url: string, ...rest: any[]) => WebSocketLike;

/**
 * How a WebSocket handshake carries what the API server needs (see {@linkcode WebSocketOpenerOptions.handshake}):
 * `"headers"`, `"subprotocol"` or `"fetch"`.
 *
 * @example
 * ```ts
 * import { detectRuntime, type WebSocketHandshakeMode } from "watchwire";
 *
 * const handshake: WebSocketHandshakeMode = detectRuntime() === "web" ? "subprotocol" : "headers";
 * console.log(handshake); // headers (in Node, Deno or Bun)
 * ```
 */
export type WebSocketHandshakeMode = "headers" | "subprotocol" | "fetch";

/**
 * Options of {@linkcode webSocketOpener}.
 *
 * @example
 * ```ts
 * import type { WebSocketOpenerOptions } from "watchwire";
 *
 * // Bun: the cluster's CA for the WebSocket's TLS (Bun's `tls` member of the WebSocket init).
 * const ca = "-----BEGIN CERTIFICATE-----\n...";
 * const options: WebSocketOpenerOptions = { handshake: "headers", init: { tls: { ca } } };
 * console.log(options.handshake); // headers
 * ```
 */
export interface WebSocketOpenerOptions {
  /**
   * How the handshake carries the headers (credentials, `Accept`, `Origin`):
   * - `"headers"`: as headers, through the non-standard `headers` member of the WebSocket init
   *   (`new WebSocket(url, { protocols, headers })`), which Node's (undici's), Deno's and Bun's WebSocket take; any
   *   credentials a connection has (a token, basic auth, impersonation) and the wire format then work. None of these
   *   sends an `Origin` by itself: this one is the server's own origin.
   * - `"subprotocol"`: for browsers, whose WebSocket sends no header of the caller's (it sends its page's `Origin`
   *   itself): a bearer token goes as the subprotocol `base64url.bearer.authorization.k8s.io.<base64url of the
   *   token>`, which kube-apiserver takes out before the handshake, with `companionProtocol` beside it for the server
   *   to echo (a token alone is refused, 401, and two other subprotocols are, 400). No `Accept`: the server answers
   *   JSON whatever the format asked. Credentials that cannot travel this way (basic auth, impersonation) are an
   *   `UNSUPPORTED` error rather than left out.
   * - `"fetch"`: for Cloudflare Workers, whose `new WebSocket()` sends neither headers nor an `Origin` (so
   *   kube-apiserver refuses it, 403): the connection's own fetch (its TLS: an mTLS binding) with `Upgrade:
   *   websocket`, answered `101` with `response.webSocket`, which is accepted.
   *
   * Default: `"fetch"` in Workers, `"subprotocol"` elsewhere where {@linkcode detectRuntime} says `web` (browsers), else
   * `"headers"`.
   */
  handshake?: WebSocketHandshakeMode;
  /**
   * The WebSocket class, for `"headers"` and `"subprotocol"`: the runtime's global `WebSocket` by default. Where the
   * runtime has none (some Node versions: docs/runtimes-and-bundles.md), pass undici's (`import { WebSocket } from
   * "undici"`), which takes `headers` and a `dispatcher`.
   */
  WebSocket?: WebSocketConstructorLike;
  /** The subprotocol asked for beside the token's with `"subprotocol"`: `v4.channel.k8s.io` by default. */
  companionProtocol?: string;
  /**
   * More members of the WebSocket init with `"headers"`, for the cluster's TLS where the connection does not open its
   * WebSockets itself (`connectCluster`'s does, with its config's TLS): undici's `dispatcher` (an `Agent` whose
   * `connect` has `ca`, `cert`, `key`), Deno's `client` (`Deno.createHttpClient({ caCerts, cert, key })`), Bun's
   * `tls` (`{ ca, cert, key }`).
   */
  init?: Record<string, unknown>;
  /**
   * With `"subprotocol"`: before the first WebSocket to a server from this page, one `no-cors` fetch of the server's
   * origin (its answer unread). Chromium fails a WebSocket whose server asks for a client certificate (kube-apiserver
   * does whenever it has a client CA, even one it does not need) unless a fetch or a navigation to that server has
   * settled which certificate, if any, to present; Firefox asks none of this. Default: true in browsers, where
   * {@linkcode detectRuntime} says `web` outside Workers.
   */
  settleClientCertificate?: boolean;
}

/** The prefix of the subprotocol that carries a bearer token (k8s.io/apiserver's websocket authenticator). */
const BEARER_PROTOCOL_PREFIX = "base64url.bearer.authorization.k8s.io.";

/** The default of {@linkcode WebSocketOpenerOptions.companionProtocol}. */
const DEFAULT_COMPANION_PROTOCOL = "v4.channel.k8s.io";

/** Headers a browser's WebSocket sends by itself, or that say nothing the API server needs on this path. */
const HEADERS_NOT_NEEDED = new Set(["accept", "origin"]);

/** Whether this is a Cloudflare Worker (workerd). */
function isWorkers(): boolean {
  return (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === "Cloudflare-Workers";
}

/**
 * A {@linkcode WebSocketOpener}: see {@linkcode WebSocketOpenerOptions} for how the headers and TLS travel in each
 * runtime. Without a WebSocket class (no `WebSocket` option, and a runtime with no global one) opening fails with an
 * `UNSUPPORTED` {@linkcode ClusterAccessError} that says what to pass.
 *
 * Which runtimes reach which server: Node (undici), Deno and Bun send the headers given, `Origin` included (none of
 * them sends one by itself), and take the cluster's TLS through `init`, or the process's (`NODE_EXTRA_CA_CERTS` for
 * Node and Bun, `DENO_CERT` for Deno); a connection from `connectCluster` opens its WebSockets with its config's TLS
 * itself, with no opener to pass. A browser sends its page's `Origin` (a page of `file:` or a sandboxed frame
 * sends `null`, which kube-apiserver refuses: 403) and trusts only its own roots and client certificates (Chromium's
 * WebSocket needs a fetch to the server first: {@linkcode WebSocketOpenerOptions.settleClientCertificate}). A Worker
 * upgrades its fetch, with the TLS of the connection's fetch.
 *
 * @example
 * ```ts
 * import { webSocketOpener } from "watchwire";
 *
 * // What a browser's WebSocket is asked for a token: the token as a subprotocol, and one for the server to echo.
 * const asked: string[][] = [];
 * class Recorder {
 *   binaryType = "blob";
 *   readyState = 0;
 *   constructor(_url: string, protocols?: string[] | Record<string, unknown>) {
 *     asked.push(protocols as string[]);
 *   }
 *   addEventListener() {}
 *   close() {}
 * }
 * const open = webSocketOpener({ WebSocket: Recorder, handshake: "subprotocol" });
 * const headers = new Headers({ authorization: "Bearer abc" });
 * await open("wss://kube.example/api/v1/pods?watch=true", { headers, protocols: [], fetch });
 * console.log(asked[0]); // [ "base64url.bearer.authorization.k8s.io.YWJj", "v4.channel.k8s.io" ]
 * ```
 */
export function webSocketOpener(options: WebSocketOpenerOptions = {}): WebSocketOpener {
  const browser = detectRuntime() === "web" && !isWorkers();
  const handshake = options.handshake ?? (detectRuntime() !== "web" ? "headers" : browser ? "subprotocol" : "fetch");
  if (handshake === "fetch") return openByFetch;
  if (handshake === "headers") return openByHeaders(options);
  const open = openBySubprotocol(options.companionProtocol ?? DEFAULT_COMPANION_PROTOCOL, options);
  return (options.settleClientCertificate ?? browser) ? settlingClientCertificateFirst(open) : open;
}

/** `open`, after {@linkcode settleClientCertificate} for the URL. */
function settlingClientCertificateFirst(open: WebSocketOpener): WebSocketOpener {
  return async (url, handshake) => {
    await settleClientCertificate(url);
    return open(url, handshake);
  };
}

/** The fetch of each server origin (`https:`) by {@linkcode settleClientCertificate}, made once. */
const settledOrigins = new Map<string, Promise<void>>();

/**
 * One `no-cors` fetch of the origin of `url` (a `wss:` URL) the first time, whose answer (opaque) is not read: see
 * {@linkcode WebSocketOpenerOptions.settleClientCertificate}. Its failure (a CSP without the origin, a server down) is
 * left to the WebSocket to tell.
 */
function settleClientCertificate(url: string): Promise<void> {
  const target = new URL(url);
  if (target.protocol !== "wss:") return Promise.resolve();
  const origin = `https://${target.host}`;
  let settled = settledOrigins.get(origin);
  if (settled === undefined) {
    settled = fetch(`${origin}/`, { mode: "no-cors", cache: "no-store", signal: AbortSignal.timeout(10_000) })
      .then((response) => response.body?.cancel())
      // The WebSocket says what is wrong, if anything is.
      .catch(() => {});
    settledOrigins.set(origin, settled);
  }
  return settled;
}

/** `options.WebSocket`, or the global one; `UNSUPPORTED` where there is neither. */
function webSocketClass(options: WebSocketOpenerOptions): WebSocketConstructorLike {
  const WebSocketClass = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructorLike }).WebSocket;
  if (WebSocketClass === undefined) {
    throw new ClusterAccessError(
      "UNSUPPORTED",
      "this runtime has no global WebSocket: pass openWebSocket: webSocketOpener({ WebSocket }) with undici's " +
        'WebSocket (import { WebSocket } from "undici"), or watch over HTTP',
    );
  }
  return WebSocketClass;
}

/** The opener of `handshake: "headers"`, over `options.WebSocket` or the global one. */
function openByHeaders(options: WebSocketOpenerOptions): WebSocketOpener {
  return (url, handshake) =>
    new (webSocketClass(options))(url, { ...options.init, protocols: handshake.protocols, headers: handshake.headers });
}

/** The opener of `handshake: "subprotocol"`, over `options.WebSocket` or the global one. */
function openBySubprotocol(companionProtocol: string, options: WebSocketOpenerOptions): WebSocketOpener {
  return (url, handshake) => {
    const WebSocketClass = webSocketClass(options);
    const protocols = [...handshake.protocols];
    const cannot: string[] = [];
    for (const [name, value] of handshake.headers) {
      if (HEADERS_NOT_NEEDED.has(name)) continue;
      const bearer = name === "authorization" ? /^Bearer\s+(\S+)\s*$/i.exec(value) : null;
      if (bearer === null) cannot.push(name === "authorization" ? `authorization (${value.split(" ")[0]})` : name);
      else protocols.push(BEARER_PROTOCOL_PREFIX + base64Url(bearer[1]));
    }
    if (cannot.length > 0) {
      throw new ClusterAccessError(
        "UNSUPPORTED",
        `a WebSocket that sends no headers (a browser's) cannot carry ${cannot.join(", ")}: only a bearer token ` +
          "travels, as a subprotocol; watch over HTTP, or use a runtime whose WebSocket sends headers",
      );
    }
    if (protocols.length > handshake.protocols.length) protocols.push(companionProtocol);
    return new WebSocketClass(url, protocols);
  };
}

/** A Worker's WebSocket: the connection's fetch with `Upgrade: websocket`, its `response.webSocket` accepted. */
async function openByFetch(url: string, handshake: WebSocketHandshake): Promise<WebSocketLike> {
  const target = new URL(url);
  target.protocol = target.protocol === "ws:" ? "http:" : "https:";
  const headers = new Headers(handshake.headers);
  headers.set("upgrade", "websocket");
  if (handshake.protocols.length > 0) headers.set("sec-websocket-protocol", handshake.protocols.join(", "));
  const response = await handshake.fetch(target, { headers });
  const socket = (response as { webSocket?: (WebSocketLike & { accept(): void }) | null }).webSocket;
  if (response.status !== 101 || socket === undefined || socket === null) {
    await response.body?.cancel().catch(() => {});
    throw new Error(`the server answered ${response.status} ${response.statusText}, not 101 Switching Protocols`);
  }
  socket.accept();
  return socket;
}

/**
 * Options of {@linkcode webSocketWatch}: those of `watch()` (the query, `format`, `protobuf`, `maxEventBytes`,
 * `signal`) and how the WebSocket is opened.
 *
 * @example
 * ```ts
 * import { type WebSocketWatchOptions, webSocketOpener } from "watchwire";
 *
 * const options: WebSocketWatchOptions = {
 *   resourceVersion: "1200",
 *   allowWatchBookmarks: true,
 *   openWebSocket: webSocketOpener({ handshake: "headers" }),
 * };
 * console.log(options.resourceVersion); // 1200
 * ```
 */
export interface WebSocketWatchOptions extends WatchOptions {
  /**
   * How the WebSocket is opened. By default the connection's own `openWebSocket` where it has one (`connectCluster`'s,
   * in Node, Deno and Bun: the config's TLS), else {@linkcode webSocketOpener}`()` (the runtime's global WebSocket).
   */
  openWebSocket?: WebSocketOpener;
}

/** Whether `error` is a `ClusterAccessError` that ends a watch as it is: the connection closed, or no way to open. */
function passedOn(error: unknown): error is ClusterAccessError {
  return error instanceof ClusterAccessError && (error.code === "UNSUPPORTED" || error.code === "CLOSED");
}

/** Close codes that end a watch as the server means to: normal closure, going away, none given. */
const CLEAN_CLOSE_CODES = new Set([1000, 1001, 1005]);

/**
 * Opens one watch over WebSocket (the watch URL asked with a WebSocket upgrade, as `kubectl` never does but a browser
 * must) and returns its events as they arrive: the same typed events `watch()` gives for the same request over plain
 * HTTP. The server sends one event per message: text messages in JSON, binary ones in protobuf (each one event's bytes
 * without the 4-byte length of the HTTP body), decoded by `WebSocketWatchEventDecoder`.
 *
 * - The WebSocket is opened by `openWebSocket`, else by the connection's own (`connectCluster`'s in Node, Deno and Bun:
 *   the config's TLS, as its fetch has it), else by {@linkcode webSocketOpener}`()` (browsers, Workers).
 * - The promise resolves once the server has accepted the handshake (`101 Switching Protocols`). The runtime's
 *   WebSocket says no more of a refused handshake than that it failed, so the same request is then made over plain
 *   HTTP (`connection.fetch`): a refusal there (401, 403, 404, 429, ...) comes as one `ERROR` event with the server's
 *   Status, as `watch()` gives it; when plain HTTP is accepted, the promise rejects with a `REQUEST_FAILED`
 *   `ClusterAccessError` that says what differs (the WebSocket's TLS, an `Origin` not sent, a proxy that does not pass
 *   upgrades); when plain HTTP rejects the server's certificate too, with its `SERVER_CERTIFICATE_REJECTED`.
 * - The stream ends when the server closes the watch (its `timeoutSeconds`: close code 1000); a connection lost, or
 *   closed with another code, fails it after every event before with a `CONNECTION_LOST` error. A message over
 *   `maxEventBytes`, or one that does not decode, fails it with a `DecodeError` whose `context` names the message.
 * - `signal` or cancelling the stream closes the WebSocket; the connection's `close()` (`connectCluster`'s) fails the
 *   stream with its `CLOSED` error. A WebSocket has no backpressure: events wait in the stream's queue until read.
 *
 * @example
 * ```ts
 * import { type ClusterConnection, webSocketOpener, webSocketWatch } from "watchwire";
 *
 * // A stand-in for a server: a WebSocket class that sends one JSON event, then closes as a watch's end does.
 * class FakeWatchSocket extends EventTarget {
 *   binaryType = "blob";
 *   readyState = 0;
 *   constructor(readonly url: string, readonly init: unknown) {
 *     super();
 *     setTimeout(() => {
 *       this.dispatchEvent(new Event("open"));
 *       const data = '{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"8"}}}\n';
 *       this.dispatchEvent(new MessageEvent("message", { data }));
 *       this.dispatchEvent(Object.assign(new Event("close"), { code: 1000, reason: "", wasClean: true }));
 *     });
 *   }
 *   close() {}
 * }
 * const connection: ClusterConnection = {
 *   server: "https://127.0.0.1:6443",
 *   headers: async () => new Headers({ authorization: "Bearer abc" }),
 *   fetch: () => Promise.reject(new Error("not used")),
 *   close: async () => {},
 * };
 * const events = await webSocketWatch(connection, { version: "v1", resource: "configmaps" }, {
 *   resourceVersion: "7",
 *   openWebSocket: webSocketOpener({ WebSocket: FakeWatchSocket, handshake: "headers" }),
 * });
 * for await (const event of events) if (event.type === "ADDED") console.log(event.type, event.object.metadata?.name); // ADDED a
 * ```
 */
export async function webSocketWatch<T = KubernetesObject>(
  connection: ClusterConnection,
  ref: ResourceRef,
  options: WebSocketWatchOptions = {},
): Promise<ReadableStream<WatchEvent<T>>> {
  const {
    format = "json",
    protobuf,
    maxEventBytes = DEFAULT_MAX_EVENT_BYTES,
    signal,
    openWebSocket,
    ...query
  } = options;
  const what = `watch ${ref.group ? `${ref.resource}.${ref.group}` : ref.resource} over WebSocket`;
  checkProtobufDecoders(what, format, protobuf);
  if ((format as string) === "cbor") {
    // Binary messages would be CBOR, which WebSocketWatchEventDecoder does not decode (yet).
    throw new ClusterAccessError(
      "USAGE",
      `${what}: format "cbor" is not decoded over WebSocket: use format "json" or "protobuf", or transport "http"`,
    );
  }
  signal?.throwIfAborted();
  const url = watchUrl(connection.server, ref, query);
  const headers = await connection.headers();
  headers.set("accept", ACCEPT[format]);
  if (!headers.has("origin")) headers.set("origin", url.origin);
  const socketUrl = new URL(url.href);
  socketUrl.protocol = url.protocol === "http:" ? "ws:" : "wss:";

  const connectionOpener = connection.openWebSocket;
  const ownTls = openWebSocket === undefined && connectionOpener !== undefined;
  let socket: WebSocketLike;
  try {
    socket = await (openWebSocket ?? connectionOpener ?? webSocketOpener())(socketUrl.href, {
      headers,
      protocols: [],
      fetch: (input, init) => connection.fetch(input, init),
    });
  } catch (error) {
    if (passedOn(error)) throw error;
    if (signal?.aborted) throw signal.reason;
    return await refusedHandshake<T>(connection, url, headers, what, error, ownTls, options);
  }
  if (signal?.aborted) {
    closeQuietly(socket);
    throw signal.reason;
  }
  socket.binaryType = "arraybuffer";

  const decoder = new WebSocketWatchEventDecoder<T>(protobuf ? { protobuf } : {});
  let opened = socket.readyState === 1;
  let ended = false;
  let messages = 0;
  let out!: ReadableStreamDefaultController<WatchEvent<T>>;
  type Outcome = { opened: true } | { opened: false; cause: unknown };
  let settle!: (outcome: Outcome) => void;
  const handshake = opened
    ? Promise.resolve<Outcome>({ opened: true })
    : new Promise<Outcome>((resolve) => (settle = resolve));
  let lastError: unknown;

  const stop = () => {
    signal?.removeEventListener("abort", onAbort);
    closeQuietly(socket);
  };
  const fail = (reason: unknown) => {
    if (ended) return;
    ended = true;
    stop();
    out.error(reason);
  };
  const onAbort = () => {
    if (!opened) settle({ opened: false, cause: signal!.reason });
    fail(signal!.reason);
  };
  const events = new ReadableStream<WatchEvent<T>>({
    start(controller) {
      out = controller;
    },
    cancel() {
      ended = true;
      stop();
    },
  }, { highWaterMark: 0 });

  socket.addEventListener("open", () => {
    if (opened) return;
    opened = true;
    settle({ opened: true });
  });
  socket.addEventListener("error", (event) => {
    lastError = errorOf(event);
    if (!opened) settle({ opened: false, cause: lastError });
    else if (passedOn(lastError)) fail(lastError);
  });
  socket.addEventListener("message", (event) => {
    if (ended) return;
    messages++;
    try {
      out.enqueue(decodeMessage(decoder, (event as { data?: unknown }).data, maxEventBytes));
    } catch (error) {
      fail(
        error instanceof DecodeError
          ? new DecodeError(error.code, error.offset, error.detail, {
            ...(error.cause === undefined ? {} : { cause: error.cause }),
            context: `message ${messages} of the ${what} ${url.pathname}`,
          })
          : error,
      );
    }
  });
  socket.addEventListener("close", (event) => {
    const { code, reason, wasClean } = event as { code?: number; reason?: string; wasClean?: boolean };
    if (!opened) {
      settle({ opened: false, cause: lastError ?? new Error(`closed with code ${code} ${reason ?? ""}`.trim()) });
      return;
    }
    signal?.removeEventListener("abort", onAbort);
    if (ended) return;
    // The code is the server's close frame's: a connection lost without one is 1006. `wasClean` is not asked: Firefox
    // says false when the server closes the connection right after its close frame, as kube-apiserver does.
    if (code !== undefined && CLEAN_CLOSE_CODES.has(code)) {
      ended = true;
      out.close();
      return;
    }
    fail(
      new ClusterAccessError(
        "CONNECTION_LOST",
        `${what} ${url}: the WebSocket closed with code ${code}${reason ? ` (${reason})` : ""}${
          wasClean === false ? ", not cleanly" : ""
        } after ${messages} messages${lastError === undefined ? "" : ` (${describeCauses(lastError)})`}`,
        { cause: lastError },
      ),
    );
  });
  signal?.addEventListener("abort", onAbort, { once: true });

  const outcome = await handshake;
  if (outcome.opened) return events;
  ended = true;
  stop();
  if (signal?.aborted) throw signal.reason;
  if (passedOn(outcome.cause)) throw outcome.cause;
  return await refusedHandshake<T>(connection, url, headers, what, outcome.cause, ownTls, options);
}

/** The event of one message of a runtime's WebSocket (a string for a text message, an ArrayBuffer for a binary one). */
function decodeMessage<T>(
  decoder: WebSocketWatchEventDecoder<T>,
  data: unknown,
  maxEventBytes: number,
): WatchEvent<T> {
  if (typeof data === "string") {
    const length = utf8Length(data, maxEventBytes);
    if (length > maxEventBytes) throw tooLarge(length, maxEventBytes);
    return decoder.decodeText(data);
  }
  let bytes: Uint8Array;
  if (data instanceof ArrayBuffer) bytes = new Uint8Array(data);
  else if (ArrayBuffer.isView(data)) bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  else {
    throw new DecodeError("MESSAGE_INVALID", 0, `websocket watch: a message the WebSocket gave as ${describe(data)}`);
  }
  if (bytes.length > maxEventBytes) throw tooLarge(bytes.length, maxEventBytes);
  return decoder.decodeBinary(bytes);
}

/** Closes `socket`, which may be closing or closed already. */
function closeQuietly(socket: WebSocketLike): void {
  try {
    socket.close(1000);
  } catch {
    // Closed already, or never opened: nothing to end.
  }
}

/** What an `error` event says: its `error`, else its message, else that there was one. */
function errorOf(event: unknown): unknown {
  const { error, message } = event as { error?: unknown; message?: unknown };
  if (error !== undefined && error !== null) return error;
  if (typeof message === "string" && message !== "") return new Error(message);
  return new Error("the WebSocket reported an error (the runtime gives no detail)");
}

function tooLarge(length: number, maxEventBytes: number): DecodeError {
  return new DecodeError(
    "MESSAGE_TOO_LARGE",
    0,
    `websocket watch: a message of ${length} bytes is over maxEventBytes (${maxEventBytes} bytes)`,
  );
}

function describe(data: unknown): string {
  if (data === null || typeof data !== "object") return typeof data;
  return (data as { constructor?: { name?: string } }).constructor?.name ?? "an object";
}

/**
 * The UTF-8 length of `text`, counted only where it matters: a UTF-8 encoding takes at least one byte per UTF-16 unit
 * and at most three, so past `max` units it is over, and within `max / 3` it is not.
 */
function utf8Length(text: string, max: number): number {
  if (text.length > max || text.length * 3 <= max) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
      bytes += 4; // a surrogate pair: one code point of four bytes
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Base64url without padding of a string's UTF-8 bytes. */
function base64Url(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * After a refused WebSocket handshake: the same request over plain HTTP, whose refusal (a Status) is the watch's one
 * `ERROR` event; if plain HTTP is accepted, the WebSocket failed on its own, and a `REQUEST_FAILED` error says how it
 * may have.
 */
async function refusedHandshake<T>(
  connection: ClusterConnection,
  url: URL,
  headers: Headers,
  what: string,
  cause: unknown,
  ownTls: boolean,
  options: WebSocketWatchOptions,
): Promise<ReadableStream<WatchEvent<T>>> {
  const failed = () =>
    new ClusterAccessError(
      "REQUEST_FAILED",
      `${what} ${url}: the WebSocket handshake failed (${describeCauses(cause)})`,
      { cause },
    );
  const plain = new Headers(headers);
  plain.delete("origin");
  const own = new AbortController();
  const abort = () => own.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", abort, { once: true });
  let response: Response;
  try {
    response = await connection.fetch(url, { headers: plain, signal: own.signal });
  } catch (error) {
    options.signal?.removeEventListener("abort", abort);
    if (options.signal?.aborted) throw options.signal.reason;
    // A server certificate the connection's fetch rejects, the WebSocket rejected too: the fetch's error says what to
    // check, as watch() would, where the WebSocket's tells less.
    if (error instanceof ClusterAccessError && error.code === "SERVER_CERTIFICATE_REJECTED") throw error;
    throw failed();
  }
  if (response.ok) {
    own.abort();
    options.signal?.removeEventListener("abort", abort);
    await response.body?.cancel().catch(() => {});
    throw new ClusterAccessError(
      "REQUEST_FAILED",
      `${what} ${url}: the WebSocket handshake failed (${describeCauses(cause)}), though the same request over plain ` +
        `HTTP was answered ${response.status}: ${
          ownTls
            // The connection's opener has its TLS; a token renewed by the plain request's 401 serves the next watch.
            ? "its credentials may have been renewed after a 401 just now (a token file read again, an exec plugin run " +
              "again: the next watch has them)"
            : "the WebSocket may not trust the server's certificate or lack the client certificate (the runtime's " +
              "WebSocket does not have the connection's TLS: pass openWebSocket: webSocketOpener({ init }), or " +
              "connect with connectCluster, whose connection opens WebSockets with it)"
        }, it may not have sent the Origin header (kube-apiserver refuses a handshake without one, or with ` +
        "`null`: 403), or a proxy on the way may not pass WebSocket upgrades",
      { cause },
    );
  }
  const retryAfter = /^\d+$/.test(response.headers.get("retry-after")?.trim() ?? "")
    ? Number(response.headers.get("retry-after"))
    : undefined;
  const events = decodeWatchResponse<T>(response, {
    ...(options.protobuf ? { protobuf: options.protobuf } : {}),
    ...(options.maxEventBytes === undefined ? {} : { maxEventBytes: options.maxEventBytes }),
  });
  options.signal?.removeEventListener("abort", abort);
  if (retryAfter === undefined || (response.status !== 429 && response.status < 500)) return events;
  return events.pipeThrough(
    new TransformStream<WatchEvent<T>, WatchEvent<T>>({
      transform(event, controller) {
        if (event.type === "ERROR" && event.object.details?.retryAfterSeconds === undefined) {
          event = {
            type: "ERROR",
            object: { ...event.object, details: { ...event.object.details, retryAfterSeconds: retryAfter } },
          };
        }
        controller.enqueue(event);
      },
    }),
  );
}
