/**
 * watchwire in workerd, Cloudflare Workers' runtime (the `workerd` npm package ships its binary, as `deno` and `bun`
 * do theirs; scripts/workerd.mjs runs it). tests/peers/workerd_worker.ts, bundled with the library by esbuild, runs
 * there as a Worker with no Node compatibility: `fetch`, Web Streams and nothing else. It fetches watches from the
 * watch server (tests/peers/watch_server.ts: Node's http on loopback, HTTP/1.1 chunked, written in uneven pieces)
 * through workerd's own HTTP client and answers with what `decodeWatchResponse` made of them
 * (tests/peers/watch_checks.ts). The test checks (tests/_watch_check_results.ts) that:
 * - code generation from strings is forbidden there, so the decoders run where `Function` is;
 * - for every refgen stream pair (every built-in kind), the protobuf stream decodes there to exactly the events of the
 *   JSON stream, which decodes to what this runtime makes of it, one by one and in batches
 *   (`decodeWatchResponseBatches`); metadata mode gives the same apiVersion, kind and metadata, and `decode()` the
 *   whole object;
 * - a watch whose server sends each event only after the Worker has received the one before is decoded to the end,
 *   one by one and in batches (each then of one event): events are delivered as their bytes arrive;
 * - every JSON stream's events go through msgpack (`MsgpackEventEncoderStream`, `MsgpackEventDecoderStream`) there and
 *   come back the same, although msgpackr's `new Function` fails there (it falls back).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type RunningWorker, startWorker } from "../scripts/workerd.mjs";
import {
  checkCodegenForbidden,
  checkLiveWatch,
  checkLiveWatchBatches,
  checkMsgpackRoundTrip,
  checkPairResults,
} from "./_watch_check_results.ts";
import type { Codegen, Ended, MsgpackRoundTrip, PairResult } from "./peers/watch_checks.ts";
import { LIVE, pairName, startWatchServer, stopWatchServer } from "./peers/watch_server.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

test(
  "workerd (Cloudflare Workers' runtime): code generation is forbidden; every kind's protobuf watch decodes there as its JSON watch; events arrive as they are sent; msgpack round trips",
  { timeout: 300_000 },
  async () => {
    const server = await startWatchServer();
    const outbound = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    let worker: RunningWorker | undefined;
    try {
      const built = spawnSync(
        join(root, "node_modules", ".bin", "esbuild"),
        [join(root, "tests", "peers", "workerd_worker.ts"), "--bundle", "--format=esm", "--platform=neutral"],
        { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      );
      assert.equal(built.status, 0, `esbuild failed: ${built.stderr}`);
      const running = worker = await startWorker({ module: built.stdout, outbound });
      const ask = async <T>(path: string, params: Record<string, string> = {}): Promise<T> => {
        const query = new URLSearchParams({ origin: `http://${outbound}`, ...params });
        const response = await Promise.race([fetch(`${running.url}${path}?${query}`), running.exited]);
        if (response.status !== 200) {
          assert.fail(`${path}: ${response.status} ${await response.text()}\n${running.log()}`);
        }
        return (await response.json()) as T;
      };

      checkCodegenForbidden(await ask<Codegen>("/codegen"), "a Worker");
      const { events } = await checkPairResults((pair) => ask<PairResult>("/pair", { name: pairName(pair) }));
      checkLiveWatch(await ask<Ended & { events: unknown[] }>("/live", { name: LIVE }));
      checkLiveWatchBatches(
        await ask<Ended & { events: unknown[]; batches: number[] }>("/live-batches", { name: LIVE }),
      );
      checkMsgpackRoundTrip(await ask<MsgpackRoundTrip>("/msgpack"), events);
      checkMsgpackRoundTrip(await ask<MsgpackRoundTrip>("/msgpack-no-eval"), events, { noEval: true });
    } finally {
      worker?.stop();
      await stopWatchServer(server);
    }
  },
);
