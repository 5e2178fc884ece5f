/**
 * The `ExecCredential` protocol of exec credential plugins (`client.authentication.k8s.io/v1` and `v1beta1`): the
 * `KUBERNETES_EXEC_INFO` a plugin is given ({@linkcode execInfo}) and the credential it prints
 * ({@linkcode parseExecCredential}). Runtime-neutral. Internal.
 *
 * @module
 */
import type { ClusterConfig, ExecCredentialPlugin } from "../cluster_config.ts";
import { ClusterAccessError } from "../errors.ts";

/** The API versions accepted. */
export const EXEC_API_VERSIONS = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"];

/** A credential a plugin gave. */
export interface ExecCredentialStatus {
  token?: string;
  /** PEM text. */
  clientCertificateData?: string;
  clientKeyData?: string;
  /** Milliseconds since the epoch; absent: valid for as long as the process runs. */
  expiresAt?: number;
}

/** Throws `EXEC_UNSUPPORTED` for a plugin watchwire cannot run as configured. */
export function checkExecPlugin(plugin: ExecCredentialPlugin, source?: string): void {
  if (!EXEC_API_VERSIONS.includes(plugin.apiVersion)) {
    throw new ClusterAccessError(
      "EXEC_UNSUPPORTED",
      `exec plugin ${plugin.command}: apiVersion ${JSON.stringify(plugin.apiVersion)} is not supported (use ` +
        `${EXEC_API_VERSIONS.join(" or ")})`,
      { source },
    );
  }
  if (plugin.interactiveMode === "Always") {
    throw new ClusterAccessError(
      "EXEC_UNSUPPORTED",
      `exec plugin ${plugin.command} has interactiveMode Always, but watchwire gives plugins no terminal`,
      { source },
    );
  }
}

/** Base64 of bytes. */
function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The JSON of `KUBERNETES_EXEC_INFO`: non-interactive, with `spec.cluster` if the plugin asks for it. */
export function execInfo(plugin: ExecCredentialPlugin, config: ClusterConfig): string {
  const spec: Record<string, unknown> = { interactive: false };
  if (plugin.provideClusterInfo === true) {
    const cluster: Record<string, unknown> = { server: config.server };
    if (config.tlsServerName !== undefined) cluster["tls-server-name"] = config.tlsServerName;
    if (config.insecureSkipTlsVerify === true) cluster["insecure-skip-tls-verify"] = true;
    if (config.caData !== undefined) cluster["certificate-authority-data"] = base64(config.caData);
    spec.cluster = cluster;
  }
  return JSON.stringify({ apiVersion: plugin.apiVersion, kind: "ExecCredential", spec });
}

/**
 * The credential in a plugin's standard output: an `ExecCredential` of the plugin's API version whose `status` has a
 * `token` or both `clientCertificateData` and `clientKeyData`, and maybe an RFC 3339 `expirationTimestamp`. Anything
 * else is `EXEC_OUTPUT_INVALID`, naming the plugin and what is wrong.
 */
export function parseExecCredential(
  stdout: string,
  plugin: ExecCredentialPlugin,
  source?: string,
): ExecCredentialStatus {
  const fail = (what: string, cause?: unknown): never => {
    throw new ClusterAccessError("EXEC_OUTPUT_INVALID", `exec plugin ${plugin.command}: ${what}`, { source, cause });
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch (e) {
    const shown = stdout.trim() === "" ? "nothing" : JSON.stringify(stdout.trim().slice(0, 200));
    return fail(`its output is not JSON (it printed ${shown})`, e);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return fail("its output is not a JSON object");
  }
  const { apiVersion, kind, status } = parsed as { apiVersion?: unknown; kind?: unknown; status?: unknown };
  if (kind !== "ExecCredential") fail(`its output has kind ${JSON.stringify(kind)}, not ExecCredential`);
  if (apiVersion !== plugin.apiVersion) {
    fail(`it is configured for ${plugin.apiVersion} but printed apiVersion ${JSON.stringify(apiVersion)}`);
  }
  if (status === null || typeof status !== "object") return fail("its ExecCredential has no status");
  const s = status as Record<string, unknown>;
  const text = (name: string): string | undefined => {
    const value = s[name];
    if (value === undefined || value === null || value === "") return undefined;
    if (typeof value !== "string") return fail(`status.${name} is not a string`);
    return value;
  };
  const token = text("token");
  const clientCertificateData = text("clientCertificateData");
  const clientKeyData = text("clientKeyData");
  if ((clientCertificateData === undefined) !== (clientKeyData === undefined)) {
    fail("status has only one of clientCertificateData and clientKeyData; both are needed");
  }
  if (token === undefined && clientCertificateData === undefined) {
    fail("status has neither a token nor clientCertificateData and clientKeyData");
  }
  const credential: ExecCredentialStatus = {};
  if (token !== undefined) credential.token = token;
  if (clientCertificateData !== undefined) {
    credential.clientCertificateData = clientCertificateData;
    credential.clientKeyData = clientKeyData;
  }
  const expiration = text("expirationTimestamp");
  if (expiration !== undefined) {
    const at = Date.parse(expiration);
    if (Number.isNaN(at)) fail(`status.expirationTimestamp ${JSON.stringify(expiration)} is not a time`);
    credential.expiresAt = at;
  }
  return credential;
}
