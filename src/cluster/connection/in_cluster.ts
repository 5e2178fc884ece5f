/**
 * {@linkcode inClusterConfig}: the {@linkcode ClusterConfig} of a pod's service account, as client-go's
 * `rest.InClusterConfig` makes it.
 *
 * @module
 */
import type { ClusterConfig } from "../cluster_config.ts";
import { ClusterAccessError } from "../errors.ts";
import type { Host } from "../host.ts";
import { defaultHost, readFileFor } from "../host.ts";

/** Where a pod's service account files are (under the root). */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * Options of {@linkcode inClusterConfig}.
 *
 * @example
 * ```ts
 * import type { InClusterOptions } from "watchwire";
 *
 * // A test's service account files under /tmp/sa-root/var/run/secrets/kubernetes.io/serviceaccount/.
 * const options: InClusterOptions = { root: "/tmp/sa-root" };
 * console.log(options.root); // /tmp/sa-root
 * ```
 */
export interface InClusterOptions {
  /** Files and environment variables: the runtime's own (`node:fs/promises` and `node:process`) by default. */
  host?: Host;
  /** The directory the service account path is under: `/` by default (a test's directory in tests). */
  root?: string;
}

/**
 * The config of the pod this runs in: the server `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT` (an IPv6
 * host bracketed), the service account's CA (`ca.crt`, read now), its token as `tokenFile` (read now to check it,
 * then again as it rotates: see {@linkcode connectCluster}), and the namespace: `POD_NAMESPACE`, else the service
 * account's `namespace` file, else `default`.
 *
 * Outside a cluster (either variable unset) it throws `NOT_IN_CLUSTER`; a service account file that cannot be read
 * is `FILE_UNREADABLE`, naming it. In Deno: `--allow-env=KUBERNETES_SERVICE_HOST,KUBERNETES_SERVICE_PORT,POD_NAMESPACE`
 * and `--allow-read` of the service account directory.
 *
 * @example
 * ```ts
 * import { inClusterConfig, type Host } from "watchwire";
 *
 * const dir = "/var/run/secrets/kubernetes.io/serviceaccount";
 * const files: Record<string, string> = {
 *   [`${dir}/ca.crt`]: "-----BEGIN CERTIFICATE-----\n...",
 *   [`${dir}/token`]: "eyJhbGciOi...\n",
 *   [`${dir}/namespace`]: "payments",
 * };
 * const env: Record<string, string> = { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" };
 * const host: Host = {
 *   readFile: async (path) => {
 *     if (!(path in files)) throw Object.assign(new Error("no such file"), { code: "ENOENT" });
 *     return new TextEncoder().encode(files[path]);
 *   },
 *   getEnv: (name) => env[name],
 * };
 * const config = await inClusterConfig({ host });
 * console.log(config.server, config.namespace); // https://[fd00::1]:443 payments
 * console.log(config.tokenFile); // /var/run/secrets/kubernetes.io/serviceaccount/token
 * ```
 */
export async function inClusterConfig(options: InClusterOptions = {}): Promise<ClusterConfig> {
  const host = options.host ?? await defaultHost();
  const serviceHost = host.getEnv("KUBERNETES_SERVICE_HOST");
  const servicePort = host.getEnv("KUBERNETES_SERVICE_PORT");
  if (!serviceHost || !servicePort) {
    throw new ClusterAccessError(
      "NOT_IN_CLUSTER",
      "no in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set (as they are in a " +
        "pod)",
    );
  }
  const hostPart = serviceHost.includes(":") && !serviceHost.startsWith("[") ? `[${serviceHost}]` : serviceHost;
  const root = (options.root ?? "/").replace(/\/+$/, "");
  const dir = `${root}${SERVICE_ACCOUNT_DIR}`;
  const source = `in-cluster service account ${dir}`;
  const read = (name: string, why: string) => readFileFor(host, `${dir}/${name}`, why, source);
  const caData = await read("ca.crt", "the service account's CA");
  const token = new TextDecoder().decode(await read("token", "the service account's token")).trim();
  if (token === "") {
    throw new ClusterAccessError("FILE_UNREADABLE", `the service account's token ${dir}/token is empty`, { source });
  }
  let namespace = host.getEnv("POD_NAMESPACE") || undefined;
  if (namespace === undefined) {
    try {
      namespace = new TextDecoder().decode(await host.readFile(`${dir}/namespace`)).trim() || undefined;
    } catch {
      // No namespace file: the default namespace, as client-go's.
    }
  }
  return {
    server: `https://${hostPart}:${servicePort}`,
    caData,
    tokenFile: `${dir}/token`,
    namespace: namespace ?? "default",
    source,
  };
}
