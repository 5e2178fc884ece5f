/**
 * watchwire in a browser: headless Chromium (V8) or Firefox (SpiderMonkey) loads a page from the watch server
 * (tests/peers/watch_server.ts) whose Content-Security-Policy allows scripts from the page's origin only, not
 * `'unsafe-eval'`. The page's module (tests/peers/browser_page.ts, bundled with the library by esbuild) decodes every
 * refgen stream pair and the live watch through the browser's `fetch` and Web Streams, then does it all again in a
 * dedicated Worker it starts, and each POSTs what it got back; this script then checks both exactly as
 * tests/workerd.test.ts checks workerd's (tests/_watch_check_results.ts): eval and new Function forbidden (in the
 * Worker too, whose policy comes with its script), each protobuf stream the same events as its JSON stream (metadata
 * mode and batches too), every live event delivered as it came (in batches too).
 *
 * A script rather than a test: browsers do not come from npm (see scripts/browser.mjs), so `npm test` does not need one;
 * .ci/run installs Debian's `chromium` and `firefox-esr` and runs this with each.
 *
 *   node --import tsx scripts/browser-check.ts [BROWSER=chromium]   (chromium, firefox-esr, or a path to either)
 */
import { spawnSync } from "node:child_process";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import {
  checkCodegenForbidden,
  checkLiveWatch,
  checkLiveWatchBatches,
  checkMsgpackRoundTrip,
  checkPairResults,
} from "../tests/_watch_check_results.ts";
import type { Codegen, Ended, MsgpackRoundTrip, PairResult } from "../tests/peers/watch_checks.ts";
import { pairName, startWatchServer, stopWatchServer, streamPairs } from "../tests/peers/watch_server.ts";
import { postedText, type RunningBrowser, startBrowser } from "./browser.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const browserCommand = process.argv[2] ?? "chromium";
// Scripts from the page's origin only: no 'unsafe-eval', no inline script.
const CSP = "default-src 'self'; script-src 'self'";
const PAGE =
  '<!doctype html><meta charset="utf-8"><title>watchwire</title><script type="module" src="/page.js"></script>';

/** What a context POSTs to `/done`. */
interface Done {
  codegen: Codegen;
  live: Ended & { events: unknown[] };
  liveBatches: Ended & { events: unknown[]; batches: number[] };
  msgpack: MsgpackRoundTrip;
  msgpackNoEval: MsgpackRoundTrip;
}

const built = spawnSync(
  join(root, "node_modules", ".bin", "esbuild"),
  [join(root, "tests", "peers", "browser_page.ts"), "--bundle", "--format=esm", "--platform=browser"],
  { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
);
if (built.status !== 0) {
  console.error(`esbuild failed: ${built.stderr}`);
  process.exit(1);
}

/** The two contexts the module runs in, in order: the page, then a dedicated Worker it starts. */
const CONTEXTS = ["page", "worker"] as const;
type Context = typeof CONTEXTS[number];
const results: Record<Context, Map<string, PairResult>> = { page: new Map(), worker: new Map() };
const dones = new Map<Context, Done>();
let settle!: { done: () => void; failed: (e: Error) => void };
const finished = new Promise<void>((done, failed) => (settle = { done, failed }));
const server = await startWatchServer((req, res, url) => {
  if (url.pathname === "/" || url.pathname === "/page.js") {
    const html = url.pathname === "/";
    res.writeHead(200, {
      "content-type": html ? "text/html; charset=utf-8" : "text/javascript; charset=utf-8",
      "content-security-policy": CSP,
    });
    res.end(html ? PAGE : built.stdout);
    return true;
  }
  if (req.method === "POST" && ["/result", "/done", "/failed"].includes(url.pathname)) {
    postedText(req).then((text) => {
      res.writeHead(204).end();
      const value = JSON.parse(text);
      const context = url.searchParams.get("context") as Context;
      if (!CONTEXTS.includes(context)) settle.failed(new Error(`a POST from no known context: ${url}`));
      else if (url.pathname === "/result") results[context].set(url.searchParams.get("name") ?? "", value);
      else if (url.pathname === "/failed") settle.failed(new Error(`the ${context} failed: ${value.error}`));
      else if (dones.set(context, value).size === CONTEXTS.length) settle.done();
    }, settle.failed);
    return true;
  }
  return false;
});
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
let browser: RunningBrowser;
try {
  browser = startBrowser(browserCommand, `${origin}/`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await stopWatchServer(server);
  process.exit(1);
}
browser.exited.catch((error) => settle.failed(new Error(`before the page was done: ${error.message}`)));
const timer = setTimeout(
  () => settle.failed(new Error(`the page was not done after 300 s: ${browser.log()}`)),
  300_000,
);

let status = 0;
try {
  await finished;
  for (const context of CONTEXTS) {
    const done = dones.get(context)!;
    const { events, kept } = await checkPairResults((pair) => {
      const result = results[context].get(pairName(pair));
      if (result === undefined) throw new Error(`${context}: no result for ${pairName(pair)}`);
      return result;
    });
    checkCodegenForbidden(done.codegen, `a ${context} whose Content-Security-Policy has no 'unsafe-eval'`);
    checkLiveWatch(done.live);
    checkLiveWatchBatches(done.liveBatches);
    checkMsgpackRoundTrip(done.msgpackNoEval, events, { noEval: true });
    checkMsgpackRoundTrip(done.msgpack, events);
    const { msgpack, msgpackNoEval } = done;
    const reports = (r: MsgpackRoundTrip) => r.violations === null ? "" : `, ${r.violations} CSP violation report(s)`;
    console.log(
      `${browser.version}, ${context === "page" ? "the page" : "a dedicated Worker"}: eval and new Function ` +
        `blocked by the CSP; ${streamPairs.length} stream pairs, ${events} protobuf events equal to their JSON ` +
        `streams', ${kept} objects kept as bytes in metadata mode; the live watch: ${done.live.events.length} events, ` +
        `each as it was sent, one by one and in batches; msgpack: ${msgpack.events} events round trip, ${msgpack.bytes} bytes` +
        `${reports(msgpack)}; watchwire/msgpack-no-eval: the same events${reports(msgpackNoEval)}`,
    );
  }
} catch (error) {
  console.error(error);
  status = 1;
} finally {
  clearTimeout(timer);
  await browser.stop();
  await stopWatchServer(server);
}
process.exit(status);
