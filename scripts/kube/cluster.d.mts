import type { Pki } from "./pki.d.mts";

/** The static token of the `admin` user (group system:masters). */
export const ADMIN_TOKEN: string;
/** A token of a user with no RBAC grants. */
export const NOBODY_TOKEN: string;

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** The directory of data, logs, certificates and the kubeconfig (default: a new temporary one). */
  dir?: string;
  /** kube-apiserver's --watch-cache (default true). */
  watchCache?: boolean;
  /** kube-apiserver's --etcd-compaction-interval, a Go duration (default "5m"). */
  etcdCompactionInterval?: string;
  /** kube-apiserver's --feature-gates. */
  featureGates?: Record<string, boolean | string>;
  /** More kube-apiserver flags. */
  args?: string[];
  etcdPort?: number;
  securePort?: number;
}

/** A running cluster. */
export interface Cluster {
  dir: string;
  pki: Pki;
  binaries: { kubeApiserver: string; kubectl: string; etcd: string; etcdctl: string };
  etcdUrl: string;
  /** kube-apiserver's base URL, https://127.0.0.1:PORT. */
  server: string;
  /** A kubeconfig with contexts token (current), certificate and exec. */
  kubeconfig: string;
  adminToken: string;
  nobodyToken: string;
  execPlugin: string;
  execPluginRuns(): number;
  etcdPid: number;
  apiserverPid: number;
  apiserverArgs: string[];
  startSeconds: number;
  stop(): Promise<void>;
  restartApiserver(changed?: ClusterOptions): Promise<void>;
  destroy(): Promise<void>;
}

/** Starts etcd and kube-apiserver on 127.0.0.1 (building them first if the cache lacks them). */
export function startCluster(options?: ClusterOptions): Promise<Cluster>;
/** Stops the cluster whose PIDs are in `dir`. */
export function stopCluster(dir: string): Promise<void>;
/** A cluster another process started, from its directory's cluster.json (stop and destroy do nothing). */
export function attachCluster(dir: string): Cluster;
