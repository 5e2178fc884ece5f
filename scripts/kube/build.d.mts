/** The Kubernetes version built (kube-apiserver). */
export const KUBERNETES_VERSION: string;
/** The etcd version built. */
export const ETCD_VERSION: string;
/** The cache directory of the built binaries. */
export function cacheDir(): string;
/** Where the binaries of these versions are (built or not). */
export function binaryPaths(): { kubeApiserver: string; kubectl: string; etcd: string; etcdctl: string };
/** Builds kube-apiserver and kubectl unless the cache has them; returns their paths. */
export function buildKubernetes(): { kubeApiserver: string; kubectl: string };
/** Builds etcd and etcdctl unless the cache has them; returns their paths. */
export function buildEtcd(): { etcd: string; etcdctl: string };
