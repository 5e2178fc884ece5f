/**
 * The cluster of the informer benchmark (bench/informer.bench.ts, bench/informer_run.ts): a real kube-apiserver and
 * etcd of its own (scripts/kube/cluster.mjs), a namespace `bench` with its `default` ServiceAccount (there is no
 * controller-manager to make it), then 5,000 ConfigMaps and 5,000 Pods of realistic sizes, created by concurrent
 * POSTs over one HTTP/2 connection. The Pods are then given a running Pod's status (conditions, IPs, three container
 * statuses) through their `status` subresource, as a kubelet would write it.
 *
 * Then the churn recordings: for each kind, every object is changed once (a merge patch of one annotation), and the
 * watch from before the changes is read from the server, in JSON and in protobuf, until the server ends it: the bytes
 * of N real MODIFIED events, written to `DIR/churn-<resource>.{json,pb}`, with the list those events apply to
 * (`DIR/churn-<resource>-list.json`, the objects as they were before the changes).
 *
 *   node --import tsx bench/informer_cluster.ts start [--dir DIR] [--objects 5000]
 *       starts the cluster, fills it, records, prints `export KUBECONFIG=DIR/kubeconfig`, leaves it running
 *   node --import tsx bench/informer_cluster.ts stop [--dir DIR]
 *
 * @module
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { type ClusterConnection, connectCluster, loadKubeconfig } from "../mod.ts";
import { type Cluster, startCluster, stopCluster } from "../scripts/kube/cluster.mjs";
// The same PRNG as the test watch events (mulberry32), so every run makes the same objects.
import { prng } from "../tests/peers/watch_events.ts";

export const NAMESPACE = "bench";
export const OBJECTS = 5000;
export const RESOURCES = ["configmaps", "pods"] as const;
export type BenchResource = typeof RESOURCES[number];

const APPS = ["checkout", "catalog", "payments", "search", "auth", "ledger", "notify", "gateway", "billing", "profile"];
const hex = (random: () => number, n: number) =>
  Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join("");
const suffix = (random: () => number, n: number) =>
  Array.from({ length: n }, () => "bcdfghjklmnpqrstvwxz2456789"[Math.floor(random() * 27)]).join("");

/** A ConfigMap: an app's properties and YAML, mostly 1-3 KB of data, one in ten ~10 KB. */
export function configMap(i: number): Record<string, unknown> {
  const random = prng(1000 + i);
  const app = APPS[i % APPS.length];
  const lines = (n: number) =>
    Array.from(
      { length: n },
      (_, k) => `${app}.setting.${k}.${suffix(random, 6)}=${hex(random, 8 + Math.floor(random() * 40))}`,
    ).join("\n");
  const big = i % 10 === 0;
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `${app}-config-${i}`,
      labels: { app, "app.kubernetes.io/part-of": "shop", "app.kubernetes.io/managed-by": "helm", tier: "backend" },
      annotations: { "meta.helm.sh/release-name": app, "meta.helm.sh/release-namespace": NAMESPACE },
    },
    data: {
      "application.properties": lines(big ? 200 : 20 + Math.floor(random() * 30)),
      "logging.yaml": `level: info\nformat: json\nloggers:\n  ${app}: debug\n  http: warn\n  sql: ${
        random() < 0.5 ? "info" : "warn"
      }\n`,
      "feature-flags.json": JSON.stringify(
        Object.fromEntries(Array.from({ length: 8 }, (_, k) => [`flag-${k}-${suffix(random, 4)}`, random() < 0.5])),
      ),
    },
  };
}

const container = (random: () => number, app: string, name: string, image: string, port: number) => ({
  name,
  image: `registry.example.com/shop/${image}:1.${Math.floor(random() * 40)}.${Math.floor(random() * 10)}`,
  ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
  env: [
    { name: "APP", value: app },
    { name: "LOG_LEVEL", value: "info" },
    { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
    { name: "DB_PASSWORD", valueFrom: { secretKeyRef: { name: `${app}-db`, key: "password" } } },
  ],
  resources: {
    requests: { cpu: `${50 + Math.floor(random() * 200)}m`, memory: `${64 + Math.floor(random() * 192)}Mi` },
    limits: { cpu: "1", memory: "512Mi" },
  },
  readinessProbe: { httpGet: { path: "/ready", port }, periodSeconds: 10 },
  livenessProbe: { httpGet: { path: "/healthz", port }, initialDelaySeconds: 15, periodSeconds: 20 },
  volumeMounts: [{ name: "config", mountPath: "/etc/app", readOnly: true }],
});

/** A Deployment's Pod: three containers (app, sidecar proxy, metrics exporter) with env, resources, probes. */
export function pod(i: number): Record<string, unknown> {
  const random = prng(2000 + i);
  const app = APPS[i % APPS.length];
  const hash = `${suffix(random, 10)}`;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `${app}-${hash}-${suffix(random, 5)}-${i}`,
      labels: {
        app,
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/part-of": "shop",
        "pod-template-hash": hash,
        version: `v${1 + (i % 3)}`,
      },
      annotations: {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "9100",
        "kubectl.kubernetes.io/restartedAt": "2026-11-20T10:00:00Z",
      },
      ownerReferences: [{
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: `${app}-${hash}`,
        uid: `${hex(random, 8)}-${hex(random, 4)}-${hex(random, 4)}-${hex(random, 4)}-${hex(random, 12)}`,
        controller: true,
        blockOwnerDeletion: true,
      }],
    },
    spec: {
      containers: [
        container(random, app, app, app, 8080),
        container(random, app, "proxy", "envoy", 15001),
        container(random, app, "metrics", "exporter", 9100),
      ],
      volumes: [{ name: "config", configMap: { name: `${app}-config-${i}` } }],
      nodeName: `node-${i % 50}`,
      terminationGracePeriodSeconds: 30,
    },
  };
}

/** A running Pod's status, as a kubelet writes it. */
export function podStatus(i: number, object: { spec: { containers: { name: string; image: string }[] } }) {
  const random = prng(3000 + i);
  const at = `2026-11-2${i % 8}T${String(i % 24).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}:00Z`;
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  return {
    status: {
      phase: "Running",
      conditions: ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"].map((
        type,
      ) => ({ type, status: "True", lastProbeTime: null, lastTransitionTime: at })),
      hostIP: `192.168.${i % 50}.10`,
      hostIPs: [{ ip: `192.168.${i % 50}.10` }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: at,
      containerStatuses: object.spec.containers.map((c) => ({
        name: c.name,
        state: { running: { startedAt: at } },
        lastState: {},
        ready: true,
        restartCount: Math.floor(random() * 3),
        image: c.image,
        imageID: `${c.image.split(":")[0]}@sha256:${hex(random, 64)}`,
        containerID: `containerd://${hex(random, 64)}`,
        started: true,
      })),
    },
  };
}

async function send(
  c: ClusterConnection,
  method: string,
  path: string,
  body: unknown,
  contentType = "application/json",
): Promise<Record<string, unknown>> {
  const headers = await c.headers();
  headers.set("content-type", contentType);
  headers.set("accept", "application/json");
  const response = await c.fetch(new URL(path, c.server), { method, headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok && !(response.status === 409 && method === "POST")) {
    throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  }
  return JSON.parse(text);
}

/** Runs `work(i)` for i in [0, n) with `concurrency` at a time. */
async function pool(n: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) await work(next++);
  }));
}

/** The namespace, its ServiceAccount, `objects` ConfigMaps and Pods (Pods with a running status). */
export async function populate(c: ClusterConnection, objects = OBJECTS, log = (_: string) => {}): Promise<void> {
  await send(c, "POST", "/api/v1/namespaces", { metadata: { name: NAMESPACE } });
  await send(c, "POST", `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, { metadata: { name: "default" } });
  let t = performance.now();
  await pool(objects, 32, async (i) => {
    await send(c, "POST", `/api/v1/namespaces/${NAMESPACE}/configmaps`, configMap(i));
  });
  log(`${objects} ConfigMaps in ${((performance.now() - t) / 1e3).toFixed(1)} s`);
  t = performance.now();
  await pool(objects, 32, async (i) => {
    const object = pod(i);
    const created = await send(c, "POST", `/api/v1/namespaces/${NAMESPACE}/pods`, object) as {
      metadata: { name: string };
      spec: { containers: { name: string; image: string }[] };
    };
    await send(
      c,
      "PATCH",
      `/api/v1/namespaces/${NAMESPACE}/pods/${created.metadata.name}/status`,
      podStatus(i, created),
      "application/merge-patch+json",
    );
  });
  log(`${objects} Pods (created, then their status) in ${((performance.now() - t) / 1e3).toFixed(1)} s`);
}

/** Reads a whole response body. */
async function bytesOf(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * Changes every object of `resource` once and records the watch of those changes (JSON and protobuf bodies) and the
 * list before them, into `dir`. Returns the number of MODIFIED events recorded.
 */
export async function recordChurn(
  c: ClusterConnection,
  resource: BenchResource,
  dir: string,
  log = (_: string) => {},
): Promise<number> {
  const base = `/api/v1/namespaces/${NAMESPACE}/${resource}`;
  const headers = await c.headers();
  headers.set("accept", "application/json");
  const listBytes = await bytesOf(await c.fetch(new URL(base, c.server), { headers }));
  const listed = JSON.parse(new TextDecoder().decode(listBytes)) as {
    metadata: { resourceVersion: string };
    items: { metadata: { name: string } }[];
  };
  const from = listed.metadata.resourceVersion;
  const t = performance.now();
  let round = 0;
  await pool(listed.items.length, 32, async (i) => {
    await send(c, "PATCH", `${base}/${listed.items[i].metadata.name}`, {
      metadata: { annotations: { "bench.watchwire.dev/churn": `${++round}` } },
    }, "application/merge-patch+json");
  });
  log(`${resource}: ${listed.items.length} changes in ${((performance.now() - t) / 1e3).toFixed(1)} s`);
  const recorded: Record<string, Uint8Array> = {};
  for (
    const [format, accept] of [["json", "application/json"], ["pb", "application/vnd.kubernetes.protobuf"]] as const
  ) {
    const h = await c.headers();
    h.set("accept", accept);
    // The server ends the watch after timeoutSeconds; by then it has sent every change since `from`.
    const url = new URL(`${base}?watch=1&resourceVersion=${from}&timeoutSeconds=3`, c.server);
    const response = await c.fetch(url, { headers: h });
    if (!response.ok) throw new Error(`watch ${url}: ${response.status}`);
    recorded[format] = await bytesOf(response);
  }
  const events = new TextDecoder().decode(recorded.json).split("\n").filter((line) => line !== "");
  const modified = events.filter((line) => line.startsWith('{"type":"MODIFIED"')).length;
  if (modified !== listed.items.length || events.length !== modified) {
    throw new Error(`${resource}: recorded ${events.length} events, ${modified} MODIFIED, for ${listed.items.length}`);
  }
  writeFileSync(join(dir, `churn-${resource}.json`), recorded.json);
  writeFileSync(join(dir, `churn-${resource}.pb`), recorded.pb);
  writeFileSync(join(dir, `churn-${resource}-list.json`), listBytes);
  log(
    `${resource}: recorded ${modified} MODIFIED events, ${recorded.json.length} B of JSON, ${recorded.pb.length} B of protobuf`,
  );
  return modified;
}

/** Starts a cluster in `dir`, fills it and records the churn; the cluster keeps running. */
export async function setUp(dir: string, objects = OBJECTS, log = (_: string) => {}): Promise<Cluster> {
  mkdirSync(dir, { recursive: true });
  await stopCluster(dir);
  const cluster = await startCluster({ dir });
  log(`cluster up in ${cluster.startSeconds} s: ${cluster.server}`);
  try {
    const connection = await connectCluster(await loadKubeconfig({ path: cluster.kubeconfig }), { http2: true });
    try {
      await populate(connection, objects, log);
      for (const resource of RESOURCES) await recordChurn(connection, resource, dir, log);
    } finally {
      await connection.close();
    }
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : process.argv[at + 1];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const command = process.argv[2];
  const dir = resolve(flag("dir") ?? join(process.cwd(), ".cache", "informer-bench"));
  if (command === "start") {
    const cluster = await setUp(dir, Number(flag("objects") ?? OBJECTS), (m) => console.error(`== ${m}`));
    console.log(`export KUBECONFIG=${cluster.kubeconfig}`);
    process.exit(0);
  } else if (command === "stop") {
    await stopCluster(dir);
  } else {
    console.error("usage: node --import tsx bench/informer_cluster.ts start|stop [--dir DIR] [--objects N]");
    process.exit(2);
  }
}
