/**
 * Deterministic generators of Kubernetes watch traffic for the benchmarks: Pod and ConfigMap watch events (seeded
 * PRNG, so every runtime and every run sees the same bytes), NDJSON bodies, 64 KiB network reads, HTTP/1.1 chunked
 * coding, and a lazily generated chunked watch body of any length for the memory benchmark.
 *
 * @module
 */

/** mulberry32: small, fast, good enough for test data, identical in every runtime. */
export class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0;
  }
  next(): number {
    let t = (this.#s = (this.#s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  chars(alphabet: string, n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += alphabet[this.int(alphabet.length)];
    return s;
  }
  hex(n: number): string {
    return this.chars("0123456789abcdef", n);
  }
  /** Kubernetes' random name suffix alphabet (no vowels, no confusable digits). */
  suffix(n: number): string {
    return this.chars("bcdfghjklmnpqrstvwxz2456789", n);
  }
  uuid(): string {
    return `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-${this.pick(["8", "9", "a", "b"])}${this.hex(3)}-${
      this.hex(12)
    }`;
  }
  ip(): string {
    return `10.${this.int(256)}.${this.int(256)}.${1 + this.int(254)}`;
  }
  time(): string {
    const d = new Date(Date.UTC(2025, this.int(12), 1 + this.int(28), this.int(24), this.int(60), this.int(60)));
    return d.toISOString().replace(".000Z", "Z");
  }
}

const APPS = [
  "checkout",
  "payments",
  "frontend",
  "catalog",
  "search",
  "ingest",
  "auth",
  "billing",
  "notifier",
  "reports",
];
const TEAMS = ["platform", "commerce", "data", "identity", "growth"];
const NAMESPACES = ["default", "prod", "staging", "kube-system", "monitoring", "team-a", "team-b"];
const REGISTRIES = [
  "registry.k8s.io",
  "ghcr.io/acme",
  "docker.io/library",
  "123456789012.dkr.ecr.eu-west-1.amazonaws.com",
];
const NODES = [
  "ip-10-0-1-23.eu-west-1.compute.internal",
  "gke-prod-pool-1-6f2a9c1d-x7q2",
  "aks-nodepool1-31718369-vmss000003",
];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function container(rng: Rng, app: string, index: number, rich: boolean): Record<string, Json> {
  const name = index === 0 ? app : `${app}-sidecar-${index}`;
  const c: Record<string, Json> = {
    name,
    image: `${rng.pick(REGISTRIES)}/${app}:v${1 + rng.int(3)}.${rng.int(20)}.${rng.int(10)}`,
    ports: [{ containerPort: 8080 + index }],
    resources: { limits: { memory: `${128 << rng.int(4)}Mi` }, requests: { cpu: `${50 * (1 + rng.int(8))}m` } },
  };
  if (rich) {
    c.terminationMessagePath = "/dev/termination-log";
    c.terminationMessagePolicy = "File";
    c.imagePullPolicy = "IfNotPresent";
    c.ports = [
      { name: "http", containerPort: 8080 + index, protocol: "TCP" },
      { name: "metrics", containerPort: 9090 + index, protocol: "TCP" },
    ];
    c.resources = {
      limits: { cpu: `${500 * (1 + rng.int(4))}m`, memory: `${256 << rng.int(4)}Mi` },
      requests: { cpu: `${100 * (1 + rng.int(4))}m`, memory: `${128 << rng.int(4)}Mi` },
    };
    const env: Json[] = [];
    for (let k = 0; k < 6; k++) {
      env.push({ name: `${app.toUpperCase()}_SETTING_${k}`, value: rng.suffix(8 + rng.int(24)) });
    }
    env.push({ name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } });
    env.push({ name: "POD_IP", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "status.podIP" } } });
    c.env = env;
    c.volumeMounts = [
      { name: "config", mountPath: `/etc/${app}`, readOnly: true },
      {
        name: `kube-api-access-${rng.suffix(5)}`,
        mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
        readOnly: true,
      },
    ];
    c.livenessProbe = {
      httpGet: { path: "/healthz", port: 8080 + index, scheme: "HTTP" },
      initialDelaySeconds: 10,
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    };
    c.readinessProbe = {
      httpGet: { path: "/ready", port: 8080 + index, scheme: "HTTP" },
      timeoutSeconds: 1,
      periodSeconds: 5,
      successThreshold: 1,
      failureThreshold: 3,
    };
    c.securityContext = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true };
  }
  return c;
}

function containerStatus(rng: Rng, c: Record<string, Json>, started: string): Record<string, Json> {
  return {
    name: c.name,
    state: { running: { startedAt: started } },
    lastState: {},
    ready: true,
    restartCount: rng.int(3),
    image: c.image,
    imageID: `${c.image}@sha256:${rng.hex(64)}`,
    containerID: `containerd://${rng.hex(64)}`,
    started: true,
  };
}

/** `fieldsV1` of a managedFields entry covering `containers` (the shape the API server writes). */
function specFields(containers: Record<string, Json>[], rich: boolean): Json {
  const byName: Record<string, Json> = {};
  for (const c of containers) {
    const f: Record<string, Json> = {
      ".": {},
      "f:image": {},
      "f:imagePullPolicy": {},
      "f:name": {},
      "f:resources": {},
    };
    if (rich) {
      f["f:env"] = { ".": {}, 'k:{"name":"POD_NAME"}': { ".": {}, "f:name": {}, "f:valueFrom": {} } };
      f["f:livenessProbe"] = { ".": {}, "f:httpGet": { ".": {}, "f:path": {}, "f:port": {}, "f:scheme": {} } };
      f["f:ports"] = { ".": {}, 'k:{"containerPort":8080,"protocol":"TCP"}': { ".": {}, "f:containerPort": {} } };
      f["f:volumeMounts"] = { ".": {}, 'k:{"mountPath":"/etc/config"}': { ".": {}, "f:mountPath": {}, "f:name": {} } };
    }
    byName[`k:{"name":"${c.name}"}`] = f;
  }
  return { "f:metadata": { "f:labels": { ".": {}, "f:app": {} } }, "f:spec": { "f:containers": byName } };
}

/**
 * A Pod watch event. `containers` drives the size: 1 plain container gives a lean ~1.1 KB Pod (every section present,
 * few fields each); more makes a full Pod whose rich containers (env, probes, mounts, per-container managedFields and
 * statuses) add ~2.6 KB each.
 */
export function podEvent(rng: Rng, rv: number, containers: number): Record<string, Json> {
  const rich = containers > 1;
  const app = rng.pick(APPS);
  const hash = rng.hex(10);
  const created = rng.time();
  const cs: Record<string, Json>[] = [];
  for (let i = 0; i < containers; i++) cs.push(container(rng, app, i, rich));
  const labels: Record<string, Json> = { app, "pod-template-hash": hash };
  const annotations: Record<string, Json> = rich
    ? { "kubectl.kubernetes.io/restartedAt": created }
    : { "prometheus.io/scrape": "true" };
  if (rich) {
    labels["app.kubernetes.io/part-of"] = rng.pick(TEAMS);
    labels["app.kubernetes.io/version"] = `1.${rng.int(20)}.${rng.int(10)}`;
    annotations["prometheus.io/scrape"] = "true";
    annotations["prometheus.io/port"] = "9090";
    annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"] = "true";
  }
  const pod: Record<string, Json> = {
    kind: "Pod",
    apiVersion: "v1",
    metadata: {
      name: `${app}-${hash}-${rng.suffix(5)}`,
      namespace: rng.pick(NAMESPACES),
      uid: rng.uuid(),
      resourceVersion: String(rv),
      creationTimestamp: created,
      labels,
      annotations,
      ownerReferences: [{
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: `${app}-${hash}`,
        uid: rng.uuid(),
        controller: true,
      }],
      managedFields: [{
        manager: "kube-controller-manager",
        operation: "Update",
        apiVersion: "v1",
        time: created,
        fieldsType: "FieldsV1",
        fieldsV1: rich ? specFields(cs, rich) : { "f:metadata": { "f:labels": { ".": {}, "f:app": {} } } },
      }],
    },
    spec: { containers: cs, nodeName: rng.pick(NODES) },
    status: {
      phase: "Running",
      conditions: [{ type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: created }],
      podIP: rng.ip(),
    },
  };
  if (rich) {
    const meta = pod.metadata as Record<string, Json>;
    meta.generateName = `${app}-${hash}-`;
    Object.assign(pod.spec as Record<string, Json>, {
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "default",
      schedulerName: "default-scheduler",
    });
    Object.assign(pod.status as Record<string, Json>, { hostIP: rng.ip(), startTime: created, qosClass: "Burstable" });
    const spec = pod.spec as Record<string, Json>;
    spec.volumes = [
      { name: "config", configMap: { name: `${app}-config`, defaultMode: 420 } },
      {
        name: `kube-api-access-${rng.suffix(5)}`,
        projected: {
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
            { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
          ],
          defaultMode: 420,
        },
      },
    ];
    spec.tolerations = [
      { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
    ];
    const status = pod.status as Record<string, Json>;
    status.conditions = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"].map(
      (type) => ({ type, status: "True", lastProbeTime: null, lastTransitionTime: created }),
    );
    status.podIPs = [{ ip: status.podIP }];
    status.containerStatuses = cs.map((c) => containerStatus(rng, c, created));
    (pod.metadata as { managedFields: Json[] }).managedFields.push({
      manager: "kubelet",
      operation: "Update",
      apiVersion: "v1",
      time: created,
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:status": {
          "f:conditions": { 'k:{"type":"Ready"}': { ".": {}, "f:lastProbeTime": {}, "f:status": {}, "f:type": {} } },
          "f:containerStatuses": {},
          "f:hostIP": {},
          "f:phase": {},
          "f:podIP": {},
          "f:podIPs": { ".": {}, 'k:{"ip":"10.0.0.1"}': { ".": {}, "f:ip": {} } },
          "f:startTime": {},
        },
      },
      subresource: "status",
    });
  }
  return { type: rng.pick(["ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"]), object: pod };
}

const WORDS = ["listen", "timeout", "retries", "backoff", "endpoint", "cache", "pool", "region", "replica", "shard"];
const LOCALIZED = [
  "Grüße aus München",
  "Überwachung aktiv",
  "café crème",
  "Ελληνικά",
  "日本語のメッセージ",
  "naïve façade",
];

/**
 * A ConfigMap watch event whose `data` holds config files of about `dataBytes` in total (text with newlines, so
 * JSON escapes; one key in eight holds a few non-ASCII strings, as localised config does).
 */
export function configMapEvent(rng: Rng, rv: number, dataBytes: number): Record<string, Json> {
  const app = rng.pick(APPS);
  const created = rng.time();
  const data: Record<string, Json> = {};
  let total = 0;
  for (let k = 0; total < dataBytes; k++) {
    const [key, text] = configFile(rng, k, Math.min(dataBytes - total, 2048 + rng.int(2048)));
    data[key] = text;
    total += text.length;
  }
  const cm = {
    kind: "ConfigMap",
    apiVersion: "v1",
    metadata: {
      name: `${app}-config-${rng.suffix(5)}`,
      namespace: rng.pick(NAMESPACES),
      uid: rng.uuid(),
      resourceVersion: String(rv),
      creationTimestamp: created,
      labels: { app, "app.kubernetes.io/managed-by": "Helm" },
      annotations: { "meta.helm.sh/release-name": app, "meta.helm.sh/release-namespace": "prod" },
      managedFields: [{
        manager: "helm",
        operation: "Update",
        apiVersion: "v1",
        time: created,
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": Object.fromEntries(Object.keys(data).map((k) => [`f:${k}`, {}])) },
      }],
    },
    data,
  };
  return { type: rng.pick(["ADDED", "MODIFIED", "MODIFIED"]), object: cm };
}

/** One `data` entry of a ConfigMap: a properties file of about `size` characters, some non-ASCII if `localized`. */
function configFile(rng: Rng, k: number, size: number, localized = true): [string, string] {
  const lines: string[] = [];
  let length = 0;
  while (length < size) {
    const line = localized && rng.int(16) === 0 && k % 8 === 7
      ? `message.${rng.suffix(4)} = ${rng.pick(LOCALIZED)}`
      : `${rng.pick(WORDS)}.${rng.pick(WORDS)}_${rng.int(100)} = ${rng.suffix(4 + rng.int(28))}`;
    lines.push(line);
    length += line.length + 1;
  }
  return [`${rng.pick(WORDS)}-${k}.properties`, lines.join("\n") + "\n"];
}

/**
 * The line (JSON and `\n`, UTF-8) of a ConfigMap watch event with about `dataBytes` of config files, written piece by
 * piece so that no large object graph or string ever exists: building it leaves the JavaScript heap (and its GC
 * tuning, e.g. V8's young-generation size) as it found it, which keeps the memory benchmark's baseline honest.
 * ASCII unless `localized` (then some lines are not, and every JavaScript string holding the text takes two bytes
 * per character: the decoded line and its parsed values need twice the memory).
 */
export function largeConfigMapLine(rng: Rng, rv: number, dataBytes: number, localized = false): Uint8Array {
  const [head, tail] = JSON.stringify(configMapEvent(rng, rv, 0)).split('"data":{}');
  const parts: Uint8Array[] = [encoder.encode(head + '"data":{')];
  let total = 0;
  for (let k = 0; total < dataBytes; k++) {
    const [key, text] = configFile(rng, k, 2048 + rng.int(2048), localized);
    parts.push(encoder.encode(`${k === 0 ? "" : ","}${JSON.stringify(key)}:${JSON.stringify(text)}`));
    total += text.length;
  }
  parts.push(encoder.encode("}" + tail + "\n"));
  const line = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    line.set(p, at);
    at += p.length;
  }
  return line;
}

/** The benchmark data sets: `pod-1k` and `pod-30k` are the targets' ~1 KB and ~30 KB events. */
export const DATASETS = {
  "pod-1k": { describe: "Pod, 1 container (~1 KB)", make: (rng: Rng, rv: number) => podEvent(rng, rv, 1) },
  "pod-30k": { describe: "Pod, 11 rich containers (~30 KB)", make: (rng: Rng, rv: number) => podEvent(rng, rv, 11) },
  "configmap-30k": {
    describe: "ConfigMap, ~29 KB of config text, some non-ASCII (~30 KB)",
    make: (rng: Rng, rv: number) => configMapEvent(rng, rv, 29_000),
  },
} as const;
export type DatasetName = keyof typeof DATASETS;

/** A generated NDJSON watch body and the same events as separate strings. */
export interface Dataset {
  name: DatasetName;
  describe: string;
  /** The events, one JSON text each, without newline (the `JSON.parse` baseline's input). */
  lines: string[];
  /** The NDJSON body: every line followed by `\n`, UTF-8. */
  ndjson: Uint8Array;
  events: number;
  /** Mean and largest event size in bytes (UTF-8, without the newline). */
  meanEventBytes: number;
  maxEventBytes: number;
}

const encoder = new TextEncoder();

/** `name` events up to about `targetBytes` of NDJSON (at least one event), from `seed`. */
export function makeDataset(name: DatasetName, targetBytes: number, seed = 1): Dataset {
  const rng = new Rng(seed);
  const lines: string[] = [];
  let bytes = 0;
  let max = 0;
  let rv = 1_000_000;
  while (bytes < targetBytes || lines.length === 0) {
    const line = JSON.stringify(DATASETS[name].make(rng, rv++));
    const size = encoder.encode(line).length;
    lines.push(line);
    bytes += size + 1;
    if (size > max) max = size;
  }
  const ndjson = encoder.encode(lines.join("\n") + "\n");
  return {
    name,
    describe: DATASETS[name].describe,
    lines,
    ndjson,
    events: lines.length,
    meanEventBytes: (ndjson.length - lines.length) / lines.length,
    maxEventBytes: max,
  };
}

/** `bytes` cut into reads of `size` bytes (the last may be shorter), each a copy as a socket read would be. */
export function splitReads(bytes: Uint8Array, size = 64 * 1024): Uint8Array[] {
  const reads: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) reads.push(bytes.slice(at, at + size));
  return reads;
}

/** A pull-based byte stream that yields `reads` in order, one per pull, as a socket-backed body does. */
export function streamOf(reads: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < reads.length) controller.enqueue(reads[i++]);
      else controller.close();
    },
  });
}

/** `payload` in HTTP/1.1 chunked coding with chunks of `chunkSize` bytes (the last shorter), then `0\r\n\r\n`. */
export function chunkedEncode(payload: Uint8Array, chunkSize: number): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  for (let at = 0; at < payload.length; at += chunkSize) {
    const data = payload.subarray(at, Math.min(at + chunkSize, payload.length));
    const head = encoder.encode(`${data.length.toString(16)}\r\n`);
    parts.push(head, data, CRLF);
    total += head.length + data.length + 2;
  }
  parts.push(LAST_CHUNK);
  total += LAST_CHUNK.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const CRLF = encoder.encode("\r\n");
const LAST_CHUNK = encoder.encode("0\r\n\r\n");

/** Options of {@linkcode LazyWatchBody}. */
export interface LazyWatchBodyOptions {
  /** Wire bytes to produce (approximately: the body ends after the event that crosses this). */
  totalBytes: number;
  /** Size of the one very large event, placed a third of the way in (0 for none). */
  largeEventBytes: number;
  /** Whether the large event has some non-ASCII text (see {@linkcode largeConfigMapLine}). Default false. */
  largeEventLocalized?: boolean;
  /** Size of each network read. Default 64 KiB. */
  readSize?: number;
  seed?: number;
}

/**
 * A chunked-coded JSON watch body of any length, generated as it is read: a pool of pre-serialised events (mostly
 * ~1 KB Pods, some ~30 KB Pods and ConfigMaps) is cycled, each event in its own HTTP chunk as the API server flushes
 * them, plus one very large ConfigMap event (ASCII by default). Only the pool and the current read are ever in memory.
 */
export class LazyWatchBody {
  readonly readSize: number;
  readonly largestEventBytes: number;
  /** Events and wire bytes produced so far. */
  events = 0;
  produced = 0;
  /**
   * Called with each event's line (JSON and `\n`, a view into the pool) as it is queued onto the wire: lets a control
   * run do the minimal per-event work without decoding the wire.
   */
  onEvent: ((line: Uint8Array) => void) | undefined;
  readonly #pool: Uint8Array[] = [];
  readonly #poolLines: Uint8Array[] = [];
  readonly #large: Uint8Array | undefined;
  readonly #largeLine: Uint8Array | undefined;
  readonly #total: number;
  readonly #largeAt: number;
  /** Next pool index. */
  #next = 0;
  /** Framed events queued for the current read, and how far into the first one it has got. */
  #pending: Uint8Array[] = [];
  #pendingAt = 0;
  /** Wire bytes queued so far. */
  #queued = 0;
  #largeDone: boolean;
  #lastQueued = false;
  #ended = false;

  constructor(options: LazyWatchBodyOptions) {
    const rng = new Rng(options.seed ?? 7);
    this.readSize = options.readSize ?? 64 * 1024;
    this.#total = options.totalBytes;
    this.#largeAt = Math.floor(options.totalBytes / 3);
    let rv = 1;
    let largest = 0;
    for (let i = 0; i < 256; i++) {
      const event = i % 32 === 5
        ? podEvent(rng, rv++, 11)
        : i % 32 === 21
        ? configMapEvent(rng, rv++, 29_000)
        : podEvent(rng, rv++, 1);
      const line = encoder.encode(JSON.stringify(event) + "\n");
      this.#pool.push(frame(line));
      this.#poolLines.push(line);
      largest = Math.max(largest, line.length - 1);
    }
    if (options.largeEventBytes > 0) {
      const line = largeConfigMapLine(rng, rv++, options.largeEventBytes, options.largeEventLocalized ?? false);
      this.#large = frame(line);
      this.#largeLine = line;
      largest = Math.max(largest, line.length - 1);
    }
    this.#largeDone = this.#large === undefined;
    this.largestEventBytes = largest;
  }

  /** True once the large event has been put on the wire (or if there is none). */
  get largeEventQueued(): boolean {
    return this.#largeDone;
  }

  /** The next network read (a fresh buffer), or `undefined` at the end of the body. */
  nextRead(): Uint8Array | undefined {
    if (this.#ended) return undefined;
    const out = new Uint8Array(this.readSize);
    let n = 0;
    while (n < out.length) {
      if (this.#pending.length === 0) {
        if (!this.#refill()) break;
      }
      const piece = this.#pending[0];
      const take = Math.min(piece.length - this.#pendingAt, out.length - n);
      out.set(piece.subarray(this.#pendingAt, this.#pendingAt + take), n);
      n += take;
      this.#pendingAt += take;
      if (this.#pendingAt === piece.length) {
        this.#pending.shift();
        this.#pendingAt = 0;
      }
    }
    if (n === 0) {
      this.#ended = true;
      return undefined;
    }
    this.produced += n;
    return n === out.length ? out : out.subarray(0, n);
  }

  /** A pull-based `ReadableStream` over {@linkcode LazyWatchBody.nextRead}; `onPull` runs before each read. */
  stream(onPull?: () => void): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      pull: (controller) => {
        onPull?.();
        const read = this.nextRead();
        if (read === undefined) controller.close();
        else controller.enqueue(read);
      },
    }, { highWaterMark: 0 });
  }

  #refill(): boolean {
    if (this.#queued >= this.#total) {
      if (this.#lastQueued) return false;
      this.#lastQueued = true;
      this.#pending.push(LAST_CHUNK);
      return true;
    }
    let framed: Uint8Array;
    if (!this.#largeDone && this.#queued >= this.#largeAt) {
      framed = this.#large!;
      this.#largeDone = true;
      this.onEvent?.(this.#largeLine!);
    } else {
      framed = this.#pool[this.#next];
      this.onEvent?.(this.#poolLines[this.#next]);
      this.#next = (this.#next + 1) % this.#pool.length;
    }
    this.#pending.push(framed);
    this.#queued += framed.length;
    this.events++;
    return true;
  }
}

/** One event line as a complete HTTP chunk: size line, data, CRLF. */
function frame(line: Uint8Array): Uint8Array {
  const head = encoder.encode(`${line.length.toString(16)}\r\n`);
  const out = new Uint8Array(head.length + line.length + 2);
  out.set(head);
  out.set(line, head.length);
  out.set(CRLF, head.length + line.length);
  return out;
}

/** Sums the lengths of everything `stream` yields, reading it with `reader.read()`. */
export async function drainBytes(stream: ReadableStream<Uint8Array>): Promise<number> {
  const reader = stream.getReader();
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return n;
    n += value.length;
  }
}

/**
 * The streams baseline of the byte-level benchmarks: an identity `TransformStream` that copies each read into `dest`
 * (`Uint8Array.prototype.set`, consecutive) and enqueues the copy.
 */
export function copyingStream(dest: Uint8Array): TransformStream<Uint8Array, Uint8Array> {
  let at = 0;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(read, controller) {
      dest.set(read, at);
      controller.enqueue(dest.subarray(at, at + read.length));
      at += read.length;
    },
  });
}
