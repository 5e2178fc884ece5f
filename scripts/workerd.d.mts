// Types of scripts/workerd.mjs.

/** A Worker running in workerd (see {@linkcode startWorker}). */
export interface RunningWorker {
  /** Its base URL on loopback. */
  url: string;
  /** workerd's output so far. */
  log(): string;
  /** Rejects when workerd exits (already handled: race it with what waits on the Worker). */
  exited: Promise<never>;
  /** Ends workerd and removes its files. */
  stop(): void;
}

/** A service binding of the Worker to an HTTPS server that workerd reaches with TLS of its own. */
export interface HttpsService {
  /** The name of the binding in the Worker's env (`env[binding].fetch(...)`). */
  binding: string;
  /** `host:port` of the server. */
  address: string;
  /** The CA (PEM) the server's certificate must chain to. */
  ca: string;
  /** The name the server's certificate must carry (default `localhost`). */
  certificateHost?: string;
  /** A client certificate chain and key (PEM) to present. */
  clientCertificate?: string;
  clientKey?: string;
}

/** What {@linkcode startWorker} starts. */
export interface WorkerOptions {
  /** The Worker: one ES module's source. */
  module: string;
  /** `host:port` of the server every fetch of the Worker (but through its service bindings) goes to. */
  outbound?: string;
  /** Durable Object classes the module exports, each bound to the env as `binding`. */
  durableObjects?: { className: string; binding: string }[];
  /** Where Durable Objects' storage is kept (not removed by `stop()`); default: in memory. */
  storageDir?: string;
  /** Text bindings. */
  bindings?: Record<string, string>;
  /** Service bindings to HTTPS servers. */
  httpsServices?: HttpsService[];
}

/**
 * Starts workerd with the Worker `module` (ES module source, no compatibility flags) on a free loopback port and waits
 * until it answers; every fetch of the Worker goes to `outbound` (`host:port`), or through its bindings.
 */
export function startWorker(options: WorkerOptions): Promise<RunningWorker>;
