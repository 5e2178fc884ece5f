/**
 * list() against a local HTTP server whose pages break off or stall, through connectCluster in the runtime that runs
 * the test (Node: undici; Deno: its HTTP client; Bun: its fetch): a page body cut cleanly inside the list (JSON or
 * protobuf, at every byte) or by a reset is `CONNECTION_LOST` naming the page and the bytes read; a page that keeps
 * silent longer than `idleTimeoutMs` (before its response, or inside its body) is `TIMEOUT`, its request aborted; an
 * informer's `idleTimeoutMs` reaches its list pages.
 *
 * The server runs in a Node child process in every runtime, as in cluster_connection.test.ts. The path prefix of the
 * connection's server URL says what it does: `/<fault>/<arg>/<page>/api/v1/configmaps`, the fault applied to page
 * `<page>` (1, or 2: the page asked for with a continue token; 0: none) and the other page answered whole.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  ClusterAccessError,
  type ClusterConnection,
  connectCluster,
  detectRuntime,
  informer,
  list,
  type ListOptions,
  resourceSource,
  watch,
} from "../src/cluster/mod.ts";
import { builtinDecoders } from "../src/codec/kubernetes/generated/all.ts";
import { KubernetesProtobufObject } from "../src/codec/kubernetes/protobuf_object.ts";
import type { KubernetesObject } from "../src/events.ts";
import { envelope, len } from "./_protobuf.ts";
import { firstLineOf, within } from "./_util.ts";

const runtime = detectRuntime();
/** Node itself in Node; the `node` on PATH (npm's) in Deno and Bun. */
const NODE = runtime === "node" ? process.execPath : "node";
const work = mkdtempSync(join(tmpdir(), "watchwire-list-"));

const CONFIGMAPS = { version: "v1", resource: "configmaps", namespace: "default" };
const CONTINUE = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6N30=";

/** The two pages, in JSON and in protobuf (written by hand, tests/_protobuf.ts). */
const JSON_PAGES = [
  {
    kind: "ConfigMapList",
    apiVersion: "v1",
    metadata: { resourceVersion: "7", continue: CONTINUE },
    items: [{ metadata: { name: "a", namespace: "default", resourceVersion: "5" }, data: { k: 'v "a" ü' } }],
  },
  {
    kind: "ConfigMapList",
    apiVersion: "v1",
    metadata: { resourceVersion: "7" },
    items: [{ metadata: { name: "b", namespace: "default", resourceVersion: "6" }, data: { k: "v [b] {" } }],
  },
].map((page) => new TextEncoder().encode(JSON.stringify(page)));
const configMap = (name: string, rv: string, value: string) =>
  len(2, [
    ...len(1, [...len(1, name), ...len(3, "default"), ...len(6, rv)]),
    ...len(2, [...len(1, "k"), ...len(2, value)]),
  ]);
const PROTOBUF_PAGES = [
  envelope("v1", "ConfigMapList", [...len(1, [...len(2, "7"), ...len(3, CONTINUE)]), ...configMap("a", "5", "v a")], [
    ...len(3, ""),
    ...len(4, ""),
  ]),
  envelope("v1", "ConfigMapList", [...len(1, len(2, "7")), ...configMap("b", "6", "v b")], [
    ...len(3, ""),
    ...len(4, ""),
  ]),
].map((page) => Uint8Array.from(page));

const SERVER = `
import http from "node:http";
import { readFileSync } from "node:fs";
const [file] = process.argv.slice(2);
const bodies = JSON.parse(readFileSync(file, "utf8"));
const pages = {
  json: bodies.json.map((b) => Buffer.from(b, "base64")),
  protobuf: bodies.protobuf.map((b) => Buffer.from(b, "base64")),
};
const seen = new Map();
const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://x");
  const [, fault, arg, faultPage] = url.pathname.split("/");
  if (url.searchParams.get("watch") === "true") {
    // A watch (of the informer): open, silent.
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    return;
  }
  const protobuf = (req.headers.accept ?? "").includes("protobuf");
  const page = url.searchParams.has("continue") ? 2 : 1;
  const body = pages[protobuf ? "protobuf" : "json"][page - 1];
  const head = () => res.writeHead(200, { "content-type": protobuf ? "application/vnd.kubernetes.protobuf" : "application/json" });
  const key = url.pathname + url.search;
  const times = (seen.get(key) ?? 0) + 1;
  seen.set(key, times);
  if (String(page) !== faultPage || (fault === "stallonce" && times > 1)) {
    head();
    res.end(body);
    return;
  }
  const n = Number(arg);
  switch (fault) {
    case "cut": // the first n bytes, then the body's proper end (the last chunk)
      head();
      if (n > 0) res.write(body.subarray(0, n));
      res.end();
      return;
    case "reset": // the first n bytes, then the connection reset
      head();
      res.write(body.subarray(0, n), () => setTimeout(() => req.socket.resetAndDestroy(), 50));
      return;
    case "stallonce":
    case "stall": // no response at all
      return;
    case "stallbody": // the first n bytes, then nothing
      head();
      res.write(body.subarray(0, n));
      return;
    case "trickle": { // the body a few bytes at a time, one piece every n ms
      head();
      let at = 0;
      const step = Math.ceil(body.length / 8);
      const next = () => {
        if (at >= body.length) return res.end();
        res.write(body.subarray(at, at + step));
        at += step;
        setTimeout(next, n);
      };
      next();
      return;
    }
    case "malformed": // a whole body that is not JSON
      head();
      res.end(Buffer.concat([body, Buffer.from(" and more")]));
      return;
  }
  res.writeHead(500);
  res.end("unknown fault " + fault);
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
`;

let started: Promise<{ port: number; child: ChildProcess }> | undefined;
// Registered as the module loads: the server is stopped after the file's tests.
after(async () => {
  const s = await started?.catch(() => undefined);
  if (s === undefined) return;
  const exited = new Promise<void>((resolve) => s.child.once("exit", () => resolve()));
  s.child.kill();
  await exited;
});
/** The test server (one for the file), in a Node child process. */
function server(): Promise<{ port: number; child: ChildProcess }> {
  started ??= (async () => {
    const script = join(work, "list_server.mjs");
    const bodies = join(work, "bodies.json");
    writeFileSync(script, SERVER);
    const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
    writeFileSync(
      bodies,
      JSON.stringify({ json: JSON_PAGES.map(base64), protobuf: PROTOBUF_PAGES.map(base64) }),
    );
    const child: ChildProcess = spawn(NODE, [script, bodies], { stdio: ["ignore", "pipe", "inherit"] });
    const { port } = await firstLineOf<{ port: number }>(child, "the test server's port");
    return { port, child };
  })();
  return started;
}

/** Runs `body` with a connection whose server URL has the prefix `/<fault>/<arg>/<page>`. */
async function withFault(
  fault: string,
  arg: number,
  page: 0 | 1 | 2,
  body: (connection: ClusterConnection) => Promise<void>,
): Promise<void> {
  const { port } = await server();
  const connection = await connectCluster({ server: `http://127.0.0.1:${port}/${fault}/${arg}/${page}` });
  try {
    await body(connection);
  } finally {
    await connection.close();
  }
}

/** The error `promise` rejects with; fails if it resolves. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail("no error");
}

/** The ClusterAccessError `promise` rejects with; fails if it resolves or rejects with anything else. */
async function accessError(promise: Promise<unknown>, code: string): Promise<ClusterAccessError> {
  const e = await failure(promise);
  assert.ok(e instanceof ClusterAccessError, `not a ClusterAccessError: ${(e as Error)?.stack ?? e}`);
  assert.equal(e.code, code, e.message);
  return e;
}

/** The URL of page `page` of the list at `connection` (page 2: with the continue token). */
const pageUrl = (connection: ClusterConnection, page: 1 | 2) =>
  `${connection.server}/api/v1/namespaces/default/configmaps?limit=1${
    page === 2 ? `&continue=${encodeURIComponent(CONTINUE)}` : ""
  }`;

const listed = (options: ListOptions = {}) => (connection: ClusterConnection) =>
  list(connection, CONFIGMAPS, { pageSize: 1, protobuf: { decoders: builtinDecoders }, ...options });

test("list: both pages whole, in JSON and protobuf (the server's own answers, for the faults below)", async () => {
  for (const format of ["json", "protobuf"] as const) {
    await withFault("none", 0, 0, async (connection) => {
      const result = await list<KubernetesObject & { data?: Record<string, string> }>(connection, CONFIGMAPS, {
        pageSize: 1,
        format,
        protobuf: { decoders: builtinDecoders },
      });
      assert.deepEqual(result.items.map((o) => [o.kind, o.metadata?.name, o.data]), [
        ["ConfigMap", "a", { k: format === "json" ? 'v "a" ü' : "v a" }],
        ["ConfigMap", "b", { k: format === "json" ? "v [b] {" : "v b" }],
      ]);
      assert.equal(result.resourceVersion, "7");
      assert.equal(result.pages, 2);
    });
  }
});

for (const format of ["json", "protobuf"] as const) {
  test(`list: a ${format} page cut cleanly inside the list, at every byte, is CONNECTION_LOST naming the page and where it ended`, async () => {
    for (const page of [1, 2] as const) {
      const body = (format === "json" ? JSON_PAGES : PROTOBUF_PAGES)[page - 1];
      // A protobuf body may end once the list's message is whole: its two empty trailing fields are not needed.
      const whole = format === "json" ? body.length : body.length - 4;
      for (let n = 0; n < whole; n++) {
        await withFault("cut", n, page, async (connection) => {
          const e = await accessError(listed({ format })(connection), "CONNECTION_LOST");
          const where = `list configmaps in namespace default, page ${page} (${pageUrl(connection, page)})`;
          assert.ok(
            e.message.startsWith(`${where}: the response body ended after ${n} bytes, inside the list (`),
            e.message,
          );
          assert.match(e.message, /: the connection was cut, or the answer truncated$/);
          if (format === "json") assert.ok(e.cause instanceof SyntaxError, `${n}: ${e.cause}`);
        });
      }
      // Cut at the end of the list's message (before the envelope's empty trailing fields): nothing is missing.
      if (format === "protobuf") {
        await withFault("cut", whole, page, async (connection) => {
          assert.equal((await listed({ format })(connection)).items.length, 2);
        });
      }
    }
  });
}

test("list: a whole body that is not JSON still throws as JSON.parse does (a malformed answer is not a cut one)", async () => {
  await withFault("malformed", 0, 2, async (connection) => {
    const e = await failure(listed()(connection));
    assert.ok(e instanceof SyntaxError, String(e));
  });
});

test("list: a page whose connection is reset inside its body is CONNECTION_LOST with the bytes read", async () => {
  await withFault("reset", 20, 2, async (connection) => {
    const e = await accessError(listed()(connection), "CONNECTION_LOST");
    const where = `list configmaps in namespace default, page 2 (${pageUrl(connection, 2)})`;
    assert.match(
      e.message,
      /: the (connection was lost after \d+ bytes of the response body|response body ended after \d+ bytes)/,
    );
    assert.ok(e.message.startsWith(where), e.message);
  });
});

test("list: a page with no response within idleTimeoutMs is TIMEOUT, its request aborted", async () => {
  for (const page of [1, 2] as const) {
    await withFault("stall", 0, page, async (connection) => {
      const started = Date.now();
      const e = await within(accessError(listed({ idleTimeoutMs: 300 })(connection), "TIMEOUT"), 10_000, "the list");
      const waited = Date.now() - started;
      assert.ok(waited >= 290 && waited < 5_000, `${waited} ms`);
      assert.equal(
        e.message,
        `list configmaps in namespace default, page ${page} (${pageUrl(connection, page)}): no response for 300 ms ` +
          "(idleTimeoutMs): the request was aborted",
      );
    });
  }
});

test("list: a page body silent for idleTimeoutMs is TIMEOUT with the bytes read; a slow one that keeps coming is not", async () => {
  await withFault("stallbody", 25, 2, async (connection) => {
    const e = await within(accessError(listed({ idleTimeoutMs: 300 })(connection), "TIMEOUT"), 10_000, "the list");
    assert.equal(
      e.message,
      `list configmaps in namespace default, page 2 (${pageUrl(connection, 2)}): no byte of the response body for ` +
        "300 ms (idleTimeoutMs), after 25 bytes: the request was aborted",
    );
  });
  // Eight pieces 120 ms apart: about a second in all, never 300 ms without a byte.
  for (const format of ["json", "protobuf"] as const) {
    await withFault("trickle", 120, 2, async (connection) => {
      const result = await within(listed({ idleTimeoutMs: 300, format })(connection), 10_000, "the list");
      assert.deepEqual(result.items.map((o) => o.metadata?.name), ["a", "b"]);
    });
  }
});

test("list: the caller's abort during a stall stays an abort; Infinity and 0 are no limit", async () => {
  await withFault("stall", 0, 1, async (connection) => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 100);
    const e = await within(failure(listed({ idleTimeoutMs: 10_000, signal: stop.signal })(connection)), 5_000);
    assert.equal((e as Error).name, "AbortError", String(e));
  });
  for (const idleTimeoutMs of [Infinity, 0]) {
    await withFault("stallbody", 10, 1, async (connection) => {
      const stop = new AbortController();
      const pending = failure(listed({ idleTimeoutMs, signal: stop.signal })(connection));
      // Still waiting after 400 ms.
      const first = await Promise.race([pending, new Promise((resolve) => setTimeout(() => resolve("waiting"), 400))]);
      assert.equal(first, "waiting");
      stop.abort();
      assert.equal(((await within(pending, 5_000)) as Error).name, "AbortError");
    });
  }
});

test("list: a fetch that ignores its signal, and a body that ignores the abort, still time out", async () => {
  const never: ClusterConnection = {
    server: "https://kube.example",
    headers: () => Promise.resolve(new Headers()),
    fetch: () => new Promise<Response>(() => {}),
    close: async () => {},
  };
  const e = await within(accessError(list(never, CONFIGMAPS, { idleTimeoutMs: 200 }), "TIMEOUT"), 5_000);
  assert.match(
    e.message,
    /^list configmaps in namespace default, page 1 \(https:\/\/kube\.example\/api\/v1\/namespaces\/default\/configmaps\): no response for 200 ms/,
  );
  const silent: ClusterConnection = {
    ...never,
    fetch: () =>
      Promise.resolve(
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"kind":"ConfigMapList","items":['));
            },
          }),
        ),
      ),
  };
  const body = await within(accessError(list(silent, CONFIGMAPS, { idleTimeoutMs: 200 }), "TIMEOUT"), 5_000);
  assert.match(body.message, /no byte of the response body for 200 ms \(idleTimeoutMs\), after 33 bytes/);
});

test("list: an informer's idleTimeoutMs reaches its list pages (resourceSource's too); the informer lists again", async () => {
  await withFault("stall", 0, 1, async (connection) => {
    const source = resourceSource(connection, CONFIGMAPS, { idleTimeoutMs: 250 });
    const e = await within(accessError(source.list({ signal: new AbortController().signal }), "TIMEOUT"), 5_000);
    assert.match(e.message, /no response for 250 ms/);
  });
  // The first page stalls once: the informer's list times out, and its next list syncs.
  await withFault("stallonce", 0, 1, async (connection) => {
    const errors: unknown[] = [];
    const configmaps = informer(connection, CONFIGMAPS, {
      initialSync: "list",
      pageSize: 1,
      idleTimeoutMs: 300,
      backoff: { initialMs: 10, maxMs: 20 },
      onError: (error) => errors.push(error),
    });
    const running = configmaps.start();
    try {
      await within(configmaps.synced, 10_000, "the informer's sync");
      assert.deepEqual(configmaps.store.list().map((o) => o.metadata?.name).sort(), ["a", "b"]);
      const first = errors[0];
      assert.ok(first instanceof ClusterAccessError && first.code === "TIMEOUT", String(first));
      assert.match(first.message, /page 1 .*: no response for 300 ms \(idleTimeoutMs\)/);
    } finally {
      configmaps.stop();
      await running;
    }
  });
});

test("protobuf without decoders: list, watch, informer and resourceSource refuse it at once (USAGE), metadata mode aside", async () => {
  let requests = 0;
  const connection: ClusterConnection = {
    server: "https://127.0.0.1:6443",
    headers: () => Promise.resolve(new Headers()),
    fetch: () => {
      requests++;
      return Promise.reject(new Error("no request expected"));
    },
    close: () => Promise.resolve(),
  };
  const usage = (e: unknown) => {
    assert.ok(e instanceof ClusterAccessError && e.code === "USAGE", String(e));
    assert.match(e.message, /^(list|watch|informer of|resourceSource of) configmaps/);
    assert.match(e.message, /createKubernetesDecoders\(\[coreV1\]\)/);
    assert.match(e.message, /builtinDecoders/);
    assert.match(e.message, /mode: "metadata"/);
    return true;
  };
  await assert.rejects(list(connection, CONFIGMAPS, { format: "protobuf" }), usage);
  await assert.rejects(watch(connection, CONFIGMAPS, { format: "protobuf", protobuf: { mode: "full" } }), usage);
  assert.throws(() => informer(connection, CONFIGMAPS, { format: "protobuf" }), usage);
  assert.throws(() => resourceSource(connection, CONFIGMAPS, { format: "protobuf", protobuf: {} }), usage);
  assert.equal(requests, 0);
  // Decoders given, metadata mode, or JSON: accepted.
  informer(connection, CONFIGMAPS, { format: "protobuf", protobuf: { decoders: builtinDecoders } });
  informer(connection, CONFIGMAPS, { format: "protobuf", protobuf: { mode: "metadata" } });
  informer(connection, CONFIGMAPS, { format: "json" });
  informer(connection, CONFIGMAPS);
});

test("list: protobuf in metadata mode without decoders gives every item, as its metadata and bytes", async () => {
  await withFault("none", 0, 0, async (connection) => {
    const result = await list(connection, CONFIGMAPS, {
      pageSize: 1,
      format: "protobuf",
      protobuf: { mode: "metadata" },
    });
    assert.equal(result.resourceVersion, "7");
    assert.equal(result.kind, "ConfigMapList");
    assert.deepEqual(result.items.map((o) => [o.apiVersion, o.kind, o.metadata?.name, o.metadata?.resourceVersion]), [
      ["v1", "ConfigMap", "a", "5"],
      ["v1", "ConfigMap", "b", "6"],
    ]);
    for (const item of result.items) {
      assert.ok(item instanceof KubernetesProtobufObject);
      assert.equal(item.decodable, false, "no decoder of ConfigMap was given");
    }
    // With the decoders, the same items decode whole.
    const whole = await list(connection, CONFIGMAPS, {
      pageSize: 1,
      format: "protobuf",
      protobuf: { decoders: builtinDecoders, mode: "metadata" },
    });
    assert.deepEqual(whole.items.map((o) => (o as { data?: unknown }).data), [{ k: "v a" }, { k: "v b" }]);
  });
});

test("list: pageSize is asked as the API's limit; after restartsOnExpiredContinue restarts, one request without it", async () => {
  const asked: string[] = [];
  const connection: ClusterConnection = {
    server: "https://127.0.0.1:6443",
    headers: () => Promise.resolve(new Headers()),
    fetch: (input) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      asked.push(url.search);
      // Every continue token has expired (etcd compacted the list's revision each time).
      if (url.searchParams.has("continue")) {
        const status = { kind: "Status", apiVersion: "v1", code: 410, reason: "Expired" };
        return Promise.resolve(Response.json(status, { status: 410 }));
      }
      const metadata = { resourceVersion: "7", ...(url.searchParams.has("limit") ? { continue: "next" } : {}) };
      const items = [{ metadata: { name: "a" } }];
      return Promise.resolve(Response.json({ kind: "ConfigMapList", apiVersion: "v1", metadata, items }));
    },
    close: async () => {},
  };
  const result = await list(connection, CONFIGMAPS, { pageSize: 1, restartsOnExpiredContinue: 1 });
  assert.deepEqual(asked, ["?limit=1", "?limit=1&continue=next", "?limit=1", "?limit=1&continue=next", ""]);
  assert.deepEqual([result.restarts, result.pages, result.items.map((o) => o.metadata?.name)], [2, 5, ["a"]]);
});
