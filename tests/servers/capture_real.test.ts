/**
 * Real captures of the real kube-apiserver (issue 38): tcpdump on loopback while curl (SSLKEYLOGFILE) and Node
 * (`--tls-keylog`) watch ConfigMaps over HTTP/2 and HTTP/1.1, in JSON and protobuf, kubectl watches them through
 * `kubectl proxy` (it cannot log TLS keys: its proxy connection is in the clear), and kubectl changes them; the
 * apiserver's own gRPC traffic to etcd (plain) in the same capture. The events decoded from the capture must equal
 * those the client itself received (its body, decoded), and the decrypted bytes of each connection must equal what
 * tshark's `follow,tls` gives for it (tshark is the reference for the layers below the watch).
 *
 * Needs tcpdump and tshark (Debian; scripts/test-servers.mjs installs them) and root, for capturing on `lo`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { decodeCapture } from "../../src/watch/decode_capture.ts";
import type { CaptureItem } from "../../src/watch/capture_item.ts";
import { captureConnections } from "../../src/capture/capture_connections.ts";
import { decodeWatchResponse } from "../../src/watch/decode_watch_response.ts";
import { builtinDecoders } from "../../src/codec/kubernetes/generated/all.ts";
import { kubectl, namespaceName, ownCluster, sharedCluster } from "./_cluster.ts";
import { freePort } from "../../scripts/free-port.mjs";

const hexOf = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

interface Watcher {
  name: string;
  /** Starts the client's watch of `url`; it writes the body to `body`, the response headers to `headers`, keys to `keys`. */
  run(url: string, token: string, ca: string, body: string, headers: string, keys: string): Promise<void>;
  accept: string;
}

const curl = (http: "1.1" | "2", accept: string): Watcher => ({
  name: `curl HTTP/${http} ${accept.includes("protobuf") ? "protobuf" : "JSON"}`,
  accept,
  run: (url, token, ca, body, headers, keys) =>
    new Promise((resolve, reject) => {
      const child = spawn("curl", [
        "-s",
        "--cacert",
        ca,
        http === "2" ? "--http2" : "--http1.1",
        "--max-time",
        "6",
        "-H",
        `Authorization: Bearer ${token}`,
        "-H",
        `Accept: ${accept}`,
        "-D",
        headers,
        "-o",
        body,
        url,
      ], { stdio: "ignore", env: { ...process.env, SSLKEYLOGFILE: keys } });
      // curl ends the watch itself (--max-time: exit 28).
      child.on("exit", (code) => code === 0 || code === 28 ? resolve() : reject(new Error(`curl exited ${code}`)));
    }),
});

/** Node's own https client, its TLS keys logged by `node --tls-keylog`. */
const nodeClient: Watcher = {
  name: "node --tls-keylog, HTTP/1.1 JSON",
  accept: "application/json",
  run: (url, token, ca, body, headers, keys) =>
    new Promise((resolve, reject) => {
      const script = `
        const https = require("node:https"); const fs = require("node:fs");
        const out = fs.createWriteStream(${JSON.stringify(body)});
        const req = https.get(${JSON.stringify(url)}, { ca: fs.readFileSync(${JSON.stringify(ca)}),
          headers: { authorization: "Bearer ${token}", accept: "application/json" } }, (res) => {
          fs.writeFileSync(${JSON.stringify(headers)}, "content-type: " + res.headers["content-type"] + "\\n");
          res.pipe(out);
        });
        setTimeout(() => { req.destroy(); out.end(); }, 6000);`;
      const child = spawn(process.env.WATCHWIRE_NODE ?? "node", [`--tls-keylog=${keys}`, "-e", script], {
        stdio: "ignore",
      });
      child.on("exit", (code) => code === 0 ? resolve() : reject(new Error(`node exited ${code}`)));
    }),
};

const WATCHERS: Watcher[] = [
  curl("2", "application/vnd.kubernetes.protobuf;stream=watch"),
  curl("2", "application/json"),
  curl("1.1", "application/vnd.kubernetes.protobuf;stream=watch"),
  curl("1.1", "application/json"),
  nodeClient,
];

/** The JSON values of `text`, written one after another (as `kubectl get -w -o json` prints them). */
function concatenatedJson(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") {
      if (depth++ === 0) start = i;
    } else if (c === "}" && --depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
  }
  return values;
}

const hasTools = ["tcpdump", "tshark", "curl"].every((c) => spawnSync("sh", ["-c", `command -v ${c}`]).status === 0);

test("real captures: the apiserver's watches (curl, node) and its etcd traffic, decoded from tcpdump's file", {
  skip: hasTools ? false : "needs tcpdump, tshark and curl (npm run test:servers installs them)",
  timeout: 120_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "watchwire-capture-"));
  const pcap = join(dir, "capture.pcap");
  // A cluster of its own, captured from before it starts: the apiserver's connections to etcd (HTTP/2, whose header
  // compression needs the connection's start) are in the capture from their first byte. Its ports are chosen first,
  // for the capture's filter; a 64 MiB buffer, so that the kernel drops nothing while the cluster starts.
  const [apiPort, etcdPort, proxyPort] = [await freePort(), await freePort(), await freePort()];
  const tcpdump = spawn("tcpdump", [
    "-i",
    "lo",
    "-U",
    "--immediate-mode",
    "-B",
    "65536",
    "-w",
    pcap,
    `tcp port ${apiPort} or tcp port ${etcdPort} or tcp port ${proxyPort}`,
  ], { stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve) => tcpdump.stderr!.on("data", (d) => String(d).includes("listening") && resolve()));
  const cluster = await ownCluster({ securePort: apiPort, etcdPort });
  const namespace = namespaceName("capture");
  kubectl(cluster, ["create", "namespace", namespace]);
  try {
    const url = `${cluster.server}/api/v1/namespaces/${namespace}/configmaps?watch=1`;
    const files = WATCHERS.map((w, i) => ({
      w,
      body: join(dir, `${i}.body`),
      headers: join(dir, `${i}.headers`),
      keys: join(dir, `${i}.keys`),
    }));
    const watching = files.map((f) => f.w.run(url, cluster.adminToken, cluster.pki.ca, f.body, f.headers, f.keys));
    // kubectl cannot log its TLS keys: it watches through `kubectl proxy` (plain HTTP on loopback), whose connection
    // the capture holds in the clear. It prints each event as pretty JSON (--output-watch-events).
    const proxy = spawn(cluster.binaries.kubectl, [
      "--kubeconfig",
      cluster.kubeconfig,
      "proxy",
      `--port=${proxyPort}`,
    ], { stdio: ["ignore", "pipe", "ignore"] });
    await new Promise<void>((resolve) => proxy.stdout!.on("data", (d) => String(d).includes("Starting") && resolve()));
    writeFileSync(join(dir, "empty.kubeconfig"), "apiVersion: v1\nkind: Config\n");
    const kubectlWatch = spawn(cluster.binaries.kubectl, [
      "--kubeconfig",
      join(dir, "empty.kubeconfig"),
      "-s",
      `http://127.0.0.1:${proxyPort}`,
      "-n",
      namespace,
      "get",
      "configmaps",
      "--watch",
      "--output-watch-events",
      "-o",
      "json",
    ], { stdio: ["ignore", "pipe", "ignore"] });
    let kubectlOut = "";
    kubectlWatch.stdout!.on("data", (d) => (kubectlOut += String(d)));
    await sleep(1500);
    // Changes while they watch: creates, an update with a large value (events over several TLS records), a delete.
    for (let i = 0; i < 3; i++) {
      kubectl(cluster, ["-n", namespace, "create", "configmap", `cm-${i}`, `--from-literal=k=${i}`]);
    }
    const large = JSON.stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cm-1", namespace },
      data: { k: "x".repeat(40_000) },
    });
    writeFileSync(join(dir, "large.json"), large);
    kubectl(cluster, ["apply", "-f", join(dir, "large.json")]);
    kubectl(cluster, ["-n", namespace, "delete", "configmap", "cm-2"]);
    await Promise.all(watching);
    await sleep(1000);
    kubectlWatch.kill("SIGINT");
    proxy.kill("SIGINT");
    await sleep(500);
    tcpdump.kill("SIGINT");
    await new Promise((resolve) => tcpdump.on("exit", resolve));

    const capture = new Uint8Array(readFileSync(pcap));
    const keyLog = files.map((f) => readFileSync(f.keys, "utf8")).join("");
    // To look at a failure with tshark: the capture, its key log and what each client received, kept in this folder.
    const keep = process.env.WATCHWIRE_KEEP_CAPTURE;
    if (keep) {
      spawnSync("mkdir", ["-p", keep]);
      spawnSync("cp", ["-r", dir + "/.", keep]);
      writeFileSync(join(keep, "all.keys"), keyLog);
    }
    const items: CaptureItem[] = [];
    for await (
      const item of decodeCapture(new Blob([capture]).stream(), { keyLog, protobuf: { decoders: builtinDecoders } })
    ) {
      items.push(item);
    }

    // Each watcher's events, as it received them, are those of one watch in the capture.
    const watches = new Map<string, unknown[]>();
    for (const item of items) {
      if (item.kind !== "event" || !item.path?.includes(`/namespaces/${namespace}/configmaps`)) continue;
      const key = `${item.connection}/${item.stream}`;
      watches.set(key, [...(watches.get(key) ?? []), plain(item.event)]);
    }
    const captured = [...watches.values()].map((events) => JSON.stringify(events));
    for (const f of files) {
      const contentType = /content-type:\s*([^\r\n]+)/i.exec(readFileSync(f.headers, "utf8"))![1];
      const events: unknown[] = [];
      const response = new Response(new Uint8Array(readFileSync(f.body)), { headers: { "content-type": contentType } });
      for await (const e of decodeWatchResponse(response, { protobuf: { decoders: builtinDecoders } })) {
        events.push(plain(e));
      }
      assert.ok(events.length >= 5, `${f.w.name}: ${events.length} events received`);
      // The client's last event may have been cut by its own timeout: the capture holds at least what it decoded.
      assert.ok(
        captured.some((c) => c.startsWith(JSON.stringify(events).slice(0, -1))),
        `${f.w.name}: its ${events.length} events are a watch of the capture`,
      );
    }

    // kubectl's events (through its proxy, in the clear) are those of the proxy connection's watch in the capture.
    const kubectlEvents = concatenatedJson(kubectlOut);
    assert.ok(kubectlEvents.length >= 5, `kubectl printed ${kubectlEvents.length} events`);
    const proxied = items.filter((i) =>
      i.kind === "event" && i.path?.includes(`/namespaces/${namespace}/configmaps`) && i.path.includes("watch=true")
    ).map((i) => i.kind === "event" ? plain(i.event) : undefined);
    assert.deepEqual(proxied, kubectlEvents, "kubectl's watch, decoded from the capture of its proxy connection");

    // etcd's own traffic (plain gRPC): the apiserver's watch of etcd saw each change of our ConfigMaps.
    const keys = items.filter((i) => i.kind === "etcd").map((i) => i.kind === "etcd" ? i.event : undefined)
      .map((e) => `${e!.type} ${new TextDecoder().decode(e!.kv.key)}`);
    for (const name of ["cm-0", "cm-1", "cm-2"]) {
      assert.ok(
        keys.includes(`PUT /registry/configmaps/${namespace}/${name}`),
        `etcd PUT of ${name}; etcd events: ${keys.slice(0, 5).join(", ")}...; responses: ${
          items.filter((i) => i.kind === "response").map((i) =>
            i.kind === "response" ? `${i.connection}:${i.path}` : ""
          )
            .slice(0, 30).join(" ")
        }; problems: ${
          items.filter((i) => i.kind === "problem").map((i) => i.kind === "problem" ? i.message : "").slice(0, 5).join(
            " | ",
          )
        }`,
      );
    }
    assert.ok(keys.includes(`DELETE /registry/configmaps/${namespace}/cm-2`), "etcd DELETE of cm-2");

    // tshark, the reference for the layers below: each decrypted connection's server bytes as `follow,tls` has them.
    const keysFile = join(dir, "all.keys");
    writeFileSync(keysFile, keyLog);
    const streams = spawnSync("tshark", [
      "-r",
      pcap,
      "-Y",
      `tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.dstport == ${apiPort}`,
      "-T",
      "fields",
      "-e",
      "tcp.stream",
      "-e",
      "tcp.srcport",
    ], { encoding: "utf8" }).stdout.trim().split("\n").map((l) => l.split("\t").map(Number));
    const ours = new Map<number, Uint8Array>();
    // Each connection's bytes are read beside the events, not in the loop: the capture goes on only as it is read.
    const reading: Promise<void>[] = [];
    for await (const event of captureConnections(new Blob([capture]).stream(), { keyLog })) {
      if (event.kind !== "connection") continue;
      const c = event.connection;
      reading.push((async () => {
        const [server] = await Promise.all([
          new Response(c.serverToClient).arrayBuffer().catch(() => undefined),
          c.clientToServer.cancel(),
        ]);
        if (c.transport === "tls" && c.tls !== undefined && server !== undefined) {
          ours.set(c.info.clientPort, new Uint8Array(server));
        }
      })());
    }
    await Promise.all(reading);
    let compared = 0;
    for (const [stream, port] of streams) {
      const mine = ours.get(port);
      if (mine === undefined) continue;
      const follow = spawnSync("tshark", [
        "-r",
        pcap,
        "-o",
        `tls.keylog_file:${keysFile}`,
        "-q",
        "-z",
        `follow,tls,raw,${stream}`,
      ], { encoding: "utf8", maxBuffer: 1 << 28 }).stdout;
      // Raw follow output: one hex line per piece, node 1's indented by a tab; node 0 is the side that sent first (its
      // address on the "Node 0:" line).
      const serverIsNode0 = new RegExp(`^Node 0: .*:${apiPort}$`, "m").test(follow);
      const hex = follow.split("\n").filter((l) => /^\t?[0-9a-f]+$/.test(l) && l.startsWith("\t") !== serverIsNode0)
        .map((l) => l.trim()).join("");
      const theirs = Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
      assert.equal(hexOf(mine), hexOf(theirs), `connection on port ${port}`);
      compared++;
    }
    assert.ok(compared >= WATCHERS.length, `${compared} connections compared with tshark`);
  } finally {
    if (tcpdump.exitCode === null) tcpdump.kill("SIGINT");
    rmSync(dir, { recursive: true, force: true });
  }
});

test("real captures: gRPC calls other than watches, decoded with etcd's own .proto files (--proto)", {
  skip: hasTools ? false : "needs tcpdump (npm run test:servers installs it)",
  timeout: 60_000,
}, async () => {
  const cluster = await sharedCluster();
  const etcdPort = new URL(cluster.etcdUrl).port;
  // etcd's .proto files, from the Go module proxy (the module etcd is built from; already in the module cache then).
  const download = spawnSync("go", ["mod", "download", "-json", "go.etcd.io/etcd/api/v3@v3.7.3"], {
    encoding: "utf8",
    cwd: tmpdir(),
  });
  const api = (JSON.parse(download.stdout) as { Dir: string }).Dir;
  const dir = mkdtempSync(join(tmpdir(), "watchwire-grpc-"));
  try {
    // rpc.proto imports etcd/api/...: a proto path whose etcd/api is the module's directory.
    spawnSync("mkdir", ["-p", join(dir, "protos/etcd")]);
    spawnSync("ln", ["-s", api, join(dir, "protos/etcd/api")]);
    const pcap = join(dir, "etcd.pcap");
    const tcpdump = spawn("tcpdump", ["-i", "lo", "-U", "--immediate-mode", "-w", pcap, `tcp port ${etcdPort}`], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    await new Promise<void>((resolve) =>
      tcpdump.stderr!.on("data", (d) => String(d).includes("listening") && resolve())
    );
    const etcdctl = (...args: string[]) =>
      spawnSync(cluster.binaries.etcdctl, ["--endpoints", cluster.etcdUrl, ...args], { encoding: "utf8" });
    const key = `/watchwire-capture/${Math.random().toString(36).slice(2)}`;
    assert.equal(etcdctl("put", key, "captured value").status, 0);
    const got = etcdctl("get", key, "-w", "json");
    assert.equal(got.status, 0, got.stderr);
    await sleep(1000);
    tcpdump.kill("SIGINT");
    await new Promise((resolve) => tcpdump.on("exit", resolve));

    const { loadProtoFiles } = await import("../../src/cli/proto_files.ts");
    const grpc = await loadProtoFiles(
      ["etcd/api/etcdserverpb/rpc.proto"],
      [join(dir, "protos")],
      (path) =>
        Promise.resolve((() => {
          try {
            return readFileSync(path, "utf8");
          } catch {
            return undefined;
          }
        })()),
    );
    const ranges: unknown[] = [];
    const requests: { path: string | undefined; message: unknown }[] = [];
    for await (const item of decodeCapture(new Blob([new Uint8Array(readFileSync(pcap))]).stream(), { grpc })) {
      if (item.kind !== "grpc") continue;
      if (item.direction === "request") requests.push({ path: item.path, message: item.message });
      else if (item.path === "/etcdserverpb.KV/Range") ranges.push(item.message);
    }
    // The requests' messages too: etcdctl's Put of the key and value, and its Range of the key (bytes as base64).
    const base64 = (text: string) => btoa(text);
    assert.deepEqual(
      requests.find((r) => r.path === "/etcdserverpb.KV/Put")?.message,
      { key: base64(key), value: base64("captured value") },
    );
    assert.equal(
      (requests.find((r) => r.path === "/etcdserverpb.KV/Range")?.message as { key?: string } | undefined)?.key,
      base64(key),
    );
    // etcdctl's own JSON of the same response (Go's encoding/json: snake_case names, int64 as numbers).
    const theirs = JSON.parse(got.stdout) as { kvs: { key: string; value: string; mod_revision: number }[] };
    const ours = ranges.find((r) => (r as { kvs?: unknown[] }).kvs !== undefined) as
      | { kvs: { key: string; value: string; modRevision: string }[] }
      | undefined;
    assert.ok(ours !== undefined, `a Range response among ${ranges.length}`);
    assert.equal(ours.kvs[0].key, theirs.kvs[0].key);
    assert.equal(ours.kvs[0].value, theirs.kvs[0].value);
    assert.equal(ours.kvs[0].modRevision, String(theirs.kvs[0].mod_revision));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
