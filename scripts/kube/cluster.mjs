// @ts-self-types="./cluster.d.mts"
// A real kube-apiserver with a real etcd on 127.0.0.1, the way controller-runtime's envtest runs one: each with its
// own data directory and free ports, a generated CA with serving and client certificates, a static bearer token, RBAC
// on, a kubeconfig written for it. No controller-manager or scheduler: objects are stored and watched, nothing
// reconciles them (Pods stay Pending; a namespace gets no `default` ServiceAccount until one is created).
//
//   node scripts/kube/cluster.mjs start [--dir DIR] [--watch-cache=false] [--feature-gates=WatchList=false] ...
//       builds what is missing (scripts/kube/build.mjs), starts both in the background, writes DIR/kubeconfig and
//       prints `export KUBECONFIG=DIR/kubeconfig`
//   node scripts/kube/cluster.mjs stop [--dir DIR]      stops both (by the PIDs in DIR)
//
// The tests import startCluster() and stop it themselves. Works in Node, Deno and Bun (node:* modules only).
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildEtcd, buildKubernetes } from "./build.mjs";
import { makePki } from "./pki.mjs";
import { freePort } from "../free-port.mjs";

/** The static token of the `admin` user (group system:masters) that every cluster accepts. */
export const ADMIN_TOKEN = "watchwire-admin-token";
/** A token of a user with no RBAC grants: authenticated, then forbidden. */
export const NOBODY_TOKEN = "watchwire-nobody-token";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function startProcess(binary, args, logFile, env = {}) {
  const log = openSync(logFile, "a");
  const child = spawn(binary, args, {
    stdio: ["ignore", log, log],
    env: { ...process.env, ...env },
    detached: true,
  });
  closeSync(log);
  child.unref();
  return child;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function stopPid(pid, graceMs = 5000) {
  if (!pid || !alive(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch { /* gone */ }
  const until = Date.now() + graceMs;
  while (alive(pid) && Date.now() < until) await sleep(50);
  if (alive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch { /* gone */ }
    while (alive(pid)) await sleep(20);
  }
}

/** GET `url` with the cluster's CA and a token; resolves to the status and body text. */
function httpsGet(url, ca, token) {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { ca, headers: token ? { authorization: `Bearer ${token}` } : {}, timeout: 2000 },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

async function waitFor(what, check, timeoutMs, logFile) {
  const until = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < until) {
    try {
      if (await check()) return;
    } catch (e) {
      last = String(e?.message ?? e);
    }
    await sleep(100);
  }
  const tail = existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n").slice(-25).join("\n") : "";
  throw new Error(`${what} not ready after ${timeoutMs} ms (${last}); the end of ${logFile}:\n${tail}`);
}

function yamlString(value) {
  // A JSON string is a YAML double-quoted scalar.
  return JSON.stringify(String(value));
}

/** A kubeconfig (YAML) with three contexts for the one cluster: token (current), client certificate, exec plugin. */
function kubeconfigText({ server, pki, execPlugin }) {
  const admin = pki.clients.admin;
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: watchwire-test",
    "  cluster:",
    `    server: ${yamlString(server)}`,
    `    certificate-authority: ${yamlString(pki.ca)}`,
    "users:",
    "- name: admin-token",
    "  user:",
    `    token: ${yamlString(ADMIN_TOKEN)}`,
    "- name: admin-certificate",
    "  user:",
    `    client-certificate: ${yamlString(admin.cert)}`,
    `    client-key: ${yamlString(admin.key)}`,
    "- name: admin-exec",
    "  user:",
    "    exec:",
    "      apiVersion: client.authentication.k8s.io/v1",
    `      command: ${yamlString(execPlugin)}`,
    "      interactiveMode: Never",
    "contexts:",
    "- name: token",
    "  context: { cluster: watchwire-test, user: admin-token, namespace: default }",
    "- name: certificate",
    "  context: { cluster: watchwire-test, user: admin-certificate, namespace: default }",
    "- name: exec",
    "  context: { cluster: watchwire-test, user: admin-exec, namespace: default }",
    "current-context: token",
    "",
  ].join("\n");
}

// An exec credential plugin (client.authentication.k8s.io/v1) that gives the admin token: a shell script, so that
// it runs whatever runtime the test runs in; it counts its runs in a file beside it, so a test can tell a cached
// credential from a fresh one.
const EXEC_PLUGIN = `#!/bin/sh
printf x >> "$0.runs"
printf '%s' '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${ADMIN_TOKEN}"}}'
`;

/**
 * Starts etcd and kube-apiserver. Options: `dir` (default: a new temporary directory), `watchCache` (default true),
 * `etcdCompactionInterval` (a Go duration, default "5m"), `featureGates` ({ WatchList: false, ... }), `args` (more
 * kube-apiserver flags), `buildIfMissing` (default true).
 * @param {import("./cluster.d.mts").ClusterOptions} [options]
 */
export async function startCluster(options = {}) {
  const binaries = { ...buildEtcd(), ...buildKubernetes() };
  const dir = resolve(options.dir ?? mkdtempSync(join(tmpdir(), "watchwire-kube-")));
  mkdirSync(dir, { recursive: true });
  const pki = makePki(join(dir, "pki"), {
    clients: {
      admin: { user: "admin", groups: ["system:masters"] },
      nobody: { user: "nobody" },
    },
  });
  const tokenFile = join(dir, "tokens.csv");
  writeFileSync(
    tokenFile,
    `${ADMIN_TOKEN},admin,admin-uid,"system:masters"\n${NOBODY_TOKEN},nobody,nobody-uid\n`,
  );
  const execPlugin = join(dir, "exec-plugin.sh");
  writeFileSync(execPlugin, EXEC_PLUGIN, { mode: 0o755 });

  const etcdPort = options.etcdPort ?? await freePort();
  const peerPort = await freePort();
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const etcdLog = join(dir, "etcd.log");
  const etcdArgs = [
    "--name",
    "watchwire",
    "--data-dir",
    join(dir, "etcd"),
    "--listen-client-urls",
    etcdUrl,
    "--advertise-client-urls",
    etcdUrl,
    "--listen-peer-urls",
    `http://127.0.0.1:${peerPort}`,
    "--initial-advertise-peer-urls",
    `http://127.0.0.1:${peerPort}`,
    "--initial-cluster",
    `watchwire=http://127.0.0.1:${peerPort}`,
    "--log-level",
    "warn",
  ];

  const cluster = {
    dir,
    pki,
    binaries,
    etcdUrl,
    server: "",
    kubeconfig: join(dir, "kubeconfig"),
    adminToken: ADMIN_TOKEN,
    nobodyToken: NOBODY_TOKEN,
    execPlugin,
    /** How often the exec plugin has run. */
    execPluginRuns: () => (existsSync(`${execPlugin}.runs`) ? readFileSync(`${execPlugin}.runs`, "utf8").length : 0),
    etcdPid: 0,
    apiserverPid: 0,
    apiserverArgs: [],
    stop: async () => {
      await stopPid(cluster.apiserverPid);
      await stopPid(cluster.etcdPid);
    },
    /** Stops and starts kube-apiserver (etcd keeps its data), with `options`' flags changed if given. */
    restartApiserver: async (changed = {}) => {
      await stopPid(cluster.apiserverPid);
      await startApiserver({ ...options, ...changed });
    },
    /** Stops both and removes the directory. */
    destroy: async () => {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };

  const started = Date.now();
  cluster.etcdPid = startProcess(binaries.etcd, etcdArgs, etcdLog).pid;
  writeFileSync(join(dir, "etcd.pid"), String(cluster.etcdPid));
  await waitFor(
    "etcd",
    async () => {
      const res = await fetch(`${etcdUrl}/health`);
      return res.ok && (await res.json()).health === "true";
    },
    30_000,
    etcdLog,
  );

  const securePort = options.securePort ?? await freePort();
  cluster.server = `https://127.0.0.1:${securePort}`;
  const apiserverLog = join(dir, "kube-apiserver.log");
  async function startApiserver(opts) {
    const gates = Object.entries(opts.featureGates ?? {}).map(([k, v]) => `${k}=${v}`).join(",");
    const args = [
      `--etcd-servers=${etcdUrl}`,
      "--bind-address=127.0.0.1",
      `--secure-port=${securePort}`,
      "--advertise-address=127.0.0.1",
      `--cert-dir=${join(dir, "apiserver-certs")}`,
      `--tls-cert-file=${pki.serverCert}`,
      `--tls-private-key-file=${pki.serverKey}`,
      `--client-ca-file=${pki.ca}`,
      `--token-auth-file=${tokenFile}`,
      "--authorization-mode=RBAC",
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      "--service-cluster-ip-range=10.96.0.0/16",
      // Else it keeps writing 127.0.0.1 into the `kubernetes` Endpoints, which validation rejects.
      "--endpoint-reconciler-type=none",
      `--watch-cache=${opts.watchCache ?? true}`,
      `--etcd-compaction-interval=${opts.etcdCompactionInterval ?? "5m"}`,
      "--profiling=false",
      ...(gates ? [`--feature-gates=${gates}`] : []),
      ...(opts.args ?? []),
    ];
    cluster.apiserverArgs = args;
    cluster.apiserverPid = startProcess(binaries.kubeApiserver, args, apiserverLog).pid;
    writeFileSync(join(dir, "kube-apiserver.pid"), String(cluster.apiserverPid));
    const ca = readFileSync(pki.ca);
    await waitFor(
      "kube-apiserver",
      async () => {
        if (!alive(cluster.apiserverPid)) throw new Error("kube-apiserver exited");
        const { status } = await httpsGet(`${cluster.server}/readyz`, ca, ADMIN_TOKEN);
        return status === 200;
      },
      90_000,
      apiserverLog,
    );
  }
  try {
    await startApiserver(options);
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  cluster.startSeconds = (Date.now() - started) / 1000;
  writeFileSync(cluster.kubeconfig, kubeconfigText({ server: cluster.server, pki, execPlugin }));
  writeFileSync(join(dir, "cluster.json"), JSON.stringify(describe(cluster), null, 2) + "\n");
  return cluster;
}

/** What a running cluster's cluster.json says (its data, not its methods). */
function describe(cluster) {
  const { stop: _s, restartApiserver: _r, destroy: _d, execPluginRuns: _e, ...data } = cluster;
  return data;
}

/**
 * A cluster that another process started (`start`, or scripts/test-servers.mjs), from its directory's cluster.json:
 * the same fields as startCluster's, `stop` and `destroy` left to the process that started it.
 * @param {string} dir
 */
export function attachCluster(dir) {
  const data = JSON.parse(readFileSync(join(dir, "cluster.json"), "utf8"));
  return {
    ...data,
    pki: { ...data.pki, read: (/** @type {string} */ path) => readFileSync(path, "utf8") },
    execPluginRuns: () =>
      existsSync(`${data.execPlugin}.runs`) ? readFileSync(`${data.execPlugin}.runs`, "utf8").length : 0,
    stop: async () => {},
    destroy: async () => {},
    restartApiserver: () => Promise.reject(new Error("an attached cluster cannot be restarted; start one of your own")),
  };
}

/** Stops the cluster whose PIDs are in `dir`. */
export async function stopCluster(dir) {
  for (const name of ["kube-apiserver.pid", "etcd.pid"]) {
    const file = join(dir, name);
    if (existsSync(file)) await stopPid(Number(readFileSync(file, "utf8")));
  }
}

/** `text` as one shell word for `eval`: as it is when plain, else single-quoted (a path with spaces, say). */
function shellWord(text) {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

function parseFlags(argv) {
  const flags = { featureGates: {}, args: [] };
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => inline ?? argv[++i];
    if (name === "--dir") flags.dir = value();
    else if (name === "--watch-cache") flags.watchCache = value() !== "false";
    else if (name === "--etcd-compaction-interval") flags.etcdCompactionInterval = value();
    else if (name === "--feature-gates") {
      for (const gate of value().split(",")) {
        const [k, v] = gate.split("=");
        flags.featureGates[k] = v;
      }
    } else flags.args.push(argv[i]);
  }
  return flags;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const [command, ...rest] = process.argv.slice(2);
  const flags = parseFlags(rest);
  const dir = resolve(flags.dir ?? join(process.cwd(), ".cache", "kube"));
  if (command === "start") {
    await stopCluster(dir);
    const cluster = await startCluster({ ...flags, dir });
    console.error(`== etcd ${cluster.etcdUrl}, kube-apiserver ${cluster.server} (ready in ${cluster.startSeconds} s)`);
    console.error(`== contexts: token (current), certificate, exec; stop with: node scripts/kube/cluster.mjs stop`);
    console.log(`export KUBECONFIG=${shellWord(cluster.kubeconfig)}`);
    process.exit(0);
  } else if (command === "stop") {
    await stopCluster(dir);
  } else {
    console.error("usage: node scripts/kube/cluster.mjs start|stop [--dir DIR] [kube-apiserver flags]");
    process.exit(2);
  }
}
