// watchwire as a Deno user imports it: `mod.ts` by path from a folder of their own, and by URL, with no deno.json,
// import map or --config, run by the npm-installed Deno (node_modules/.bin/deno) with only the permissions the job
// needs. Local servers stand in for the hosts: one serves the checkout's files (the URL import), one the API server's
// watch (README's Quick start), and one is an npm registry holding msgpackr alone, so that where Deno fetches msgpackr
// itself it fetches it from here, into a DENO_DIR of its own, and the test sees whether it did. Last, the README's
// Deno commands run as written (the hosts they name mapped to these servers).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join, relative, sep } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { decodeWatchResponse } from "../mod.ts";
import { builtinDecoders } from "../kubernetes.ts";
import { declaredNpmPackages } from "../src/npm_package.ts";
import "../msgpack_no_eval.ts"; // its npm package declared too

const root = fileURLToPath(new URL("..", import.meta.url));
const deno = join(root, "node_modules/.bin/deno");
const fixtures = join(root, "fixtures");
const TOKEN = "deno-import-token";
const TIMEOUT = 180_000;

// ---- servers ----

interface Served {
  server: Server;
  port: number;
  base: string;
  requests: string[];
}

async function serve(handle: (req: IncomingMessage, res: ServerResponse, base: string) => void): Promise<Served> {
  const requests: string[] = [];
  const served = { requests } as Served;
  served.server = createServer((req, res) => {
    requests.push(req.url ?? "");
    handle(req, res, served.base);
  });
  await new Promise<void>((resolve) => served.server.listen(0, "127.0.0.1", resolve));
  served.port = (served.server.address() as AddressInfo).port;
  served.base = `http://127.0.0.1:${served.port}`;
  return served;
}

function stop(served: Served): Promise<void> {
  return new Promise((resolve) => {
    served.server.close(() => resolve());
    served.server.closeAllConnections();
  });
}

const CONTENT_TYPES: Record<string, string> = {
  ".ts": "application/typescript; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
};

/** The checkout's files under /watchwire/ (as https://code.example/watchwire/ in the README), typed as Deno needs. */
function codeServer(req: IncomingMessage, res: ServerResponse): void {
  const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
  const file = join(root, path.replace(/^\/watchwire\//, "/"));
  const type = CONTENT_TYPES[extname(file)];
  if (!path.startsWith("/watchwire/") || !file.startsWith(root) || type === undefined || !isFile(file)) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "content-type": type });
  res.end(readFileSync(file));
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const podJsonLines = () =>
  readFileSync(join(fixtures, "kubernetes/streams/v1.Pod.json"), "utf8").split("\n").filter(Boolean);

/** The API server of the README's Quick start: a JSON watch of Pods, for the bearer token only. */
function apiServer(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://x");
  if (req.headers.authorization !== `Bearer ${TOKEN}`) {
    res.writeHead(401, { "content-type": "application/json" });
    res.end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}');
    return;
  }
  if (url.searchParams.get("watch") !== "1" || !url.pathname.endsWith("/pods")) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "content-type": "application/json" });
  for (const line of podJsonLines()) res.write(line + "\n");
  res.end();
}

/** `files` as a ustar archive (what an npm tarball is, before gzip). */
function tar(files: { name: string; data: Uint8Array }[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const utf8 = new TextEncoder();
  for (const { name, data } of files) {
    assert.ok(name.length <= 100, name);
    const header = new Uint8Array(512);
    const put = (at: number, text: string) => header.set(utf8.encode(text), at);
    put(0, name);
    put(100, "0000644\0");
    put(108, "0000000\0");
    put(116, "0000000\0");
    put(124, data.length.toString(8).padStart(11, "0") + "\0");
    put(136, "14500000000\0"); // a fixed mtime
    put(148, "        "); // the checksum counts its own field as spaces
    put(156, "0");
    put(257, "ustar\0");
    put(263, "00");
    put(148, header.reduce((sum, byte) => sum + byte, 0).toString(8).padStart(6, "0") + "\0 ");
    parts.push(header, data, new Uint8Array((512 - (data.length % 512)) % 512));
  }
  parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    return entry.isDirectory() ? filesUnder(dir, path) : [path];
  });
}

/**
 * An npm registry holding the checkout's msgpackr (the installed version, which package.json's range accepts), without
 * its optional native addon (msgpackr-extract): a packument and a tarball, as registry.npmjs.org serves them.
 */
function npmRegistry(): (req: IncomingMessage, res: ServerResponse, base: string) => void {
  const dir = join(root, "node_modules/msgpackr");
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  delete manifest.optionalDependencies;
  delete manifest.devDependencies;
  delete manifest.scripts;
  const utf8 = new TextEncoder();
  const tgz = gzipSync(
    tar(
      filesUnder(dir).sort().map((path) => ({
        name: `package/${path}`,
        data: path === "package.json"
          ? utf8.encode(JSON.stringify(manifest))
          : new Uint8Array(readFileSync(join(dir, path))),
      })),
    ),
  );
  const version = manifest.version as string;
  return (req, res, base) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === "/msgpackr") {
      const dist = {
        tarball: `${base}/msgpackr/-/msgpackr-${version}.tgz`,
        shasum: createHash("sha1").update(tgz).digest("hex"),
        integrity: `sha512-${createHash("sha512").update(tgz).digest("base64")}`,
      };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        name: "msgpackr",
        "dist-tags": { latest: version },
        versions: { [version]: { ...manifest, dist } },
      }));
    } else if (path === `/msgpackr/-/msgpackr-${version}.tgz`) {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(tgz);
    } else {
      res.writeHead(404).end();
    }
  };
}

// ---- running Deno ----

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

// Without the npm_* variables `npm test` hands down, and with Deno's cache and npm registry the test's own.
// FORCE_COLOR (even "0", as scripts/test-all.mjs sets it) makes Deno colour what it prints: left out, with NO_COLOR set.
const baseEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !/^(npm_|DENO_|FORCE_COLOR$)/i.test(name)),
);

/** Runs `command` (its first word the npm-installed Deno) without a terminal, so Deno never prompts: it refuses. */
function run(command: string[], cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), {
      cwd,
      env: { ...baseEnv, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT - 10_000);
    child.on("error", reject);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** A folder of a Deno user's own, outside the checkout (no deno.json, package.json or node_modules up the tree). */
function userFolder(): { dir: string; app: string; denoDir: string } {
  const dir = mkdtempSync(join(tmpdir(), "watchwire-deno-user-"));
  const app = join(dir, "app");
  mkdirSync(app);
  return { dir, app, denoDir: join(dir, "deno-dir") };
}

/** `specifier` of the checkout's `path` as a user imports it: by relative path from `app`, or from the code server. */
function importOf(how: "path" | "url", app: string, code: Served, path: string): string {
  if (how === "url") return `${code.base}/watchwire/${path}`;
  return relative(app, join(root, path)).split(sep).join("/");
}

const JSON_BODY = podJsonLines().slice(0, 2).join("\n") + "\n";
const PROTOBUF_BODY = readFileSync(join(fixtures, "kubernetes/streams/v1.Pod.pb"));

/**
 * A program that decodes a JSON and a protobuf watch body it holds (with core/v1's decoders, from watchwire/kubernetes:
 * a Pod's spec decoded), and says which npm packages were loaded.
 */
function decodingProgram(lib: (path: string) => string): string {
  return `import { decodeWatchResponse } from ${JSON.stringify(lib("mod.ts"))};
import { coreV1, createKubernetesDecoders } from ${JSON.stringify(lib("kubernetes.ts"))};
import { declaredNpmPackages } from ${JSON.stringify(lib("src/npm_package.ts"))};
const protobuf = { decoders: createKubernetesDecoders([coreV1]) };
const bodies = [
  [${JSON.stringify(JSON_BODY)}, "application/json"],
  [Uint8Array.from(atob(${JSON.stringify(PROTOBUF_BODY.toString("base64"))}), (c) => c.charCodeAt(0)),
    "application/vnd.kubernetes.protobuf;stream=watch"],
];
for (const [body, type] of bodies) {
  for await (const e of decodeWatchResponse(new Response(body, { headers: { "content-type": type } }), { protobuf })) {
    console.log(e.type, e.object.kind, e.object.metadata?.name ?? "", "spec" in e.object);
  }
}
console.log("npm packages loaded:", declaredNpmPackages().filter((p) => p.loaded !== undefined).length);
`;
}

/** What `decodingProgram` prints, from decoding the same bodies here. */
async function decodingOutput(): Promise<string> {
  const lines: string[] = [];
  const bodies: [BodyInit, string][] = [
    [JSON_BODY, "application/json"],
    [new Uint8Array(PROTOBUF_BODY), "application/vnd.kubernetes.protobuf;stream=watch"],
  ];
  for (const [body, type] of bodies) {
    const options = { protobuf: { decoders: builtinDecoders } };
    for await (const e of decodeWatchResponse(new Response(body, { headers: { "content-type": type } }), options)) {
      const o = e.object as { kind?: string; metadata?: { name?: string } };
      lines.push(`${e.type} ${o.kind} ${o.metadata?.name ?? ""} ${"spec" in o}`);
    }
  }
  return lines.join("\n") + "\nnpm packages loaded: 0\n";
}

/**
 * A program that decodes JSON (no npm package loaded after it), then records the events with the msgpack encoder and
 * reads them back with both msgpack decoders, and says which msgpackr builds it loaded.
 */
function msgpackProgram(lib: (path: string) => string): string {
  return `import { decodeWatchResponse } from ${JSON.stringify(lib("mod.ts"))};
import { MsgpackEventDecoderStream, MsgpackEventEncoderStream } from ${JSON.stringify(lib("wire.ts"))};
import { MsgpackEventDecoderStream as NoEvalDecoderStream } from ${JSON.stringify(lib("msgpack_no_eval.ts"))};
import { declaredNpmPackages } from ${JSON.stringify(lib("src/npm_package.ts"))};
import { msgpackrUnpackr } from ${JSON.stringify(lib("src/codec/msgpack/unpackr.ts"))};
const loaded = () => [...new Set(declaredNpmPackages().filter((p) => p.loaded !== undefined).map((p) => p.specifier))];
const events = [];
const json = new Response(${JSON.stringify(JSON_BODY)}, { headers: { "content-type": "application/json" } });
for await (const e of decodeWatchResponse(json)) events.push(e);
console.log("after JSON:", JSON.stringify(loaded()));
const recording = new Uint8Array(
  await new Response(ReadableStream.from(events).pipeThrough(new MsgpackEventEncoderStream())).arrayBuffer(),
);
for (const Decoder of [MsgpackEventDecoderStream, NoEvalDecoderStream]) {
  const back = [];
  for await (const e of new Blob([recording]).stream().pipeThrough(new Decoder())) back.push(e);
  console.log(Decoder === NoEvalDecoderStream ? "no-eval" : "main", JSON.stringify(back) === JSON.stringify(events));
}
console.log("after msgpack:", JSON.stringify(loaded().sort()));
console.log("build:", "PackrStream" in msgpackrUnpackr.loaded ? "node" : "portable");
`;
}

const msgpackOutput = (build: "node" | "portable") =>
  `after JSON: []\nmain true\nno-eval true\nafter msgpack: ["msgpackr","msgpackr/unpack-no-eval"]\nbuild: ${build}\n`;

// ---- the tests ----

let servers: { code: Served; api: Served; registry: Served } | undefined;
async function start(): Promise<{ code: Served; api: Served; registry: Served }> {
  servers ??= { code: await serve(codeServer), api: await serve(apiServer), registry: await serve(npmRegistry()) };
  return servers;
}
test.after(async () => {
  if (servers !== undefined) await Promise.all(Object.values(servers).map(stop));
});

/**
 * Runs `program(app)` as `app`/main.ts, in a user's folder of its own with `flags`; the registry's requests of that
 * run.
 */
async function runProgram(
  program: (app: string) => string,
  flags: string[],
): Promise<Run & { registryRequests: string[] }> {
  const { registry } = await start();
  const { dir, app, denoDir } = userFolder();
  try {
    writeFileSync(join(app, "main.ts"), program(app));
    const before = registry.requests.length;
    const r = await run([deno, "run", ...flags, "main.ts"], app, {
      DENO_DIR: denoDir,
      NPM_CONFIG_REGISTRY: `${registry.base}/`,
    });
    return { ...r, registryRequests: registry.requests.slice(before) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("Deno: mod.ts by path from another folder, no config: JSON and protobuf decode with no permission", {
  timeout: TIMEOUT,
}, async () => {
  const { code } = await start();
  const r = await runProgram((app) => decodingProgram((path) => importOf("path", app, code, path)), []);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, await decodingOutput());
  // No env prompt (a run without a terminal would have failed on it), and nothing fetched from npm.
  assert.doesNotMatch(r.stderr, /env|NotCapable|Requires/);
  assert.deepEqual(r.registryRequests, []);
});

test("Deno: mod.ts by URL: JSON and protobuf decode with --allow-import for the host alone; --allow-net is not it", {
  timeout: TIMEOUT,
}, async () => {
  const { code } = await start();
  const program = () => decodingProgram((path) => importOf("url", "", code, path));
  const host = `127.0.0.1:${code.port}`;
  const r = await runProgram(program, [`--allow-import=${host}`]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, await decodingOutput());
  assert.deepEqual(r.registryRequests, []);
  // Deno 2: --allow-net does not allow imports (hence the README's --allow-import).
  const net = await runProgram(program, [`--allow-net=${host}`]);
  assert.notEqual(net.status, 0);
  assert.match(net.stderr, /Requires import access to "127\.0\.0\.1:\d+"/);
});

for (const how of ["path", "url"] as const) {
  test(
    `Deno: msgpack by ${how}: msgpackr fetched from npm on first use only, no permission; its Node build with env, read, ffi`,
    {
      timeout: TIMEOUT,
    },
    async () => {
      const { code } = await start();
      const program = (app: string) => msgpackProgram((path) => importOf(how, app, code, path));
      const imports = how === "url" ? [`--allow-import=127.0.0.1:${code.port}`] : [];
      const r = await runProgram(program, imports);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, msgpackOutput("portable"));
      assert.ok(r.registryRequests.includes("/msgpackr"), `registry requests: ${r.registryRequests}`);
      const granted = await runProgram(program, [...imports, "--allow-env", "--allow-read", "--allow-ffi"]);
      assert.equal(granted.status, 0, granted.stderr);
      assert.equal(granted.stdout, msgpackOutput("node"));
    },
  );
}

test("Deno: each npm package the library loads lazily is a dependency of package.json, with the same range", () => {
  const dependencies = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).dependencies;
  const packages = declaredNpmPackages();
  assert.ok(packages.some((p) => p.specifier === "msgpackr") && packages.some((p) => p.specifier.includes("no-eval")));
  for (const p of packages) {
    const name = p.specifier.split("/").slice(0, p.specifier.startsWith("@") ? 2 : 1).join("/");
    assert.equal(dependencies[name], p.version, `${p.specifier}: package.json has ${dependencies[name]}`);
  }
});

// ---- the README's Deno commands, as written ----

function readmeDenoSection(): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const start = readme.indexOf("\n### Deno\n");
  assert.ok(start >= 0, "README has a Deno section");
  const end = readme.indexOf("\n### ", start + 1);
  return readme.slice(start, end);
}

/** The README's Quick start that decodes a response, the program the Deno section runs ("The same code"). */
function quickStart(): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const code = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]).find((c) =>
    /from "watchwire"/.test(c) && /decodeWatchResponse\(/.test(c)
  );
  assert.ok(code !== undefined);
  return code;
}

test("README: the Deno section's commands run as written (its hosts mapped to local servers)", {
  timeout: TIMEOUT,
}, async () => {
  const { code, api, registry } = await start();
  const section = readmeDenoSection();
  const specifiers = [...section.matchAll(/from "([^"]*mod\.ts)"/g)].map((m) => m[1]);
  const byPath = specifiers.find((s) => s.startsWith("../"));
  const byUrl = specifiers.find((s) => s.startsWith("https://code.example/"));
  assert.ok(byPath !== undefined && byUrl !== undefined, `the section's import specifiers: ${specifiers}`);
  const block = section.match(/^```sh\n([\s\S]*?)^```$/m)?.[1];
  assert.ok(block !== undefined, "the section's commands");
  const commands = block.split("\n").map((line) => line.replace(/#.*$/, "").trim()).filter((line) => line !== "");
  assert.ok(commands.length >= 3, block);

  const hosts = (word: string) =>
    word.replaceAll("kube.example:6443", `127.0.0.1:${api.port}`).replaceAll("code.example", `127.0.0.1:${code.port}`);
  // The Quick start prints each event's type and name, and stops at the ERROR event.
  const watchEvents = podJsonLines().map((line) => JSON.parse(line));
  const expectedWatch = watchEvents.slice(0, watchEvents.findIndex((e) => e.type === "ERROR"))
    .map((e) => `${e.type} ${e.object.metadata?.name}\n`).join("");
  const capture = join(fixtures, "node-http-watch.http");
  const expectedCapture = readFileSync(join(fixtures, "node-http-watch.events.ndjson"), "utf8").split("\n")
    .filter(Boolean).map((line) => JSON.stringify(JSON.parse(line).event) + "\n").join("");

  const seen = new Set<string>();
  for (const command of commands) {
    const words = command.split(/\s+/);
    assert.equal(words[0], "deno", command);
    assert.doesNotMatch(command, /["'$`\\]/, "a plain command: the test splits it on spaces");
    const { dir, app, denoDir } = userFolder();
    try {
      const env = { DENO_DIR: denoDir, NPM_CONFIG_REGISTRY: `${registry.base}/` };
      let r: Run;
      let expected: string;
      if (words.at(-1) === "main.ts") {
        // The Quick start in a folder of its own, next to a checkout named watchwire (or importing it by URL).
        const how = words.some((w) => w.startsWith("--allow-import")) ? "url" : "path";
        seen.add(how);
        symlinkSync(root, join(dir, "watchwire"), "dir");
        const specifier = how === "url" ? byUrl.replace("https://code.example/", `${code.base}/`) : byPath;
        const prelude = `const apiServer = ${JSON.stringify(api.base)};\nconst token = ${JSON.stringify(TOKEN)};\n`;
        const source = quickStart().replace(`from "watchwire"`, `from ${JSON.stringify(specifier)}`);
        const imports = source.match(/^(import[\s\S]*?;\n)+/)?.[0] ?? "";
        writeFileSync(join(app, "main.ts"), imports + prelude + source.slice(imports.length));
        r = await run([deno, ...words.slice(1).map(hosts)], app, env);
        expected = expectedWatch;
      } else if (words.includes("capture.http")) {
        // The command line, in the checkout.
        seen.add(words[1]);
        r = await run([deno, ...words.slice(1).map((w) => w === "capture.http" ? capture : w)], root, env);
        expected = expectedCapture;
      } else {
        assert.fail(`a README Deno command this test does not know how to run: ${command}`);
      }
      assert.equal(r.status, 0, `${command}\n${r.stderr}`);
      assert.equal(r.stdout, expected, command);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  assert.deepEqual([...seen].sort(), ["path", "task", "url"], "by path, by URL, and deno task");
});
