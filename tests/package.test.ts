// The npm package as a user gets it. Everything else in the suite imports the sources; this test builds dist/ afresh
// (tsc -p tsconfig.build.json), packs it with `npm pack` (so package.json's `files` decide what ships), installs the
// tarball with `npm install` into an empty project, and then, from that project, in the runtime running the suite:
// imports `watchwire`, `watchwire/wire`, `watchwire/kubernetes`, `watchwire/capture`, `watchwire/cli` and
// `watchwire/msgpack-no-eval` by name (the `exports` map) and decodes real captures with them, runs the `watchwire` bin on a capture, and type-checks a TypeScript consumer against the shipped
// declarations (no @types/node, libraries checked).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { currentRuntime } from "./_util.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const runtime = currentRuntime();
const fixtures = join(root, "fixtures");

// Without the npm_* variables that `npm test` hands down: they describe this checkout (its package, its prefix), and the
// npm commands below must act on the staging copy and the app project alone.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

function run(command: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  const r = spawnSync(command, args, { cwd, encoding: "utf8", env: { ...env, NO_COLOR: "1" } });
  if (r.error) throw r.error;
  return r;
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  assert.equal(r.status, 0, `${what} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The command that runs a JavaScript file in the runtime running this suite. */
function runtimeCommand(file: string): [string, string[]] {
  if (runtime === "deno") {
    const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
    return [deno, ["run", "-A", file]];
  }
  return [process.execPath, [file]];
}

/** The events of a capture's `.events.ndjson`, as the CLI prints them (one JSON event per line). */
function expectedCliLines(name: string): string[] {
  return readFileSync(join(fixtures, name), "utf8").split("\n").filter(Boolean)
    .map((line) => JSON.stringify(JSON.parse(line).event));
}

const CONSUMER_JS = `import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as main from "watchwire";
import * as wire from "watchwire/wire";
import * as kubernetes from "watchwire/kubernetes";
import * as capture from "watchwire/capture";
import * as cli from "watchwire/cli";
import * as noEval from "watchwire/msgpack-no-eval";

const fixtures = process.argv[2];
const report = {};

// Protobuf with every built-in kind (watchwire/kubernetes's decoders): exactly the JSON watch's events.
const pb = readFileSync(fixtures + "/kubernetes/streams/v1.Pod.pb");
const json = readFileSync(fixtures + "/kubernetes/streams/v1.Pod.json", "utf8").split("\\n").filter(Boolean).map((l) => JSON.parse(l));
const pbEvents = [];
const pbResponse = () => new Response(pb, { headers: { "content-type": "application/vnd.kubernetes.protobuf;stream=watch" } });
const protobuf = { decoders: kubernetes.builtinDecoders };
for await (const event of main.decodeWatchResponse(pbResponse(), { protobuf })) pbEvents.push(event);
assert.deepStrictEqual(pbEvents, json);
report.protobufEvents = pbEvents.length;
// Without decoders: Pods as their metadata and bytes.
for await (const event of main.decodeWatchResponse(pbResponse())) {
  if (event.type === "ERROR") assert.equal(event.object.code, 410);
  else assert.ok(event.object instanceof main.KubernetesProtobufObject && !event.object.decodable);
}

// msgpack: recorded by watchwire/wire's encoder, read back by watchwire/msgpack-no-eval's decoder.
const recording = await new Response(ReadableStream.from(pbEvents).pipeThrough(new wire.MsgpackEventEncoderStream())).arrayBuffer();
const replayed = [];
for await (const event of new Blob([recording]).stream().pipeThrough(new noEval.MsgpackEventDecoderStream())) replayed.push(event);
assert.deepStrictEqual(replayed, pbEvents);
report.msgpackNoEvalEvents = replayed.length;

// A captured HTTP/1.1 response through watchwire/capture: the response decoder, then the JSON watch.
const bytes = readFileSync(fixtures + "/node-http-watch.http");
const types = [];
const responses = new Blob([bytes]).stream().pipeThrough(new capture.Http1ResponseDecoderStream());
for await (const message of responses) {
  for await (const event of main.decodeWatchResponse(message.toResponse())) types.push(event.type);
}
report.captureTypes = types;

// One DecodeError class, whichever entry point's decoder throws it; faults carry their offset.
const bad = new Blob(['{"type":"ADDED","object":{}}\\n{"type":']).stream().pipeThrough(new wire.JsonWatchEventDecoderStream());
try {
  for await (const _ of bad) { /* the first event */ }
  assert.fail("no error");
} catch (error) {
  assert.ok(error instanceof main.DecodeError, String(error));
  report.fault = [error.code, error.offset];
}
assert.equal(typeof cli.runCli, "function");
console.log(JSON.stringify(report));
`;

const CONSUMER_TS = `import { DecodeError, decodeWatchResponse, type WatchEvent } from "watchwire";
import { coreV1, createKubernetesDecoders, type Pod } from "watchwire/kubernetes";
import { MsgpackEventDecoderStream } from "watchwire/msgpack-no-eval";

const decoders = createKubernetesDecoders([coreV1]);

export async function nodes(response: Response): Promise<string[]> {
  const names: string[] = [];
  for await (const event of decodeWatchResponse<Pod>(response, { protobuf: { decoders } })) {
    const e: WatchEvent<Pod> = event;
    if (e.type === "ADDED" || e.type === "MODIFIED") names.push(e.object.spec?.nodeName ?? "");
    if (e.type === "ERROR") names.push(String(e.object.code));
    // @ts-expect-error: a Status has no spec (fails to compile if the shipped types were any)
    if (e.type === "ERROR") names.push(e.object.spec);
  }
  return names;
}

export function replay(recording: ReadableStream<Uint8Array>): ReadableStream<WatchEvent<Pod>> {
  return recording.pipeThrough(new MsgpackEventDecoderStream<Pod>({ maxEventBytes: 1 << 20 }));
}

export function offsetOf(error: unknown): number | undefined {
  return error instanceof DecodeError ? error.offset : undefined;
}
`;

// A build, a pack, an install and several processes: seconds, more than bun test's 5 s default on a busy machine.
test("package: the packed npm package installs, imports by name, decodes, runs its bin and type-checks", {
  timeout: 120_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "watchwire-package-"));
  try {
    // Build and pack: a staging copy of what package.json's `files` may name, so a stale dist/ in the checkout
    // cannot stand in for the sources.
    const stage = join(dir, "stage");
    mkdirSync(stage);
    for (const file of ["package.json", "README.md", "LICENSE"]) copyFileSync(join(root, file), join(stage, file));
    ok(
      run(join(root, "node_modules/.bin/tsc"), [
        "-p",
        join(root, "tsconfig.build.json"),
        "--outDir",
        join(stage, "dist"),
      ], root),
      "tsc (build)",
    );
    ok(run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], stage), "npm pack");
    const tarball = readdirSync(dir).find((name) => name.endsWith(".tgz"));
    assert.ok(tarball, "npm pack wrote no tarball");

    // Install it as a user would, into an empty project.
    const app = join(dir, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    ok(
      // As a user's npm does by default: install scripts not approved are skipped, not refused. Said outright because
      // Deno's child processes inherit its environment whatever `env` says, and so the npm_config_* of `npm test`
      // (this checkout's .npmrc sets strict-allow-scripts).
      run("npm", [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--strict-allow-scripts=false",
        join(dir, tarball),
      ], app),
      "npm install",
    );
    const installed = join(app, "node_modules/watchwire");
    for (const entry of ["mod", "wire", "kubernetes", "capture", "cli", "msgpack_no_eval", "bin/node"]) {
      assert.ok(
        existsSync(join(installed, `dist/${entry}.js`)) && existsSync(join(installed, `dist/${entry}.d.ts`)),
        entry,
      );
    }
    assert.ok(!existsSync(join(installed, "src")) && !existsSync(join(installed, "tests")), "sources were shipped");

    // The library, imported by its package name.
    writeFileSync(join(app, "consumer.mjs"), CONSUMER_JS);
    const [command, args] = runtimeCommand(join(app, "consumer.mjs"));
    const report = JSON.parse(ok(run(command, [...args, fixtures], app), "consumer").trim().split("\n").pop()!);
    assert.equal(
      report.protobufEvents,
      readFileSync(join(fixtures, "kubernetes/streams/v1.Pod.json"), "utf8").split("\n").filter(Boolean).length,
    );
    assert.equal(report.msgpackNoEvalEvents, report.protobufEvents);
    assert.deepEqual(
      report.captureTypes,
      expectedCliLines("node-http-watch.events.ndjson").map((line) => JSON.parse(line).type),
    );
    assert.deepEqual(report.fault, ["TRUNCATED", 29]);

    // The bin, as npm linked it, on a capture (in Node through its #! line; in Deno and Bun by that runtime).
    const bin = join(app, "node_modules/.bin/watchwire");
    const cliArgs = ["decode", "--output", "ndjson", join(fixtures, "node-http-watch.http")];
    const cli = runtime === "node" ? run(bin, cliArgs, app) : run(...withArgs(runtimeCommand(bin), cliArgs), app);
    assert.deepEqual(
      ok(cli, "watchwire decode").split("\n").filter(Boolean),
      expectedCliLines("node-http-watch.events.ndjson"),
    );

    // The shipped declarations, from a strict TypeScript consumer with no runtime types and libraries checked.
    writeFileSync(join(app, "consumer.ts"), CONSUMER_TS);
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          lib: ["ES2022", "DOM", "DOM.Iterable"],
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: [],
        },
        files: ["consumer.ts"],
      }),
    );
    ok(run(join(root, "node_modules/.bin/tsc"), ["-p", join(app, "tsconfig.json")], app), "tsc (consumer)");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function withArgs([command, args]: [string, string[]], more: string[]): [string, string[]] {
  return [command, [...args, ...more]];
}
