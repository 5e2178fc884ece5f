// @ts-self-types="./build.d.mts"
// Builds the real peers of the cluster tests from the Go module proxy: kube-apiserver (k8s.io/kubernetes) and etcd
// (go.etcd.io/etcd). The binaries are cached outside the clone, in a per-user cache directory keyed by version, so CI
// and later runs on the same machine reuse them and a fresh machine builds once.
//
//   node scripts/kube/build.mjs            builds what is missing and prints the binaries' paths
//
// Needs Go (these machines have it) and the Go module proxy.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const KUBERNETES_VERSION = "v1.37.2";
export const ETCD_VERSION = "v3.7.3";

/** The cache directory of the built binaries: `$WATCHWIRE_CACHE`, else `$XDG_CACHE_HOME/watchwire`, else ~/.cache. */
export function cacheDir() {
  return process.env.WATCHWIRE_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "watchwire");
}

/** Where the binaries of these versions are (built or not). */
export function binaryPaths() {
  const kube = join(cacheDir(), `kubernetes-${KUBERNETES_VERSION}`);
  const etcd = join(cacheDir(), `etcd-${ETCD_VERSION}`);
  return {
    kubeApiserver: join(kube, "kube-apiserver"),
    kubectl: join(kube, "kubectl"),
    etcd: join(etcd, "etcd"),
    etcdctl: join(etcd, "etcdctl"),
  };
}

function go(args, cwd, env = {}) {
  execFileSync("go", args, {
    cwd,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, GOFLAGS: "-mod=mod", GOTOOLCHAIN: "local", ...env },
  });
}

/** The staging modules k8s.io/kubernetes requires at v0.0.0 (replaced to ./staging in its go.mod). */
function stagingModules(kubernetesGoMod) {
  const modules = [];
  let inRequire = false;
  for (const line of kubernetesGoMod.split("\n")) {
    if (/^require \(/.test(line)) inRequire = true;
    else if (inRequire && /^\)/.test(line)) inRequire = false;
    else if (inRequire) {
      const [path, version] = line.trim().split(/\s+/);
      if (path?.startsWith("k8s.io/") && version === "v0.0.0") modules.push(path);
    }
  }
  return modules;
}

/** The Go version line of a go.mod. */
function goDirective(goMod) {
  return /^go (\S+)$/m.exec(goMod)?.[1] ?? "1.26.0";
}

function downloadGoMod(module, version, cwd) {
  const out = execFileSync("go", ["mod", "download", "-json", `${module}@${version}`], {
    cwd,
    env: { ...process.env, GOFLAGS: "-mod=mod", GOTOOLCHAIN: "local" },
  });
  return readFileSync(JSON.parse(out.toString()).GoMod, "utf8");
}

/** A module of our own that requires `root` and builds `packages` into `outDir`. */
function buildModule({ name, root, version, replaces, binaries, ldflags }) {
  const work = join(cacheDir(), "modules", `${name}-${version}`);
  mkdirSync(work, { recursive: true });
  const rootGoMod = downloadGoMod(root, version, work);
  const lines = [`module watchwire.local/${name}`, "", `go ${goDirective(rootGoMod)}`, ""];
  lines.push(`require ${root} ${version}`, "");
  for (const [from, to] of replaces(rootGoMod)) lines.push(`replace ${from} => ${to}`);
  writeFileSync(join(work, "go.mod"), lines.join("\n") + "\n");
  go(["get", ...Object.keys(binaries).map((p) => `${p}@${version}`)], work);
  for (const [pkg, binary] of Object.entries(binaries)) {
    if (existsSync(binary)) continue;
    mkdirSync(dirname(binary), { recursive: true });
    const temporary = `${binary}.partial`;
    go(["build", "-trimpath", "-ldflags", ldflags, "-o", temporary, pkg], work);
    renameSync(temporary, binary);
  }
}

/** Version stamps (`-X`) that make kube-apiserver report its version (else v0.0.0-master, which kubectl rejects). */
function kubernetesLdflags() {
  const [major, minor] = KUBERNETES_VERSION.slice(1).split(".");
  const stamps = {
    gitVersion: KUBERNETES_VERSION,
    gitMajor: major,
    gitMinor: minor,
    gitTreeState: "clean",
    buildDate: "1970-01-01T00:00:00Z",
  };
  const flags = ["-s", "-w"];
  for (const pkg of ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"]) {
    for (const [key, value] of Object.entries(stamps)) flags.push(`-X ${pkg}.${key}=${value}`);
  }
  return flags.join(" ");
}

/** Builds kube-apiserver and kubectl (of the same version: an independent client) unless the cache has them. */
export function buildKubernetes() {
  const { kubeApiserver, kubectl } = binaryPaths();
  if (existsSync(kubeApiserver) && existsSync(kubectl)) return { kubeApiserver, kubectl };
  const started = Date.now();
  console.error(`== building kube-apiserver and kubectl ${KUBERNETES_VERSION} from the Go module proxy (minutes)`);
  buildModule({
    name: "kube-apiserver",
    root: "k8s.io/kubernetes",
    version: KUBERNETES_VERSION,
    // Its staging modules are pinned at v0.0.0 and replaced to ./staging, which a module outside its tree cannot use:
    // each is replaced by its release of the same Kubernetes version (v0.37.2 for v1.37.2).
    replaces: (goMod) => stagingModules(goMod).map((m) => [m, `${m} v0${KUBERNETES_VERSION.slice(2)}`]),
    binaries: { "k8s.io/kubernetes/cmd/kube-apiserver": kubeApiserver, "k8s.io/kubernetes/cmd/kubectl": kubectl },
    ldflags: kubernetesLdflags(),
  });
  console.error(`== kube-apiserver and kubectl built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { kubeApiserver, kubectl };
}

/** Builds etcd and etcdctl unless the cache has them; returns their paths. */
export function buildEtcd() {
  const { etcd, etcdctl } = binaryPaths();
  if (existsSync(etcd) && existsSync(etcdctl)) return { etcd, etcdctl };
  const started = Date.now();
  console.error(`== building etcd ${ETCD_VERSION} from the Go module proxy`);
  const plain = { replaces: () => [], version: ETCD_VERSION, ldflags: "-s -w" };
  buildModule({
    ...plain,
    name: "etcd",
    root: "go.etcd.io/etcd/server/v3",
    binaries: { "go.etcd.io/etcd/server/v3": etcd },
  });
  buildModule({
    ...plain,
    name: "etcdctl",
    root: "go.etcd.io/etcd/etcdctl/v3",
    binaries: { "go.etcd.io/etcd/etcdctl/v3": etcdctl },
  });
  console.error(`== etcd built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { etcd, etcdctl };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { etcd, etcdctl } = buildEtcd();
  const { kubeApiserver, kubectl } = buildKubernetes();
  console.log(JSON.stringify({ kubeApiserver, kubectl, etcd, etcdctl }, null, 2));
}
