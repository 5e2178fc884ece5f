/**
 * The page module that scripts/browser-check.ts runs in Chromium, bundled with watchwire by esbuild and served by the
 * watch server (tests/peers/watch_server.ts) under a Content-Security-Policy without `'unsafe-eval'`: the checks of
 * tests/peers/watch_checks.ts for every stream pair the server lists at `/names`, each result POSTed to
 * `/result?name=N`, then the code generation check and the live watch POSTed to `/done`. A fault is POSTed to `/failed`.
 *
 * @module
 */
import { codegen, decodePair, followLiveWatch } from "./watch_checks.ts";

const post = (path: string, body: unknown) => fetch(path, { method: "POST", body: JSON.stringify(body) });

try {
  const origin = location.origin;
  const { names, live } = (await (await fetch("/names")).json()) as { names: string[]; live: string };
  for (const name of names) await post(`/result?name=${encodeURIComponent(name)}`, await decodePair(origin, name));
  await post("/done", { codegen: codegen(), live: await followLiveWatch(origin, live) });
} catch (error) {
  await post("/failed", { error: error instanceof Error ? `${error.stack ?? error}` : String(error) });
}
