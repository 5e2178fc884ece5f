/**
 * A deterministic generator of realistic Kubernetes watch traffic, shared by the test servers (node:http, Deno.serve,
 * Bun.serve), the real-peer tests and scripts/record-fixtures.ts. Every call returns fresh objects with the same
 * content: the values only depend on a fixed seed, never on the clock or on randomness.
 *
 * The shapes follow what a v1.30 API server sends: full ObjectMeta (uid, resourceVersion, labels, annotations,
 * ownerReferences, managedFields), spec and status; BOOKMARKs whose object is an empty Pod/ConfigMap carrying only the
 * resourceVersion (and `k8s.io/initial-events-end` after the initial events); and the `410 Expired` Status.
 */
import type { KubernetesList, KubernetesObject, Status, WatchEvent } from "../../mod.ts";

/** The resources the test servers serve under `/api/v1/namespaces/default/`. */
export type WatchResource = "pods" | "configmaps";

/** The `Status` of an expired watch, as the API server sends it (as an ERROR event or as a 410 response body). */
export function expiredStatus(): Status {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: "too old resource version: 1 (5)",
    reason: "Expired",
    code: 410,
  };
}

/** The text of the annotation (and ConfigMap value) that exercises multi-byte UTF-8, including a 4-byte sequence. */
export const NON_ASCII_TEXT = "naïve ☸ 日本 — café 🚀";

/** Byte length the large event's NDJSON line is grown to (at least). */
export const LARGE_EVENT_BYTES = 40 * 1024;

/** A small deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Ids {
  readonly #next: () => number;
  constructor(seed: number) {
    this.#next = prng(seed);
  }
  hex(n: number): string {
    let out = "";
    for (let i = 0; i < n; i++) out += Math.floor(this.#next() * 16).toString(16);
    return out;
  }
  uid(): string {
    const h = this.hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
  /** A pod-template-hash / generated-name suffix: lower-case consonants and digits, as Kubernetes makes them. */
  suffix(n: number): string {
    const alphabet = "bcdfghjklmnpqrstvwxz2456789";
    let out = "";
    for (let i = 0; i < n; i++) out += alphabet[Math.floor(this.#next() * alphabet.length)];
    return out;
  }
}

/** A fixed instant plus `seconds`, formatted as the API server does (RFC 3339, seconds precision, `Z`). */
function time(seconds: number): string {
  return new Date(Date.UTC(2025, 0, 15, 10, 0, 0) + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

interface PodSpecInput {
  name: string;
  generateName: string;
  uid: string;
  /** Seed of the image and container ids in the status. */
  statusSeed: number;
  app: string;
  hash: string;
  image: string;
  owner: { kind: string; name: string; uid: string };
  node: string;
  podIp: string;
  created: number;
  env?: Array<{ name: string; value: string }>;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function podSpec(p: PodSpecInput): { [key: string]: Json } {
  return {
    volumes: [{
      name: "kube-api-access-" + p.hash.slice(0, 5),
      projected: {
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
          { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
          {
            downwardAPI: {
              items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
            },
          },
        ],
        defaultMode: 420,
      },
    }],
    containers: [{
      name: p.app,
      image: p.image,
      ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }],
      env: p.env ?? [{ name: "LOG_LEVEL", value: "info" }],
      resources: { limits: { memory: "256Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
      volumeMounts: [{
        name: "kube-api-access-" + p.hash.slice(0, 5),
        readOnly: true,
        mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
      }],
      readinessProbe: {
        httpGet: { path: "/healthz", port: "http", scheme: "HTTP" },
        timeoutSeconds: 1,
        periodSeconds: 10,
        successThreshold: 1,
        failureThreshold: 3,
      },
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
      imagePullPolicy: "IfNotPresent",
    }],
    restartPolicy: "Always",
    terminationGracePeriodSeconds: 30,
    dnsPolicy: "ClusterFirst",
    serviceAccountName: "default",
    serviceAccount: "default",
    nodeName: p.node,
    securityContext: {},
    schedulerName: "default-scheduler",
    tolerations: [
      { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
    ],
    priority: 0,
    enableServiceLinks: true,
    preemptionPolicy: "PreemptLowerPriority",
  };
}

function podStatus(p: PodSpecInput, phase: "Pending" | "Running", restarts: number): { [key: string]: Json } {
  const ids = new Ids(p.statusSeed + restarts);
  const started = time(p.created + 3);
  const running = phase === "Running";
  const condition = (type: string, status: boolean) => ({
    type,
    status: status ? "True" : "False",
    lastProbeTime: null,
    lastTransitionTime: time(p.created + (status ? 5 : 1)),
  });
  return {
    phase,
    conditions: [
      condition("PodReadyToStartContainers", running),
      condition("Initialized", true),
      condition("Ready", running),
      condition("ContainersReady", running),
      condition("PodScheduled", true),
    ],
    hostIP: "10.0.0." + (11 + Number(p.node.slice(-1))),
    hostIPs: [{ ip: "10.0.0." + (11 + Number(p.node.slice(-1))) }],
    podIP: p.podIp,
    podIPs: [{ ip: p.podIp }],
    startTime: time(p.created + 1),
    containerStatuses: [{
      name: p.app,
      state: running ? { running: { startedAt: started } } : { waiting: { reason: "ContainerCreating" } },
      lastState: {},
      ready: running,
      restartCount: restarts,
      image: p.image,
      imageID: `${p.image.split(":")[0]}@sha256:${ids.hex(64)}`,
      containerID: `containerd://${ids.hex(64)}`,
      started: running,
    }],
    qosClass: "Burstable",
  };
}

function managedFields(p: PodSpecInput, withStatus: boolean): Json[] {
  const fields: Json[] = [{
    manager: "kube-controller-manager",
    operation: "Update",
    apiVersion: "v1",
    time: time(p.created),
    fieldsType: "FieldsV1",
    fieldsV1: {
      "f:metadata": {
        "f:generateName": {},
        "f:labels": { ".": {}, "f:app": {}, "f:pod-template-hash": {} },
        "f:ownerReferences": { ".": {}, [`k:{"uid":"${p.owner.uid}"}`]: {} },
      },
      "f:spec": {
        [`f:containers`]: {
          [`k:{"name":"${p.app}"}`]: {
            ".": {},
            "f:image": {},
            "f:imagePullPolicy": {},
            "f:name": {},
            "f:ports": { ".": {}, [`k:{"containerPort":8080,"protocol":"TCP"}`]: { ".": {}, "f:containerPort": {} } },
            "f:resources": { ".": {}, "f:limits": { ".": {}, "f:memory": {} }, "f:requests": {} },
          },
        },
        "f:dnsPolicy": {},
        "f:enableServiceLinks": {},
        "f:restartPolicy": {},
        "f:schedulerName": {},
        "f:terminationGracePeriodSeconds": {},
      },
    },
  }];
  if (withStatus) {
    fields.push({
      manager: "kubelet",
      operation: "Update",
      apiVersion: "v1",
      time: time(p.created + 5),
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:status": {
          "f:conditions": {
            [`k:{"type":"Ready"}`]: { ".": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {} },
          },
          "f:containerStatuses": {},
          "f:hostIP": {},
          "f:phase": {},
          "f:podIP": {},
          "f:startTime": {},
        },
      },
      subresource: "status",
    });
  }
  return fields;
}

function pod(
  p: PodSpecInput,
  rv: number,
  options: {
    phase?: "Pending" | "Running";
    restarts?: number;
    annotations?: Record<string, string>;
    deleting?: number;
  } = {},
): KubernetesObject & { [key: string]: Json } {
  const phase = options.phase ?? "Running";
  const metadata: { [key: string]: Json } = {
    name: p.name,
    generateName: p.generateName,
    namespace: "default",
    uid: p.uid,
    resourceVersion: String(rv),
    creationTimestamp: time(p.created),
    labels: { app: p.app, "pod-template-hash": p.hash },
  };
  if (options.annotations !== undefined) metadata.annotations = options.annotations;
  if (options.deleting !== undefined) {
    metadata.deletionTimestamp = time(options.deleting);
    metadata.deletionGracePeriodSeconds = 30;
  }
  metadata.ownerReferences = [{
    apiVersion: "apps/v1",
    kind: p.owner.kind,
    name: p.owner.name,
    uid: p.owner.uid,
    controller: true,
    blockOwnerDeletion: true,
  }];
  metadata.managedFields = managedFields(p, phase === "Running");
  return {
    kind: "Pod",
    apiVersion: "v1",
    metadata,
    spec: podSpec(p),
    status: podStatus(p, phase, options.restarts ?? 0),
  } as KubernetesObject & { [key: string]: Json };
}

/** The empty object of a BOOKMARK, as the watch cache sends it for `kind`. */
function bookmark(kind: "Pod" | "ConfigMap", rv: number, initialEventsEnd: boolean): WatchEvent {
  const metadata: { resourceVersion: string; creationTimestamp: null; annotations?: Record<string, string> } = {
    resourceVersion: String(rv),
    creationTimestamp: null,
  };
  if (initialEventsEnd) metadata.annotations = { "k8s.io/initial-events-end": "true" };
  const object = kind === "Pod"
    ? { kind, apiVersion: "v1", metadata, spec: { containers: null }, status: {} }
    : { kind, apiVersion: "v1", metadata };
  return { type: "BOOKMARK", object } as WatchEvent;
}

interface PodFixture {
  web1: PodSpecInput;
  web2: PodSpecInput;
  db: PodSpecInput;
  big: PodSpecInput;
}

function podFixture(ids: Ids): PodFixture {
  const hash = ids.suffix(10);
  const rs = { kind: "ReplicaSet", name: `web-${hash}`, uid: ids.uid() };
  const sts = { kind: "StatefulSet", name: "db", uid: ids.uid() };
  const batchHash = ids.suffix(10);
  const batch = { kind: "ReplicaSet", name: `batch-report-${batchHash}`, uid: ids.uid() };
  const web = {
    app: "web",
    generateName: `web-${hash}-`,
    hash,
    image: "registry.example.com/shop/web:1.24.3",
    owner: rs,
  };
  return {
    web1: {
      ...web,
      name: `web-${hash}-${ids.suffix(5)}`,
      uid: ids.uid(),
      statusSeed: 100,
      node: "node-1",
      podIp: "10.244.1.17",
      created: 0,
    },
    web2: {
      ...web,
      name: `web-${hash}-${ids.suffix(5)}`,
      uid: ids.uid(),
      statusSeed: 200,
      node: "node-2",
      podIp: "10.244.2.9",
      created: 2,
    },
    db: {
      name: "db-0",
      generateName: "db-",
      uid: ids.uid(),
      statusSeed: 300,
      app: "db",
      hash: ids.suffix(10),
      image: "docker.io/library/postgres:16.4",
      owner: sts,
      node: "node-3",
      podIp: "10.244.3.4",
      created: 4,
    },
    big: {
      name: `batch-report-${batchHash}-${ids.suffix(5)}`,
      generateName: `batch-report-${batchHash}-`,
      uid: ids.uid(),
      statusSeed: 400,
      app: "batch-report",
      hash: batchHash,
      image: "registry.example.com/analytics/batch-report:2.0.1",
      owner: batch,
      node: "node-2",
      podIp: "10.244.2.31",
      created: 6,
      env: [],
    },
  };
}

/**
 * A pod whose `kubectl.kubernetes.io/last-applied-configuration` annotation (as `kubectl apply` leaves it) repeats a
 * long env list: its env grows until the ADDED event's line is at least `bytes` long.
 */
function largePod(p: PodSpecInput, rv: number, bytes: number): KubernetesObject {
  const env = p.env!;
  const ids = new Ids(0x5eed);
  const build = () => {
    const applied = JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { labels: { app: p.app }, name: p.name, namespace: "default" },
      spec: { containers: [{ env, image: p.image, name: p.app }] },
    });
    return pod(p, rv, {
      annotations: {
        "kubectl.kubernetes.io/last-applied-configuration": applied + "\n",
        "kubectl.kubernetes.io/restartedAt": time(5),
      },
    });
  };
  for (let k = 0; k < 10000; k++) {
    const object = build();
    if (new TextEncoder().encode(JSON.stringify({ type: "ADDED", object })).length >= bytes) return object;
    env.push({
      name: `REPORT_SHARD_${String(k).padStart(3, "0")}_ENDPOINT`,
      value: `https://shard-${k}.${ids.hex(12)}.internal:8443/v2/ingest`,
    });
  }
  throw new Error("largePod: runaway loop");
}

/**
 * The events of `GET /api/v1/namespaces/default/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true`:
 * initial ADDEDs (one of them ~40 KB), the initial-events-end BOOKMARK, MODIFIEDs (one with a non-ASCII annotation),
 * a DELETED, a plain BOOKMARK, and the 410 `Expired` ERROR that ends the watch.
 */
export function podWatchEvents(): WatchEvent[] {
  const { web1, web2, db, big } = podFixture(new Ids(20250115));
  return [
    { type: "ADDED", object: pod(web1, 1201) },
    { type: "ADDED", object: pod(web2, 1205) },
    { type: "ADDED", object: pod(db, 1188, { annotations: { "backup.example.com/schedule": "0 3 * * *" } }) },
    { type: "ADDED", object: largePod(big, 1210, LARGE_EVENT_BYTES) },
    bookmark("Pod", 1210, true),
    {
      type: "MODIFIED",
      object: pod(web1, 1214, {
        annotations: { "example.com/description": NON_ASCII_TEXT, "kubectl.kubernetes.io/restartedAt": time(60) },
        restarts: 1,
      }),
    },
    { type: "MODIFIED", object: pod(web2, 1219, { deleting: 90 }) },
    { type: "DELETED", object: pod(web2, 1223, { deleting: 90 }) },
    { type: "MODIFIED", object: pod(db, 1224, { phase: "Pending", restarts: 2 }) },
    bookmark("Pod", 1230, false),
    { type: "ERROR", object: expiredStatus() },
  ];
}

function configMap(
  name: string,
  uid: string,
  rv: number,
  created: number,
  data: Record<string, string>,
  extra: { labels?: Record<string, string>; annotations?: Record<string, string>; manager: string; updated: number },
): KubernetesObject {
  const metadata: { [key: string]: Json } = {
    name,
    namespace: "default",
    uid,
    resourceVersion: String(rv),
    creationTimestamp: time(created),
  };
  if (extra.labels !== undefined) metadata.labels = extra.labels;
  if (extra.annotations !== undefined) metadata.annotations = extra.annotations;
  const dataFields: { [key: string]: Json } = { ".": {} };
  for (const key of Object.keys(data)) dataFields[`f:${key}`] = {};
  metadata.managedFields = [{
    manager: extra.manager,
    operation: extra.manager === "kubectl-client-side-apply" ? "Update" : "Apply",
    apiVersion: "v1",
    time: time(extra.updated),
    fieldsType: "FieldsV1",
    fieldsV1: { "f:data": dataFields },
  }];
  return { kind: "ConfigMap", apiVersion: "v1", metadata, data } as KubernetesObject;
}

/** A fake (but well-formed looking) PEM certificate: deterministic base64 lines. */
function fakeCertificate(ids: Ids): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const lines = ["-----BEGIN CERTIFICATE-----"];
  for (let l = 0; l < 17; l++) {
    let line = "";
    for (let i = 0; i < 64; i++) line += alphabet[parseInt(ids.hex(2), 16) % 64];
    lines.push(line);
  }
  lines.push("-----END CERTIFICATE-----", "");
  return lines.join("\n");
}

/**
 * The events of `GET /api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true`:
 * initial ADDEDs, the initial-events-end BOOKMARK, a MODIFIED with non-ASCII values, a DELETED; the watch then ends
 * without an ERROR (as at `timeoutSeconds`).
 */
export function configMapWatchEvents(): WatchEvent[] {
  const ids = new Ids(31337);
  const rootUid = ids.uid();
  const appUid = ids.uid();
  const certificate = fakeCertificate(ids);
  const appData = (level: string): Record<string, string> => ({
    "app.properties": `greeting=Hello\nlog.level=${level}\nfeature.checkout=true\n`,
    "motd.txt": `Willkommen! ${NON_ASCII_TEXT}\n`,
  });
  const appMeta = (updated: number) => ({
    labels: { "app.kubernetes.io/name": "shop", "app.kubernetes.io/part-of": "storefront" },
    annotations: { "example.com/owner": "team-storefront", "example.com/description": NON_ASCII_TEXT },
    manager: "kubectl",
    updated,
  });
  return [
    {
      type: "ADDED",
      object: configMap("kube-root-ca.crt", rootUid, 310, -86400, { "ca.crt": certificate }, {
        annotations: {
          "kubernetes.io/description":
            "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.",
        },
        manager: "kube-controller-manager",
        updated: -86400,
      }),
    },
    { type: "ADDED", object: configMap("shop-config", appUid, 1190, -600, appData("info"), appMeta(-600)) },
    bookmark("ConfigMap", 1210, true),
    { type: "MODIFIED", object: configMap("shop-config", appUid, 1226, -600, appData("debug"), appMeta(30)) },
    { type: "DELETED", object: configMap("shop-config", appUid, 1231, -600, appData("debug"), appMeta(30)) },
    bookmark("ConfigMap", 1240, false),
  ];
}

/** The events of a watch on `resource`. */
export function watchEvents(resource: WatchResource): WatchEvent[] {
  return resource === "pods" ? podWatchEvents() : configMapWatchEvents();
}

/** The body of `GET /api/v1/namespaces/default/<resource>` (no watch): a list whose items omit kind and apiVersion. */
export function listOf(resource: WatchResource): KubernetesList {
  const events = watchEvents(resource).filter((e) => e.type === "ADDED");
  const items = events.map((e) => {
    const { kind: _kind, apiVersion: _apiVersion, ...rest } = e.object as KubernetesObject;
    return rest;
  });
  return {
    kind: resource === "pods" ? "PodList" : "ConfigMapList",
    apiVersion: "v1",
    metadata: { resourceVersion: "1209" },
    items,
  };
}

/** Each event as one line of a JSON watch body (`JSON.stringify` plus `\n`), as the API server writes them. */
export function ndjsonLines(events: WatchEvent[]): string[] {
  return events.map((event) => JSON.stringify(event) + "\n");
}

/** How a test server paces a watch: after event `index`, wait this many milliseconds (0: write on at once). */
export function delayAfter(index: number): number {
  return index % 3 === 2 ? 5 : 0;
}
