import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { runCli } from "../mod.ts";
import { bytewise, concat, streamOf, utf8 } from "./_util.ts";

const events = [
  {
    type: "ADDED",
    object: { apiVersion: "v1", kind: "Pod", metadata: { name: "web-1", namespace: "prod", resourceVersion: "101" } },
  },
  {
    type: "MODIFIED",
    object: { apiVersion: "v1", kind: "Pod", metadata: { name: "web-1", namespace: "prod", resourceVersion: "102" } },
  },
  {
    type: "BOOKMARK",
    object: {
      kind: "Pod",
      apiVersion: "v1",
      metadata: { resourceVersion: "103", annotations: { "k8s.io/initial-events-end": "true" } },
    },
  },
  { type: "DELETED", object: { apiVersion: "v1", kind: "Node", metadata: { name: "n1", resourceVersion: "104" } } },
  {
    type: "ERROR",
    object: { kind: "Status", apiVersion: "v1", code: 410, reason: "Expired", message: "too old resource version" },
  },
];
const body = events.map((e) => JSON.stringify(e)).join("\n") + "\n";

function chunkedBody(text: string, size = 50): string {
  let out = "";
  const bytes = utf8(text);
  for (let i = 0; i < bytes.length; i += size) {
    const piece = new TextDecoder().decode(bytes.subarray(i, i + size));
    out += `${utf8(piece).length.toString(16)}\r\n${piece}\r\n`;
  }
  return out + "0\r\n\r\n";
}

/** Runs the CLI in memory on named inputs (each split into single-byte chunks, to be strict). */
async function run(args: string[], files: Record<string, string | Uint8Array>, terminal = false) {
  let stdout = "";
  let stderr = "";
  const status = await runCli(args, {
    open: (path) => {
      if (!(path in files)) return Promise.reject(new Error("no such file"));
      const data = files[path];
      return Promise.resolve(streamOf(bytewise(typeof data === "string" ? utf8(data) : data)));
    },
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    stdoutIsTerminal: terminal,
    version: "9.9.9",
  });
  return { status, stdout, stderr };
}

test("cli: a bare NDJSON body prints exactly the Kubernetes watch event lines", async () => {
  const r = await run(["decode", "-"], { "-": body });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, body);
  assert.equal(r.stderr, "");
});

test("cli: a raw HTTP/1.1 connection is detected; non-2xx becomes an ERROR event; lists are noted", async () => {
  const list = JSON.stringify({
    kind: "PodList",
    apiVersion: "v1",
    metadata: { resourceVersion: "100" },
    items: [{}, {}],
  });
  const capture = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${list.length}\r\n\r\n${list}` +
    `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunkedBody(body)}` +
    `HTTP/1.1 410 Gone\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\ngone`;
  const r = await run(["decode", "--output", "ndjson", "cap.http"], { "cap.http": capture });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.slice(0, 5), events);
  assert.equal(lines.length, 6);
  assert.equal(lines[5].type, "ERROR");
  assert.equal(lines[5].object.code, 410);
  assert.equal(lines[5].object.reason, "Gone");
  assert.match(r.stderr, /response 1 \(200\) is a PodList of 2 items, not a watch/);
});

test("cli: table output", async () => {
  const r = await run(["decode", "body.json"], { "body.json": body }, true);
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout.trimEnd().split("\n");
  assert.match(rows[0], /^TYPE\s+KIND\s+NAMESPACE\/NAME\s+RESOURCEVERSION$/);
  assert.match(rows[1], /^ADDED\s+Pod\s+prod\/web-1\s+101$/);
  assert.match(rows[3], /^BOOKMARK\s+Pod\s+-\s+103 \(initial-events-end\)$/);
  assert.match(rows[4], /^DELETED\s+Node\s+n1\s+104$/);
  assert.match(rows[5], /^ERROR\s+Status\s+410 Expired too old resource version$/);
});

test("cli: a fault prints the events before it, then the byte offset, exit 1", async () => {
  const broken = body.slice(0, body.indexOf("\n", 10) + 1) + '{"type":"ADDED","object":\n' + body;
  const r = await run(["decode", "-"], { "-": broken });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, JSON.stringify(events[0]) + "\n");
  assert.match(
    r.stderr,
    new RegExp(`^watchwire: -: byte ${broken.indexOf("\n") + 1}: line is not valid JSON \\[JSON_INVALID\\]\\n$`),
  );
});

test("cli: a fault inside a chunked body names its byte in the file", async () => {
  const bad = body.replace('"MODIFIED"', '"RENAMED"');
  const head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const capture = head + chunkedBody(bad, 64);
  const r = await run(["decode", "c"], { c: capture });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, JSON.stringify(events[0]) + "\n");
  // The faulty line starts right after the first event's newline; find that byte in the capture.
  const lineInBody = bad.indexOf("\n") + 1;
  const m =
    /^watchwire: c: byte (\d+): unknown watch event type "RENAMED" \(byte (\d+) of the body of response 1\) \[EVENT_TYPE_UNKNOWN\]$/m
      .exec(r.stderr);
  assert.ok(m, r.stderr);
  assert.equal(Number(m[2]), lineInBody);
  assert.equal(capture.slice(Number(m[1]), Number(m[1]) + 8), bad.slice(lineInBody, lineInBody + 8));
});

test("cli: a transport fault names its byte in the file", async () => {
  const capture = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
    chunkedBody(body).replace(/\r\n0\r\n/, "\r\nzz\r\n");
  const r = await run(["decode", "c"], { c: capture });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, body);
  assert.match(r.stderr, new RegExp(`^watchwire: c: byte ${capture.indexOf("zz")}: .*\\[CHUNK_SIZE_INVALID\\]$`, "m"));
});

test("cli: usage errors exit 2", async () => {
  for (const args of [[], ["frobnicate"], ["decode"], ["decode", "--output", "xml", "f"], ["decode", "--bogus", "f"]]) {
    const r = await run(args, {});
    assert.equal(r.status, 2, args.join(" "));
    assert.match(r.stderr, /Usage: watchwire decode/);
  }
  const missing = await run(["decode", "nope"], {});
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /cannot read nope/);
  const help = await run(["--help"], {});
  assert.equal(help.status, 0);
  assert.match(help.stdout, /Usage/);
  assert.equal((await run(["--version"], {})).stdout, "watchwire 9.9.9\n");
});

test("cli: gzip capture", async () => {
  const { gzipSync } = await import("node:zlib");
  const gz = gzipSync(utf8(body));
  const capture = concat([
    utf8(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`),
    gz,
  ]);
  const r = await run(["decode", "g"], { g: capture });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, body);
});

// The real command, as a user runs it in this runtime: Node via tsx, Bun with cli/node.ts, Deno with cli/deno.ts.
test("cli: the runtime's own command decodes a file and reports faults with exit status 1", () => {
  const root = fileURLToPath(new URL("..", import.meta.url));
  // deno-lint-ignore no-explicit-any
  const g = globalThis as any;
  const command = g.Deno
    ? [g.Deno.execPath(), "run", "--allow-read", "cli/deno.ts"]
    : g.Bun
    ? [process.execPath, "cli/node.ts"]
    : [process.execPath, "--import", "tsx", "cli/node.ts"];
  const dir = mkdtempSync(join(tmpdir(), "watchwire-cli-"));
  const good = join(dir, "good.http");
  writeFileSync(good, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunkedBody(body));
  const ok = spawnSync(command[0], [...command.slice(1), "decode", good], { cwd: root, encoding: "utf8" });
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout, body);
  const bad = join(dir, "bad.ndjson");
  writeFileSync(bad, body + "{oops}\n");
  const fail = spawnSync(command[0], [...command.slice(1), "decode", "-o", "table", bad], {
    cwd: root,
    encoding: "utf8",
  });
  assert.equal(fail.status, 1);
  assert.equal(fail.stdout.trimEnd().split("\n").length, events.length + 1);
  assert.match(fail.stderr, new RegExp(`byte ${utf8(body).length}: line is not valid JSON`));
  const piped = spawnSync(command[0], [...command.slice(1), "decode", "-"], {
    cwd: root,
    encoding: "utf8",
    input: body,
  });
  assert.equal(piped.status, 0, piped.stderr);
  assert.equal(piped.stdout, body);
});
