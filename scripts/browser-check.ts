/**
 * watchwire in a browser: headless Chromium (V8) or Firefox (SpiderMonkey) loads a page from the watch server
 * (tests/peers/watch_server.ts) whose Content-Security-Policy allows scripts from the page's origin only, not
 * `'unsafe-eval'`. The page's module (tests/peers/browser_page.ts, bundled with the library by esbuild) decodes every
 * refgen stream pair and the live watch through the browser's `fetch` and Web Streams, then does it all again in a
 * dedicated Worker it starts, and each POSTs what it got back; this script then checks both exactly as
 * tests/workerd.test.ts checks workerd's (tests/_watch_check_results.ts): eval and new Function forbidden (in the
 * Worker too, whose policy comes with its script), each protobuf stream the same events as its JSON stream (metadata
 * mode too), every live event delivered as it came.
 *
 * A script rather than a test: browsers do not come from npm (their npm packages download them from elsewhere, which
 * this project's machines cannot reach), so `npm test` does not need one; .ci/run installs Debian's `chromium` and
 * `firefox-esr` and runs this with each.
 *
 *   node --import tsx scripts/browser-check.ts [BROWSER=chromium]   (chromium, firefox-esr, or a path to either)
 */
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { checkCodegenForbidden, checkKept, checkLiveWatch, checkPairResult } from "../tests/_watch_check_results.ts";
import type { Codegen, Ended, PairResult } from "../tests/peers/watch_checks.ts";
import { LIVE, pairName, startWatchServer, stopWatchServer, streamPairs } from "../tests/peers/watch_server.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const browserCommand = process.argv[2] ?? "chromium";
// Which browser it is decides how it is started headless with a profile of its own.
const isFirefox = /firefox/i.test(browserCommand.split("/").pop()!);
// Scripts from the page's origin only: no 'unsafe-eval', no inline script.
const CSP = "default-src 'self'; script-src 'self'";
const PAGE =
  '<!doctype html><meta charset="utf-8"><title>watchwire</title><script type="module" src="/page.js"></script>';

/** What a context POSTs to `/done`. */
interface Done {
  codegen: Codegen;
  live: Ended & { events: unknown[] };
}

const version = spawnSync(browserCommand, ["--version"], { encoding: "utf8" });
if (version.status !== 0) {
  console.error(
    `${browserCommand} does not run (${version.error?.message ?? version.stderr}); on Debian: ` +
      `apt-get install ${isFirefox ? "firefox-esr" : "chromium"}`,
  );
  process.exit(1);
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

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
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
  if (url.pathname === "/names") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ names: streamPairs.map(pairName), live: LIVE }));
    return true;
  }
  if (req.method === "POST" && ["/result", "/done", "/failed"].includes(url.pathname)) {
    body(req).then((text) => {
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
function chromiumArgs(profile: string): string[] {
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    `--user-data-dir=${profile}`,
    `${origin}/`,
  ];
}

function firefoxArgs(profile: string): string[] {
  // A fresh profile whose prefs keep the first run quiet: no default-browser prompt, no welcome or privacy-notice tab
  // (which would open in place of the page), no telemetry or update checks (this machine reaches no such service).
  const prefs: Record<string, string | boolean> = {
    "browser.shell.checkDefaultBrowser": false,
    "browser.aboutwelcome.enabled": false,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": false,
    "toolkit.telemetry.reportingpolicy.firstRun": false,
    "app.update.enabled": false,
    "app.normandy.enabled": false,
  };
  writeFileSync(
    join(profile, "user.js"),
    Object.entries(prefs).map(([name, value]) => `user_pref(${JSON.stringify(name)}, ${JSON.stringify(value)});\n`)
      .join(""),
  );
  return ["--headless", "--no-remote", "--profile", profile, `${origin}/`];
}

const profile = mkdtempSync(join(tmpdir(), "watchwire-browser-"));
const browser = spawn(browserCommand, isFirefox ? firefoxArgs(profile) : chromiumArgs(profile), {
  stdio: ["ignore", "ignore", "pipe"],
  detached: true, // its own process group, ended whole below
});
let log = "";
browser.stderr.on("data", (chunk) => (log += chunk));
browser.on(
  "exit",
  (code) => settle.failed(new Error(`${browserCommand} exited (${code}) before the page was done: ${log}`)),
);
const timer = setTimeout(() => settle.failed(new Error(`the page was not done after 300 s: ${log}`)), 300_000);

let status = 0;
try {
  await finished;
  for (const context of CONTEXTS) {
    const done = dones.get(context)!;
    let kept = 0;
    let events = 0;
    for (const pair of streamPairs) {
      const result = results[context].get(pairName(pair));
      if (result === undefined) throw new Error(`${context}: no result for ${pairName(pair)}`);
      kept += await checkPairResult(pair, result);
      events += result.full.events.length;
    }
    checkKept(kept, streamPairs.length);
    checkCodegenForbidden(done.codegen, `a ${context} whose Content-Security-Policy has no 'unsafe-eval'`);
    checkLiveWatch(done.live);
    console.log(
      `${version.stdout.trim()}, ${context === "page" ? "the page" : "a dedicated Worker"}: eval and new Function ` +
        `blocked by the CSP; ${streamPairs.length} stream pairs, ${events} protobuf events equal to their JSON ` +
        `streams', ${kept} objects kept as bytes in metadata mode; the live watch: ${done.live.events.length} events, ` +
        `each as it was sent`,
    );
  }
} catch (error) {
  console.error(error);
  status = 1;
} finally {
  clearTimeout(timer);
  browser.removeAllListeners("exit");
  // Its profile is removed once it and its helper processes have exited (they write there until then).
  if (browser.exitCode === null && browser.signalCode === null) {
    const exited = once(browser, "exit");
    process.kill(-browser.pid!, "SIGTERM");
    await exited;
  }
  await stopWatchServer(server);
  rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
}
process.exit(status);
