/**
 * connectCluster against a real HTTPS server on 127.0.0.1 (node:http2's secure server, which also speaks HTTP/1.1),
 * with a CA and certificates from scripts/kube/pki.mjs, in the runtime that runs the test (Node: undici; Deno: its
 * HTTP client, or undici for insecureSkipTlsVerify and tlsServerName; Bun: fetch's `tls`).
 *
 * The server runs in a Node child process in every runtime: Bun's node:https and node:http2 have no
 * getPeerCertificate (Bun 1.4.5), and the server must tell which client certificate it saw. It answers each request
 * with what it saw (the client certificate's CN, the Authorization and Impersonate-* headers, the HTTP version), a 401
 * for an Authorization it was told to refuse, and a streamed body on /stream; a plain-HTTP control port tells it what
 * to refuse and when to write the stream's second line.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { makePki, type Pki } from "../scripts/kube/pki.mjs";
import {
  ClusterAccessError,
  type ClusterConfig,
  type ClusterConnection,
  connectCluster,
  type ConnectClusterOptions,
  detectRuntime,
  type ExecCredentialPlugin,
  inClusterConfig,
} from "../src/cluster/mod.ts";
import { firstLineOf, within } from "./_util.ts";

const runtime = detectRuntime();
/** Node itself in Node; the `node` on PATH (npm's) in Deno and Bun. */
const NODE = runtime === "node" ? process.execPath : "node";

const work = mkdtempSync(join(tmpdir(), "watchwire-cluster-"));
let pkis: { main: Pki; other: Pki } | undefined;
/** The test PKI (made once): `main` with clients admin and bob, `other` a second CA with its own server. */
function pki(): { main: Pki; other: Pki } {
  pkis ??= {
    main: makePki(join(work, "pki"), {
      clients: { admin: { user: "admin", groups: ["system:masters"] }, bob: { user: "bob" } },
    }),
    other: makePki(join(work, "other-pki")),
  };
  return pkis;
}
const bytes = (path: string) => new Uint8Array(readFileSync(path));

const SERVER = `
import http from "node:http";
import http2 from "node:http2";
import { readFileSync } from "node:fs";
const [dir] = process.argv.slice(2);
const refused = new Set();
const held = [];
const server = http2.createSecureServer({
  allowHTTP1: true,
  ca: readFileSync(dir + "/ca.crt"),
  cert: readFileSync(dir + "/server.crt"),
  key: readFileSync(dir + "/server.key"),
  requestCert: true,
  rejectUnauthorized: false,
}, (req, res) => {
  const peer = req.socket.getPeerCertificate();
  const all = (name) => {
    const values = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (req.rawHeaders[i].toLowerCase() === name) values.push(req.rawHeaders[i + 1]);
    }
    return values;
  };
  const seen = {
    path: req.url,
    cn: peer && peer.subject ? peer.subject.CN : null,
    authorization: req.headers.authorization ?? null,
    impersonateUser: all("impersonate-user"),
    impersonateGroup: all("impersonate-group"),
    impersonateUid: all("impersonate-uid"),
    httpVersion: req.httpVersion,
  };
  if (seen.authorization !== null && refused.has(seen.authorization)) {
    res.writeHead(401, { "content-type": "application/json" });
    res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", reason: "Unauthorized", code: 401 }));
    return;
  }
  if (req.url === "/stream") {
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("one\\n");
    held.push(() => res.end("two\\n"));
    return;
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(seen));
});
const control = http.createServer((req, res) => {
  const url = new URL(req.url, "http://control");
  if (url.pathname === "/refuse") refused.add(url.searchParams.get("authorization"));
  if (url.pathname === "/release") for (const write of held.splice(0)) write();
  res.end(String(held.length));
});
server.listen(0, "127.0.0.1", () => {
  control.listen(0, "127.0.0.1", () => {
    console.log(JSON.stringify({ port: server.address().port, control: control.address().port }));
  });
});
`;

interface Seen {
  path: string;
  cn: string | null;
  authorization: string | null;
  impersonateUser: string[];
  impersonateGroup: string[];
  impersonateUid: string[];
  httpVersion: string;
}

interface TestServer {
  url: string;
  /** The plain-HTTP control port's URL. */
  controlUrl: string;
  /** A request to the control port, e.g. `/refuse?authorization=...`. */
  control(path: string): Promise<string>;
  close(): Promise<void>;
}

/** The server of `dir`'s PKI, in a Node child process. */
async function startServer(dir: string): Promise<TestServer> {
  const script = join(work, "server.mjs");
  writeFileSync(script, SERVER);
  const child: ChildProcess = spawn(NODE, [script, dir], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ports = await firstLineOf<{ port: number; control: number }>(child, "the test server's ports");
  return {
    url: `https://127.0.0.1:${ports.port}`,
    controlUrl: `http://127.0.0.1:${ports.control}`,
    control: async (path) => await (await fetch(`http://127.0.0.1:${ports.control}${path}`)).text(),
    close: async () => {
      child.kill();
      await exited;
    },
  };
}

/** Runs `body` with a connection to a server of the main PKI (or `options.pki`), closing both after. */
async function withServer(body: (server: TestServer) => Promise<void>, dir = pki().main.ca.replace(/\/ca\.crt$/, "")) {
  const server = await startServer(dir);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

async function withConnection(
  config: ClusterConfig,
  options: ConnectClusterOptions,
  body: (connection: ClusterConnection) => Promise<void>,
): Promise<void> {
  const connection = await connectCluster(config, options);
  try {
    await body(connection);
  } finally {
    await connection.close();
  }
}

async function seen(connection: ClusterConnection, path = "/api", init?: RequestInit): Promise<Seen> {
  const response = await connection.fetch(path, init);
  assert.equal(response.status, 200, `${path}: ${response.status} ${await response.clone().text()}`);
  return await response.json() as Seen;
}

/** The ClusterAccessError `promise` rejects with; fails if it resolves or rejects with anything else. */
async function accessError(promise: Promise<unknown>, code: string): Promise<ClusterAccessError> {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof ClusterAccessError, `not a ClusterAccessError: ${e}`);
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail(`no error; expected ${code}`);
}

const caOf = (p: Pki) => bytes(p.ca);

test("cluster connection: the config's CA is used; another CA's server is rejected, insecureSkipTlsVerify accepts it", async () => {
  const { main, other } = pki();
  await withServer(async (server) => {
    await withConnection({ server: server.url, caData: caOf(main) }, {}, async (connection) => {
      assert.equal((await seen(connection)).path, "/api");
    });
    // Without the CA, the runtime's roots do not know the test CA.
    await withConnection({ server: server.url }, {}, async (connection) => {
      const e = await accessError(connection.fetch("/api"), "SERVER_CERTIFICATE_REJECTED");
      assert.match(e.message, new RegExp(`GET ${server.url}/api: the server's TLS certificate was rejected`));
    });
  });
  await withServer(async (server) => {
    const source = "kubeconfig test, context other";
    await withConnection({ server: server.url, caData: caOf(main), source }, {}, async (connection) => {
      const e = await accessError(connection.fetch("/api/v1/pods"), "SERVER_CERTIFICATE_REJECTED");
      assert.match(e.message, /certificate-authority-data/);
      assert.ok(e.message.endsWith(`(${source})`), e.message);
      assert.equal(e.source, source);
    });
    await withConnection({ server: server.url, caData: caOf(main), insecureSkipTlsVerify: true }, {}, async (c) => {
      assert.equal((await seen(c)).path, "/api");
    });
  }, other.ca.replace(/\/ca\.crt$/, ""));
});

test("cluster connection: tlsServerName is the name checked (the server's certificate has DNS:kubernetes)", async () => {
  const { main } = pki();
  await withServer(async (server) => {
    await withConnection({ server: server.url, caData: caOf(main), tlsServerName: "kubernetes" }, {}, async (c) => {
      assert.equal((await seen(c)).path, "/api");
    });
    await withConnection({ server: server.url, caData: caOf(main), tlsServerName: "elsewhere" }, {}, async (c) => {
      await accessError(c.fetch("/api"), "SERVER_CERTIFICATE_REJECTED");
    });
  });
});

test("cluster connection: client certificate auth (the server sees its CN), token and impersonation headers", async () => {
  const { main } = pki();
  await withServer(async (server) => {
    const config: ClusterConfig = {
      server: server.url,
      caData: caOf(main),
      clientCertificateData: bytes(main.clients.admin.cert),
      clientKeyData: bytes(main.clients.admin.key),
      token: "static-token",
      impersonate: { user: "jane", groups: ["devs"], uid: "1234" },
      namespace: "team-a",
    };
    await withConnection(config, {}, async (connection) => {
      assert.equal(connection.server, server.url);
      assert.equal(connection.namespace, "team-a");
      const s = await seen(connection, "/api/v1/namespaces/team-a/pods?watch=1");
      assert.equal(s.path, "/api/v1/namespaces/team-a/pods?watch=1");
      assert.equal(s.cn, "admin");
      assert.equal(s.authorization, "Bearer static-token");
      assert.deepEqual([s.impersonateUser, s.impersonateGroup, s.impersonateUid], [["jane"], ["devs"], ["1234"]]);
      assert.equal(s.httpVersion, "1.1");
      // headers() gives the same, for code that makes its own requests.
      const headers = await connection.headers();
      assert.equal(headers.get("authorization"), "Bearer static-token");
      assert.equal(headers.get("impersonate-group"), "devs");
      // A full URL, a Request, and the caller's headers kept beside the credentials (a stale Authorization replaced).
      const request = new Request(`${server.url}/apis`, { headers: { accept: "application/json" } });
      assert.equal((await (await connection.fetch(request)).json() as Seen).path, "/apis");
      const r = await connection.fetch(new URL(`${server.url}/x`), { headers: { authorization: "Bearer stale" } });
      assert.equal((await r.json() as Seen).authorization, "Bearer static-token");
    });
    // No client certificate: no CN.
    await withConnection({ server: server.url, caData: caOf(main) }, {}, async (connection) => {
      assert.equal((await seen(connection)).cn, null);
    });
  });
});

test("cluster connection: basic auth, and HTTP/2 where the runtime's client has it", async () => {
  const { main } = pki();
  await withServer(async (server) => {
    await withConnection(
      { server: server.url, caData: caOf(main), username: "ann", password: "pässword" },
      { http2: true },
      async (connection) => {
        const s = await seen(connection);
        const decoded = new TextDecoder().decode(
          Uint8Array.from(atob(s.authorization!.slice("Basic ".length)), (c) => c.charCodeAt(0)),
        );
        assert.equal(decoded, "ann:pässword");
        // Bun's fetch speaks HTTP/1.1 only.
        assert.equal(s.httpVersion, runtime === "bun" ? "1.1" : "2.0");
      },
    );
  });
});

test("cluster connection: a streamed body arrives as it is written (the first line before the second is written)", async () => {
  const { main } = pki();
  await withServer(async (server) => {
    await withConnection({ server: server.url, caData: caOf(main), token: "t" }, {}, async (connection) => {
      const response = await connection.fetch("/stream");
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      // The server holds the second line until the control port releases it: a client that buffered the body
      // would never see the first.
      const first = await within(reader.read(), 10_000, "the first line");
      assert.equal(first.value, "one\n");
      assert.equal(await server.control("/release"), "0");
      let rest = "";
      for (;;) {
        const { done, value } = await within(reader.read(), 10_000, "the rest");
        if (done) break;
        rest += value;
      }
      assert.equal(rest, "two\n");
    });
  });
});

test("cluster connection: a token file is read again after the re-read interval (injected clock), and after a 401", async () => {
  const { main } = pki();
  const tokenFile = join(work, "token");
  writeFileSync(tokenFile, "token-a\n");
  let now = 1_000_000;
  await withServer(async (server) => {
    const config = { server: server.url, caData: caOf(main), tokenFile };
    await withConnection(config, { now: () => now }, async (connection) => {
      assert.equal((await seen(connection)).authorization, "Bearer token-a");
      writeFileSync(tokenFile, "token-b\n");
      now += 59_999;
      assert.equal((await seen(connection)).authorization, "Bearer token-a", "within the minute: the token in hand");
      now += 1;
      assert.equal((await seen(connection)).authorization, "Bearer token-b", "a minute on: read again");
      // The server refuses token-b; the file has token-c: the 401 makes it read again, and the request is retried.
      await server.control(`/refuse?authorization=${encodeURIComponent("Bearer token-b")}`);
      writeFileSync(tokenFile, "token-c");
      assert.equal((await seen(connection)).authorization, "Bearer token-c");
      // A 401 when the file has nothing new: the 401 itself.
      await server.control(`/refuse?authorization=${encodeURIComponent("Bearer token-c")}`);
      assert.equal((await connection.fetch("/api")).status, 401);
    });
    // A file that cannot be read: FILE_UNREADABLE, naming it.
    const missing = join(work, "no-such-token");
    await withConnection({ ...config, tokenFile: missing, source: "test" }, {}, async (connection) => {
      const e = await accessError(connection.fetch("/api"), "FILE_UNREADABLE");
      assert.match(e.message, new RegExp(`cannot read ${missing} \\(the bearer token file\\): ENOENT`));
    });
  });
});

/**
 * A plugin: a Node script that counts its runs and prints an ExecCredential as its environment says (`MODE` token,
 * cert, fail or garbage; `EXPIRY` the first run's expiration).
 */
const PLUGIN = `
import { readFileSync, writeFileSync, existsSync } from "node:fs";
const env = process.env;
const runs = (existsSync(env.COUNT_FILE) ? Number(readFileSync(env.COUNT_FILE, "utf8")) : 0) + 1;
writeFileSync(env.COUNT_FILE, String(runs));
if (env.INFO_FILE) writeFileSync(env.INFO_FILE, env.KUBERNETES_EXEC_INFO ?? "");
if (env.MODE === "fail") {
  console.error("plugin: cannot reach the identity provider");
  process.exit(3);
}
if (env.MODE === "garbage") {
  console.log("<html>login</html>");
  process.exit(0);
}
const info = JSON.parse(env.KUBERNETES_EXEC_INFO);
const status = {};
if (env.MODE === "cert") {
  const name = env.CERTS.split(",")[(runs - 1) % env.CERTS.split(",").length];
  status.clientCertificateData = readFileSync(name + ".crt", "utf8");
  status.clientKeyData = readFileSync(name + ".key", "utf8");
} else {
  status.token = "exec-token-" + runs;
}
// Run n's credential expires an hour after run n - 1's.
if (env.EXPIRY) status.expirationTimestamp = new Date(Date.parse(env.EXPIRY) + (runs - 1) * 3600000).toISOString();
console.log(JSON.stringify({ apiVersion: env.REPLY_VERSION ?? info.apiVersion, kind: "ExecCredential", status }));
`;

function plugin(name: string, env: Record<string, string>, more: Partial<ExecCredentialPlugin> = {}) {
  const dir = join(work, `plugin-${name}`);
  mkdirSync(dir, { recursive: true });
  const script = join(dir, "plugin.mjs");
  writeFileSync(script, PLUGIN);
  const countFile = join(dir, "count");
  const exec: ExecCredentialPlugin = {
    apiVersion: "client.authentication.k8s.io/v1",
    command: NODE,
    args: [script],
    env: Object.entries({ COUNT_FILE: countFile, INFO_FILE: join(dir, "info.json"), ...env })
      .map(([name, value]) => ({ name, value })),
    interactiveMode: "Never",
    ...more,
  };
  return {
    exec,
    runs: () => {
      try {
        return Number(readFileSync(countFile, "utf8"));
      } catch {
        return 0;
      }
    },
    info: () => JSON.parse(readFileSync(join(dir, "info.json"), "utf8")),
  };
}

test("cluster connection: an exec plugin's token is cached until it expires, and renewed after a 401", async () => {
  const { main } = pki();
  const p = plugin("token", { EXPIRY: "2030-01-01T00:00:00Z" }, { provideClusterInfo: true });
  let now = Date.parse("2029-12-31T23:00:00Z");
  await withServer(async (server) => {
    const config = { server: server.url, caData: caOf(main), exec: p.exec, tlsServerName: "kubernetes" };
    await withConnection(config, { now: () => now }, async (connection) => {
      assert.equal(p.runs(), 0, "not run before the first request");
      const [a, b] = await Promise.all([seen(connection), seen(connection)]);
      assert.equal(a.authorization, "Bearer exec-token-1");
      assert.equal(b.authorization, "Bearer exec-token-1");
      assert.equal(p.runs(), 1, "concurrent requests share one run");
      const info = p.info();
      assert.deepEqual(info, {
        apiVersion: "client.authentication.k8s.io/v1",
        kind: "ExecCredential",
        spec: {
          interactive: false,
          cluster: {
            server: server.url,
            "tls-server-name": "kubernetes",
            "certificate-authority-data": btoa(readFileSync(main.ca, "latin1")),
          },
        },
      });
      now = Date.parse("2029-12-31T23:59:59.999Z");
      assert.equal((await seen(connection)).authorization, "Bearer exec-token-1");
      assert.equal(p.runs(), 1, "cached until it expires");
      now = Date.parse("2030-01-01T00:00:00Z");
      assert.equal((await seen(connection)).authorization, "Bearer exec-token-2");
      assert.equal(p.runs(), 2, "run again at expiry");
      assert.equal((await seen(connection)).authorization, "Bearer exec-token-2");
      assert.equal(p.runs(), 2, "the new credential is cached until its own expiry, an hour later");
      // A 401 to the token in hand: run again and retried once with the new token.
      await server.control(`/refuse?authorization=${encodeURIComponent("Bearer exec-token-2")}`);
      assert.equal((await seen(connection)).authorization, "Bearer exec-token-3");
      assert.equal(p.runs(), 3);
      // A 401 to the new one too: one run and one retry, then the 401 is the answer.
      await server.control(`/refuse?authorization=${encodeURIComponent("Bearer exec-token-3")}`);
      await server.control(`/refuse?authorization=${encodeURIComponent("Bearer exec-token-4")}`);
      assert.equal((await connection.fetch("/api")).status, 401);
      assert.equal(p.runs(), 4);
      assert.equal((await connection.headers()).get("authorization"), "Bearer exec-token-4");
    });
  });
  // No expiry: cached for the connection's life, whatever the clock; v1beta1 accepted.
  const q = plugin("forever", {}, { apiVersion: "client.authentication.k8s.io/v1beta1" });
  await withServer(async (server) => {
    await withConnection({ server: server.url, caData: caOf(main), exec: q.exec }, { now: () => now }, async (c) => {
      assert.equal((await seen(c)).authorization, "Bearer exec-token-1");
      now += 365 * 86_400_000;
      assert.equal((await seen(c)).authorization, "Bearer exec-token-1");
      assert.equal(q.runs(), 1);
      assert.deepEqual(q.info().spec, { interactive: false });
    });
  });
});

test("cluster connection: an exec plugin's client certificate is used, and a new one gets a new TLS client", async () => {
  const { main } = pki();
  const certs = [main.clients.admin.cert, main.clients.bob.cert].map((c) => c.replace(/\.crt$/, "")).join(",");
  const p = plugin("cert", { MODE: "cert", CERTS: certs, EXPIRY: "2030-01-01T00:00:00Z" });
  let now = Date.parse("2029-06-01T00:00:00Z");
  await withServer(async (server) => {
    await withConnection({ server: server.url, caData: caOf(main), exec: p.exec }, { now: () => now }, async (c) => {
      const first = await seen(c);
      assert.equal(first.cn, "admin");
      assert.equal(first.authorization, null);
      assert.equal((await seen(c)).cn, "admin");
      now = Date.parse("2030-01-01T00:00:00Z");
      assert.equal((await seen(c)).cn, "bob");
      assert.equal(p.runs(), 2);
    });
    // A caller's fetch cannot be given the plugin's certificate: said, not dropped.
    const q = plugin("cert-caller", { MODE: "cert", CERTS: certs });
    await withConnection({ server: server.url, exec: q.exec }, { fetch }, async (c) => {
      const e = await accessError(c.fetch("/api"), "CLIENT_CERTIFICATE_NOT_APPLIED");
      assert.match(e.message, /exec plugin .* has a client certificate/);
    });
  });
});

test("cluster connection: exec plugin failures say what failed", async () => {
  const config = (exec: ExecCredentialPlugin): ClusterConfig => ({
    server: "https://127.0.0.1:1",
    exec,
    source: "kubeconfig test, context exec",
  });
  const options: ConnectClusterOptions = { fetch: () => Promise.reject(new Error("not to be reached")) };
  // A missing command, with the install hint.
  const missing = await connectCluster(
    config({
      apiVersion: "client.authentication.k8s.io/v1",
      command: "watchwire-no-such-plugin",
      installHint: "Install it with: brew install watchwire-no-such-plugin",
      interactiveMode: "Never",
    }),
    options,
  );
  let e = await accessError(missing.fetch("/api"), "EXEC_NOT_FOUND");
  assert.match(e.message, /executable watchwire-no-such-plugin was not found\n\nInstall it with: brew install/);
  assert.ok(e.message.endsWith("(kubeconfig test, context exec)"));
  // A failing plugin: its exit status and standard error.
  const failing = plugin("fail", { MODE: "fail" });
  e = await accessError((await connectCluster(config(failing.exec), options)).headers(), "EXEC_FAILED");
  assert.match(e.message, /exited with status 3: plugin: cannot reach the identity provider/);
  // Not JSON.
  const garbage = plugin("garbage", { MODE: "garbage" });
  e = await accessError((await connectCluster(config(garbage.exec), options)).headers(), "EXEC_OUTPUT_INVALID");
  assert.match(e.message, /its output is not JSON \(it printed "<html>login<\/html>"\)/);
  // Another API version than asked.
  const wrong = plugin("version", { REPLY_VERSION: "client.authentication.k8s.io/v1beta1" });
  e = await accessError((await connectCluster(config(wrong.exec), options)).headers(), "EXEC_OUTPUT_INVALID");
  assert.match(e.message, /configured for client.authentication.k8s.io\/v1 but printed apiVersion/);
  // Not runnable as configured: at connect time.
  await accessError(connectCluster(config({ ...wrong.exec, interactiveMode: "Always" }), options), "EXEC_UNSUPPORTED");
  e = await accessError(
    connectCluster(config({ ...wrong.exec, apiVersion: "client.authentication.k8s.io/v1alpha1" }), options),
    "EXEC_UNSUPPORTED",
  );
  assert.match(e.message, /v1alpha1" is not supported/);
  // No command runner without a runtime adapter.
  const web = await connectCluster(config(wrong.exec), { ...options, runtime: "web" });
  await accessError(web.headers(), "UNSUPPORTED");
});

test("cluster connection: many requests at once leave no listener per request on the connection's closing signal (no MaxListenersExceededWarning)", async () => {
  // Each request used to be given the connection's one closing signal, to which the runtime's fetch adds an abort
  // listener that stays until the request is garbage-collected (undici): 50 at once, a few dozen times over, passed
  // undici's limit of 1500 and Node warned. Now each request has a signal of its own that follows the closing one.
  const { main } = pki();
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on("warning", onWarning);
  try {
    await withServer(async (server) => {
      for (const http2 of [false, true]) {
        await withConnection({ server: server.url, caData: caOf(main), token: "t" }, { http2 }, async (connection) => {
          // 40 rounds of 50 at once without a signal of the caller's, then one with one signal for all 50.
          const caller = new AbortController();
          for (let round = 0; round <= 40; round++) {
            const init = round === 40 ? { signal: caller.signal } : {};
            const answers = await Promise.all(
              Array.from({ length: 50 }, (_, i) => seen(connection, `/api/v1/pods?n=${i}`, init)),
            );
            assert.equal(answers.length, 50);
          }
          // close() still ends a response in flight, through its own signal.
          const response = await connection.fetch("/stream");
          const reader = response.body!.getReader();
          await reader.read();
          await connection.close();
          await within(reader.read().then(() => {}, () => {}), 10_000, "the streamed response after close()");
        });
      }
    });
    // A warning is emitted on the next tick.
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    process.off("warning", onWarning);
  }
  assert.deepEqual(warnings.filter((w) => w.startsWith("MaxListenersExceededWarning")), []);
});

test("cluster connection: config errors, a caller's fetch, runtimes without an adapter, close()", async () => {
  const fake: ConnectClusterOptions["fetch"] = (input, init) =>
    Promise.resolve(
      Response.json({ url: String(input), authorization: new Headers(init?.headers).get("authorization") }),
    );
  await accessError(connectCluster({ server: "kube:6443" }, { fetch: fake }), "CONFIG_INVALID");
  await accessError(connectCluster({ server: "ftp://kube" }, { fetch: fake }), "CONFIG_INVALID");
  const e = await accessError(
    connectCluster({ server: "https://kube", clientCertificateData: new Uint8Array(1), source: "ctx" }, {}),
    "CONFIG_INVALID",
  );
  assert.equal(e.message, "the config has a client certificate but no key (ctx)");
  await accessError(connectCluster({ server: "https://kube", token: "t", username: "u" }, {}), "CONFIG_INVALID");
  await accessError(
    connectCluster({ server: "https://kube", impersonate: { groups: ["g"] } }, { fetch: fake }),
    "CONFIG_INVALID",
  );
  const groups = await accessError(
    connectCluster({ server: "https://kube", impersonate: { user: "u", groups: ["a", "b"] } }, { fetch: fake }),
    "IMPERSONATION_UNSUPPORTED",
  );
  assert.match(groups.message, /cannot impersonate 2 groups \(a, b\)/);
  // A caller's fetch and a client certificate: an error unless the caller says its fetch presents it.
  const withCert: ClusterConfig = {
    server: "https://kube/prefix/",
    clientCertificateData: new Uint8Array(1),
    clientKeyData: new Uint8Array(1),
    caData: new Uint8Array(1),
    token: "t",
  };
  await accessError(connectCluster(withCert, { fetch: fake }), "CLIENT_CERTIFICATE_NOT_APPLIED");
  await withConnection(withCert, { fetch: fake, fetchHasClientCertificate: true }, async (connection) => {
    assert.equal(connection.server, "https://kube/prefix");
    const body = await (await connection.fetch("/api/v1/pods")).json();
    assert.deepEqual(body, { url: "https://kube/prefix/api/v1/pods", authorization: "Bearer t" });
  });
  // Without an adapter (browsers, Workers) and without a fetch: TLS settings are an error; none, the global fetch.
  const web = await accessError(
    connectCluster({ server: "https://kube", caData: new Uint8Array(1) }, { runtime: "web" }),
    "UNSUPPORTED",
  );
  assert.match(web.message, /pass connectCluster a fetch that does the cluster's TLS/);
  await withServer(async (server) => {
    // No TLS settings and no adapter: the platform's fetch (here to the plain-HTTP control port, as to kubectl proxy).
    await withConnection({ server: server.controlUrl, token: "t" }, { runtime: "web" }, async (connection) => {
      assert.equal(await (await connection.fetch("/anything")).text(), "0");
    });
    // close(): the next fetch is CLOSED, and a response still streaming ends.
    const connection = await connectCluster({ server: server.url, caData: caOf(pki().main) });
    const response = await connection.fetch("/stream");
    const reader = response.body!.getReader();
    await reader.read();
    await connection.close();
    await accessError(connection.fetch("/api"), "CLOSED");
    await within(reader.read().then(() => {}, () => {}), 10_000, "the streamed response after close()");
    await connection.close();
  });
  assert.equal(detectRuntime(), "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node");
});

test("cluster connection: in-cluster config from service account files and environment", async () => {
  const { main } = pki();
  const root = join(work, "pod");
  const dir = join(root, "var/run/secrets/kubernetes.io/serviceaccount");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "ca.crt"), readFileSync(main.ca));
  writeFileSync(join(dir, "token"), "sa-token-1\n");
  writeFileSync(join(dir, "namespace"), "payments");
  const files = { readFile: async (path: string) => new Uint8Array(await readFile(path)) };
  const hostWith = (env: Record<string, string>) => ({ ...files, getEnv: (name: string) => env[name] });

  await withServer(async (server) => {
    const port = new URL(server.url).port;
    const config = await inClusterConfig({
      root,
      host: hostWith({ KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: port }),
    });
    assert.equal(config.server, server.url);
    assert.equal(config.namespace, "payments");
    assert.equal(config.tokenFile, join(dir, "token"));
    assert.equal(config.source, `in-cluster service account ${dir}`);
    let now = 0;
    await withConnection(config, { now: () => now }, async (connection) => {
      assert.equal((await seen(connection)).authorization, "Bearer sa-token-1");
      writeFileSync(join(dir, "token"), "sa-token-2\n"); // the kubelet rotates it
      now += 60_000;
      assert.equal((await seen(connection)).authorization, "Bearer sa-token-2");
    });
  });
  // An IPv6 service host is bracketed; POD_NAMESPACE wins over the file.
  const v6 = await inClusterConfig({
    root,
    host: hostWith({ KUBERNETES_SERVICE_HOST: "fd00:10:96::1", KUBERNETES_SERVICE_PORT: "443", POD_NAMESPACE: "ops" }),
  });
  assert.equal(v6.server, "https://[fd00:10:96::1]:443");
  assert.equal(v6.namespace, "ops");
  // Outside a cluster, and without the token.
  const outside = await accessError(inClusterConfig({ root, host: hostWith({}) }), "NOT_IN_CLUSTER");
  assert.match(outside.message, /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set/);
  const empty = join(work, "empty-pod");
  mkdirSync(empty, { recursive: true });
  const unreadable = await accessError(
    inClusterConfig({
      root: empty,
      host: hostWith({ KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" }),
    }),
    "FILE_UNREADABLE",
  );
  assert.match(unreadable.message, /cannot read .*empty-pod\/var\/run\/secrets\/kubernetes.io\/serviceaccount\/ca.crt/);
  // The runtime's own files and environment (none of the variables are set here).
  const runtimeOwn = inClusterConfig();
  if (process.env.KUBERNETES_SERVICE_HOST === undefined) await accessError(runtimeOwn, "NOT_IN_CLUSTER");
  else await runtimeOwn.catch(() => {});
});

if (runtime === "deno") {
  test("cluster connection (Deno): needs only --allow-net for the server, --allow-read of the token file, --allow-run of the plugin", async () => {
    const { main } = pki();
    const tokenFile = join(work, "deno-token");
    writeFileSync(tokenFile, "deno-file-token");
    const p = plugin("deno", {});
    const script = join(work, "deno_permissions.ts");
    writeFileSync(
      script,
      `
import { connectCluster } from ${JSON.stringify(new URL("../src/cluster/mod.ts", import.meta.url).href)};
const [server, ca, tokenFile, exec] = Deno.args;
const caData = new TextEncoder().encode(ca);
for (const config of [{ server, caData, tokenFile }, { server, caData, exec: JSON.parse(exec) }]) {
  const connection = await connectCluster(config);
  console.log((await (await connection.fetch("/api")).json()).authorization);
  await connection.close();
}
`,
    );
    await withServer(async (server) => {
      const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
      const args = [
        "run",
        "--no-config",
        `--allow-net=${new URL(server.url).host}`,
        `--allow-read=${tokenFile}`,
        `--allow-run=${NODE}`,
        script,
        server.url,
        readFileSync(main.ca, "utf8"),
        tokenFile,
        JSON.stringify(p.exec),
      ];
      const child = spawn(deno, args, { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout!.on("data", (chunk: Uint8Array) => stdout += new TextDecoder().decode(chunk));
      child.stderr!.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
      const code = await within(new Promise((resolve) => child.once("exit", resolve)), 60_000, "deno run");
      assert.equal(code, 0, stderr);
      assert.equal(stdout, "Bearer deno-file-token\nBearer exec-token-1\n");
    });
  });
}
