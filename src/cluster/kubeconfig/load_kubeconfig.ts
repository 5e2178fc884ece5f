/**
 * {@linkcode loadKubeconfig}: the {@linkcode ClusterConfig} of a kubeconfig context, found as kubectl finds it.
 *
 * @module
 */
import type { ClusterConfig } from "../cluster_config.ts";
import { ClusterAccessError } from "../errors.ts";
import { defaultHost, type Host } from "../host.ts";
import { type Kubeconfig, mergeKubeconfigs, parseKubeconfig } from "./kubeconfig.ts";
import { resolveContext } from "./resolve_context.ts";

/**
 * Options of {@linkcode loadKubeconfig} and {@linkcode readKubeconfig}.
 *
 * @example
 * ```ts
 * import type { LoadKubeconfigOptions } from "watchwire";
 *
 * const options: LoadKubeconfigOptions = { path: "./kubeconfig", context: "admin" };
 * console.log(options.context); // admin
 * ```
 */
export interface LoadKubeconfigOptions {
  /** One kubeconfig file, read alone (as `kubectl --kubeconfig`); default: `KUBECONFIG`, else `~/.kube/config`. */
  path?: string;
  /** The context to use (as `kubectl --context`); default: the current-context. */
  context?: string;
  /** Where files and environment variables are read (default: the runtime's). */
  host?: Host;
}

const decoder = new TextDecoder();

async function readOne(host: Host, path: string): Promise<Kubeconfig | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await host.readFile(path);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR" || (e as Error).name === "NotFound") return undefined;
    throw new ClusterAccessError("FILE_UNREADABLE", `cannot read kubeconfig ${path}: ${code ?? (e as Error).message}`, {
      cause: e,
    });
  }
  return await parseKubeconfig(decoder.decode(bytes), { path });
}

/**
 * Reads the kubeconfig kubectl would read: the file `path` alone when given (it must exist), else each file of
 * `KUBECONFIG` (`:`-separated; `;` on Windows) merged as kubectl merges them (missing files skipped), else
 * `~/.kube/config`.
 *
 * @example
 * ```ts
 * import { readKubeconfig } from "watchwire";
 *
 * const files: Record<string, string> = {
 *   "/a": "current-context: a\ncontexts: [{ name: a, context: { cluster: c } }]",
 *   "/b": "contexts: [{ name: b, context: { cluster: c } }]",
 * };
 * const host = {
 *   readFile: async (path: string) => new TextEncoder().encode(files[path] ?? ""),
 *   getEnv: (name: string) => (name === "KUBECONFIG" ? "/a:/b" : undefined),
 * };
 * const kubeconfig = await readKubeconfig({ host });
 * console.log([...kubeconfig.contexts.keys()], kubeconfig.paths); // [ "a", "b" ] [ "/a", "/b" ]
 * ```
 */
export async function readKubeconfig(options: LoadKubeconfigOptions = {}): Promise<Kubeconfig> {
  const host = options.host ?? await defaultHost();
  if (options.path !== undefined) {
    const config = await readOne(host, options.path);
    if (config === undefined) {
      throw new ClusterAccessError("KUBECONFIG_NOT_FOUND", `kubeconfig ${options.path} does not exist`);
    }
    return config;
  }
  const list = host.getEnv("KUBECONFIG");
  if (list !== undefined && list !== "") {
    const separator = /^[A-Za-z]:\\/.test(list) || list.includes(";") ? ";" : ":";
    const paths = [...new Set(list.split(separator).filter((p) => p !== ""))];
    const configs: Kubeconfig[] = [];
    for (const path of paths) {
      const config = await readOne(host, path);
      if (config !== undefined) configs.push(config);
    }
    if (configs.length === 0) {
      throw new ClusterAccessError("KUBECONFIG_NOT_FOUND", `none of the KUBECONFIG files exists: ${paths.join(", ")}`);
    }
    return mergeKubeconfigs(configs);
  }
  const home = host.getEnv("HOME") ?? host.getEnv("USERPROFILE");
  if (home === undefined) {
    throw new ClusterAccessError("KUBECONFIG_NOT_FOUND", "no kubeconfig: KUBECONFIG and HOME are not set");
  }
  const path = `${home.replace(/[\\/]+$/, "")}/.kube/config`;
  const config = await readOne(host, path);
  if (config === undefined) {
    throw new ClusterAccessError(
      "KUBECONFIG_NOT_FOUND",
      `no kubeconfig: KUBECONFIG is not set and ${path} does not exist`,
    );
  }
  return config;
}

/**
 * The {@linkcode ClusterConfig} of a kubeconfig context, as kubectl would use it: {@linkcode readKubeconfig}, then
 * {@linkcode resolveContext}. Pass it to `connectCluster` for a `fetch` with the right TLS and credentials.
 *
 * @example
 * ```ts
 * import { loadKubeconfig } from "watchwire";
 *
 * const text = `
 * clusters: [{ name: dev, cluster: { server: "https://127.0.0.1:6443" } }]
 * users: [{ name: me, user: { tokenFile: token } }]
 * contexts: [{ name: dev, context: { cluster: dev, user: me } }]
 * current-context: dev
 * `;
 * const host = { readFile: async () => new TextEncoder().encode(text), getEnv: () => undefined };
 * const config = await loadKubeconfig({ path: "/etc/kube/config", host });
 * console.log(config.server, config.tokenFile); // https://127.0.0.1:6443 /etc/kube/token
 * ```
 */
export async function loadKubeconfig(options: LoadKubeconfigOptions = {}): Promise<ClusterConfig> {
  const host = options.host ?? await defaultHost();
  const kubeconfig = await readKubeconfig({ ...options, host });
  return await resolveContext(kubeconfig, {
    host,
    ...(options.context === undefined ? {} : { context: options.context }),
  });
}
