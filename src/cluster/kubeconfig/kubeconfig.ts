/**
 * {@linkcode Kubeconfig}: a kubeconfig document as kubectl reads it, and {@linkcode parseKubeconfig}, which checks
 * one's shape and resolves its relative paths.
 *
 * @module
 */
import { ClusterAccessError } from "../errors.ts";
import type { ExecCredentialPlugin } from "../cluster_config.ts";
import { parseYaml } from "./parse_yaml.ts";

/**
 * A kubeconfig `cluster` entry (kubeconfig field names).
 *
 * @example
 * ```ts
 * import type { KubeconfigCluster } from "watchwire";
 *
 * const cluster: KubeconfigCluster = { server: "https://127.0.0.1:6443", "insecure-skip-tls-verify": true };
 * console.log(cluster.server); // https://127.0.0.1:6443
 * ```
 */
export interface KubeconfigCluster {
  server: string;
  "certificate-authority"?: string;
  "certificate-authority-data"?: string;
  "insecure-skip-tls-verify"?: boolean;
  "tls-server-name"?: string;
  "proxy-url"?: string;
  "disable-compression"?: boolean;
}

/**
 * A kubeconfig `user` entry (kubeconfig field names).
 *
 * @example
 * ```ts
 * import type { KubeconfigUser } from "watchwire";
 *
 * const user: KubeconfigUser = { token: "abc" };
 * console.log(Object.keys(user)); // [ "token" ]
 * ```
 */
export interface KubeconfigUser {
  "client-certificate"?: string;
  "client-certificate-data"?: string;
  "client-key"?: string;
  "client-key-data"?: string;
  token?: string;
  tokenFile?: string;
  as?: string;
  "as-uid"?: string;
  "as-groups"?: string[];
  username?: string;
  password?: string;
  exec?: ExecCredentialPlugin;
  "auth-provider"?: { name: string; config?: Record<string, string> };
}

/**
 * A kubeconfig `context` entry.
 *
 * @example
 * ```ts
 * import type { KubeconfigContext } from "watchwire";
 *
 * const context: KubeconfigContext = { cluster: "dev", user: "me", namespace: "web" };
 * console.log(context.namespace); // web
 * ```
 */
export interface KubeconfigContext {
  cluster: string;
  user?: string;
  namespace?: string;
}

/**
 * A kubeconfig: named clusters, users and contexts, and the current context. Paths in it are absolute once
 * {@linkcode parseKubeconfig} has read it (relative ones are taken relative to the file's directory, as kubectl does).
 *
 * @example
 * ```ts
 * import { parseKubeconfig } from "watchwire";
 *
 * const config = await parseKubeconfig(`
 * apiVersion: v1
 * kind: Config
 * clusters: [{ name: dev, cluster: { server: "https://127.0.0.1:6443", certificate-authority: ca.crt } }]
 * users: [{ name: me, user: { token: abc } }]
 * contexts: [{ name: dev, context: { cluster: dev, user: me } }]
 * current-context: dev
 * `, { path: "/home/me/.kube/config" });
 * console.log(config.clusters.get("dev")?.["certificate-authority"]); // /home/me/.kube/ca.crt
 * ```
 */
export interface Kubeconfig {
  clusters: Map<string, KubeconfigCluster>;
  users: Map<string, KubeconfigUser>;
  contexts: Map<string, KubeconfigContext>;
  "current-context"?: string;
  /** The files it was read from, in the order they were merged. */
  paths: string[];
}

type Fields = Record<string, unknown>;

function invalid(where: string, message: string): never {
  throw new ClusterAccessError("KUBECONFIG_INVALID", `kubeconfig ${where}: ${message}`);
}

function isRecord(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function optionalString(fields: Fields, key: string, where: string): string | undefined {
  const value = fields[key];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") invalid(where, `${key} must be a string, not ${typeof value}`);
  return value;
}

function optionalBoolean(fields: Fields, key: string, where: string): boolean | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") invalid(where, `${key} must be true or false, not ${JSON.stringify(value)}`);
  return value;
}

function optionalStrings(fields: Fields, key: string, where: string): string[] | undefined {
  const value = fields[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    invalid(where, `${key} must be a list of strings`);
  }
  return value as string[];
}

/** `path` resolved against the directory `base`, as kubectl resolves a kubeconfig's relative paths. */
export function resolvePath(path: string, base: string | undefined): string {
  if (base === undefined || path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("\\\\")) {
    return path;
  }
  const parts = base.split("/");
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length > 1) parts.pop();
    } else parts.push(part);
  }
  return parts.join("/") || "/";
}

function withoutUndefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key];
  return value;
}

function parseCluster(fields: Fields, where: string, dir: string | undefined): KubeconfigCluster {
  const server = optionalString(fields, "server", where);
  if (server === undefined) invalid(where, "server is missing");
  const ca = optionalString(fields, "certificate-authority", where);
  return withoutUndefined({
    server,
    "certificate-authority": ca === undefined ? undefined : resolvePath(ca, dir),
    "certificate-authority-data": optionalString(fields, "certificate-authority-data", where),
    "insecure-skip-tls-verify": optionalBoolean(fields, "insecure-skip-tls-verify", where),
    "tls-server-name": optionalString(fields, "tls-server-name", where),
    "proxy-url": optionalString(fields, "proxy-url", where),
    "disable-compression": optionalBoolean(fields, "disable-compression", where),
  });
}

function parseExec(value: unknown, where: string, dir: string | undefined): ExecCredentialPlugin {
  if (!isRecord(value)) invalid(where, "exec must be a mapping");
  const command = optionalString(value, "command", where);
  if (command === undefined) invalid(where, "exec.command is missing");
  const apiVersion = optionalString(value, "apiVersion", where);
  if (apiVersion === undefined) invalid(where, "exec.apiVersion is missing");
  const env = value.env;
  if (env !== undefined && env !== null) {
    if (!Array.isArray(env) || env.some((e) => !isRecord(e) || typeof e.name !== "string")) {
      invalid(where, "exec.env must be a list of { name, value }");
    }
  }
  return withoutUndefined({
    apiVersion,
    // A bare name is looked up on PATH; a relative path with a separator is relative to the kubeconfig's directory.
    command: command.includes("/") ? resolvePath(command, dir) : command,
    args: optionalStrings(value, "args", `${where} exec`),
    env: Array.isArray(env)
      ? env.map((e: Fields) => ({ name: String(e.name), value: String(e.value ?? "") }))
      : undefined,
    interactiveMode: optionalString(value, "interactiveMode", where),
    provideClusterInfo: optionalBoolean(value, "provideClusterInfo", where),
    installHint: optionalString(value, "installHint", where),
  });
}

function parseUser(fields: Fields, where: string, dir: string | undefined): KubeconfigUser {
  const path = (key: string) => {
    const value = optionalString(fields, key, where);
    return value === undefined ? undefined : resolvePath(value, dir);
  };
  const provider = fields["auth-provider"];
  return withoutUndefined({
    "client-certificate": path("client-certificate"),
    "client-certificate-data": optionalString(fields, "client-certificate-data", where),
    "client-key": path("client-key"),
    "client-key-data": optionalString(fields, "client-key-data", where),
    token: optionalString(fields, "token", where),
    tokenFile: path("tokenFile"),
    as: optionalString(fields, "as", where),
    "as-uid": optionalString(fields, "as-uid", where),
    "as-groups": optionalStrings(fields, "as-groups", where),
    username: optionalString(fields, "username", where),
    password: optionalString(fields, "password", where),
    exec: fields.exec === undefined || fields.exec === null ? undefined : parseExec(fields.exec, where, dir),
    "auth-provider": isRecord(provider) && typeof provider.name === "string"
      ? { name: provider.name, config: isRecord(provider.config) ? provider.config as Record<string, string> : {} }
      : undefined,
  });
}

function parseContext(fields: Fields, where: string): KubeconfigContext {
  const cluster = optionalString(fields, "cluster", where);
  if (cluster === undefined) invalid(where, "cluster is missing");
  return withoutUndefined({
    cluster,
    user: optionalString(fields, "user", where),
    namespace: optionalString(fields, "namespace", where),
  });
}

/** The entries of a named list (`clusters`, `users`, `contexts`): a later duplicate name is ignored, as kubectl does. */
function namedEntries<T>(
  document: Fields,
  list: "clusters" | "users" | "contexts",
  entry: "cluster" | "user" | "context",
  file: string,
  parse: (fields: Fields, where: string) => T,
): Map<string, T> {
  const entries = new Map<string, T>();
  const value = document[list];
  if (value === undefined || value === null) return entries;
  if (!Array.isArray(value)) invalid(file, `${list} must be a list`);
  value.forEach((item: unknown, i: number) => {
    const at = `${file} ${list}[${i}]`;
    if (!isRecord(item)) invalid(at, "must be a mapping with name and " + entry);
    const name = item.name;
    if (typeof name !== "string" || name === "") invalid(at, "name is missing");
    const where = `${file} ${entry} "${name}"`;
    const fields = item[entry];
    if (fields === undefined || fields === null) {
      // kubectl accepts `- name: x` with no body for users (an empty user); not for clusters and contexts.
      if (entry !== "user") invalid(where, `${entry} is missing`);
    } else if (!isRecord(fields)) invalid(where, `${entry} must be a mapping`);
    if (!entries.has(name)) entries.set(name, parse((fields ?? {}) as Fields, where));
  });
  return entries;
}

/**
 * Options of {@linkcode parseKubeconfig}.
 *
 * @example
 * ```ts
 * import type { ParseKubeconfigOptions } from "watchwire";
 *
 * const options: ParseKubeconfigOptions = { path: "/etc/kube/admin.conf" };
 * console.log(options.path); // /etc/kube/admin.conf
 * ```
 */
export interface ParseKubeconfigOptions {
  /** The file the text came from: named in errors, and its directory resolves relative paths. */
  path?: string;
}

/**
 * Parses one kubeconfig (YAML or JSON text) and checks its shape: a missing or mistyped field is a
 * `ClusterAccessError` (`KUBECONFIG_INVALID`) that names the file, the entry and the field.
 *
 * @example
 * ```ts
 * import { ClusterAccessError, parseKubeconfig } from "watchwire";
 *
 * try {
 *   await parseKubeconfig("clusters: [{ name: dev, cluster: {} }]", { path: "/tmp/config" });
 * } catch (e) {
 *   if (e instanceof ClusterAccessError) console.log(e.message); // kubeconfig /tmp/config cluster "dev": server is missing
 * }
 * ```
 */
export async function parseKubeconfig(text: string, options: ParseKubeconfigOptions = {}): Promise<Kubeconfig> {
  const file = options.path ?? "(text)";
  let document: unknown;
  try {
    document = await parseYaml(text);
  } catch (e) {
    throw new ClusterAccessError(
      "KUBECONFIG_INVALID",
      `kubeconfig ${file} is not valid YAML: ${(e as Error).message}`,
      {
        cause: e,
      },
    );
  }
  if (document === null || document === undefined) document = {};
  if (!isRecord(document)) invalid(file, "must be a mapping (apiVersion, kind, clusters, users, contexts)");
  const kind = document.kind;
  if (kind !== undefined && kind !== null && kind !== "Config") {
    invalid(file, `kind is ${JSON.stringify(kind)}, not Config`);
  }
  const slash = options.path?.replaceAll("\\", "/").lastIndexOf("/") ?? -1;
  const dir = options.path === undefined || slash < 0
    ? undefined
    : options.path.replaceAll("\\", "/").slice(0, slash) || "/";
  return withoutUndefined({
    clusters: namedEntries(document, "clusters", "cluster", file, (f, w) => parseCluster(f, w, dir)),
    users: namedEntries(document, "users", "user", file, (f, w) => parseUser(f, w, dir)),
    contexts: namedEntries(document, "contexts", "context", file, parseContext),
    "current-context": optionalString(document, "current-context", file),
    paths: options.path === undefined ? [] : [options.path],
  });
}

/**
 * Merges kubeconfigs as kubectl merges the files of `KUBECONFIG`: the first to define a cluster, user or context by
 * a name wins (whole, not field by field), and so does the first non-empty `current-context`.
 *
 * @example
 * ```ts
 * import { mergeKubeconfigs, parseKubeconfig } from "watchwire";
 *
 * const a = await parseKubeconfig("current-context: a\ncontexts: [{ name: a, context: { cluster: one } }]");
 * const b = await parseKubeconfig("current-context: b\ncontexts: [{ name: a, context: { cluster: two } }]");
 * const merged = mergeKubeconfigs([a, b]);
 * console.log(merged["current-context"], merged.contexts.get("a")?.cluster); // a one
 * ```
 */
export function mergeKubeconfigs(configs: Kubeconfig[]): Kubeconfig {
  const merged: Kubeconfig = { clusters: new Map(), users: new Map(), contexts: new Map(), paths: [] };
  for (const config of configs) {
    for (const key of ["clusters", "users", "contexts"] as const) {
      const into = merged[key] as Map<string, unknown>;
      for (const [name, value] of config[key]) if (!into.has(name)) into.set(name, value);
    }
    if (merged["current-context"] === undefined && config["current-context"] !== undefined) {
      merged["current-context"] = config["current-context"];
    }
    merged.paths.push(...config.paths);
  }
  return merged;
}
