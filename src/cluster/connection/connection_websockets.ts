/**
 * {@linkcode ConnectionWebSockets}: the WebSockets of one cluster connection, opened with the config's TLS (and the
 * exec plugin's client certificate when it gives one) through this runtime's adapter, and ended with the connection.
 * Internal.
 *
 * @module
 */
import { ClusterAccessError } from "../errors.ts";
import type { WebSocketHandshake, WebSocketLike } from "../websocket_watch.ts";
import type { TlsSettings, TlsWebSocket } from "./adapters.ts";
import type { RequestCredentials } from "./credentials.ts";
import type { RuntimeName } from "./runtime_name.ts";
import { openTlsWebSocket } from "./tls_websocket.ts";

/** The WebSockets of one TLS setting: its adapter, made on first use, and how many of its sockets are open. */
interface Transport {
  /** The exec plugin's client certificate it is for; none for the config's own. */
  certificate?: { cert: string; key: string };
  tls: Promise<TlsWebSocket>;
  open: number;
  /** Replaced by one for a newer certificate: released once its last socket closes. */
  retired: boolean;
}

/**
 * Opens a connection's WebSockets ({@linkcode ConnectionWebSockets.open}, a `WebSocketOpener`) and ends them with it
 * ({@linkcode ConnectionWebSockets.close}).
 */
export class ConnectionWebSockets {
  readonly #runtime: RuntimeName;
  readonly #settings: TlsSettings;
  readonly #credentials: () => Promise<RequestCredentials>;
  readonly #source: string | undefined;
  #base: Transport | undefined;
  #exec: Transport | undefined;
  readonly #retired = new Set<Transport>();
  readonly #sockets = new Set<WebSocketLike & EventTarget>();
  #closed = false;

  /** `credentials`: the connection's, asked at each open for the exec plugin's client certificate. */
  constructor(
    runtime: RuntimeName,
    settings: TlsSettings,
    credentials: () => Promise<RequestCredentials>,
    source?: string,
  ) {
    this.#runtime = runtime;
    this.#settings = settings;
    this.#credentials = credentials;
    this.#source = source;
  }

  /**
   * A `WebSocketOpener`: the WebSocket to `url` with the handshake's subprotocols and headers as they are (the caller,
   * `webSocketWatch`, has put the connection's credentials, `Accept` and `Origin` there), over the config's TLS.
   * `CLOSED` once the connection is closed.
   */
  readonly open = async (url: string, handshake: WebSocketHandshake): Promise<WebSocketLike> => {
    this.#throwIfClosed();
    const transport = this.#transportFor((await this.#credentials()).clientCertificate);
    const tls = await transport.tls;
    this.#throwIfClosed();
    const socket = tls.open(url, handshake.protocols, handshake.headers);
    transport.open++;
    this.#sockets.add(socket);
    socket.addEventListener("close", () => {
      if (!this.#sockets.delete(socket)) return;
      transport.open--;
      if (transport.retired && transport.open === 0) this.#release(transport);
    });
    return socket;
  };

  /**
   * Ends every WebSocket still open: each gets an `error` event whose `error` is a `CLOSED` `ClusterAccessError` (with
   * which `webSocketWatch` fails its stream at once, as a fetch's body fails when the connection closes), then is
   * closed; then releases the adapters.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const error = new ClusterAccessError("CLOSED", "the cluster connection was closed", { source: this.#source });
    for (const socket of this.#sockets) {
      socket.dispatchEvent(Object.assign(new Event("error"), { error }));
      try {
        socket.close(1000);
      } catch {
        // Closing or closed already.
      }
    }
    this.#sockets.clear();
    const all = [this.#base, this.#exec, ...this.#retired].filter((t): t is Transport => t !== undefined);
    await Promise.all(all.map((t) => t.tls.then((tls) => tls.close(), () => {})));
  }

  #throwIfClosed(): void {
    if (this.#closed) {
      throw new ClusterAccessError("CLOSED", "the cluster connection is closed", { source: this.#source });
    }
  }

  /** The transport for the exec plugin's `certificate`, or the config's own; a new one for a new certificate. */
  #transportFor(certificate: { cert: string; key: string } | undefined): Transport {
    if (certificate === undefined) return this.#base ??= this.#make(this.#settings);
    const exec = this.#exec;
    if (exec?.certificate?.cert === certificate.cert && exec.certificate.key === certificate.key) return exec;
    if (exec !== undefined) {
      exec.retired = true;
      if (exec.open === 0) this.#release(exec);
      else this.#retired.add(exec);
    }
    return this.#exec = this.#make({ ...this.#settings, ...certificate }, certificate);
  }

  #make(settings: TlsSettings, certificate?: { cert: string; key: string }): Transport {
    const transport: Transport = {
      tls: openTlsWebSocket(this.#runtime, settings, this.#source),
      open: 0,
      retired: false,
      ...(certificate === undefined ? {} : { certificate }),
    };
    // An adapter that could not be loaded is tried again at the next open, as loadAdapter does.
    transport.tls.catch(() => {
      if (this.#base === transport) this.#base = undefined;
      if (this.#exec === transport) this.#exec = undefined;
    });
    return transport;
  }

  #release(transport: Transport): void {
    this.#retired.delete(transport);
    transport.tls.then((tls) => tls.close(), () => {});
  }
}
