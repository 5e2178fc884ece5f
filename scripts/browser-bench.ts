/**
 * Runs one benchmark of bench/ in a headless browser (scripts/browser.mjs: Debian's `chromium` or `firefox-esr`), for
 * scripts/bench-all.mjs, which treats it as one more runtime: the benchmark is bundled by esbuild with `node:process`
 * and `node:fs` replaced by bench/browser/process.ts and fs.ts, served from loopback with the fixtures it reads, and
 * run in a dedicated module Worker of a cross-origin isolated page (so `performance.now()` is as precise as the browser
 * allows); what it prints comes back by POST and is printed here, its JSON result last, as the other runtimes print
 * it. Only benchmarks that use nothing else of Node can run (bench-all.mjs marks them `browser: true`).
 *
 *   node --import tsx scripts/browser-bench.ts BROWSER bench/<file>.bench.ts [--quick]
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readFile } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { postedText, startBrowser } from "./browser.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const [browserCommand, benchFile] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const quick = process.argv.includes("--quick");
if (browserCommand === undefined || benchFile === undefined) {
  console.error("usage: browser-bench.ts BROWSER bench/<file>.bench.ts [--quick]");
  process.exit(2);
}

/** `node:process` and `node:fs` in the bundle: the browser's stand-ins. */
const standIns: esbuild.Plugin = {
  name: "browser-stand-ins",
  setup(build) {
    const files: Record<string, string> = {
      "node:process": join(root, "bench", "browser", "process.ts"),
      "node:fs": join(root, "bench", "browser", "fs.ts"),
    };
    build.onResolve({ filter: /^node:/ }, (args) => {
      const path = files[args.path];
      if (path === undefined) throw new Error(`${benchFile} imports ${args.path}, which a browser does not have`);
      return { path };
    });
  },
};

async function bundle(options: esbuild.BuildOptions): Promise<string> {
  const out = await esbuild.build({
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
    plugins: [standIns],
    // package.json says the library has no side effects (true of src/), which would let esbuild drop the benchmark
    // itself: a module imported for what it does.
    ignoreAnnotations: true,
    ...options,
  });
  return out.outputFiles![0].text;
}

// The Worker: reports faults first (its own module, so it is evaluated before the benchmark), then the benchmark, then
// once all it wrote has arrived, /done.
const worker = await bundle({
  stdin: {
    contents: [
      `import "./bench/browser/worker_faults.ts";`,
      `import { flushed } from "./bench/browser/process.ts";`,
      `import ${JSON.stringify(`./${relative(root, resolve(benchFile)).split(sep).join("/")}`)};`,
      `await flushed();`,
      `await fetch("/done", { method: "POST" });`,
    ].join("\n"),
    resolveDir: root,
    sourcefile: "bench-worker.ts",
    loader: "ts",
  },
});
const page = await bundle({ entryPoints: [join(root, "bench", "browser", "page.ts")] });

// Cross-origin isolation (same-origin only, which is all there is) gives the page and its Worker the finest timer the
// browser has.
const ISOLATED = { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" };
const fixtures = join(root, "fixtures");
let stdout = "";
let settle!: { done: () => void; failed: (e: Error) => void };
const finished = new Promise<void>((done, failed) => (settle = { done, failed }));
const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  try {
    if (req.method === "POST") {
      const text = await postedText(req);
      res.writeHead(204).end();
      if (url.pathname === "/stdout") stdout += text;
      else if (url.pathname === "/stderr") process.stderr.write(text);
      else if (url.pathname === "/done") settle.done();
      else settle.failed(new Error(text));
      return;
    }
    if (url.pathname === "/" || url.pathname === "/page.js" || url.pathname === "/bench.js") {
      const html = url.pathname === "/";
      res.writeHead(200, {
        "content-type": html ? "text/html; charset=utf-8" : "text/javascript; charset=utf-8",
        ...ISOLATED,
      });
      const script = url.pathname === "/page.js" ? page : worker;
      res.end(html ? '<!doctype html><meta charset="utf-8"><script type="module" src="/page.js"></script>' : script);
      return;
    }
    // What the benchmark reads with readFileSync: files under fixtures/, nothing else.
    const file = resolve(root, `.${decodeURIComponent(url.pathname)}`);
    if (file.startsWith(fixtures + sep)) {
      const bytes = await readFile(file);
      res.writeHead(200, { "content-type": "application/octet-stream", ...ISOLATED }).end(bytes);
      return;
    }
    res.writeHead(404).end();
  } catch (error) {
    if (!res.headersSent) res.writeHead(500).end(String(error));
  }
});
await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

let status = 0;
let browser;
// Under bench-all's own limit (8 minutes, then SIGKILL, which would leave the browser running): end it here first.
const timer = setTimeout(() => settle.failed(new Error("not done after 7 minutes")), 7 * 60_000);
try {
  browser = startBrowser(browserCommand, `${origin}/${quick ? "?quick=1" : ""}`, { forBenchmarks: true });
  await Promise.race([finished, browser.exited]);
  process.stdout.write(stdout);
} catch (error) {
  console.error(`${benchFile} in ${browserCommand}: ${error instanceof Error ? error.message : error}`);
  status = 1;
} finally {
  clearTimeout(timer);
  await browser?.stop();
  server.closeAllConnections();
  server.close();
}
process.exit(status);
