/**
 * A watch of the real kube-apiserver whose body breaks off, through the fault proxy (tests/peers/fault_proxy.ts): a
 * connection cut (FIN) or reset (RST) inside an event or between two, and over HTTP/2 a RST_STREAM or a GOAWAY, reach
 * `watch()`'s reader in every runtime as the events decoded before the break, whole and as the server sent them, then
 * one `ClusterAccessError` `CONNECTION_LOST` that names the URL, the bytes read and the runtime's own error (Node's
 * undici says `terminated`, Deno `error reading a body from connection`, Bun `ECONNRESET`). A body that ends properly
 * inside an event stays what the bytes say, a `DecodeError` `TRUNCATED`; the caller's abort stays an AbortError.
 * And a 429 whose wait only its Retry-After header says (kube-apiserver's priority and fairness answer) is an ERROR
 * Status with that wait in `details.retryAfterSeconds`, where the watch loop reads it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connectCluster } from "../../src/cluster/connection/connect_cluster.ts";
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";
import { ClusterAccessError } from "../../src/cluster/errors.ts";
import { loadKubeconfig } from "../../src/cluster/kubeconfig/load_kubeconfig.ts";
import { list } from "../../src/cluster/list.ts";
import { type ResourceRef, watchUrl } from "../../src/cluster/resource.ts";
import { watch } from "../../src/cluster/watch.ts";
import { DecodeError } from "../../src/errors.ts";
import type { WatchEvent } from "../../src/events.ts";
import { builtinDecoders } from "../../src/codec/kubernetes/generated/all.ts";
import type { Fault } from "../peers/fault_proxy.ts";
import { apiRequest, namespaceName, RUNTIME, sharedCluster, sharedFaultProxy } from "./_cluster.ts";

const cluster = await sharedCluster();
const proxy = sharedFaultProxy;

async function admin(): Promise<ClusterConnection> {
  return connectCluster(await loadKubeconfig({ path: cluster.kubeconfig }));
}

const send = (c: ClusterConnection, method: string, url: URL, body?: unknown) =>
  apiRequest<unknown>(c, method, url, body);

/** Reads every event, then the stream's end or its error. */
async function readAll<T>(
  events: ReadableStream<WatchEvent<T>>,
): Promise<{ events: WatchEvent<T>[]; error?: unknown }> {
  const seen: WatchEvent<T>[] = [];
  try {
    for await (const event of events) seen.push(event);
    return { events: seen };
  } catch (error) {
    return { events: seen, error };
  }
}

/** Where each event of a watch body ends: after its newline (JSON), after its length-prefixed frame (protobuf). */
function eventEnds(body: Uint8Array, format: "json" | "protobuf"): number[] {
  const ends: number[] = [];
  if (format === "json") {
    body.forEach((byte, i) => byte === 0x0a && ends.push(i + 1));
  } else {
    for (let at = 0; at + 4 <= body.length;) {
      at += 4 + new DataView(body.buffer, body.byteOffset + at, 4).getUint32(0);
      ends.push(at);
    }
  }
  return ends;
}

const HTTP2_FETCH = RUNTIME !== "bun"; // Bun's fetch has no HTTP/2

for (const format of ["json", "protobuf"] as const) {
  for (const http2 of [false, true]) {
    const protocol = http2 ? `HTTP/2${HTTP2_FETCH ? "" : " asked (Bun: HTTP/1.1)"}` : "HTTP/1.1";
    test(`watch() (${format}, ${protocol}): a body cut, reset or ended mid-event keeps the events before it, then one typed error`, async () => {
      const p = await proxy();
      const c = await admin();
      const config = await loadKubeconfig({ path: cluster.kubeconfig });
      const viaProxy = await connectCluster({ ...config, server: p.url }, { http2 });
      try {
        const ns = namespaceName(`cut-${format}${http2 ? "-h2" : ""}`);
        await send(c, "POST", new URL("/api/v1/namespaces", c.server), { metadata: { name: ns } });
        const ref: ResourceRef = { version: "v1", resource: "configmaps", namespace: ns };
        const from = (await list(c, ref)).resourceVersion;
        // Three ConfigMaps of different sizes: events of a few hundred bytes to several TLS records.
        for (const [name, size] of [["small", 40], ["medium", 1500], ["large", 20_000]] as const) {
          await send(c, "POST", new URL(watchUrl(c.server, ref).pathname, c.server), {
            metadata: { name },
            data: { text: "x".repeat(size), unicode: "ü ß 𝄞" },
          });
        }
        const watchFrom = (signal?: AbortSignal) =>
          watch(viaProxy, ref, {
            format,
            protobuf: { decoders: builtinDecoders },
            resourceVersion: from,
            timeoutSeconds: 2,
            ...(signal ? { signal } : {}),
          });

        // The whole body once, untouched: the events, and the bytes where each ends.
        const whole = await readAll(await watchFrom());
        assert.equal(whole.error, undefined);
        assert.deepEqual(whole.events.map((e) => e.type), ["ADDED", "ADDED", "ADDED"]);
        const last = (await p.stats()).requests.at(-1)!;
        assert.equal(last.http2, http2 && HTTP2_FETCH, "the protocol the proxy saw");
        const ends = eventEnds(await p.body(last.n), format);
        assert.equal(ends.length, 3, `three events in ${ends.at(-1)} bytes`);
        const url = watchUrl(viaProxy.server, ref, { resourceVersion: from, timeoutSeconds: 2 }).href;

        const cases: { fault: Fault; events: number; error: "lost" | "truncated" }[] = [
          { fault: { name: "cut", afterBytes: ends[0] + 9 }, events: 1, error: "lost" },
          {
            fault: { name: "cut", afterBytes: ends[1] + Math.floor((ends[2] - ends[1]) / 2) },
            events: 2,
            error: "lost",
          },
          { fault: { name: "cut", afterBytes: ends[1] }, events: 2, error: "lost" },
          { fault: { name: "cut", afterBytes: 3 }, events: 0, error: "lost" },
          { fault: { name: "reset", afterBytes: ends[0] + 9 }, events: 1, error: "lost" },
          { fault: { name: "truncate", afterBytes: ends[0] + 9 }, events: 1, error: "truncated" },
          ...(http2 && HTTP2_FETCH
            ? [
              { fault: { name: "rstStream", afterBytes: ends[0] + 9 }, events: 1, error: "lost" },
              { fault: { name: "goaway", afterBytes: ends[1] + 100 }, events: 2, error: "lost" },
            ] as const
            : []),
        ];
        for (const { fault, events, error } of cases) {
          const what = `${fault.name} after ${fault.afterBytes} bytes`;
          await p.enqueue(fault, ["watchFromVersion"]);
          const got = await readAll(await watchFrom());
          assert.deepEqual(got.events, whole.events.slice(0, events), `${what}: the events before the break, whole`);
          if (error === "truncated") {
            assert.ok(got.error instanceof DecodeError, `${what}: ${got.error}`);
            assert.equal(got.error.code, "TRUNCATED");
            continue;
          }
          assert.ok(got.error instanceof ClusterAccessError, `${what}: ${got.error}`);
          assert.equal(got.error.code, "CONNECTION_LOST", what);
          assert.ok(got.error.cause !== undefined, what);
          assert.ok(got.error.message.startsWith(`watch ${url}: the connection was lost after `), got.error.message);
          const bytes = Number(/after (\d+) bytes/.exec(got.error.message)?.[1]);
          // A FIN comes after every byte sent; a RST may overtake the last ones.
          if (fault.name === "reset") assert.ok(bytes <= fault.afterBytes!, `${what}: ${bytes}`);
          else assert.equal(bytes, fault.afterBytes, what);
        }

        // Ended by the caller: an abort, not a lost connection.
        const stop = new AbortController();
        const aborted = await watchFrom(stop.signal);
        const reader = aborted.getReader();
        assert.equal((await reader.read()).value?.type, "ADDED");
        stop.abort();
        reader.releaseLock();
        const rest = await readAll(aborted); // what was decoded already may still come
        assert.equal((rest.error as Error | undefined)?.name, "AbortError", `${rest.error}`);

        await send(c, "DELETE", new URL(`/api/v1/namespaces/${ns}`, c.server));
      } finally {
        await viaProxy.close();
        await c.close();
      }
    });
  }
}

test("watch(): a 429 with Retry-After and a text body (kube-apiserver's priority and fairness) is an ERROR Status that says the wait", async () => {
  const p = await proxy();
  const config = await loadKubeconfig({ path: cluster.kubeconfig });
  const viaProxy = await connectCluster({ ...config, server: p.url });
  try {
    const ref: ResourceRef = { version: "v1", resource: "configmaps", namespace: "default" };
    for (const [fault, code, retryAfterSeconds] of [["status429", 429, 7], ["status500", 500, undefined]] as const) {
      await p.enqueue({ name: fault, retryAfterSeconds: 7 }, ["watchFromVersion"]);
      const got = await readAll(await watch(viaProxy, ref, { resourceVersion: "1" }));
      assert.equal(got.error, undefined);
      assert.equal(got.events.length, 1);
      const [event] = got.events;
      assert.equal(event.type, "ERROR");
      assert.equal(event.type === "ERROR" && event.object.code, code);
      // The watch loop waits at least details.retryAfterSeconds: the header's, which the text body cannot say.
      assert.equal(event.type === "ERROR" && event.object.details?.retryAfterSeconds, retryAfterSeconds);
    }
  } finally {
    await viaProxy.close();
  }
});

test("watch(): the connection closed mid-watch (a read waiting, or none) ends the reader with one CLOSED error", async () => {
  const outcomes: string[] = [];
  for (let i = 0; i < 8; i++) {
    const format = i % 2 === 0 ? "json" : "protobuf";
    const c = await admin();
    const events = await watch(c, { version: "v1", resource: "namespaces" }, {
      format,
      protobuf: { decoders: builtinDecoders },
      resourceVersion: "0",
      timeoutSeconds: 60,
    });
    const reader = events.getReader();
    assert.equal((await reader.read()).done, false, "the initial ADDED events");
    // Closed while a read waits, or before the next read.
    const closing = i % 4 < 2 ? new Promise((r) => setTimeout(r, 50)).then(() => c.close()) : c.close();
    if (i % 4 >= 2) await closing;
    let outcome = "ended cleanly";
    try {
      while (!(await reader.read()).done);
    } catch (error) {
      outcome = error instanceof ClusterAccessError ? error.code : String(error);
    }
    await closing;
    outcomes.push(`${format}, ${i % 4 < 2 ? "read waiting" : "no read waiting"}: ${outcome}`);
  }
  assert.deepEqual(outcomes.filter((o) => !o.endsWith(": CLOSED")), [], outcomes.join("; "));
});
