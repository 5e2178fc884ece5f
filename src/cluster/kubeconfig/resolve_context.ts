/**
 * {@linkcode resolveContext}: a kubeconfig context to the {@linkcode ClusterConfig} it names (cluster, credentials,
 * namespace), with the files it names read.
 *
 * @module
 */
import type { ClusterConfig } from "../cluster_config.ts";
import { ClusterAccessError } from "../errors.ts";
import { defaultHost, type Host, readFileFor } from "../host.ts";
import type { Kubeconfig } from "./kubeconfig.ts";

function base64Bytes(text: string, where: string): Uint8Array {
  try {
    const binary = atob(text.replace(/\s+/g, ""));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    throw new ClusterAccessError("KUBECONFIG_INVALID", `kubeconfig ${where} is not base64`);
  }
}

/**
 * Options of {@linkcode resolveContext}.
 *
 * @example
 * ```ts
 * import type { ResolveContextOptions } from "watchwire";
 *
 * const options: ResolveContextOptions = { context: "staging" };
 * console.log(options.context); // staging
 * ```
 */
export interface ResolveContextOptions {
  /** The context to use (default: the kubeconfig's current-context). */
  context?: string;
  /** Where files are read (default: the runtime's). */
  host?: Host;
}

/**
 * The {@linkcode ClusterConfig} of a kubeconfig's context: certificate files and `-data` fields read into bytes,
 * token, token file (kept as a path, re-read as it rotates), basic auth, exec plugin, impersonation, namespace. A
 * context, cluster or user that does not exist is a `CONTEXT_NOT_FOUND` error; a file that cannot be read
 * `FILE_UNREADABLE`; a field set twice (`certificate-authority` and `certificate-authority-data`, ...)
 * `KUBECONFIG_INVALID`, as kubectl refuses them.
 *
 * @example
 * ```ts
 * import { parseKubeconfig, resolveContext } from "watchwire";
 *
 * const kubeconfig = await parseKubeconfig(`
 * clusters: [{ name: dev, cluster: { server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true } }]
 * users: [{ name: me, user: { token: abc } }]
 * contexts: [{ name: dev, context: { cluster: dev, user: me, namespace: web } }]
 * current-context: dev
 * `);
 * const config = await resolveContext(kubeconfig);
 * console.log(config.server, config.token, config.namespace); // https://127.0.0.1:6443 abc web
 * ```
 */
export async function resolveContext(
  kubeconfig: Kubeconfig,
  options: ResolveContextOptions = {},
): Promise<ClusterConfig> {
  const files = kubeconfig.paths.length === 0 ? "the kubeconfig" : `kubeconfig ${kubeconfig.paths.join(", ")}`;
  const contextName = options.context ?? kubeconfig["current-context"];
  if (contextName === undefined) {
    throw new ClusterAccessError("CONTEXT_NOT_FOUND", `${files} has no current-context, and no context was named`);
  }
  const context = kubeconfig.contexts.get(contextName);
  if (context === undefined) {
    const known = [...kubeconfig.contexts.keys()].map((n) => JSON.stringify(n)).join(", ") || "none";
    throw new ClusterAccessError(
      "CONTEXT_NOT_FOUND",
      `context "${contextName}" is not in ${files} (contexts: ${known})`,
    );
  }
  const cluster = kubeconfig.clusters.get(context.cluster);
  if (cluster === undefined) {
    throw new ClusterAccessError(
      "CONTEXT_NOT_FOUND",
      `context "${contextName}" names cluster "${context.cluster}", which is not in ${files}`,
    );
  }
  const user = context.user === undefined ? {} : kubeconfig.users.get(context.user);
  if (user === undefined) {
    throw new ClusterAccessError(
      "CONTEXT_NOT_FOUND",
      `context "${contextName}" names user "${context.user}", which is not in ${files}`,
    );
  }
  const clusterWhere = `cluster "${context.cluster}"`;
  const userWhere = `user "${context.user}"`;

  // Each PEM from a file or a -data field; both set is an error, as kubectl's validation says.
  const pem = async (
    [fileKey, file]: [string, string | undefined],
    [dataKey, data]: [string, string | undefined],
    where: string,
  ): Promise<Uint8Array | undefined> => {
    if (file !== undefined && data !== undefined) {
      throw new ClusterAccessError(
        "KUBECONFIG_INVALID",
        `${files} ${where}: ${fileKey} and ${dataKey} are both set; kubectl refuses that, name one`,
      );
    }
    if (data !== undefined) return base64Bytes(data, `${where} ${dataKey}`);
    if (file !== undefined) {
      return await readFileFor(options.host ?? await defaultHost(), file, `${fileKey} of ${where}`);
    }
    return undefined;
  };

  const config: ClusterConfig = {
    server: cluster.server,
    source: `${files}, context "${contextName}"`,
  };
  const caData = await pem(
    ["certificate-authority", cluster["certificate-authority"]],
    ["certificate-authority-data", cluster["certificate-authority-data"]],
    clusterWhere,
  );
  if (caData !== undefined) config.caData = caData;
  if (cluster["insecure-skip-tls-verify"]) {
    if (caData !== undefined) {
      throw new ClusterAccessError(
        "KUBECONFIG_INVALID",
        `${files} ${clusterWhere}: insecure-skip-tls-verify with a certificate authority; kubectl refuses that`,
      );
    }
    config.insecureSkipTlsVerify = true;
  }
  if (cluster["tls-server-name"] !== undefined) config.tlsServerName = cluster["tls-server-name"];

  const certificate = await pem(
    ["client-certificate", user["client-certificate"]],
    ["client-certificate-data", user["client-certificate-data"]],
    userWhere,
  );
  const key = await pem(["client-key", user["client-key"]], ["client-key-data", user["client-key-data"]], userWhere);
  if ((certificate === undefined) !== (key === undefined)) {
    throw new ClusterAccessError(
      "KUBECONFIG_INVALID",
      `${files} ${userWhere}: ${
        certificate === undefined
          ? "client-key is set but client-certificate"
          : "client-certificate is set but client-key"
      } is missing (a file or -data)`,
    );
  }
  if (certificate !== undefined && key !== undefined) {
    config.clientCertificateData = certificate;
    config.clientKeyData = key;
  }
  if (user.token !== undefined) config.token = user.token;
  else if (user.tokenFile !== undefined) config.tokenFile = user.tokenFile;
  if (user.username !== undefined || user.password !== undefined) {
    if (config.token !== undefined || config.tokenFile !== undefined) {
      throw new ClusterAccessError(
        "KUBECONFIG_INVALID",
        `${files} ${userWhere}: more than one authentication method (token and username/password); only one is allowed`,
      );
    }
    config.username = user.username ?? "";
    config.password = user.password ?? "";
  }
  if (user.exec !== undefined) config.exec = user.exec;
  if (user["auth-provider"] !== undefined) {
    throw new ClusterAccessError(
      "UNSUPPORTED",
      `${files} ${userWhere}: auth-provider "${
        user["auth-provider"].name
      }" was removed from kubectl in 1.26; use an exec plugin`,
    );
  }
  if (user.as !== undefined || user["as-groups"] !== undefined || user["as-uid"] !== undefined) {
    config.impersonate = {};
    if (user.as !== undefined) config.impersonate.user = user.as;
    if (user["as-groups"] !== undefined) config.impersonate.groups = user["as-groups"];
    if (user["as-uid"] !== undefined) config.impersonate.uid = user["as-uid"];
  }
  if (context.namespace !== undefined) config.namespace = context.namespace;
  return config;
}
