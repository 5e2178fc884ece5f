/**
 * The module that scripts/browser-check.ts runs in Chromium or Firefox, bundled with watchwire by esbuild and served by
 * the watch server (tests/peers/watch_server.ts) under a Content-Security-Policy without `'unsafe-eval'`: first as the
 * page's module, then, started by it, as a dedicated module Worker (whose policy comes with its script). In each
 * context it runs the checks of tests/peers/watch_checks.ts for every stream pair the server lists at `/names`, POSTs
 * each result to `/result?context=C&name=N`, then the code generation check, the live watch and the msgpack round
 * trips (watchwire/msgpack-no-eval's decoder, then the main one) to `/done?context=C`; a
 * fault goes to `/failed?context=C`. The page starts the Worker once its own checks are done (the server has one live
 * watch at a time).
 *
 * @module
 */
import { codegen, decodePair, followLiveWatch, followLiveWatchBatches, msgpackRoundTrip } from "./watch_checks.ts";

const context = "document" in globalThis ? "page" : "worker";
const post = (path: string, body: unknown) =>
  fetch(`${path}${path.includes("?") ? "&" : "?"}context=${context}`, { method: "POST", body: JSON.stringify(body) });

try {
  const origin = location.origin;
  const { names, live } = (await (await fetch("/names")).json()) as { names: string[]; live: string };
  for (const name of names) await post(`/result?name=${encodeURIComponent(name)}`, await decodePair(origin, name));
  // Without code generation first: the main build's one try comes after, and is not counted against it.
  const msgpackNoEval = await msgpackRoundTrip(origin, "no-eval");
  const msgpack = await msgpackRoundTrip(origin, "main");
  const liveBatches = await followLiveWatchBatches(origin, live);
  const done = { codegen: codegen(), live: await followLiveWatch(origin, live), liveBatches, msgpack, msgpackNoEval };
  await post("/done", done);
  if (context === "page") new Worker("/page.js", { type: "module" });
} catch (error) {
  await post("/failed", { error: error instanceof Error ? `${error.stack ?? error}` : String(error) });
}
