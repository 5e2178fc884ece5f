/**
 * Cluster access: {@linkcode connectCluster} turns a {@linkcode ClusterConfig} (from a kubeconfig, or
 * {@linkcode inClusterConfig}) into a {@linkcode ClusterConnection} whose fetch does the cluster's TLS in Node, Deno
 * and Bun and carries its credentials (token, token file, basic auth, exec plugin, impersonation); failures are
 * {@linkcode ClusterAccessError}s.
 *
 * Runtime-specific code (undici, `node:*`, `Deno.*`, `Bun.*`) is in `src/cluster/runtime/`, imported only when used,
 * so a browser or Worker bundle of this module has none of it.
 *
 * @example
 * ```ts
 * import { connectCluster, inClusterConfig } from "watchwire";
 *
 * const config = await inClusterConfig().catch(() => undefined);
 * if (config !== undefined) {
 *   const connection = await connectCluster(config);
 *   console.log((await connection.fetch("/version")).status);
 *   await connection.close();
 * }
 * ```
 *
 * @module
 */
export type { ClusterConfig, ClusterConnection, ExecCredentialPlugin } from "./cluster_config.ts";
export { ClusterAccessError, type ClusterAccessErrorCode, type ClusterAccessErrorOptions } from "./errors.ts";
export type { Host } from "./host.ts";
export { connectCluster, type ConnectClusterOptions } from "./connection/connect_cluster.ts";
export { inClusterConfig, type InClusterOptions } from "./connection/in_cluster.ts";
export { detectRuntime, type RuntimeName } from "./connection/runtime_name.ts";
export {
  type Kubeconfig,
  type KubeconfigCluster,
  type KubeconfigContext,
  type KubeconfigUser,
  mergeKubeconfigs,
  parseKubeconfig,
  type ParseKubeconfigOptions,
} from "./kubeconfig/kubeconfig.ts";
export { loadKubeconfig, type LoadKubeconfigOptions, readKubeconfig } from "./kubeconfig/load_kubeconfig.ts";
export { resolveContext, type ResolveContextOptions } from "./kubeconfig/resolve_context.ts";
export {
  type ListQuery,
  listUrl,
  objectUrl,
  resourcePath,
  type ResourceRef,
  type WatchQuery,
  watchUrl,
} from "./resource.ts";
export { list, type ListOptions, type ListResult } from "./list.ts";
export { watch, type WatchOptions } from "./watch.ts";
export {
  type WebSocketConstructorLike,
  type WebSocketHandshake,
  type WebSocketHandshakeMode,
  type WebSocketLike,
  type WebSocketOpener,
  webSocketOpener,
  type WebSocketOpenerOptions,
  webSocketWatch,
  type WebSocketWatchOptions,
} from "./websocket_watch.ts";
export { type DiscoveredResource, discoverResource } from "./discovery.ts";
export { informer, resourceSource, type ResourceSourceOptions } from "./resource_source.ts";
export { denoKvStateStore, type DenoKvStateStoreOptions, fileStateStore } from "./state_stores.ts";
