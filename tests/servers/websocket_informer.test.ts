/**
 * Watches over WebSocket against the real kube-apiserver with nothing but the kubeconfig: `connectCluster`'s
 * connection opens its WebSockets with the config's TLS and credentials in this runtime (undici's WebSocket and Agent
 * in Node, Deno's WebSocket with an HTTP client, Bun's with `tls`), so `informer(c, ref, { transport: "websocket" })`
 * needs no `openWebSocket`. For each context of the kubeconfig (a token, a client certificate, an exec plugin), an
 * informer over WebSocket in JSON and in protobuf ends with the same store as an informer over plain HTTP after kubectl
 * changes; `insecure-skip-tls-verify`, `tls-server-name`, an exec plugin's client certificate and a missing CA act on
 * the WebSocket as on the fetch; `close()` ends a WebSocket watch with `CLOSED`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ClusterConfig, ClusterConnection } from "../../src/cluster/cluster_config.ts";
import { connectCluster } from "../../src/cluster/connection/connect_cluster.ts";
import { ClusterAccessError } from "../../src/cluster/errors.ts";
import { loadKubeconfig } from "../../src/cluster/kubeconfig/load_kubeconfig.ts";
import type { ResourceRef } from "../../src/cluster/resource.ts";
import { informer } from "../../src/cluster/resource_source.ts";
import { webSocketWatch } from "../../src/cluster/websocket_watch.ts";
import { builtinDecoders } from "../../src/codec/kubernetes/generated/all.ts";
import type { KubernetesObject } from "../../src/events.ts";
import type { Informer } from "../../src/watch/informer.ts";
import type { Cluster } from "../../scripts/kube/cluster.mjs";
import { drain, within } from "../_util.ts";
import { kubectl, namespaceName, sharedCluster } from "./_cluster.ts";
import { changeConfigMaps } from "../peers/configmap_changes.ts";

const configmaps = (namespace: string): ResourceRef => ({ version: "v1", resource: "configmaps", namespace });

const configOf = (cluster: Cluster, context?: string) =>
  loadKubeconfig({ path: cluster.kubeconfig, ...(context ? { context } : {}) });

/** The store's objects as plain data (protobuf objects as what JSON makes of them), by key. */
const storeOf = (inf: Informer<KubernetesObject>) =>
  JSON.parse(JSON.stringify(inf.store.keys().sort().map((key) => [key, inf.store.get(key)])));

/** Waits until `check` holds (polled), or fails saying `what`. */
async function until(check: () => boolean, what: string): Promise<void> {
  await within(
    (async () => {
      while (!check()) await new Promise((r) => setTimeout(r, 50));
    })(),
    30_000,
    what,
  );
}

for (const context of ["token", "certificate", "exec"]) {
  test(`websocket informer (real kube-apiserver): kubeconfig context ${context} only: the store equals an HTTP informer's`, async () => {
    const cluster = await sharedCluster();
    const c = await connectCluster(await configOf(cluster, context));
    const ns = namespaceName(`wsi-${context}`);
    const running: { name: string; inf: Informer<KubernetesObject>; done: Promise<void>; errors: unknown[] }[] = [];
    try {
      kubectl(cluster, ["create", "namespace", ns]);
      kubectl(cluster, ["create", "configmap", "one", "-n", ns, "--from-literal=k=v"]);
      for (
        const [name, options] of [
          ["http", {}],
          ["websocket json", { transport: "websocket" }],
          ["websocket protobuf", {
            transport: "websocket",
            format: "protobuf",
            protobuf: { decoders: builtinDecoders },
          }],
        ] as const
      ) {
        const errors: unknown[] = [];
        const inf = informer(c, configmaps(ns), { ...options, onError: (e) => errors.push(e) });
        running.push({ name, inf, done: inf.start(), errors });
      }
      for (const { name, inf } of running) await within(inf.synced, 30_000, `the ${name} informer's sync`);
      for (const { name, inf } of running) assert.deepEqual(inf.store.keys(), [`${ns}/one`], name);
      const to = BigInt(changeConfigMaps((args, input) => kubectl(cluster, args, input), ns, "one"));
      for (const { name, inf } of running) {
        await until(() => BigInt(inf.resourceVersion || "0") >= to, `the ${name} informer at resourceVersion ${to}`);
      }
      const http = storeOf(running[0].inf);
      assert.deepEqual(http.map(([key]: [string]) => key), [`${ns}/a`, `${ns}/b`]);
      assert.equal(http[1][1].metadata.annotations.note, "end");
      for (const { name, inf } of running.slice(1)) assert.deepEqual(storeOf(inf), http, name);
      for (const { name, errors } of running) assert.deepEqual(errors, [], name);
    } finally {
      for (const { inf } of running) inf.stop();
      await Promise.all(running.map((r) => r.done));
      kubectl(cluster, ["delete", "namespace", ns, "--wait=false"]);
      await c.close();
    }
  });
}

/**
 * One watch over WebSocket through `config`'s connection, of a namespace of no objects, until the server ends it
 * (after a second): what ended it (undefined: the server's close).
 */
async function watchOnce(config: ClusterConfig): Promise<unknown> {
  const c = await connectCluster(config);
  try {
    const events = await webSocketWatch(c, configmaps(namespaceName("empty")), { timeoutSeconds: 1 });
    const { values, error } = await within(drain(events), 30_000, "the watch");
    assert.deepEqual(values, []);
    return error;
  } finally {
    await c.close();
  }
}

test("websocket informer (real kube-apiserver): insecure-skip-tls-verify, tls-server-name and the CA, as fetch has them", async () => {
  const cluster = await sharedCluster();
  const config = await configOf(cluster);
  const { caData: _, ...withoutCa } = config;
  assert.equal(await watchOnce({ ...withoutCa, insecureSkipTlsVerify: true }), undefined);
  // The server's certificate names IP:127.0.0.1, localhost and kubernetes (scripts/kube/pki.mjs).
  assert.equal(await watchOnce({ ...config, tlsServerName: "kubernetes" }), undefined);
  for (const bad of [{ ...config, tlsServerName: "elsewhere" }, withoutCa]) {
    await assert.rejects(
      watchOnce(bad),
      (e) => e instanceof ClusterAccessError && e.code === "SERVER_CERTIFICATE_REJECTED",
    );
  }
});

test("websocket informer (real kube-apiserver): an exec plugin's client certificate is the WebSocket's TLS", async () => {
  const cluster = await sharedCluster();
  const dir = mkdtempSync(join(tmpdir(), "watchwire-ws-exec-"));
  const credential = {
    apiVersion: "client.authentication.k8s.io/v1",
    kind: "ExecCredential",
    status: {
      clientCertificateData: readFileSync(cluster.pki.clients.admin.cert, "utf8"),
      clientKeyData: readFileSync(cluster.pki.clients.admin.key, "utf8"),
    },
  };
  const plugin = join(dir, "certificate-plugin.sh");
  writeFileSync(plugin, `#!/bin/sh\ncat <<'EOF'\n${JSON.stringify(credential)}\nEOF\n`, { mode: 0o755 });
  const config: ClusterConfig = {
    server: cluster.server,
    caData: new Uint8Array(readFileSync(cluster.pki.ca)),
    exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" },
  };
  try {
    const c = await connectCluster(config);
    try {
      assert.equal((await c.headers()).get("authorization"), null);
    } finally {
      await c.close();
    }
    assert.equal(await watchOnce(config), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("websocket informer (real kube-apiserver): close() ends a WebSocket watch with CLOSED; none opens after", async () => {
  const cluster = await sharedCluster();
  const c: ClusterConnection = await connectCluster(await configOf(cluster));
  const events = await webSocketWatch(c, configmaps("default"), { timeoutSeconds: 60 });
  const reading = within(drain(events), 10_000, "the watch after close()");
  await c.close();
  const { error } = await reading;
  assert.ok(error instanceof ClusterAccessError && error.code === "CLOSED", String(error));
  await assert.rejects(
    webSocketWatch(c, configmaps("default")),
    (e) => e instanceof ClusterAccessError && e.code === "CLOSED",
  );
});
