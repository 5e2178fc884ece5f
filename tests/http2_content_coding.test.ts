/**
 * Compressed HTTP/2 responses, as `fetch` would read them: a real node:http2 h2c server sends a List gzip-compressed
 * (node:zlib, one member), a watch gzip-compressed as it streams (flushed after every event, as a compressing server
 * must for a watch) and a watch deflate-compressed, to a node:http2 client through a recording proxy. From the recorded
 * bytes, `Http2Message.toResponse()` gives the decoded bodies without `content-encoding` (`body` itself stays as it
 * came), and the CLI prints the watches' events and notes the List, as it does for plain responses.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as http2 from "node:http2";
import * as zlib from "node:zlib";
import { DecodeError, decodeWatchResponse } from "../mod.ts";
import { GunzipStream, InflateStream, removeContentCoding } from "../wire.ts";
import { decodeHttp2Exchanges, type Http2Exchange } from "../capture.ts";
import { runCli } from "../cli.ts";
import { concat, drain, streamOf } from "./_util.ts";
import { recordH2c } from "./peers/h2_client.ts";
import { listOf, ndjsonLines, watchEvents } from "./peers/watch_events.ts";

const LIST_PATH = "/api/v1/namespaces/default/pods";
const GZIP_WATCH = "/api/v1/namespaces/default/pods?watch=1";
const DEFLATE_WATCH = "/api/v1/namespaces/default/configmaps?watch=1";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function record() {
  const server = http2.createServer();
  server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    const path = String(headers[":path"]);
    stream.on("error", () => {});
    const deflate = path === DEFLATE_WATCH;
    stream.respond({
      ":status": 200,
      "content-type": path === LIST_PATH ? "application/json" : "application/json;stream=watch",
      "content-encoding": deflate ? "deflate" : "gzip",
    });
    const coder = deflate ? zlib.createDeflate() : zlib.createGzip();
    coder.pipe(stream);
    void (async () => {
      if (path === LIST_PATH) {
        coder.end(JSON.stringify(listOf("pods")));
        return;
      }
      for (const line of ndjsonLines(watchEvents(deflate ? "configmaps" : "pods"))) {
        coder.write(line);
        await new Promise<void>((resolve) => coder.flush(() => resolve()));
        await sleep(2);
      }
      coder.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  try {
    return await recordH2c((server.address() as { port: number }).port, [LIST_PATH, GZIP_WATCH, DEFLATE_WATCH]);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

let recording: ReturnType<typeof record> | undefined;
const recorded = () => recording ??= record();

const pathOf = (exchange: Http2Exchange) => exchange.request?.headers?.find(([name]) => name === ":path")?.[1] ?? "";

/** Each exchange of the recording, by request path, with `read` applied to it (bodies read concurrently). */
async function eachExchange<T>(read: (exchange: Http2Exchange) => Promise<T>): Promise<Map<string, T>> {
  const { s2c, c2s } = await recorded();
  const pending: Promise<[string, T]>[] = [];
  for await (const exchange of decodeHttp2Exchanges(streamOf([s2c]), streamOf([c2s]))) {
    pending.push(read(exchange).then((value) => [pathOf(exchange), value]));
  }
  return new Map(await Promise.all(pending));
}

test("http2 content coding: toResponse() removes gzip and deflate from a real server's List and watches", async () => {
  const { results } = await recorded();
  for (const r of results) assert.equal(r.error, undefined, `${r.path}: ${r.error}`);
  // `body` is the DATA as it came: gzip (1f 8b) and zlib (78 ..) streams.
  const raw = await eachExchange(async (exchange) =>
    new Uint8Array(await new Response(exchange.response.body).arrayBuffer())
  );
  assert.deepEqual([...raw.keys()], [LIST_PATH, GZIP_WATCH, DEFLATE_WATCH]);
  assert.deepEqual([...raw.get(LIST_PATH)!.subarray(0, 2)], [0x1f, 0x8b]);
  assert.deepEqual([...raw.get(GZIP_WATCH)!.subarray(0, 2)], [0x1f, 0x8b]);
  assert.equal(raw.get(DEFLATE_WATCH)![0], 0x78);
  // toResponse(): decoded, and the header that said otherwise gone.
  const decoded = await eachExchange(async (exchange) => {
    const response = exchange.response.toResponse();
    assert.equal(response.headers.get("content-encoding"), null);
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
    if (pathOf(exchange) === LIST_PATH) return await response.json();
    const events = await drain(decodeWatchResponse(response));
    assert.equal(events.error, undefined);
    return events.values;
  });
  assert.deepEqual(decoded.get(LIST_PATH), listOf("pods"));
  assert.deepEqual(decoded.get(GZIP_WATCH), watchEvents("pods"));
  assert.deepEqual(decoded.get(DEFLATE_WATCH), watchEvents("configmaps"));
});

test("http2 content coding: the CLI prints the compressed watches' events and notes the compressed List", async () => {
  const { s2c, c2s } = await recorded();
  let stdout = "";
  let stderr = "";
  const files: Record<string, Uint8Array> = { "s2c.bin": s2c, "c2s.bin": c2s };
  const status = await runCli(["decode", "--request", "c2s.bin", "s2c.bin"], {
    open: (path) => Promise.resolve(streamOf([files[path]])),
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    stdoutIsTerminal: false,
    version: "0.0.0",
  });
  assert.equal(status, 0, stderr);
  assert.equal(stdout, [...ndjsonLines(watchEvents("pods")), ...ndjsonLines(watchEvents("configmaps"))].join(""));
  assert.match(stderr, new RegExp(`is a PodList of ${listOf("pods").items.length} items, not a watch`));
});

test("http2 content coding: a fault in a compressed body is placed at its byte in the connection", async () => {
  const { s2c, c2s } = await recorded();
  // Where each watch's raw body bytes lie in the connection, and what they are.
  const watches = await eachExchange(async (exchange) => {
    const raw = new Uint8Array(await new Response(exchange.response.body).arrayBuffer());
    return { raw, streamId: exchange.streamId, inputOffsetOf: exchange.response.inputOffsetOf };
  });
  let faults = 0;
  for (const path of [GZIP_WATCH, DEFLATE_WATCH]) {
    const { raw, streamId, inputOffsetOf } = watches.get(path)!;
    const coding = path === GZIP_WATCH ? "gzip" : "deflate";
    for (const at of [2, 11, raw.length >> 2, raw.length >> 1, raw.length - 6]) {
      const bad = raw.slice();
      bad[at] ^= 0x55;
      const alone = await drain(
        streamOf([bad]).pipeThrough(coding === "gzip" ? new GunzipStream() : new InflateStream()),
      );
      const wire = s2c.slice();
      wire[inputOffsetOf(at)!] ^= 0x55;
      let body: { values: Uint8Array[]; error: unknown } | undefined;
      for await (const exchange of decodeHttp2Exchanges(streamOf([wire]), streamOf([c2s]))) {
        if (exchange.streamId === streamId) body = await drain(exchange.response.toResponse().body!);
        else await exchange.response.body.cancel();
      }
      assert.ok(body !== undefined);
      assert.deepEqual(concat(body.values), concat(alone.values), `${path} at ${at}`);
      if (alone.error === undefined) {
        assert.equal(body.error, undefined);
        continue;
      }
      assert.ok(alone.error instanceof DecodeError && body.error instanceof DecodeError, String(body.error));
      assert.deepEqual(
        [body.error.code, body.error.detail, body.error.context, body.error.offset],
        [
          alone.error.code,
          alone.error.detail,
          `${coding} content coding of stream ${streamId}`,
          inputOffsetOf(alone.error.offset),
        ],
        `${path} at ${at}`,
      );
      faults++;
    }
  }
  assert.ok(faults >= 6, `${faults} faults`);
});

test("removeContentCoding: gzip, x-gzip and deflate are removed; other or several codings are left as they are", async () => {
  const body = '{"type":"ADDED","object":{"kind":"Pod"}}\n';
  const compressed = (format: "gzip" | "deflate") =>
    new Blob([body]).stream().pipeThrough(new CompressionStream(format)) as ReadableStream<Uint8Array>;
  for (const [coding, format] of [["gzip", "gzip"], ["X-Gzip", "gzip"], ["deflate", "deflate"]] as const) {
    const out = removeContentCoding([["content-encoding", coding]], compressed(format));
    assert.equal(out.decoded, format);
    assert.equal(await new Response(out.body).text(), body);
  }
  for (
    const headers of [[["content-encoding", "br"]], [["content-encoding", "gzip"], ["content-encoding", "br"]], []]
  ) {
    const input = compressed("gzip");
    const out = removeContentCoding(headers as [string, string][], input);
    assert.equal(out.decoded, undefined);
    assert.equal(out.body, input);
  }
});
