/**
 * A watch over WebSocket of the real kube-apiserver from a page in headless Chromium or Firefox: this script starts a
 * kube-apiserver of its own (scripts/kube/cluster.mjs), serves the page (tests/peers/websocket_browser_page.ts, bundled
 * with watchwire by esbuild) from 127.0.0.1 under a Content-Security-Policy without `'unsafe-eval'`, and the page
 * watches one namespace's ConfigMaps from one resourceVersion with `webSocketWatch` through the browser's own
 * `WebSocket`: the bearer token as the subprotocol `base64url.bearer.authorization.k8s.io.<token>` beside
 * `v4.channel.k8s.io` (the server echoes the latter), the page's `Origin`. Once the page says the handshake is done,
 * kubectl changes ConfigMaps (adds, text and binary data, updates, a label, a delete, an annotation); the page POSTs
 * each event as it comes, and the events must equal those of a plain HTTP watch of the same range in Node
 * (`connectCluster` from the cluster's kubeconfig).
 *
 * The cluster's CA is its own, which no browser knows: the browser is told to accept the API server's certificate
 * (scripts/browser.mjs's `acceptServerCertificate`: Chromium's `--ignore-certificate-errors-spki-list` with the hash
 * of its key; in Firefox a certificate exception in the profile's `cert_override.txt`), and nothing else.
 *
 * A script rather than a test: browsers do not come from npm (see scripts/browser.mjs), and kube-apiserver is built
 * with Go (scripts/kube/build.mjs); scripts/test-servers.mjs runs it with each browser.
 *
 *   node --import tsx scripts/browser-websocket-check.ts [BROWSER=chromium]   (chromium, firefox-esr, or a path)
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import process from "node:process";
import { isDeepStrictEqual } from "node:util";
import { fileURLToPath } from "node:url";
import { connectCluster, loadKubeconfig, type ResourceRef, watch, type WatchEvent } from "../mod.ts";
import { type Cluster, startCluster } from "./kube/cluster.mjs";
import { changeConfigMaps } from "../tests/peers/configmap_changes.ts";
import { postedText, type RunningBrowser, startBrowser } from "./browser.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const browserCommand = process.argv[2] ?? "chromium";
const TIMEOUT_MS = 120_000;

/** What the page POSTs to `/open`. */
interface Opened {
  url: string;
  asked: string[];
  tokenProtocol: boolean;
  chosen: string;
  userAgent: string;
}

const built = spawnSync(
  join(root, "node_modules", ".bin", "esbuild"),
  [join(root, "tests", "peers", "websocket_browser_page.ts"), "--bundle", "--format=esm", "--platform=browser"],
  { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
);
if (built.status !== 0) {
  console.error(`esbuild failed: ${built.stderr}`);
  process.exit(1);
}

function kubectl(cluster: Cluster, args: string[], input?: string): string {
  const result = spawnSync(cluster.binaries.kubectl, ["--kubeconfig", cluster.kubeconfig, ...args], {
    encoding: "utf8",
    ...(input === undefined ? {} : { input }),
  });
  if (result.status !== 0) throw new Error(`kubectl ${args.join(" ")} failed: ${result.stderr ?? result.error}`);
  return result.stdout;
}

const resourceVersionOf = (object: unknown) =>
  (object as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;

/** The events of a plain HTTP watch of `ref` from `from` up to the one at `to`, in Node. */
async function httpWatch(cluster: Cluster, ref: ResourceRef, from: string, to: string): Promise<WatchEvent[]> {
  const c = await connectCluster(await loadKubeconfig({ path: cluster.kubeconfig }));
  try {
    const events: WatchEvent[] = [];
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(new Error(`the HTTP watch did not reach ${to}`)), 30_000);
    for await (const event of await watch(c, ref, { resourceVersion: from, signal: stop.signal })) {
      events.push(event);
      if (resourceVersionOf(event.object) === to) break;
    }
    clearTimeout(timer);
    return JSON.parse(JSON.stringify(events));
  } finally {
    await c.close();
  }
}

let cluster: Cluster | undefined;
let browser: RunningBrowser | undefined;
let server: ReturnType<typeof createServer> | undefined;
let status = 0;
try {
  cluster = await startCluster();
  const ns = `ww-browser-ws-${Math.random().toString(36).slice(2, 8)}`;
  kubectl(cluster, ["create", "namespace", ns]);
  const from = kubectl(cluster, [
    "create",
    "configmap",
    "start",
    "-n",
    ns,
    "--from-literal=k=v",
    "-o=jsonpath={.metadata.resourceVersion}",
  ]);
  const api = new URL(cluster.server);

  const events: unknown[] = [];
  let opened!: (value: Opened) => void;
  const open = new Promise<Opened>((resolve) => (opened = resolve));
  let eventCame = () => {};
  let failed!: (error: Error) => void;
  const failure = new Promise<never>((_, reject) => (failed = reject));
  failure.catch(() => {});

  // Scripts from the page's origin only (no 'unsafe-eval'), and connections to it and to the API server.
  const csp = `default-src 'self'; script-src 'self'; connect-src 'self' ${api.origin} wss://${api.host}`;
  const PAGE = '<!doctype html><meta charset="utf-8"><title>watchwire websocket</title>' +
    '<script type="module" src="/page.js"></script>';
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://page");
    if (req.method === "GET" && (url.pathname === "/" || url.pathname === "/page.js")) {
      const html = url.pathname === "/";
      res.writeHead(200, {
        "content-type": html ? "text/html; charset=utf-8" : "text/javascript; charset=utf-8",
        "content-security-policy": csp,
      });
      res.end(html ? PAGE : built.stdout);
    } else if (req.method === "GET" && url.pathname === "/config") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ server: cluster!.server, token: cluster!.adminToken, namespace: ns, resourceVersion: from }),
      );
    } else if (req.method === "POST" && ["/open", "/event", "/ended", "/failed"].includes(url.pathname)) {
      postedText(req).then((text) => {
        res.writeHead(204).end();
        const value = JSON.parse(text);
        if (url.pathname === "/open") opened(value);
        else if (url.pathname === "/event") {
          events.push(value);
          eventCame();
        } else if (url.pathname === "/failed") failed(new Error(`the page failed: ${value.error}`));
        else failed(new Error(`the page's watch ended after ${events.length} events`));
      }, failed);
    } else {
      res.writeHead(404).end();
    }
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server!.once("listening", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  browser = startBrowser(browserCommand, `${origin}/`, {
    acceptServerCertificate: {
      host: api.hostname,
      port: Number(api.port),
      pem: readFileSync(cluster.pki.serverCert, "utf8"),
    },
  });
  browser.exited.catch((error) => failed(new Error(`the browser exited: ${error.message}`)));
  const timer = setTimeout(
    () => failed(new Error(`not done after ${TIMEOUT_MS / 1000} s (${events.length} events); ${browser!.log()}`)),
    TIMEOUT_MS,
  );
  try {
    const handshake = await Promise.race([open, failure]);
    const running = cluster;
    const to = changeConfigMaps((args, input) => kubectl(running, args, input), ns);
    await Promise.race([
      new Promise<void>((resolve) => {
        eventCame = () => {
          const last = events.at(-1) as WatchEvent | undefined;
          if (last !== undefined && resourceVersionOf(last.object) === to) resolve();
        };
        eventCame();
      }),
      failure,
    ]);
    const ref = { version: "v1", resource: "configmaps", namespace: ns };
    const http = await httpWatch(cluster, ref, from, to);
    const summary = (list: unknown[]) =>
      list.map((e) =>
        `${(e as WatchEvent).type} ${(e as { object: { metadata: { name: string } } }).object.metadata.name}`
      );
    if (!isDeepStrictEqual(events, http)) {
      throw new Error(
        `the page's events differ from the plain HTTP watch's:\n${JSON.stringify(summary(events))}\n` +
          `${JSON.stringify(summary(http))}\n${JSON.stringify(events)}\n${JSON.stringify(http)}`,
      );
    }
    if (!handshake.tokenProtocol || handshake.chosen !== "v4.channel.k8s.io") {
      throw new Error(`the handshake was not the browser's subprotocol one: ${JSON.stringify(handshake)}`);
    }
    console.log(
      `${browser.version}: a WebSocket watch from the page (${origin}) to kube-apiserver ${api.host}, the token as ` +
        `a subprotocol (asked ${JSON.stringify(handshake.asked)}, the server chose ${handshake.chosen}): ` +
        `${events.length} events (${
          summary(events).join(", ")
        }) equal to the plain HTTP watch of the same range in Node`,
    );
  } finally {
    clearTimeout(timer);
  }
} catch (error) {
  console.error(error);
  if (browser !== undefined) console.error(`the browser's output:\n${browser.log()}`);
  status = 1;
} finally {
  await browser?.stop();
  server?.close();
  await cluster?.destroy();
}
process.exit(status);
