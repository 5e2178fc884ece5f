import { test } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { DecodeError } from "../mod.ts";
import { type Http1Request, type Http1RequestDecoderOptions, Http1RequestDecoderStream } from "../capture.ts";
import { assertSplitInvariant, bytewise, concat, drain, streamOf, text, utf8 } from "./_util.ts";

interface RequestSummary {
  method: string;
  target: string;
  version: string;
  framing: string;
  headers: Array<[string, string]>;
  body: string;
  trailers: Array<[string, string]>;
  tunnel: string | undefined;
  offset: number;
  bodyOffset: number;
}

/** Decodes a connection's client bytes, reading each body (and tunnel) in turn, into comparable summaries. */
function summarize(
  source: ReadableStream<Uint8Array>,
  options?: Http1RequestDecoderOptions,
): ReadableStream<RequestSummary> {
  return source.pipeThrough(new Http1RequestDecoderStream(options)).pipeThrough(
    new TransformStream<Http1Request, RequestSummary>({
      async transform(r, controller) {
        const { values, error } = await drain(r.body);
        if (error !== undefined) throw error;
        const tunnel = await r.tunnel;
        const raw = tunnel === undefined ? undefined : await drain(tunnel);
        if (raw?.error !== undefined) throw raw.error;
        controller.enqueue({
          method: r.method,
          target: r.target,
          version: r.version,
          framing: r.framing,
          headers: r.headers,
          body: text(values),
          trailers: await r.trailers,
          tunnel: raw === undefined ? undefined : text(raw.values),
          offset: r.offset,
          bodyOffset: r.bodyOffset,
        });
      },
    }),
  );
}

const requests = utf8(
  "GET /api/v1/pods?watch=1&resourceVersion=10 HTTP/1.1\r\nHost: k\r\nAccept: application/json\r\n\r\n" +
    "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n" +
    '3;x=y\r\n{"a\r\n4\r\n":1}\r\n0\r\nX-Sum: 9\r\n\r\n' +
    "\r\n" + // a stray CRLF between requests (RFC 9112 §2.2)
    "PUT /x HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello" +
    "HEAD /api HTTP/1.1\r\nContent-Length: 0\r\n\r\n" +
    "OPTIONS * HTTP/1.1\r\n\r\n",
);

test("http1 requests: GET, chunked POST with trailers, Content-Length PUT, HEAD and OPTIONS in sequence", async () => {
  const { values, error } = await drain(summarize(streamOf([requests])));
  assert.equal(error, undefined);
  assert.deepEqual(values.map((r) => [r.method, r.target, r.version, r.framing, r.body]), [
    ["GET", "/api/v1/pods?watch=1&resourceVersion=10", "HTTP/1.1", "none", ""],
    ["POST", "/api/v1/namespaces/default/configmaps", "HTTP/1.1", "chunked", '{"a":1}'],
    ["PUT", "/x", "HTTP/1.0", "content-length", "hello"],
    ["HEAD", "/api", "HTTP/1.1", "content-length", ""],
    ["OPTIONS", "*", "HTTP/1.1", "none", ""],
  ]);
  assert.deepEqual(values[0].headers, [["host", "k"], ["accept", "application/json"]]);
  assert.deepEqual(values[1].trailers, [["x-sum", "9"]]);
  assert.deepEqual(values.map((r) => r.tunnel), [undefined, undefined, undefined, undefined, undefined]);
  // Offsets count the connection's bytes: the PUT starts after the stray CRLF.
  const wire = text(requests);
  assert.equal(values[2].offset, wire.indexOf("PUT"));
  assert.equal(values[2].bodyOffset, wire.indexOf("hello"));
});

test("http1 requests: split invariance of a whole connection, down to single bytes", async () => {
  await assertSplitInvariant(requests, (source) => summarize(source), { runs: 60 });
});

test("http1 requests: gzip content coding and a gzip transfer coding before chunked are removed", async () => {
  const gz = gzipSync(utf8('{"kind":"ConfigMap"}'));
  const hex = gz.length.toString(16);
  const wire = concat([
    utf8(`POST /a HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`),
    gz,
    utf8(`POST /b HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${hex}\r\n`),
    gz,
    utf8("\r\n0\r\n\r\n"),
  ]);
  for (const chunks of [[wire], bytewise(wire)]) {
    const { values, error } = await drain(streamOf(chunks).pipeThrough(new Http1RequestDecoderStream()));
    assert.equal(error, undefined);
    assert.equal(values[0].decoded, "gzip");
    assert.equal(await new Response(values[0].body).text(), '{"kind":"ConfigMap"}');
    assert.deepEqual(values[1].transferCodings, ["gzip"]);
    assert.equal(await new Response(values[1].body).text(), '{"kind":"ConfigMap"}');
  }
});

test("http1 requests: after a CONNECT the rest is the tunnel's (by default), after a refused Upgrade more requests", async () => {
  const upgradeRefused =
    "GET /ws HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\nGET /next HTTP/1.1\r\n\r\n";
  const connect = "CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443\r\n\r\n\x16\x03\x01GET / HTTP/1.1\r\n\r\n";
  const wire = utf8(upgradeRefused + connect);
  for (const chunks of [[wire], bytewise(wire)]) {
    const { values, error } = await drain(summarize(streamOf(chunks)));
    assert.equal(error, undefined);
    assert.deepEqual(values.map((r) => [r.method, r.target, r.tunnel]), [
      ["GET", "/ws", undefined],
      ["GET", "/next", undefined],
      ["CONNECT", "api.example:443", "\x16\x03\x01GET / HTTP/1.1\r\n\r\n"],
    ]);
  }
});

test("http1 requests: switchedProtocols decides, after the body, and is asked only about CONNECT and Upgrade", async () => {
  const wire = utf8(
    "GET /plain HTTP/1.1\r\n\r\n" +
      "POST /h2c HTTP/1.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nContent-Length: 2\r\n\r\n{}" +
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
  );
  const asked: string[] = [];
  const options: Http1RequestDecoderOptions = {
    switchedProtocols: async (request) => {
      asked.push(request.target);
      await new Promise((resolve) => setTimeout(resolve, 1));
      return true;
    },
  };
  for (const chunks of [[wire], bytewise(wire)]) {
    asked.length = 0;
    const { values, error } = await drain(summarize(streamOf(chunks), options));
    assert.equal(error, undefined);
    assert.deepEqual(asked, ["/h2c"]);
    assert.deepEqual(values.map((r) => [r.target, r.body, r.tunnel]), [
      ["/plain", "", undefined],
      ["/h2c", "{}", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"],
    ]);
  }
  // Refused: the bytes after the body are read as requests (here they are not one).
  const { values, error } = await drain(summarize(streamOf([wire]), { switchedProtocols: () => false }));
  assert.equal(values.length, 2);
  assert.ok(error instanceof DecodeError);
  assert.equal(error.code, "REQUEST_LINE_INVALID");
  assert.equal(error.offset, text(wire).indexOf("PRI") + 11, "at the version's major digit");
});

/** `delivered`: requests summarized before the fault (one whose body fails is not, though its head was handed on). */
async function fault(wire: string, code: string, offset: number, delivered: number, message?: RegExp) {
  for (const chunks of [[utf8(wire)], bytewise(utf8(wire))]) {
    const { values, error } = await drain(summarize(streamOf(chunks)));
    assert.ok(error instanceof DecodeError, `expected DecodeError, got ${error}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.offset, offset, error.message);
    assert.equal(values.length, delivered, "requests before the fault are delivered");
    if (message !== undefined) assert.match(error.message, message);
  }
}

const ok = "GET / HTTP/1.1\r\n\r\n"; // 18 bytes

test("http1 requests: malformed request lines are REQUEST_LINE_INVALID at the line or the version", async () => {
  await fault(ok + "GET  / HTTP/1.1\r\n\r\n", "REQUEST_LINE_INVALID", 18, 1);
  await fault(ok + "GET /a b HTTP/1.1\r\n\r\n", "REQUEST_LINE_INVALID", 18, 1);
  await fault(ok + "G(T / HTTP/1.1\r\n\r\n", "REQUEST_LINE_INVALID", 18, 1);
  await fault(ok + "GET /\x80 HTTP/1.1\r\n\r\n", "REQUEST_LINE_INVALID", 18, 1);
  await fault(ok + "GET / http/1.1\r\n\r\n", "REQUEST_LINE_INVALID", 18, 1);
  await fault(ok + "GET /\r\n\r\n", "REQUEST_LINE_INVALID", 18, 1, /not an HTTP\/1\.x request line/);
  await fault(ok + "GET / HTTP/2.0\r\n\r\n", "REQUEST_LINE_INVALID", 18 + 11, 1, /unsupported HTTP version 2\.0/);
  await fault("HTTP/1.1 200 OK\r\n\r\n", "REQUEST_LINE_INVALID", 0, 0);
});

test("http1 requests: framing faults name the field line, the byte or the end", async () => {
  await fault(
    ok + "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
    "ENCODING_UNSUPPORTED",
    35,
    1,
    /does not end in chunked/,
  );
  await fault(
    ok + "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    "CONTENT_LENGTH_INVALID",
    35,
    1,
  );
  await fault(ok + "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "CONTENT_LENGTH_INVALID", 35, 1);
  await fault(
    ok + "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab",
    "TRUNCATED",
    58,
    1,
    /^the connection ended \(3 bytes missing\) at byte 58 \(in the body of request 2\)$/,
  );
  await fault(ok + "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n", "CHUNK_SIZE_INVALID", 65, 1);
  await fault(ok + "GET / HTTP/1.1\nHost: k\r\n\r\n", "CRLF_EXPECTED", 18 + 14, 1, /bare LF in a request head/);
  await fault(ok + "GET / HTTP/1.1\r\nHost", "TRUNCATED", 18 + 20, 1, /head of request 2/);
  await fault(ok + "GET / HTTP/1.1\r\nHo st: k\r\n\r\n", "HEADER_INVALID", 34 + 2, 1);
});

test("http1 requests: a head longer than maxHeaderBytes is refused before it is buffered", async () => {
  const wire = utf8(ok + `GET /${"a".repeat(200)} HTTP/1.1\r\n\r\n`);
  const { values, error } = await drain(
    streamOf(bytewise(wire)).pipeThrough(new Http1RequestDecoderStream({ maxHeaderBytes: 64 })),
  );
  assert.equal(values.length, 1);
  assert.ok(error instanceof DecodeError);
  assert.equal(error.code, "HEADER_TOO_LARGE");
  assert.equal(error.offset, 18);
  assert.match(error.message, /request head longer than 64 bytes/);
});

test("http1 requests: what RFC 9112 leaves to the reader: any token as method, HTTP/1.2, TE with CL framed by TE", async () => {
  const wire = utf8(
    "purge /cache HTTP/1.1\r\n\r\n" + "GET / HTTP/1.2\r\n\r\n" +
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n2\r\nab\r\n0\r\n\r\n" +
      "GET /last HTTP/1.1\r\n\r\n",
  );
  const { values, error } = await drain(summarize(streamOf(bytewise(wire))));
  assert.equal(error, undefined);
  assert.deepEqual(values.map((r) => [r.method, r.version, r.framing, r.body]), [
    ["purge", "HTTP/1.1", "none", ""],
    ["GET", "HTTP/1.2", "none", ""],
    ["POST", "HTTP/1.1", "chunked", "ab"],
    ["GET", "HTTP/1.1", "none", ""],
  ]);
});
