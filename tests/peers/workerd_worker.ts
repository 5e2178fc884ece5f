/**
 * The Worker that tests/workerd.test.ts runs in workerd, Cloudflare Workers' own runtime, bundled with watchwire by
 * esbuild: tests/peers/watch_checks.ts behind a fetch handler. Requests:
 *
 * - `/codegen`: {@linkcode codegen} (a Worker forbids both `eval` and `new Function`).
 * - `/pair?origin=O&name=N`: {@linkcode decodePair} of the stream pair N from the watch server at O.
 * - `/live?origin=O&name=N`: {@linkcode followLiveWatch} of the live watch N at O.
 * - `/live-batches?origin=O&name=N`: {@linkcode followLiveWatchBatches}, the same in batches.
 * - `/msgpack?origin=O`: {@linkcode msgpackRoundTrip} of every JSON stream at O; `/msgpack-no-eval?origin=O`: the
 *   same with watchwire/msgpack-no-eval's decoder.
 *
 * @module
 */
import { codegen, decodePair, followLiveWatch, followLiveWatchBatches, msgpackRoundTrip } from "./watch_checks.ts";

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const origin = url.searchParams.get("origin") ?? "";
    const name = url.searchParams.get("name") ?? "";
    if (url.pathname === "/codegen") return Response.json(codegen());
    if (url.pathname === "/pair") return Response.json(await decodePair(origin, name));
    if (url.pathname === "/live") return Response.json(await followLiveWatch(origin, name));
    if (url.pathname === "/live-batches") return Response.json(await followLiveWatchBatches(origin, name));
    if (url.pathname === "/msgpack") return Response.json(await msgpackRoundTrip(origin, "main"));
    if (url.pathname === "/msgpack-no-eval") return Response.json(await msgpackRoundTrip(origin, "no-eval"));
    return new Response("not found", { status: 404 });
  },
};
