/**
 * A paginated list of the real kube-apiserver whose pages break off or stall, through the fault proxy
 * (tests/peers/fault_proxy.ts): a page body ended properly inside the list (`truncate`: the last chunk, END_STREAM), in
 * JSON and protobuf, or cut (FIN), is one `ClusterAccessError` `CONNECTION_LOST` naming the page (its number, its URL
 * with the continue token) and the bytes read, in every runtime; a page held back longer than `idleTimeoutMs` (its
 * response, or the rest of its body) is `TIMEOUT`, its request aborted; and the same list untouched reads whole.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connectCluster } from "../../src/cluster/connection/connect_cluster.ts";
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";
import { ClusterAccessError } from "../../src/cluster/errors.ts";
import { loadKubeconfig } from "../../src/cluster/kubeconfig/load_kubeconfig.ts";
import { list } from "../../src/cluster/list.ts";
import { listUrl, type ResourceRef } from "../../src/cluster/resource.ts";
import { builtinDecoders } from "../../src/codec/kubernetes/generated/all.ts";
import type { Fault } from "../peers/fault_proxy.ts";
import { apiRequest, namespaceName, RUNTIME, sharedCluster, sharedFaultProxy } from "./_cluster.ts";

const cluster = await sharedCluster();
const proxy = sharedFaultProxy;

async function admin(): Promise<ClusterConnection> {
  return connectCluster(await loadKubeconfig({ path: cluster.kubeconfig }));
}

const HTTP2_FETCH = RUNTIME !== "bun"; // Bun's fetch has no HTTP/2

/** The error `promise` rejects with, a ClusterAccessError of `code`. */
async function accessError(promise: Promise<unknown>, code: string): Promise<ClusterAccessError> {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof ClusterAccessError, `not a ClusterAccessError: ${(e as Error)?.stack ?? e}`);
    assert.equal(e.code, code, e.message);
    return e;
  }
  assert.fail(`no error; expected ${code}`);
}

for (const format of ["json", "protobuf"] as const) {
  for (const http2 of [false, true]) {
    const protocol = http2 ? `HTTP/2${HTTP2_FETCH ? "" : " asked (Bun: HTTP/1.1)"}` : "HTTP/1.1";
    test(`list() (${format}, ${protocol}): a page truncated, cut or stalled is one typed error naming the page`, async () => {
      const p = await proxy();
      const c = await admin();
      const config = await loadKubeconfig({ path: cluster.kubeconfig });
      const viaProxy = await connectCluster({ ...config, server: p.url }, { http2 });
      try {
        const ns = namespaceName(`list-cut-${format}${http2 ? "-h2" : ""}`);
        await apiRequest(c, "POST", new URL("/api/v1/namespaces", c.server), { metadata: { name: ns } });
        const ref: ResourceRef = { version: "v1", resource: "configmaps", namespace: ns };
        for (const [name, size] of [["a", 40], ["b", 1500], ["c", 20_000], ["d", 300]] as const) {
          await apiRequest(c, "POST", listUrl(c.server, ref), {
            metadata: { name },
            data: { text: "x".repeat(size), unicode: "ü ß 𝄞" },
          });
        }
        const listPages = (options: { idleTimeoutMs?: number } = {}) =>
          list(viaProxy, ref, { format, protobuf: { decoders: builtinDecoders }, pageSize: 2, ...options });

        // The whole list once, untouched: two pages, and the bytes of each.
        const whole = await listPages();
        assert.deepEqual(whole.items.map((o) => o.metadata?.name), ["a", "b", "c", "d"]);
        assert.equal(whole.pages, 2);
        const [first, second] = (await p.stats()).requests.slice(-2);
        assert.deepEqual([first.kind, first.continued, second.kind, second.continued], ["list", false, "list", true]);
        assert.equal(first.http2, http2 && HTTP2_FETCH, "the protocol the proxy saw");
        const sizes = [first.bytes, second.bytes];
        const continueToken = new URL(second.path, p.url).searchParams.get("continue")!;
        const pageUrl = (page: 1 | 2) =>
          listUrl(viaProxy.server, ref, { limit: 2, ...(page === 2 ? { continue: continueToken } : {}) }).href;
        // A continue token holds the resourceVersion of its list, which moves between two lists (the server's own
        // writes, its lease among them): compared with the token left out.
        const tokenless = (text: string) => text.replace(/continue=[^&)\s]*/g, "continue=…");
        const where = (page: 1 | 2) => tokenless(`list configmaps in namespace ${ns}, page ${page} (${pageUrl(page)})`);
        const said = (e: Error) => tokenless(e.message);
        /** Queues `fault` for page `page` (page 1 passes untouched: a stall of 0 ms). */
        const on = async (page: 1 | 2, fault: Fault) => {
          if (page === 2) await p.enqueue({ name: "stall", ms: 0 }, ["list"]);
          await p.enqueue(fault, ["list"]);
        };

        // Ended properly inside the list: the bytes up to there, then the body's proper end.
        for (const page of [1, 2] as const) {
          for (const afterBytes of [1, 3, Math.floor(sizes[page - 1] / 2), sizes[page - 1] - 40]) {
            await on(page, { name: "truncate", afterBytes });
            const e = await accessError(listPages(), "CONNECTION_LOST");
            assert.ok(
              said(e).startsWith(
                `${where(page)}: the response body ended after ${afterBytes} bytes, inside the list (`,
              ),
              `truncate after ${afterBytes}: ${e.message}`,
            );
            assert.ok(e.cause !== undefined);
          }
        }
        // The connection closed (FIN) inside page 2: lost, or ended (HTTP/1.1 without a length may end it cleanly).
        await on(2, { name: "cut", afterBytes: Math.floor(sizes[1] / 2) });
        const cut = await accessError(listPages(), "CONNECTION_LOST");
        assert.ok(said(cut).startsWith(`${where(2)}: the `), cut.message);
        assert.match(cut.message, /(lost|ended) after \d+ bytes/);

        // Held back: the response of page 1, the rest of page 2's body.
        await on(1, { name: "stall", afterBytes: 0, ms: 3000 });
        const started = Date.now();
        const head = await accessError(listPages({ idleTimeoutMs: 500 }), "TIMEOUT");
        assert.equal(said(head), `${where(1)}: no response for 500 ms (idleTimeoutMs): the request was aborted`);
        assert.ok(Date.now() - started < 2500, `${Date.now() - started} ms`);
        await on(2, { name: "stall", afterBytes: 100, ms: 3000 });
        const body = await accessError(listPages({ idleTimeoutMs: 500 }), "TIMEOUT");
        assert.equal(
          said(body),
          `${
            where(2)
          }: no byte of the response body for 500 ms (idleTimeoutMs), after 100 bytes: the request was aborted`,
        );
        // A stall shorter than the limit is waited out.
        await on(2, { name: "stall", afterBytes: 100, ms: 300 });
        assert.equal((await listPages({ idleTimeoutMs: 2000 })).items.length, 4);

        await apiRequest(c, "DELETE", new URL(`/api/v1/namespaces/${ns}`, c.server));
      } finally {
        await viaProxy.close();
        await c.close();
      }
    });
  }
}
