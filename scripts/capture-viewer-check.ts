/**
 * The capture viewer (web/capture-viewer/) in headless Chromium and Firefox: builds it (scripts/build-capture-viewer.mjs,
 * the library as published in dist/), serves the site and some bundled captures (fixtures/captures/) from a local
 * server whose Content-Security-Policy has no `'unsafe-eval'`, and opens the page on each capture with
 * `?capture=URL&keylog=URL&report=URL`. The page decodes it in the browser and POSTs what it drew; this script checks
 * that against what `decodeCapture` gives in Node for the same files: the same events per resource (by type, and one
 * marker drawn for each), the same problems, gaps and summary, the first event's object name as the page's object
 * panel shows it, and no CSP violation.
 *
 * Then screenshots (the browsers' own `--screenshot`): the page on the TLS 1.3 HTTP/2 protobuf capture must show a
 * marker (a solid block of its type's colour, viewer.css's `--marker-*`) for every event type in it, and the page
 * without a capture none. For the first, the server adds an image to the page that it answers only once the page has
 * POSTed its report, so that the load event, after which the browsers take the screenshot, comes once the page is
 * drawn. The PNGs stay in .cache/capture-viewer/.
 *
 * A script rather than a test: browsers do not come from npm (scripts/browser.mjs).
 *
 *   node --import tsx scripts/capture-viewer-check.ts [chromium|firefox-esr|PATH...]   (default: both)
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Buffer } from "node:buffer";
import { inflateSync } from "node:zlib";
import { isDeepStrictEqual } from "node:util";
import { decodeCapture } from "watchwire/capture";
import { builtinDecoders } from "watchwire/kubernetes";
import { type CaptureViewReport, captureViewReport } from "../web/capture-viewer/capture_report.ts";
import { collectCaptureView } from "../web/capture-viewer/capture_view.ts";
import { eventFilter } from "../web/capture-viewer/event_filter.ts";
import { browserVersion, isFirefox, postedText, startBrowser, writeFirefoxPrefs } from "./browser.mjs";
import { buildCaptureViewer } from "./build-capture-viewer.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const captures = join(root, "fixtures", "captures");
const shots = join(root, ".cache", "capture-viewer");
const browsers = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["chromium", "firefox-esr"];
// Everything from the page's origin only: no 'unsafe-eval', no inline script or style.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'";
const WINDOW = { width: 1280, height: 1000 };
const RUN_TIMEOUT_MS = 120_000;

/** A page load: a capture (and key log) of fixtures/captures/, what to expect of it. */
interface Case {
  name: string;
  capture: string;
  keyLog?: string;
  mode?: "metadata";
  /** The filter typed (`?filter=`). */
  filter?: string;
  /** What the case is there for: at least one event, or at least one problem. */
  expects: "events" | "problems";
  /** Take the screenshot of this one. */
  screenshot?: boolean;
}

const CASES: Case[] = [
  {
    name: "TLS 1.3, HTTP/2, protobuf (key log file)",
    capture: "capture-tls13-h2-protobuf.pcap",
    keyLog: "capture-tls13-h2-protobuf.keys.txt",
    expects: "events",
    screenshot: true,
  },
  {
    name: "TLS 1.3, HTTP/2, JSON (keys in the pcapng)",
    capture: "capture-tls13-h2-json-dsb.pcapng",
    expects: "events",
  },
  {
    name: "TLS 1.2, HTTP/1.1, JSON (key log file)",
    capture: "capture-tls12-http1-json.pcap",
    keyLog: "capture-tls12-http1-json.keys.txt",
    expects: "events",
  },
  {
    name: 'TLS 1.3, HTTP/2, JSON, filtered to "default modified"',
    capture: "capture-tls13-h2-json-dsb.pcapng",
    filter: "default modified",
    expects: "events",
  },
  {
    name: "TLS 1.3, HTTP/2, protobuf in metadata mode",
    capture: "capture-tls13-h2-protobuf.pcap",
    keyLog: "capture-tls13-h2-protobuf.keys.txt",
    mode: "metadata",
    expects: "events",
  },
  {
    name: "TLS 1.3, HTTP/2, protobuf without its key log",
    capture: "capture-tls13-h2-protobuf.pcap",
    expects: "problems",
  },
];

/** `decodeCapture` in Node, of a case's files, gathered as the page gathers it. */
function decodeInNode(c: Case, mode: "full" | "metadata") {
  return collectCaptureView(decodeCapture(new Blob([readFileSync(join(captures, c.capture))]).stream(), {
    keyLog: c.keyLog === undefined ? undefined : readFileSync(join(captures, c.keyLog), "utf8"),
    protobuf: { decoders: builtinDecoders, mode },
  }));
}

/** What `decodeCapture` gives in Node for a case, as the page reports it. */
async function expectedReport(c: Case): Promise<CaptureViewReport> {
  const view = await decodeInNode(c, c.mode ?? "full");
  const report = captureViewReport(c.capture, view);
  report.filter = c.filter ?? "";
  report.visibleMarkers = report.listedRows = view.events.filter(eventFilter(report.filter)).length;
  // The object panel shows the first event's object as the full decoding gives it (in metadata mode too, where the
  // page decodes the rest on click), as JSON text reads back.
  const first = (await decodeInNode(c, "full")).events[0]?.item;
  if (first !== undefined) {
    const object = first.kind === "event" ? first.event.object : undefined;
    report.firstObject = JSON.parse(JSON.stringify(object) ?? "null");
    const name = (object as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
    report.firstObjectName = typeof name === "string" ? name : null;
  }
  return report;
}

/** The differences between what the page drew and what Node decoded (none: an empty list). */
function compare(got: CaptureViewReport, want: CaptureViewReport): string[] {
  const faults: string[] = [];
  const same = (what: string, a: unknown, b: unknown) => {
    if (!isDeepStrictEqual(a, b)) faults.push(`${what}: the page ${JSON.stringify(a)}, Node ${JSON.stringify(b)}`);
  };
  same("lanes", Object.keys(got.lanes ?? {}), Object.keys(want.lanes));
  for (const [lane, w] of Object.entries(want.lanes)) {
    const g = got.lanes?.[lane];
    if (g === undefined) continue;
    same(`${lane}: events`, g.events, w.events);
    same(`${lane}: events by type`, g.types, w.types);
    same(`${lane}: markers drawn`, g.markers, w.events);
  }
  same("events", got.events, want.events);
  same("problems", got.problems, want.problems);
  same("gaps", got.gaps, want.gaps);
  same("summary", got.summary, want.summary);
  same("error", got.error, want.error);
  same("first event's object name", got.firstObjectName, want.firstObjectName);
  if (!isDeepStrictEqual(got.firstObject, want.firstObject)) {
    faults.push(`the first event's object in the page's panel is not Node's: ${JSON.stringify(got.firstObject)}`);
  }
  same("CSP violations", got.cspViolations, []);
  same("filter", got.filter, want.filter);
  same("markers the filter leaves visible", got.visibleMarkers, want.visibleMarkers);
  same("rows the filter leaves listed", got.listedRows, want.listedRows);
  return faults;
}

// The PNG of a screenshot: just what a browser writes (8-bit RGB or RGBA, not interlaced).

interface Image {
  width: number;
  height: number;
  /** RGB, 3 bytes a pixel, rows top to bottom. */
  rgb: Uint8Array;
}

function readPng(png: Uint8Array): Image {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (!signature.every((b, i) => png[i] === b)) throw new Error("not a PNG");
  let width = 0, height = 0, channels = 0;
  const data: Uint8Array[] = [];
  for (let at = 8; at + 8 <= png.length;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      const [depth, colour, , , interlace] = body.subarray(8, 13);
      channels = colour === 2 ? 3 : colour === 6 ? 4 : 0;
      if (depth !== 8 || channels === 0 || interlace !== 0) {
        throw new Error(`PNG of bit depth ${depth}, colour type ${colour}, interlace ${interlace}: not read here`);
      }
    } else if (type === "IDAT") data.push(body);
    else if (type === "IEND") break;
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const up = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[x - channels] : 0;
      const b = up[x];
      const c = x >= channels ? up[x - channels] : 0;
      let predictor = 0;
      if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else if (filter !== 0) throw new Error(`PNG filter ${filter} on row ${y}`);
      out[x] = (line[x] + predictor) & 0xff;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; i < pixels.length; i += channels, j += 3) rgb.set(pixels.subarray(i, i + 3), j);
  return { width, height, rgb };
}

/** The marker colours of viewer.css (`--marker-TYPE: #rrggbb`). */
function markerColours(css: string): Map<string, [number, number, number]> {
  const colours = new Map<string, [number, number, number]>();
  for (const [, type, hex] of css.matchAll(/--marker-([A-Z]+):\s*#([0-9a-fA-F]{6})/g)) {
    const n = parseInt(hex, 16);
    colours.set(type, [n >> 16, (n >> 8) & 0xff, n & 0xff]);
  }
  return colours;
}

/** A marker's core: a block of this many pixels of one colour (a marker is 10 by 22 CSS pixels). */
const BLOCK = { width: 6, height: 16 };

/** Whether `image` holds a solid BLOCK of `colour` (each channel within a few levels). */
function hasBlock(image: Image, colour: [number, number, number]): boolean {
  const { width, height, rgb } = image;
  const near = (i: number) =>
    Math.abs(rgb[i] - colour[0]) <= 4 && Math.abs(rgb[i + 1] - colour[1]) <= 4 && Math.abs(rgb[i + 2] - colour[2]) <= 4;
  // Per column, how many pixels of the colour end at this row; then, along a row, columns where that reaches BLOCK's.
  const runs = new Uint16Array(width);
  for (let y = 0; y < height; y++) {
    let across = 0;
    for (let x = 0; x < width; x++) {
      runs[x] = near((y * width + x) * 3) ? runs[x] + 1 : 0;
      across = runs[x] >= BLOCK.height ? across + 1 : 0;
      if (across >= BLOCK.width) return true;
    }
  }
  return false;
}

/** The marker types whose colour shows as a solid block in the PNG at `path`. */
function markersIn(path: string, colours: Map<string, [number, number, number]>): string[] {
  const image = readPng(readFileSync(path));
  return [...colours].filter(([, colour]) => hasBlock(image, colour)).map(([type]) => type);
}

/**
 * A screenshot of `url` by `command`'s own `--screenshot` (taken once the page's load event has fired), in a profile
 * of its own; resolves when the browser has written it and exited.
 */
async function screenshot(command: string, url: string, png: string): Promise<void> {
  rmSync(png, { force: true });
  const profile = mkdtempSync(join(tmpdir(), "watchwire-viewer-shot-"));
  const size = `--window-size=${WINDOW.width},${WINDOW.height}`;
  let args: string[];
  if (isFirefox(command)) {
    writeFirefoxPrefs(profile);
    args = ["--headless", "--no-remote", "--profile", profile, size, "--screenshot", png, url];
  } else {
    args = [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--no-default-browser-check",
      "--hide-scrollbars",
      `--user-data-dir=${profile}`,
      size,
      `--screenshot=${png}`,
      url,
    ];
  }
  const browser = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"], detached: true });
  let log = "";
  browser.stderr.on("data", (chunk) => (log += chunk));
  const timer = setTimeout(() => process.kill(-browser.pid!, "SIGKILL"), RUN_TIMEOUT_MS);
  try {
    const [code, signal] = await once(browser, "exit");
    if (!existsSync(png)) throw new Error(`${command} wrote no screenshot (exit ${code ?? signal}): ${log}`);
  } finally {
    clearTimeout(timer);
    rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }
}

// The server: the site under /run/ID/ (one path per page load), the fixtures under /fixtures/, reports to /report/ID.

const built = await buildCaptureViewer();
for (const warning of built.warnings) console.error(`warning: ${warning}`);
const site = built.out;
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
};
const fixtureNames = new Set(CASES.flatMap((c) => [c.capture, ...(c.keyLog === undefined ? [] : [c.keyLog])]));

interface Run {
  report: Promise<unknown>;
  posted: (value: unknown) => void;
  /** Whether the page gets the image that holds its load event until the report. */
  hold: boolean;
}
const runs = new Map<string, Run>();
let nextRun = 0;
function newRun(hold: boolean): string {
  const id = String(++nextRun);
  let posted!: (value: unknown) => void;
  const report = new Promise<unknown>((resolve) => (posted = resolve));
  runs.set(id, { report, posted, hold });
  return id;
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://localhost");
  const send = (status: number, type: string, body: string | Uint8Array) =>
    res.writeHead(status, { "content-type": type, "content-security-policy": CSP, "cache-control": "no-store" })
      .end(body);
  const page = /^\/run\/(\d+)\/([\w.]*)$/.exec(url.pathname);
  if (req.method === "GET" && page !== null) {
    const [, id, file] = page;
    const name = file === "" ? "index.html" : file;
    const path = join(site, name);
    if (!runs.has(id) || !built.files.includes(name) || !existsSync(path)) return void send(404, "text/plain", "");
    let body: string | Uint8Array = readFileSync(path);
    if (name === "index.html" && runs.get(id)!.hold) {
      body = body.toString().replace("</body>", `<img src="/hold/${id}" alt="" width="1" height="1">\n</body>`);
    }
    return void send(200, TYPES[extname(name)] ?? "application/octet-stream", body);
  }
  const fixture = /^\/fixtures\/([\w.-]+)$/.exec(url.pathname);
  if (req.method === "GET" && fixture !== null && fixtureNames.has(fixture[1])) {
    return void send(200, "application/octet-stream", readFileSync(join(captures, fixture[1])));
  }
  const hold = /^\/hold\/(\d+)$/.exec(url.pathname);
  if (req.method === "GET" && hold !== null && runs.has(hold[1])) {
    // A frame or two after the report, so that what was drawn is painted; 204: the image fails, which ends its wait.
    void runs.get(hold[1])!.report.then(() => setTimeout(() => send(204, "text/plain", ""), 300));
    return;
  }
  const report = /^\/report\/(\d+)$/.exec(url.pathname);
  if (req.method === "POST" && report !== null && runs.has(report[1])) {
    postedText(req).then((text) => {
      res.writeHead(204).end();
      runs.get(report[1])!.posted(JSON.parse(text));
    }, (error) => runs.get(report[1])!.posted({ error: String(error) }));
    return;
  }
  send(404, "text/plain", "");
}

const server = createServer(handle);
server.listen(0, "127.0.0.1");
await once(server, "listening");
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const pageUrl = (id: string, c?: Case) => {
  if (c === undefined) return `${origin}/run/${id}/index.html`;
  const query = new URLSearchParams({ capture: `/fixtures/${c.capture}` });
  if (c.keyLog !== undefined) query.set("keylog", `/fixtures/${c.keyLog}`);
  if (c.mode !== undefined) query.set("mode", c.mode);
  if (c.filter !== undefined) query.set("filter", c.filter);
  query.set("report", `/report/${id}`);
  return `${origin}/run/${id}/index.html?${query}`;
};

const timeout = (what: string) =>
  new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`${what}: no report after ${RUN_TIMEOUT_MS / 1000} s`)), RUN_TIMEOUT_MS).unref()
  );

const expected = new Map<Case, CaptureViewReport>();
for (const c of CASES) {
  const want = await expectedReport(c);
  // The cases must show what they are there for, or the comparison proves little.
  if (c.expects === "events" && want.events === 0) throw new Error(`${c.name}: Node decodes no events`);
  if (c.filter !== undefined && !(want.visibleMarkers! > 0 && want.visibleMarkers! < want.events)) {
    throw new Error(`${c.name}: the filter should leave some events but not all (${want.visibleMarkers})`);
  }
  if (c.expects === "problems" && want.problems.length === 0) throw new Error(`${c.name}: Node finds no problem`);
  expected.set(c, want);
}
const colours = markerColours(readFileSync(join(site, "viewer.css"), "utf8"));
mkdirSync(shots, { recursive: true });

let failed = false;
for (const command of browsers) {
  let version: string;
  try {
    version = browserVersion(command);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    failed = true;
    continue;
  }
  const short = isFirefox(command) ? "firefox" : "chromium";
  console.log(`== ${version}`);
  for (const c of CASES) {
    const want = expected.get(c)!;
    const id = newRun(c.screenshot === true);
    const url = pageUrl(id, c);
    let got: CaptureViewReport;
    try {
      if (c.screenshot === true) {
        const png = join(shots, `${short}-capture.png`);
        const [report] = await Promise.all([
          Promise.race([runs.get(id)!.report, timeout(c.name)]),
          screenshot(command, url, png),
        ]);
        got = report as CaptureViewReport;
        const seen = markersIn(png, colours);
        const types = [...new Set(Object.values(want.lanes).flatMap((l) => Object.keys(l.types)))];
        const missing = types.filter((t) => !seen.includes(t));
        if (missing.length > 0) throw new Error(`the screenshot ${png} shows no marker of ${missing.join(", ")}`);
        console.log(`  screenshot of the page on ${c.capture}: markers of ${types.join(", ")} (${png})`);
      } else {
        const browser = startBrowser(command, url);
        try {
          got = await Promise.race([runs.get(id)!.report, timeout(c.name), browser.exited]) as CaptureViewReport;
        } finally {
          await browser.stop();
        }
      }
      const faults = compare(got, want);
      if (faults.length > 0) throw new Error(faults.join("\n  "));
      const lanes = Object.entries(want.lanes).map(([lane, l]) =>
        `${lane}: ${l.events} (${Object.entries(l.types).map(([t, n]) => `${n} ${t}`).join(", ")})`
      );
      console.log(
        `  ${c.name}: ${want.events} events as Node decodes them${lanes.length > 0 ? `, ${lanes.join("; ")}` : ""}; ` +
          `${want.problems.length} problems${want.problems.length > 0 ? ` (${want.problems.join("; ")})` : ""}, ` +
          `${want.gaps} gaps, summary equal; first object: ${want.firstObjectName ?? "none"}, equal to Node's` +
          `${c.filter === undefined ? "" : `; the filter leaves ${want.visibleMarkers} markers and rows`}`,
      );
    } catch (error) {
      console.error(`  ${c.name}: FAILED\n  ${error instanceof Error ? error.message : error}`);
      failed = true;
    }
  }
  try {
    const png = join(shots, `${short}-empty.png`);
    await screenshot(command, pageUrl(newRun(false)), png);
    const seen = markersIn(png, colours);
    if (seen.length > 0) throw new Error(`the page without a capture shows markers of ${seen.join(", ")} (${png})`);
    console.log(`  screenshot of the page without a capture: no marker (${png})`);
  } catch (error) {
    console.error(`  the page without a capture: FAILED\n  ${error instanceof Error ? error.message : error}`);
    failed = true;
  }
}
server.close();
server.closeAllConnections();
process.exit(failed ? 1 : 0);
