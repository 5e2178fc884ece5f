import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { DEFAULT_MAX_EVENT_BYTES, encodeGrpcMessages, encodeHttp2Frames, type Http2FrameInit } from "../wire.ts";
import { runCli } from "../cli.ts";
import { bytewise, concat, splitAt, streamOf, utf8 } from "./_util.ts";
import { envelope, framed, len, watchEvent } from "./_protobuf.ts";

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
/** Runs the CLI in-process; each file arrives in pieces of `piece` bytes (single bytes unless a test says otherwise). */
async function run(args: string[], files: Record<string, string | Uint8Array>, terminal = false, piece = 1) {
  let stdout = "";
  let stderr = "";
  const status = await runCli(args, {
    open: (path) => {
      if (!(path in files)) return Promise.reject(new Error("no such file"));
      const data = files[path];
      const bytes = typeof data === "string" ? utf8(data) : data;
      const pieces = piece === 1
        ? bytewise(bytes)
        : splitAt(bytes, Array.from({ length: Math.floor(bytes.length / piece) }, (_, i) => (i + 1) * piece));
      return Promise.resolve(streamOf(pieces));
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

test("cli: --request with an HTTP/1.1 capture: a HEAD response has no body; tables name each request", async () => {
  const head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 120\r\n\r\n";
  const capture = head +
    `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunkedBody(body)}`;
  const requests = "HEAD /api/v1/pods HTTP/1.1\r\nHost: k\r\n\r\n" +
    "GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: k\r\n\r\n";
  const files = { "s2c.http": capture, "c2s.http": requests };
  const r = await run(["decode", "--request", "c2s.http", "s2c.http"], files);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, body);
  assert.equal(r.stderr, "");
  const table = await run(["decode", "-o", "table", "--request", "c2s.http", "s2c.http"], files);
  assert.equal(table.status, 0, table.stderr);
  const rows = table.stdout.trimEnd().split("\n");
  assert.match(rows[0], /^TYPE/);
  assert.equal(rows[1], "HEAD /api/v1/pods (response 1)");
  assert.equal(rows[2], "GET /api/v1/pods?watch=1 (response 2)");
  assert.match(rows[3], /^ADDED\s+Pod\s+prod\/web-1\s+101$/);
  // Without the requests, the HEAD response's Content-Length takes in the next response: a fault, exit 1.
  const alone = await run(["decode", "s2c.http"], files);
  assert.equal(alone.status, 1);
  assert.match(alone.stderr, /STATUS_LINE_INVALID|JSON_INVALID/);
  // A 2xx to CONNECT opens a tunnel: its bytes are not read as HTTP/1.1 (nor as a watch).
  const tunnel = await run(["decode", "--request", "c", "s"], {
    c: "CONNECT k:443 HTTP/1.1\r\nHost: k:443\r\n\r\n\x16\x03\x01",
    s: "HTTP/1.1 200 Connection Established\r\n\r\n\x16\x03\x03",
  });
  assert.equal(tunnel.status, 0, tunnel.stderr);
  assert.equal(tunnel.stdout, "");
  assert.equal(
    tunnel.stderr,
    "watchwire: s: response 1 (200) opened a tunnel (CONNECT); the rest of the connection is not HTTP/1.1\n",
  );
  // A fault in the request bytes names them.
  const bad = await run(["decode", "--request", "c2s.http", "s2c.http"], {
    ...files,
    "c2s.http": "HEAD /a HTTP/3.0\r\n\r\n",
  });
  assert.equal(bad.status, 1);
  assert.equal(bad.stdout, "");
  assert.match(
    bad.stderr,
    /^watchwire: s2c\.http: byte 13: unsupported HTTP version 3\.0 \(in the client-to-server bytes: head of request 1\) \[REQUEST_LINE_INVALID\]\n$/,
  );
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

test("cli: a truncated capture and a fault in a later response's head name their bytes in the file, not in a body", async () => {
  const first = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
    chunkedBody(body);
  // Cut inside the body of the first response: the fault is where the file ends.
  const cut = first.slice(0, first.length - 20);
  const truncated = await run(["decode", "c"], { c: cut });
  assert.equal(truncated.status, 1);
  assert.equal(
    truncated.stderr,
    `watchwire: c: byte ${cut.length}: the connection ended (in the body of response 1) [TRUNCATED]\n`,
  );
  // A malformed field line in the head of the second response.
  const second = first + "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n";
  const r = await run(["decode", "c"], { c: second });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, body);
  assert.match(
    r.stderr,
    new RegExp(
      `^watchwire: c: byte ${first.length + 17 + 3}: .* \\(in the head of response 2\\) \\[HEADER_INVALID\\]\n$`,
    ),
  );
});

test("cli: usage errors exit 2", async () => {
  let failingErr = "";
  for (
    const args of [
      [],
      ["frobnicate"],
      ["decode"],
      ["decode", "--output", "xml", "f"],
      ["decode", "--bogus", "f"],
      ["decode", "f", "--output"],
      ["decode", "--max-event-bytes", "0", "f"],
      ["decode", "--max-event-bytes=1.5", "f"],
      ["decode", "--max-event-bytes", "lots", "f"],
    ]
  ) {
    const r = await run(args, {});
    assert.equal(r.status, 2, args.join(" "));
    // The message and a one-line hint, not the whole help.
    assert.match(
      r.stderr,
      /^watchwire: [^\n]+\nUsage: watchwire decode \[OPTION\]\.\.\. FILE\.\.\. [^\n]*--help[^\n]*\n$/,
    );
    assert.equal(r.stdout, "");
  }
  const missing = await run(["decode", "nope"], {});
  assert.equal(missing.status, 2);
  assert.equal(missing.stderr, "watchwire: cannot read nope: no such file\n");
  // A file that opens but fails at its first read (a directory, an I/O error): unreadable too, one line, exit 2.
  const failing = await runCli(["decode", "f"], {
    open: () => Promise.resolve(new ReadableStream<Uint8Array>({ pull: (c) => c.error(new Error("EIO: i/o error")) })),
    stdout: () => {},
    stderr: (t) => void (failingErr += t),
    stdoutIsTerminal: false,
    version: "9.9.9",
  });
  assert.equal(failing, 2);
  assert.equal(failingErr, "watchwire: cannot read f: EIO: i/o error\n");
  const help = await run(["--help"], {});
  assert.equal(help.status, 0);
  assert.match(help.stdout, /Usage/);
  assert.ok(help.stdout.includes(`largest event accepted (default ${DEFAULT_MAX_EVENT_BYTES})`));
  assert.equal((await run(["--version"], {})).stdout, "watchwire 9.9.9\n");
});

test("cli: --path TEXT (or its old spelling --resource TEXT) keeps a capture's events of requests whose path holds TEXT", async () => {
  // tcpdump's capture of curl watching pods (fixtures/README.md).
  const capture = new Uint8Array(
    readFileSync(new URL("../fixtures/captures/capture-http1-json.pcap", import.meta.url)),
  );
  const all = await run(["decode", "capture"], { capture }, false, 4096);
  assert.equal(all.status, 0, all.stderr);
  assert.match(all.stdout, /"path":"\/api\/v1\/namespaces\/default\/pods\?watch=1"/);
  for (const flag of ["--path", "--resource"]) {
    const kept = await run(["decode", flag, "/pods", "capture"], { capture }, false, 4096);
    assert.deepEqual([kept.status, kept.stdout], [0, all.stdout], flag);
    const none = await run(["decode", `${flag}=/configmaps`, "capture"], { capture }, false, 4096);
    assert.deepEqual([none.status, none.stdout], [0, ""], flag);
  }
});

test("cli: --max-event-bytes bounds events; 1xx responses are skipped; after a 101 the rest is noted, not decoded", async () => {
  const limited = await run(["decode", "--max-event-bytes", "100", "-"], { "-": body });
  assert.equal(limited.status, 1);
  assert.match(
    limited.stderr,
    /^watchwire: -: byte 0: line longer than maxEventBytes \(100 bytes\) \[LINE_TOO_LONG\]$/m,
  );
  const capture = "HTTP/1.1 100 Continue\r\n\r\n" +
    `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${utf8(lines[0]).length}\r\n\r\n${lines[0]}` +
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x02hi";
  const r = await run(["decode", "c"], { c: capture });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, lines[0]);
  assert.match(
    r.stderr,
    /^watchwire: c: response 3 \(101\) switched protocols; the rest of the connection is not HTTP\/1\.1$/m,
  );
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

test("cli: a fault in a gzip body's compressed bytes names its byte in the file; one in its JSON, the decoded byte", async () => {
  const { gzipSync } = await import("node:zlib");
  const gz = gzipSync(utf8(body));
  const head = `HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`;
  // Block type 3 (reserved) in the first block header, the byte after the 10-byte gzip header.
  const bad = Uint8Array.from(gz);
  bad[10] |= 0b110;
  const r = await run(["decode", "g"], { g: concat([utf8(head), bad]) });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, "");
  assert.match(
    r.stderr,
    new RegExp(
      `^watchwire: g: byte ${head.length + 10}: .*block type.* \\(in the gzip content coding of response 1\\) ` +
        "\\[DECOMPRESSION_FAILED\\]\n$",
    ),
  );
  // Valid gzip of a body with a bad second line: that fault is at a byte of the decoded body.
  const broken = lines[0] + "{oops}\n";
  const gzBroken = gzipSync(utf8(broken));
  const json = await run(["decode", "g"], {
    g: concat([
      utf8(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${gzBroken.length}\r\n\r\n`),
      gzBroken,
    ]),
  });
  assert.equal(json.status, 1);
  assert.equal(json.stdout, lines[0]);
  assert.equal(
    json.stderr,
    `watchwire: g: byte ${
      utf8(lines[0]).length
    } of the gzip-decoded body of response 1: line is not valid JSON [JSON_INVALID]\n`,
  );
});

// The real command, as a user runs it in this runtime: Node via tsx, Bun with bin/node.ts, Deno with bin/deno.ts.
test("cli: the runtime's own command decodes a file and reports faults with exit status 1", () => {
  const root = fileURLToPath(new URL("..", import.meta.url));
  // deno-lint-ignore no-explicit-any
  const g = globalThis as any;
  const command = g.Deno
    ? [g.Deno.execPath(), "run", "--allow-read", "bin/deno.ts"]
    : g.Bun
    ? [process.execPath, "bin/node.ts"]
    : [process.execPath, "--import", "tsx", "bin/node.ts"];
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

// The real command in each of the three runtimes, whichever one runs the suite: Node (via tsx), Deno (the npm-installed
// one) and Bun, as scripts/cross-runtime-cli.ts runs them.
test("cli: in Node, Deno and Bun, a directory as FILE is one line on stderr and exit 2; a usage error, a short hint", {
  timeout: 120_000,
}, () => {
  const root = fileURLToPath(new URL("..", import.meta.url));
  // deno-lint-ignore no-explicit-any
  const g = globalThis as any;
  const node = g.Deno || g.Bun ? "node" : process.execPath;
  const runtimes: [string, string, string[]][] = [
    ["node", node, ["--import", "tsx", "bin/node.ts"]],
    ["deno", join(root, "node_modules/.bin/deno"), ["run", "--allow-read", "bin/deno.ts"]],
    ["bun", join(root, "node_modules/.bin/bun"), ["bin/node.ts"]],
  ];
  const dir = mkdtempSync(join(tmpdir(), "watchwire-cli-dir-"));
  const good = join(dir, "good.ndjson");
  writeFileSync(good, body);
  const HINT = "Usage: watchwire decode [OPTION]... FILE...  (watchwire --help for the options)\n";
  for (const [name, command, args] of runtimes) {
    const cli = (...more: string[]) =>
      spawnSync(command, [...args, ...more], { cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    const lone = cli("decode", dir);
    assert.equal(lone.stderr, `watchwire: cannot read ${dir}: is a directory\n`, name);
    assert.equal(lone.status, 2, name);
    assert.equal(lone.stdout, "", name);
    // After a file that decodes: its events, then the one line.
    const after = cli("decode", good, dir);
    assert.equal(after.stdout, body, name);
    assert.equal(after.stderr, `watchwire: cannot read ${dir}: is a directory\n`, name);
    assert.equal(after.status, 2, name);
    const request = cli("decode", "--request", dir, good);
    assert.equal(request.stderr, `watchwire: cannot read ${dir}: is a directory\n`, name);
    assert.equal(request.status, 2, name);
    for (
      const [usage, message] of [
        [["decode", "--bogus", good], 'unknown option "--bogus"'],
        [[], "no command given"],
        [["decode"], "no FILE given (use - for standard input)"],
      ] as const
    ) {
      const r = cli(...usage);
      assert.equal(r.stderr, `watchwire: ${message}\n${HINT}`, `${name} ${usage.join(" ")}`);
      assert.equal(r.status, 2, `${name} ${usage.join(" ")}`);
      assert.equal(r.stdout, "", name);
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

// HTTP/2

/** `name: value` as an HPACK literal without indexing, with a new name. */
function literal(name: string, value: string): number[] {
  return [0x00, name.length, ...utf8(name), value.length, ...utf8(value)];
}
const lines = body.split("\n").filter((l) => l !== "").map((l) => l + "\n");
const otherLines = [JSON.stringify(events[3]) + "\n"];
const s2cFrames: Http2FrameInit[] = [
  { type: "SETTINGS", streamId: 0, parameters: [[3, 100]] },
  { type: "SETTINGS", streamId: 0, ack: true, parameters: [] },
  // ":status: 200" (static entry 8) and a content type.
  {
    type: "HEADERS",
    streamId: 1,
    endHeaders: true,
    fragment: Uint8Array.of(0x88, ...literal("content-type", "application/json")),
  },
  { type: "DATA", streamId: 1, data: utf8(lines[0] + lines[1].slice(0, 10)) },
  { type: "HEADERS", streamId: 3, endHeaders: true, fragment: Uint8Array.of(0x88) },
  { type: "DATA", streamId: 3, data: utf8(otherLines[0]) },
  { type: "DATA", streamId: 1, data: utf8(lines[1].slice(10) + lines.slice(2).join("")) },
  { type: "DATA", streamId: 3, endStream: true, data: new Uint8Array(0) },
  { type: "DATA", streamId: 1, endStream: true, data: new Uint8Array(0) },
];
const h2Capture = encodeHttp2Frames(s2cFrames);
const h2Request = encodeHttp2Frames([
  { type: "SETTINGS", streamId: 0, parameters: [] },
  // GET (2), http (6), ":path" (static name 4) as a literal.
  {
    type: "HEADERS",
    streamId: 1,
    endHeaders: true,
    endStream: true,
    fragment: Uint8Array.of(0x82, 0x86, 0x04, 16, ...utf8("/api/v1/pods?w=1")),
  },
  {
    type: "HEADERS",
    streamId: 3,
    endHeaders: true,
    endStream: true,
    fragment: Uint8Array.of(0x82, 0x86, 0x04, 5, ...utf8("/cm?w")),
  },
], { preface: true });

test("cli: an HTTP/2 capture is detected; streams print in the order they started", async () => {
  const r = await run(["decode", "h2.bin"], { "h2.bin": h2Capture });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.equal(r.stdout, body + otherLines[0]);
  // With the client's bytes, ndjson output is the same (the requests show in table output only).
  const paired = await run(["decode", "--request", "c2s.bin", "h2.bin"], { "h2.bin": h2Capture, "c2s.bin": h2Request });
  assert.equal(paired.status, 0, paired.stderr);
  assert.equal(paired.stdout, body + otherLines[0]);
  const table = await run(["decode", "-o", "table", "--request", "c2s.bin", "h2.bin"], {
    "h2.bin": h2Capture,
    "c2s.bin": h2Request,
  });
  assert.equal(table.status, 0, table.stderr);
  const rows = table.stdout.trimEnd().split("\n");
  assert.match(rows[0], /^TYPE/);
  assert.equal(rows[1], "GET /api/v1/pods?w=1 (stream 1)");
  assert.match(rows[2], /^ADDED\s+Pod\s+prod\/web-1\s+101$/);
  assert.equal(rows[7], "GET /cm?w (stream 3)");
  assert.match(rows[8], /^DELETED\s+Node\s+n1\s+104$/);
  // A file opening with the client preface is detected too; a missing request file is a usage error.
  const withPreface = await run(["decode", "p"], { p: concat([utf8("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), h2Capture]) });
  assert.equal(withPreface.status, 0, withPreface.stderr);
  assert.equal(withPreface.stdout, body + otherLines[0]);
  const missing = await run(["decode", "--request", "nope", "h2.bin"], { "h2.bin": h2Capture });
  assert.equal(missing.status, 2);
});

test("cli: HTTP/2 faults: in a body (offset in the file and in the stream's body), in the framing, resets", async () => {
  // The bad line is in a second, padded DATA frame: its place in the file is past two frame headers and a pad length.
  const bad = encodeHttp2Frames([
    s2cFrames[0],
    s2cFrames[2],
    { type: "DATA", streamId: 1, data: utf8(lines[0]) },
    { type: "DATA", streamId: 1, data: utf8("{oops}\n"), padLength: 5 },
  ]);
  const r = await run(["decode", "h2"], { h2: bad });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, lines[0]);
  const inFile = new TextDecoder("latin1").decode(bad).indexOf("{oops}");
  assert.equal(
    r.stderr,
    `watchwire: h2: byte ${inFile}: line is not valid JSON (byte ${
      utf8(lines[0]).length
    } of the body of stream 1) [JSON_INVALID]\n`,
  );
  const framing = concat([encodeHttp2Frames([s2cFrames[0], s2cFrames[2]]), Uint8Array.of(0, 0, 4, 3, 0, 0, 0, 0, 0)]);
  const f = await run(["decode", "h2"], { h2: framing });
  assert.equal(f.status, 1);
  assert.match(f.stderr, new RegExp(`byte ${framing.length - 4}: RST_STREAM frame on stream 0 .*\\[FRAME_INVALID\\]`));
  const reset = encodeHttp2Frames([
    s2cFrames[0],
    s2cFrames[2],
    { type: "DATA", streamId: 1, data: utf8(lines[0]) },
    { type: "RST_STREAM", streamId: 1, errorCode: 8 },
  ]);
  const x = await run(["decode", "h2"], { h2: reset });
  assert.equal(x.status, 0, x.stderr);
  assert.equal(x.stdout, lines[0]);
  assert.match(x.stderr, /stream 1 was reset \(error code 0x8\)/);
});

// etcd: the recorded fixture (fixtures/README.md, "etcd watch"). The expected lines come from etcdctl's own output,
// not the decoder.
const etcdFixture = (name: string) =>
  new Uint8Array(readFileSync(fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url))));
interface EtcdctlKv {
  key?: string;
  mod_revision?: number;
  version?: number;
  value?: string;
}
/** etcdctl -w json's events (type omitted for PUT, 1 for DELETE), in printed order. */
const etcdctlEvents = (): { type?: number; kv: EtcdctlKv; prev_kv?: EtcdctlKv }[] =>
  new TextDecoder().decode(etcdFixture("etcd-watch.expected.ndjson")).trim().split("\n")
    .flatMap((line) => JSON.parse(line).Events);
/** The same events in the CLI's shape: an explicit "type" first, then etcdctl's own fields as it printed them. */
const expectedEtcdLines = () =>
  etcdctlEvents().map(({ type, ...rest }) => {
    assert.ok(type === undefined || type === 1, `etcdctl event type ${type}`);
    return JSON.stringify({ type: type === 1 ? "DELETE" : "PUT", ...rest });
  });
const base64Length = (b64: string | undefined) => b64 === undefined ? 0 : atob(b64).length;

test("cli: an etcd Watch stream (known by its request :path) prints each event as etcdctl's JSON event shape", async () => {
  const files = { "s2c.bin": etcdFixture("etcd-watch.s2c.bin"), "c2s.bin": etcdFixture("etcd-watch.c2s.bin") };
  const expected = expectedEtcdLines();
  assert.equal(expected.length, 9);
  const r = await run(["decode", "--request", "c2s.bin", "s2c.bin"], files);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.deepEqual(r.stdout.trimEnd().split("\n"), expected);
  assert.equal(r.stdout, expected.join("\n") + "\n");
  // --payload etcd reads every gRPC stream as an etcd watch: no request bytes needed.
  const bare = await run(["decode", "--payload", "etcd", "s2c.bin"], files);
  assert.equal(bare.status, 0, bare.stderr);
  assert.equal(bare.stderr, "");
  assert.equal(bare.stdout, r.stdout);
  const eq = await run(["decode", "--payload=etcd", "--request=c2s.bin", "s2c.bin"], files);
  assert.equal(eq.stdout, r.stdout);
  // Without either, the stream is a Kubernetes watch body, which cannot be gRPC: a fault, and a hint at the options.
  const plain = await run(["decode", "--payload", "kubernetes", "s2c.bin"], files);
  assert.equal(plain.status, 1);
  assert.match(
    plain.stderr,
    /^watchwire: s2c\.bin: stream 1 is a gRPC call: --payload etcd reads gRPC streams as etcd/m,
  );
  assert.match(plain.stderr, /no watch decoder for Content-Type "application\/grpc" \[CONTENT_TYPE_UNSUPPORTED\]$/m);
});

test("cli: etcd table output: TYPE, KEY, MOD_REVISION, VERSION, VALUE_BYTES", async () => {
  const files = { "s2c.bin": etcdFixture("etcd-watch.s2c.bin"), "c2s.bin": etcdFixture("etcd-watch.c2s.bin") };
  const expected = etcdctlEvents().map((e) => [
    e.type === 1 ? "DELETE" : "PUT",
    atob(e.kv.key ?? ""),
    String(e.kv.mod_revision ?? 0),
    String(e.kv.version ?? 0),
    String(base64Length(e.kv.value)),
  ]);
  const cells = (rows: string[]) => rows.map((row) => row.split(/\s+/));
  const table = await run(["decode", "-o", "table", "--request", "c2s.bin", "s2c.bin"], files);
  assert.equal(table.status, 0, table.stderr);
  const rows = table.stdout.trimEnd().split("\n");
  assert.equal(rows[0], "POST /etcdserverpb.Watch/Watch (stream 1)");
  assert.match(rows[1], /^TYPE\s+KEY\s+MOD_REVISION\s+VERSION\s+VALUE_BYTES$/);
  assert.deepEqual(cells(rows.slice(2)), expected);
  assert.match(rows[2], /^PUT\s+\/k\/a\s+2\s+1\s+5$/);
  assert.ok(expected.some(([, , , , size]) => size === "20800"), "the large value");
  const terminal = await run(["decode", "--payload", "etcd", "s2c.bin"], files, true);
  assert.equal(terminal.status, 0, terminal.stderr);
  assert.deepEqual(terminal.stdout.trimEnd().split("\n"), rows.slice(1));
});

test("cli: etcd over gRPC: grpc-encoding gzip, a non-OK grpc-status on stderr, odd keys as base64, usage", async () => {
  const kv = (key: number[]) => [0x0a, key.length, ...key, 0x18, 7, 0x20, 1, 0x2a, 1, 0x62];
  const response = (key: number[]) => {
    const event = [0x12, kv(key).length, ...kv(key)];
    return Uint8Array.of(0x5a, event.length, ...event);
  };
  /** A server's side of one gRPC call on stream 1: headers with `grpc-encoding`, the data, then what `end` adds. */
  const grpcCall = (encoding: string, data: Uint8Array, end: Http2FrameInit[]) =>
    encodeHttp2Frames([
      { type: "SETTINGS", streamId: 0, parameters: [] },
      {
        type: "HEADERS",
        streamId: 1,
        endHeaders: true,
        fragment: Uint8Array.from([
          0x88,
          ...literal("content-type", "application/grpc"),
          ...literal("grpc-encoding", encoding),
        ]),
      },
      { type: "DATA", streamId: 1, data },
      ...end,
    ]);
  const data = await encodeGrpcMessages([response([0x61]), response([0xff, 0x20])], { compress: true });
  const capture = grpcCall("gzip", data, [{
    type: "HEADERS",
    streamId: 1,
    endHeaders: true,
    endStream: true,
    fragment: Uint8Array.from([...literal("grpc-status", "5"), ...literal("grpc-message", "key%20gone")]),
  }]);
  const r = await run(["decode", "--payload", "etcd", "h2"], { h2: capture });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(
    r.stdout,
    '{"type":"PUT","kv":{"key":"YQ==","mod_revision":7,"version":1,"value":"Yg=="}}\n' +
      '{"type":"PUT","kv":{"key":"/yA=","mod_revision":7,"version":1,"value":"Yg=="}}\n',
  );
  assert.equal(r.stderr, "watchwire: h2: stream 1: gRPC status 5 NOT_FOUND: key gone\n");
  const table = await run(["decode", "--payload", "etcd", "-o", "table", "h2"], { h2: capture });
  const rows = table.stdout.trimEnd().split("\n");
  assert.match(rows[1], /^PUT\s+a\s+7\s+1\s+1$/);
  assert.match(rows[2], /^PUT\s+base64:\/yA=\s+7\s+1\s+1$/);
  // A bare gRPC body with --payload etcd (identity encoding).
  const body = await encodeGrpcMessages([response([0x61])]);
  const bare = await run(["decode", "--payload", "etcd", "-"], { "-": body });
  assert.equal(bare.status, 0, bare.stderr);
  assert.equal(bare.stdout, '{"type":"PUT","kv":{"key":"YQ==","mod_revision":7,"version":1,"value":"Yg=="}}\n');
  // A grpc-encoding the CLI cannot undo (gRPC's snappy) is a fault of that stream.
  const snappy = grpcCall("snappy", body, [{ type: "DATA", streamId: 1, endStream: true, data: new Uint8Array(0) }]);
  const unsupported = await run(["decode", "--payload", "etcd", "h2"], { h2: snappy });
  assert.equal(unsupported.status, 1);
  assert.equal(unsupported.stdout, "");
  assert.match(unsupported.stderr, /grpc-encoding "snappy" is not supported \[ENCODING_UNSUPPORTED\]$/m);
  // An unknown --payload value is a usage error.
  for (
    const args of [["decode", "--payload", "protobuf", "f"], ["decode", "--payload=", "f"], ["decode", "--payload"]]
  ) {
    const usage = await run(args, { f: body });
    assert.equal(usage.status, 2, args.join(" "));
    assert.match(usage.stderr, /--payload (must be kubernetes or etcd|needs a value)/);
    assert.match(usage.stderr, /Usage: watchwire decode/);
  }
});

// Kubernetes protobuf watches. The frames are written by hand here (field numbers from k8s.io/api's generated.proto);
// the expected lines are the JSON the API server writes for the same objects (Go's encoding/json with k8s.io/api
// v0.37: `omitempty`, the zero creationTimestamp omitted (`omitzero`), a Status's ListMeta always printed).

// ObjectMeta: name 1, namespace 3, resourceVersion 6, annotations 12 (map entries: key 1, value 2).
const pbMeta = (name: string, namespace: string, rv: string, annotations: [string, string][] = []) => [
  ...(name ? len(1, name) : []),
  ...(namespace ? len(3, namespace) : []),
  ...len(6, rv),
  ...annotations.flatMap(([k, v]) => len(12, [...len(1, k), ...len(2, v)])),
];
// v1 ConfigMap: metadata 1, data 2 (map entries: key 1, value 2).
const pbConfigMap = (name: string, rv: string, data: [string, string][]) => [
  ...len(1, pbMeta(name, "prod", rv)),
  ...data.flatMap(([k, v]) => len(2, [...len(1, k), ...len(2, v)])),
];
const pbMessages = [
  watchEvent("ADDED", envelope("v1", "ConfigMap", pbConfigMap("cm-1", "201", [["a", "1"]]))),
  watchEvent("MODIFIED", envelope("v1", "ConfigMap", pbConfigMap("cm-1", "202", [["a", "2"], ["b", "x"]]))),
  watchEvent(
    "BOOKMARK",
    envelope("v1", "ConfigMap", len(1, pbMeta("", "", "203", [["k8s.io/initial-events-end", "true"]]))),
  ),
  // A kind no built-in decoder knows: kind, apiVersion and metadata.
  watchEvent(
    "DELETED",
    envelope("example.com/v1", "Widget", [...len(1, pbMeta("w", "prod", "204")), ...len(2, [8, 1])]),
  ),
  // metav1.Status: status 2, message 3, reason 4, code 6.
  watchEvent(
    "ERROR",
    envelope("v1", "Status", [
      ...len(2, "Failure"),
      ...len(3, "too old"),
      ...len(4, "Expired"),
      0x30,
      0x9a,
      0x03,
    ]),
  ),
];
const pbBody = framed(...pbMessages);
const pbExpected = [
  '{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-1","namespace":"prod","resourceVersion":"201"},"data":{"a":"1"}}}',
  '{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-1","namespace":"prod","resourceVersion":"202"},"data":{"a":"2","b":"x"}}}',
  '{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"203","annotations":{"k8s.io/initial-events-end":"true"}}}}',
  '{"type":"DELETED","object":{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w","namespace":"prod","resourceVersion":"204"}}}',
  '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old","reason":"Expired","code":410}}',
].join("\n") + "\n";
const PB_WATCH = "application/vnd.kubernetes.protobuf;stream=watch";

/**
 * The CLI's output is the expected JSON watch events: line by line the same values (key order inside objects is not
 * compared: Go writes struct order, the decoders need not), each line a `{"type":...,"object":{"kind":...,
 * "apiVersion":...` event.
 */
function assertEventLines(stdout: string, expected: string): void {
  assert.ok(stdout.endsWith("\n"), "one event per line");
  const got = stdout.slice(0, -1).split("\n");
  const want = expected.slice(0, -1).split("\n");
  assert.deepEqual(got.map((l) => JSON.parse(l)), want.map((l) => JSON.parse(l)));
  for (const [i, line] of got.entries()) {
    const { type, object } = JSON.parse(want[i]);
    assert.ok(
      line.startsWith(`{"type":"${type}","object":{"kind":"${object.kind}","apiVersion":"${object.apiVersion}",`),
      line,
    );
  }
}

test("cli: a bare Kubernetes protobuf watch body (detected, or by --content-type) prints the API server's JSON events", async () => {
  for (const args of [["decode", "-"], ["decode", "--content-type", PB_WATCH, "-"]]) {
    const r = await run(args, { "-": pbBody });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, "");
    assertEventLines(r.stdout, pbExpected);
  }
  // An explicit --content-type wins over detection.
  const json = await run(["decode", "--content-type", "application/json", "-"], { "-": pbBody });
  assert.equal(json.status, 1);
  assert.match(json.stderr, /\[JSON_INVALID\]/);
  // Table output.
  const table = await run(["decode", "-o", "table", "-"], { "-": pbBody });
  assert.equal(table.status, 0, table.stderr);
  const rows = table.stdout.trimEnd().split("\n");
  assert.match(rows[1], /^ADDED\s+ConfigMap\s+prod\/cm-1\s+201$/);
  assert.match(rows[3], /^BOOKMARK\s+ConfigMap\s+-\s+203 \(initial-events-end\)$/);
  assert.match(rows[4], /^DELETED\s+Widget\s+prod\/w\s+204$/);
  assert.match(rows[5], /^ERROR\s+Status\s+410 Expired too old$/);
});

test("cli: a protobuf watch in an HTTP/1.1 capture; a protobuf List is noted; a fault names its byte in the file", async () => {
  const head = `HTTP/1.1 200 OK\r\nContent-Type: ${PB_WATCH}\r\nTransfer-Encoding: chunked\r\n\r\n`;
  const chunked = (bytes: Uint8Array, size: number) => {
    const parts: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += size) {
      const piece = bytes.subarray(i, i + size);
      parts.push(utf8(`${piece.length.toString(16)}\r\n`), piece, utf8("\r\n"));
    }
    return concat([...parts, utf8("0\r\n\r\n")]);
  };
  // ConfigMapList: metadata 1 (ListMeta: resourceVersion 2), items 2.
  const list = Uint8Array.from(
    envelope("v1", "ConfigMapList", [
      ...len(1, len(2, "200")),
      ...len(2, pbConfigMap("cm-1", "200", [])),
      ...len(2, pbConfigMap("cm-2", "200", [])),
    ]),
  );
  const capture = concat([
    utf8(
      `HTTP/1.1 200 OK\r\nContent-Type: application/vnd.kubernetes.protobuf\r\nContent-Length: ${list.length}\r\n\r\n`,
    ),
    list,
    utf8(head),
    chunked(pbBody, 37),
  ]);
  const r = await run(["decode", "cap"], { cap: capture });
  assert.equal(r.status, 0, r.stderr);
  assertEventLines(r.stdout, pbExpected);
  assert.match(r.stderr, /response 1 \(200\) is a ConfigMapList of 2 items, not a watch/);
  // A body that is one object, neither a list nor a watch, is a fault, not a silent nothing.
  const single = Uint8Array.from(envelope("v1", "ConfigMap", pbConfigMap("cm-1", "200", [])));
  const one = await run(["decode", "--content-type", "application/vnd.kubernetes.protobuf", "-"], { "-": single });
  assert.equal(one.status, 1);
  assert.match(one.stderr, /the body is a single ConfigMap, not a watch \[EVENT_INVALID\]$/m);
  // A fault: an unknown event type in the second frame, found at its type field.
  const bad = framed(pbMessages[0], watchEvent("RENAMED", envelope("v1", "ConfigMap", [])));
  const faulty = concat([
    utf8(head),
    utf8(`${(40).toString(16)}\r\n`),
    bad.subarray(0, 40),
    utf8(`\r\n${(bad.length - 40).toString(16)}\r\n`),
    bad.subarray(40),
    utf8("\r\n0\r\n\r\n"),
  ]);
  const f = await run(["decode", "f"], { f: faulty });
  assert.equal(f.status, 1);
  assertEventLines(f.stdout, pbExpected.split("\n")[0] + "\n");
  const typeInBody = pbMessages[0].length + 4 + 4; // the second frame's prefix, then its type field
  const m = /^watchwire: f: byte (\d+): .* \(byte (\d+) of the body of response 1\) \[EVENT_TYPE_UNKNOWN\]$/m.exec(
    f.stderr,
  );
  assert.ok(m, f.stderr);
  assert.equal(Number(m[2]), typeInBody);
  // The byte named in the file is that type field's tag (0x0a), then the length and "RENAMED".
  assert.deepEqual(Array.from(faulty.subarray(Number(m[1]), Number(m[1]) + 9)), len(1, "RENAMED"));
});

test("cli: a protobuf watch in an HTTP/2 capture, and in a stream whose headers were not captured", async () => {
  const half = Math.floor(pbBody.length / 2);
  const frames = (headers: boolean): Http2FrameInit[] => [
    { type: "SETTINGS", streamId: 0, parameters: [] },
    ...(headers
      ? [{
        type: "HEADERS" as const,
        streamId: 1,
        endHeaders: true,
        fragment: Uint8Array.of(0x88, ...literal("content-type", PB_WATCH)),
      }]
      : []),
    { type: "DATA", streamId: 1, data: pbBody.subarray(0, half) },
    { type: "DATA", streamId: 1, endStream: true, data: pbBody.subarray(half) },
  ];
  const r = await run(["decode", "h2"], { h2: encodeHttp2Frames(frames(true)) });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, "");
  assertEventLines(r.stdout, pbExpected);
  // Headers missing (the capture started mid-connection): the body is told by its first bytes.
  const headless = await run(["decode", "h2"], { h2: encodeHttp2Frames(frames(false)) });
  assert.equal(headless.status, 0, headless.stderr);
  assertEventLines(headless.stdout, pbExpected);
  assert.match(
    headless.stderr,
    /stream 1: its headers were not captured; the body is read as application\/vnd\.kubernetes\.protobuf;stream=watch/,
  );
});

// The refgen captures (fixtures/kubernetes/captures/, see fixtures/README.md): Go's net/http serving a watch over
// HTTP/1.1 and h2c, recorded. Each response body is a stream file whose JSON twin (written by Go's encoding/json for
// the same objects) is the expected output.
interface Capture {
  name: string;
  protocol: string;
  contentType: string;
  s2c: string;
  c2s: string;
  stream: string;
  events: number;
}
const kubernetesFixture = (path: string) =>
  new Uint8Array(readFileSync(fileURLToPath(new URL(`../fixtures/kubernetes/${path}`, import.meta.url))));

// The captures hold up to 66 KB: fed in 61-byte pieces (frames, chunks and heads still cut everywhere), not byte by
// byte, which took Bun past its 5 s default on a busy machine; the timeout leaves room all the same.
test(
  "cli: the Go captures of protobuf (and JSON) watches over HTTP/1.1 and h2c print the events of their JSON streams",
  {
    timeout: 60_000,
  },
  async () => {
    const captures: Capture[] = JSON.parse(new TextDecoder().decode(kubernetesFixture("captures/index.json")));
    const protobuf = captures.filter((c) => c.contentType.startsWith("application/vnd.kubernetes.protobuf"));
    assert.ok(
      protobuf.length >= 4 && protobuf.some((c) => c.protocol === "h2c") &&
        protobuf.some((c) => c.protocol === "http/1.1"),
    );
    for (const capture of captures) {
      const files = {
        s2c: kubernetesFixture(`captures/${capture.s2c}`),
        c2s: kubernetesFixture(`captures/${capture.c2s}`),
      };
      const expected = new TextDecoder().decode(kubernetesFixture(capture.stream.replace(/\.pb$/, ".json")))
        .trimEnd().split("\n").map((line) => JSON.parse(line));
      assert.equal(expected.length, capture.events, capture.name);
      // HTTP/1.1 captures decode with or without the client's bytes (they hold one GET each).
      const runs = capture.protocol === "h2c" ? [["decode", "--request", "c2s", "s2c"]] : [
        ["decode", "s2c"],
        ["decode", "--request", "c2s", "s2c"],
      ];
      for (const args of runs) {
        const r = await run(args, files, false, 61);
        assert.equal(r.status, 0, `${capture.name}: ${r.stderr}`);
        assert.equal(r.stderr, "", capture.name);
        const lines = r.stdout.trimEnd().split("\n").map((line) => JSON.parse(line));
        assert.deepEqual(lines.map((e) => e.type), ["ADDED", "MODIFIED", "BOOKMARK", "DELETED", "ERROR"], capture.name);
        assert.deepEqual(lines, expected, capture.name);
      }
    }
  },
);
