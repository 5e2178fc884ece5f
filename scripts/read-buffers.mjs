#!/usr/bin/env node
// What a kept view of a read keeps alive, per runtime: the ArrayBuffers behind the chunks that `fetch` hands over for a
// watch-like response. Metadata mode lets an object keep views of the reads that hold its frame only when their buffers
// are at most four times its size plus 32 KiB (src/codec/kubernetes/object_reader.ts, mayKeepViews); this shows why a
// read's own length is not the measure: a read's buffer can be much larger than its bytes.
//
//   node scripts/read-buffers.mjs [--browsers]
//                                   serves two responses from Node's http on loopback and reads each with the fetch
//                                   of Node, the Node LTS (scripts/node-lts.mjs), Deno, Bun and a Worker in workerd
//                                   (Cloudflare Workers' runtime, from npm), and with --browsers also from a page in
//                                   headless Chromium and Firefox (scripts/browser.mjs: Debian's chromium and
//                                   firefox-esr); prints a line each
//
// `sparse`: six writes of 4,000 bytes (an event about the size of a Node object), 30 ms apart, as a quiet watch sends
// them. `burst`: 64 such writes at once, as a watch's initial events come. Each line gives the reads' lengths and the
// byteLength of their ArrayBuffers (the most frequent ones, with counts).
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { postedText, startBrowser } from "./browser.mjs";
import { nodeLtsPath } from "./node-lts.mjs";
import { startWorker } from "./workerd.mjs";

const EVENT_BYTES = 4000;

/** Reads `url` with this runtime's fetch: `[length, buffer byteLength]` per read. */
async function reads(url) {
  const response = await fetch(url);
  const out = [];
  for await (const chunk of response.body) out.push([chunk.byteLength, chunk.buffer.byteLength]);
  return out;
}

/** "4000 B x6" style summary of values, most frequent first. */
function summary(values) {
  const counts = new Map();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([v, n]) => `${v} B x${n}`).join(", ");
}

/** What `reads` gives in a Worker of workerd (scripts/workerd.mjs), as `{ status, out }` like a client process. */
async function workerdReads(base) {
  const module = `${reads}\nexport default { async fetch(request) {
  if (new URL(request.url).pathname !== "/reads") return new Response(null, { status: 404 });
  const result = {};
  for (const path of ["sparse", "burst"]) result[path] = await reads(${JSON.stringify(base)} + "/" + path);
  return Response.json(result);
} };\n`;
  const worker = await startWorker({ module, outbound: new URL(base).host });
  try {
    const response = await Promise.race([fetch(`${worker.url}/reads`), worker.exited]);
    return { status: response.ok ? 0 : 1, out: await response.text() };
  } finally {
    worker.stop();
  }
}

/** A page that runs `reads` on both responses of its own origin and POSTs the result to `/result`. */
const PAGE = `<!doctype html><meta charset="utf-8"><script type="module">${reads}
const result = {};
for (const path of ["sparse", "burst"]) result[path] = await reads("/" + path);
await fetch("/result", { method: "POST", body: JSON.stringify(result) });
</script>`;

/** What `reads` gives in a page of the headless browser `command`, as `{ status, out }`; `posted()`: its result. */
async function browserReads(command, base, posted) {
  let browser;
  let timer;
  try {
    browser = startBrowser(command, `${base}/page`);
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${command}: no result after 60 s`)), 60_000);
    });
    return { status: 0, out: await Promise.race([posted(), browser.exited, timeout]) };
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    return { status: 1, out: "" };
  } finally {
    clearTimeout(timer);
    await browser?.stop();
  }
}

const client = process.argv.indexOf("--client");
if (client !== -1) {
  const base = process.argv[client + 1];
  const result = {};
  for (const path of ["sparse", "burst"]) result[path] = await reads(`${base}/${path}`);
  console.log(JSON.stringify(result));
} else {
  let pageResult; // resolves with what the current browser page POSTs
  const posted = () => new Promise((resolve) => (pageResult = resolve));
  const server = createServer((request, response) => {
    if (request.url === "/page") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
      return;
    }
    if (request.url === "/result" && request.method === "POST") {
      postedText(request).then((text) => {
        response.writeHead(204).end();
        pageResult?.(text);
      });
      return;
    }
    response.writeHead(200, { "content-type": "application/octet-stream" });
    const event = new Uint8Array(EVENT_BYTES).fill(0x61);
    if (request.url === "/burst") {
      for (let i = 0; i < 64; i++) response.write(event);
      response.end();
      return;
    }
    let sent = 0;
    const timer = setInterval(() => {
      response.write(event);
      if (++sent === 6) {
        clearInterval(timer);
        response.end();
      }
    }, 30);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const script = fileURLToPath(import.meta.url);
  const root = fileURLToPath(new URL("..", import.meta.url));
  const bin = (name) => `${root}node_modules/.bin/${name}`;
  /** This script as a client process of `command`: what it prints, as `{ status, out }`. */
  const asClient = (command, args) => () =>
    // Asynchronous spawn: the server answers from this process's event loop while the child reads.
    new Promise((resolve) => {
      const child = spawn(command, [...args, script, "--client", base], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.on("close", (status) => resolve({ status, out }));
    });
  const runtimes = [
    ["node", asClient(process.execPath, [])],
    ["node-lts", asClient(nodeLtsPath(), [])],
    ["deno", asClient(bin("deno"), ["run", "--allow-net"])],
    ["bun", asClient(bin("bun"), [])],
    ["workerd", () => workerdReads(base)],
    ...(process.argv.includes("--browsers")
      ? [["chromium", "chromium"], ["firefox", "firefox-esr"]].map(([name, command]) => [
        name,
        () => browserReads(command, base, posted),
      ])
      : []),
  ];
  let failed = false;
  for (const [name, read] of runtimes) {
    const result = await read();
    if (result.status !== 0) {
      console.log(`${name}: failed (exit ${result.status})`);
      failed = true;
      continue;
    }
    const r = JSON.parse(result.out);
    for (const path of ["sparse", "burst"]) {
      const bytes = r[path].reduce((n, [length]) => n + length, 0);
      console.log(
        `${name.padEnd(8)} ${path.padEnd(6)} ${bytes} B in ${r[path].length} reads: lengths ${
          summary(r[path].map(([length]) => length))
        }; buffers ${summary(r[path].map(([, buffer]) => buffer))}`,
      );
    }
  }
  server.close();
  if (failed) process.exitCode = 1;
}
