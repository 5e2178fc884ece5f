/**
 * {@linkcode ClusterAccessError}: the one error type of cluster access (connecting, credentials, exec plugins,
 * in-cluster config).
 *
 * @module
 */

/**
 * What went wrong in cluster access, machine-readable.
 *
 * @example
 * ```ts
 * import type { ClusterAccessErrorCode } from "watchwire";
 *
 * function advice(code: ClusterAccessErrorCode): string {
 *   switch (code) {
 *     case "SERVER_CERTIFICATE_REJECTED":
 *       return "check certificate-authority-data (or tls-server-name) of the kubeconfig";
 *     case "EXEC_NOT_FOUND":
 *       return "install the credential plugin";
 *     default:
 *       return code;
 *   }
 * }
 * console.log(advice("EXEC_NOT_FOUND")); // install the credential plugin
 * ```
 */
export type ClusterAccessErrorCode =
  /** The config contradicts itself or lacks something (a bad server URL, a certificate without its key). */
  | "CONFIG_INVALID"
  /** A kubeconfig is not valid YAML or breaks its schema. */
  | "KUBECONFIG_INVALID"
  /** No kubeconfig file was found where one was looked for. */
  | "KUBECONFIG_NOT_FOUND"
  /** The context asked for (or the current context) is not in the kubeconfig. */
  | "CONTEXT_NOT_FOUND"
  /** A file the config names (a token file, a certificate, a service account file) cannot be read, or is empty. */
  | "FILE_UNREADABLE"
  /** This runtime cannot do what is asked (no files, no commands, no TLS settings for fetch): pass your own. */
  | "UNSUPPORTED"
  /** The config has a client certificate and a caller's fetch was given: applying it is that fetch's job. */
  | "CLIENT_CERTIFICATE_NOT_APPLIED"
  /** What the config asks cannot be said with fetch's headers (several impersonated groups). */
  | "IMPERSONATION_UNSUPPORTED"
  /** The server's TLS certificate was not accepted (another CA, a name it does not carry). */
  | "SERVER_CERTIFICATE_REJECTED"
  /** A request failed before a response came (connection refused or reset, a TLS failure). */
  | "REQUEST_FAILED"
  /**
   * A response's body broke off (the connection cut or reset, its HTTP/2 stream or connection ended) after the
   * response came: what was read before it was delivered (a watch's events decoded up to there).
   */
  | "CONNECTION_LOST"
  /**
   * The server went silent for longer than allowed (a list page's `idleTimeoutMs`: no response, or no byte of its body,
   * for that long): the request was aborted, a stalled connection or server.
   */
  | "TIMEOUT"
  /** The server answered 401: the credentials were refused. */
  | "UNAUTHORIZED"
  /** The server answered 403: the user may not do this. */
  | "FORBIDDEN"
  /** The server answered another non-2xx status (`status` says which). */
  | "STATUS"
  /** The exec plugin's command was not found. */
  | "EXEC_NOT_FOUND"
  /** The exec plugin ran and failed (its exit status, a signal), or could not be started. */
  | "EXEC_FAILED"
  /** The exec plugin's output is not an ExecCredential that gives a token or a client certificate and key. */
  | "EXEC_OUTPUT_INVALID"
  /** The exec plugin cannot be run as configured (an API version not supported, `interactiveMode: Always`). */
  | "EXEC_UNSUPPORTED"
  /** In-cluster config was asked for outside a cluster (no KUBERNETES_SERVICE_HOST / _PORT). */
  | "NOT_IN_CLUSTER"
  /** The connection was closed. */
  | "CLOSED"
  /**
   * The call's options cannot work as given (`format: "protobuf"` with no `protobuf.decoders`): thrown before any
   * request, its message says what to pass.
   */
  | "USAGE";

/**
 * Options of {@linkcode ClusterAccessError}.
 *
 * @example
 * ```ts
 * import { ClusterAccessError, type ClusterAccessErrorOptions } from "watchwire";
 *
 * const options: ClusterAccessErrorOptions = { source: "in-cluster service account", status: 401 };
 * const error = new ClusterAccessError("UNAUTHORIZED", "list pods: 401 Unauthorized", options);
 * console.log(error.message); // list pods: 401 Unauthorized (in-cluster service account)
 * ```
 */
export interface ClusterAccessErrorOptions {
  /** The config it concerns (its `source`), added to the message in parentheses. */
  source?: string;
  /** The HTTP status of the response it is about. */
  status?: number;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * A cluster-access failure: what (`code`), for which config (`source`, e.g. a kubeconfig and context) and a message
 * that says both, with the underlying error as `cause`.
 *
 * @example
 * ```ts
 * import { ClusterAccessError, connectCluster } from "watchwire";
 *
 * try {
 *   await connectCluster({ server: "not a url", source: "kubeconfig ./dev.yaml, context dev" }, { fetch });
 * } catch (e) {
 *   if (e instanceof ClusterAccessError) console.log(e.code, e.source); // CONFIG_INVALID kubeconfig ./dev.yaml, context dev
 * }
 * ```
 */
export class ClusterAccessError extends Error {
  /** What went wrong. */
  readonly code: ClusterAccessErrorCode;
  /** The config it concerns, as its `source` says (e.g. `kubeconfig /home/me/.kube/config, context kind-dev`). */
  readonly source: string | undefined;
  /** The HTTP status of the response it is about, if any. */
  readonly status: number | undefined;
  /** The message without the config's source. */
  readonly detail: string;

  constructor(code: ClusterAccessErrorCode, detail: string, options: ClusterAccessErrorOptions = {}) {
    super(
      options.source === undefined ? detail : `${detail} (${options.source})`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "ClusterAccessError";
    this.code = code;
    this.source = options.source;
    this.status = options.status;
    this.detail = detail;
  }
}

/**
 * The messages of an error and its causes, outermost first (each with its `code`, if it has one), joined by ` <- `:
 * how list() and watch() say what a runtime's fetch reported when a body broke off.
 */
export function describeCauses(error: unknown): string {
  const out: string[] = [];
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    const { message, code, cause } = e as { message?: unknown; code?: unknown; cause?: unknown };
    const said = typeof message === "string" ? message : String(e);
    const text = typeof code === "string" && !said.startsWith(code) ? `${code}: ${said}` : said;
    if (text !== "" && !out.includes(text)) out.push(text);
    e = cause;
  }
  return out.join(" <- ");
}
