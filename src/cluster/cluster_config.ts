/**
 * {@linkcode ClusterConfig}: where a cluster is and how to authenticate to it, resolved from a kubeconfig context or
 * the in-cluster service account, before any runtime-specific code; {@linkcode ClusterConnection}: what the rest of
 * the library uses to talk to it.
 *
 * @module
 */
import type { WebSocketOpener } from "./websocket_watch.ts";

/**
 * An exec credential plugin (`client.authentication.k8s.io/v1`), as a kubeconfig user's `exec` names it.
 *
 * @example
 * ```ts
 * import type { ExecCredentialPlugin } from "watchwire";
 *
 * const plugin: ExecCredentialPlugin = {
 *   apiVersion: "client.authentication.k8s.io/v1",
 *   command: "aws",
 *   args: ["eks", "get-token", "--cluster-name", "prod"],
 *   env: [{ name: "AWS_PROFILE", value: "prod" }],
 *   interactiveMode: "Never",
 * };
 * console.log(plugin.command); // aws
 * ```
 */
export interface ExecCredentialPlugin {
  apiVersion: string;
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  /** `Never`, `IfAvailable` or `Always`; watchwire never has a terminal to offer, so `Always` fails. */
  interactiveMode?: string;
  /** Whether the plugin wants `spec.cluster` in `KUBERNETES_EXEC_INFO`. */
  provideClusterInfo?: boolean;
  installHint?: string;
}

/**
 * A cluster and the credentials to use with it, runtime-neutral: bytes for certificates and keys (PEM), paths only
 * where a file must be re-read (a token file that rotates).
 *
 * @example
 * ```ts
 * import type { ClusterConfig } from "watchwire";
 *
 * const config: ClusterConfig = {
 *   server: "https://127.0.0.1:6443",
 *   caData: new TextEncoder().encode("-----BEGIN CERTIFICATE-----\n..."),
 *   token: "abc",
 * };
 * console.log(new URL(config.server).port); // 6443
 * ```
 */
export interface ClusterConfig {
  /** The API server's base URL, e.g. `https://127.0.0.1:6443` (a path prefix is kept). */
  server: string;
  /** Certificate authority bundle (PEM) that the server's certificate must chain to. */
  caData?: Uint8Array;
  /** Skip verifying the server's certificate (kubeconfig's `insecure-skip-tls-verify`). */
  insecureSkipTlsVerify?: boolean;
  /** The name the server's certificate must carry, if not the server URL's host (`tls-server-name`). */
  tlsServerName?: string;
  /** Client certificate (PEM), for mutual TLS. */
  clientCertificateData?: Uint8Array;
  /** Client certificate's private key (PEM). */
  clientKeyData?: Uint8Array;
  /** A bearer token. */
  token?: string;
  /** A file holding a bearer token, re-read when it may have rotated (kubeconfig's `tokenFile`, in-cluster). */
  tokenFile?: string;
  /** HTTP basic auth (kubeconfig's `username` / `password`). */
  username?: string;
  password?: string;
  /** An exec credential plugin that gives a token or a client certificate. */
  exec?: ExecCredentialPlugin;
  /** Impersonation headers (kubeconfig's `as`, `as-groups`, `as-uid`). */
  impersonate?: { user?: string; groups?: string[]; uid?: string };
  /** The default namespace of the context (kubeconfig's `context.namespace`; in-cluster, the pod's). */
  namespace?: string;
  /** What this config came from, for error messages: e.g. `kubeconfig /home/me/.kube/config, context kind-dev`. */
  source?: string;
}

/**
 * What the rest of the library needs to talk to a cluster: the base URL, the headers of every request (credentials
 * included; async because a token file or an exec plugin may be read again), and a `fetch` that does TLS right.
 *
 * @example
 * ```ts
 * import type { ClusterConnection } from "watchwire";
 *
 * // In a Worker or a browser, where the platform does TLS: pass your own fetch.
 * const connection: ClusterConnection = {
 *   server: "https://kube.example.com",
 *   headers: async () => new Headers({ authorization: "Bearer abc" }),
 *   fetch: (input, init) => fetch(input, init),
 *   close: async () => {},
 * };
 * console.log(new URL("/api/v1/pods", connection.server).href); // https://kube.example.com/api/v1/pods
 * ```
 */
export interface ClusterConnection {
  /** The API server's base URL. */
  server: string;
  /** The headers every request carries (authorization, impersonation); fresh credentials when they rotate. */
  headers(): Promise<Headers>;
  /** A fetch whose TLS (CA, client certificate) fits the cluster. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Closes what the connection holds (an HTTP client, an agent's sockets). */
  close(): Promise<void>;
  /** The default namespace of the config it came from. */
  namespace?: string;
  /**
   * Opens a watch's WebSocket with this connection's TLS and credentials (`connectCluster`'s, in Node, Deno and Bun);
   * absent, `webSocketWatch` uses `webSocketOpener()`.
   */
  openWebSocket?: WebSocketOpener;
}
