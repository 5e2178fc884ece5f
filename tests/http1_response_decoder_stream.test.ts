import { test } from "node:test";
import assert from "node:assert/strict";
import { deflateSync, gunzipSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { DecodeError, decodeWatchResponse } from "../mod.ts";
import { GunzipStream, InflateStream } from "../wire.ts";
import { type Http1Response, Http1ResponseDecoderStream } from "../capture.ts";
import { assertSplitInvariant, bytewise, concat, drain, drainSlowly, streamOf, text, utf8 } from "./_util.ts";

interface Summary {
  status: number;
  statusText: string;
  framing: string;
  headers: Array<[string, string]>;
  body: string;
  trailers: Array<[string, string]>;
}

/** Decodes a connection, reading each body in turn, into comparable summaries (and the error, if any). */
function summarize(source: ReadableStream<Uint8Array>): ReadableStream<Summary> {
  const responses = source.pipeThrough(new Http1ResponseDecoderStream());
  return responses.pipeThrough(
    new TransformStream<Http1Response, Summary>({
      async transform(r, controller) {
        const { values, error } = await drain(r.body);
        if (error !== undefined) throw error;
        controller.enqueue({
          status: r.status,
          statusText: r.statusText,
          framing: r.framing,
          headers: r.headers,
          body: text(values),
          trailers: await r.trailers,
        });
      },
    }),
  );
}

const keepAlive = utf8(
  "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
    "4\r\nabc\n\r\n3;ext=1\r\ndef\r\n0\r\nX-Checksum: 1\r\n\r\n" +
    "HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nnope!" +
    "HTTP/1.1 100 Continue\r\n\r\n" +
    "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n" +
    "HTTP/1.0 200 OK\r\nServer: x\r\n\r\nuntil close\n",
);

test("http1: keep-alive sequence of chunked, Content-Length, 1xx, 204 and close-delimited responses", async () => {
  const { values, error } = await drain(summarize(streamOf([keepAlive])));
  assert.equal(error, undefined);
  assert.deepEqual(values.map((v) => [v.status, v.framing, v.body]), [
    [200, "chunked", "abc\ndef"],
    [404, "content-length", "nope!"],
    [100, "none", ""],
    [204, "none", ""],
    [200, "close", "until close\n"],
  ]);
  assert.deepEqual(values[0].headers, [["content-type", "application/json"], ["transfer-encoding", "chunked"]]);
  assert.deepEqual(values[0].trailers, [["x-checksum", "1"]]);
  assert.equal(values[1].statusText, "Not Found");
});

test("http1: split invariance of a whole connection, down to single bytes", async () => {
  await assertSplitInvariant(keepAlive, summarize, { runs: 60 });
});

test("http1: gzip bodies (one and several members) are decoded", async () => {
  const events = [0, 1, 2].map((i) =>
    JSON.stringify({ type: "ADDED", object: { kind: "Pod", metadata: { name: `p${i}` } } }) + "\n"
  );
  const single = gzipSync(utf8(events.join("")));
  const multi = concat(events.map((e) => gzipSync(utf8(e))));
  for (const gz of [single, multi]) {
    const head = utf8(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`,
    );
    const wire = concat([head, gz]);
    for (const chunks of [[wire], bytewise(wire)]) {
      const { values } = await drain(streamOf(chunks).pipeThrough(new Http1ResponseDecoderStream()));
      assert.equal(values.length, 1);
      assert.equal(values[0].decoded, "gzip");
      const response = values[0].toResponse();
      assert.equal(response.headers.get("content-encoding"), null);
      const got = await drain(decodeWatchResponse(response));
      assert.equal(got.error, undefined);
      assert.deepEqual(got.values.map((e) => e.type === "ADDED" ? e.object.metadata?.name : e.type), [
        "p0",
        "p1",
        "p2",
      ]);
    }
  }
});

test("http1: toResponse gives a fetch Response with status, headers and the de-chunked body", async () => {
  const { values } = await drain(streamOf([keepAlive]).pipeThrough(new Http1ResponseDecoderStream()));
  const first = values[0].toResponse();
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("content-type"), "application/json");
  assert.equal(first.headers.get("transfer-encoding"), null);
  assert.equal(await first.text(), "abc\ndef");
  for (const r of values.slice(1)) if (r.status >= 200) await r.body.cancel();
  assert.throws(() => values[2].toResponse(), RangeError);
});

async function connectionFault(wire: string, code: string, offset: number) {
  for (const chunks of [[utf8(wire)], bytewise(utf8(wire))]) {
    const { error } = await drain(summarize(streamOf(chunks)));
    assert.ok(error instanceof DecodeError, `expected DecodeError, got ${error}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.offset, offset, error.message);
  }
}

test("http1: a malformed status line", () => connectionFault("HTTP/1.1 2000 OK\r\n\r\n", "STATUS_LINE_INVALID", 0));
test("http1: not HTTP at all", () => connectionFault("SSH-2.0-OpenSSH\r\n\r\n", "STATUS_LINE_INVALID", 0));
test("http1: a bare LF in the head", () => connectionFault("HTTP/1.1 200 OK\nA: b\r\n\r\n", "CRLF_EXPECTED", 15));
test("http1: a malformed header", () =>
  connectionFault("HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n", "HEADER_INVALID", 20));
test(
  "http1: conflicting Content-Length values",
  () =>
    connectionFault(
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
      "CONTENT_LENGTH_INVALID",
      17,
    ),
);
for (const value of ["abc", "-1", "+5", "1e3", "0x10", "1234567890123456", "3, 4"]) {
  test(`http1: Content-Length ${JSON.stringify(value)} is CONTENT_LENGTH_INVALID at its field line`, () =>
    connectionFault(
      `HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: ${value}\r\n\r\nabcd`,
      "CONTENT_LENGTH_INVALID",
      28,
    ));
}
test("http1: HTTP/2.0 in a status line is STATUS_LINE_INVALID at the version", () =>
  connectionFault("HTTP/2.0 200 OK\r\n\r\n", "STATUS_LINE_INVALID", 5));
test("http1: obsolete line folding is HEADER_INVALID at the folded line", () =>
  connectionFault("HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", "HEADER_INVALID", 23));
test("http1: a control byte in a field value is HEADER_INVALID at that byte", () =>
  connectionFault("HTTP/1.1 200 OK\r\nA: b\x01c\r\n\r\n", "HEADER_INVALID", 21));
test("http1: an empty field name is HEADER_INVALID", () =>
  connectionFault("HTTP/1.1 200 OK\r\n: x\r\n\r\n", "HEADER_INVALID", 17));
for (const te of ["compress, chunked", "chunked, chunked", "chunked, gzip", "identity"]) {
  test(`http1: Transfer-Encoding ${JSON.stringify(te)} is ENCODING_UNSUPPORTED at its field line`, () =>
    connectionFault(
      `HTTP/1.1 200 OK\r\nServer: x\r\nTransfer-Encoding: ${te}\r\n\r\n0\r\n\r\n`,
      "ENCODING_UNSUPPORTED",
      28,
    ));
}
test("http1: a truncated head", () => connectionFault("HTTP/1.1 200 OK\r\nContent-Le", "TRUNCATED", 27));
test("http1: a truncated Content-Length body", () =>
  connectionFault("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "TRUNCATED", 42));
test(
  "http1: a chunked fault is placed at its byte in the connection",
  () =>
    connectionFault("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nZ\r\n", "CHUNK_SIZE_INVALID", 55),
);

test("http1: the head is bounded", async () => {
  const wire = utf8("HTTP/1.1 200 OK\r\n" + "X-A: b\r\n".repeat(200));
  const { error } = await drain(streamOf([wire]).pipeThrough(new Http1ResponseDecoderStream({ maxHeaderBytes: 1024 })));
  assert.ok(error instanceof DecodeError && error.code === "HEADER_TOO_LARGE");
});

test("http1: inputOffsetOf maps body bytes back into the connection", async () => {
  const wire = utf8("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n");
  const { values } = await drain(streamOf(bytewise(wire)).pipeThrough(new Http1ResponseDecoderStream()));
  const r = values[0];
  await drain(r.body);
  const bytes = text(wire);
  assert.equal(r.inputOffsetOf(0), bytes.indexOf("abc"));
  assert.equal(r.inputOffsetOf(4), bytes.indexOf("defg") + 1);
});

test("http1: an unread body holds the connection back (bounded memory), a cancelled one is skipped", async () => {
  let pulled = 0;
  const head = utf8("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
  const piece = utf8("4000\r\n" + "x".repeat(0x4000) + "\r\n");
  const source = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(pulled++ === 0 ? head : piece);
      if (pulled > 2000) controller.close();
    },
  }, { highWaterMark: 0 });
  const reader = source.pipeThrough(new Http1ResponseDecoderStream({ bodyHighWaterMark: 64 * 1024 })).getReader();
  const { value: response } = await reader.read();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(pulled < 20, `pulled ${pulled} pieces of 16 KiB while nobody read the body`);
  const before = pulled;
  const body = response!.body.getReader();
  for (let i = 0; i < 10; i++) await body.read();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(pulled > before);
  await body.cancel();
  await reader.cancel();
});

test("http1: events decoded before a fault reach a slow reader, through every stage", async () => {
  const lines = Array.from(
    { length: 30 },
    (_, i) => JSON.stringify({ type: "ADDED", object: { metadata: { name: `p${i}` } } }) + "\n",
  );
  // One read holds 30 HTTP chunks (one event each) and then a malformed chunk size.
  const wire = utf8(
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
      lines.map((l) => `${utf8(l).length.toString(16)}\r\n${l}\r\n`).join("") + "zz\r\n",
  );
  const { values: responses } = await drain(streamOf([wire]).pipeThrough(new Http1ResponseDecoderStream()));
  const { values: events, error: failure } = await drainSlowly(decodeWatchResponse(responses[0].toResponse()), 1);
  const names = events.flatMap((e) => e.type === "ADDED" ? [e.object.metadata!.name!] : []);
  assert.equal(names.length, 30);
  assert.ok(failure instanceof DecodeError && failure.code === "CHUNK_SIZE_INVALID", String(failure));
});

/** `parts` as chunked coding, one chunk each (sizes in hex), then the last chunk. */
function chunkedBytes(parts: Uint8Array[]): Uint8Array {
  return concat([
    ...parts.flatMap((p) => [utf8(`${p.length.toString(16)}\r\n`), p, utf8("\r\n")]),
    utf8("0\r\n\r\n"),
  ]);
}

// No server at hand sends transfer codings other than chunked (Node's http, Go's net/http, Deno and Bun never do), so
// these wires are built here: the payload compressed by node:zlib, framed as RFC 9112 §6.1 and §7 describe.
test("http1: transfer codings besides chunked are removed (gzip, x-gzip, deflate; chunked or until close)", async () => {
  const payload = '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p"}}}\n'.repeat(20);
  const gz = gzipSync(utf8(payload));
  const cases: Array<{ te: string; body: Uint8Array; framing: string; codings: string[] }> = [
    {
      te: "gzip, chunked",
      body: chunkedBytes([gz.subarray(0, 10), gz.subarray(10)]),
      framing: "chunked",
      codings: ["gzip"],
    },
    { te: "x-gzip,chunked", body: chunkedBytes([gz]), framing: "chunked", codings: ["gzip"] },
    { te: "gzip", body: gz, framing: "close", codings: ["gzip"] },
    { te: "deflate", body: deflateSync(utf8(payload)), framing: "close", codings: ["deflate"] },
    // Applied in the order listed: deflate first, then gzip over that, then chunked.
    {
      te: "deflate, gzip, chunked",
      body: chunkedBytes([gzipSync(deflateSync(utf8(payload)))]),
      framing: "chunked",
      codings: ["deflate", "gzip"],
    },
  ];
  for (const c of cases) {
    const wire = concat([
      utf8(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: ${c.te}\r\n\r\n`),
      c.body,
    ]);
    for (const chunks of [[wire], bytewise(wire)]) {
      const { values, error } = await drain(streamOf(chunks).pipeThrough(new Http1ResponseDecoderStream()));
      assert.equal(error, undefined, c.te);
      assert.equal(values.length, 1);
      const [r] = values;
      assert.equal(r.framing, c.framing, c.te);
      assert.deepEqual(r.transferCodings, c.codings, c.te);
      assert.equal(r.decoded, undefined, c.te);
      const response = r.toResponse();
      assert.equal(response.headers.get("transfer-encoding"), null);
      const events = await drain(decodeWatchResponse(response));
      assert.equal(events.error, undefined, c.te);
      assert.equal(events.values.length, 20, c.te);
    }
  }
});

test("http1: a transfer coding over a content coding: both are removed", async () => {
  const payload = "hello, watch\n";
  const wire = concat([
    utf8("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
    chunkedBytes([gzipSync(gzipSync(utf8(payload)))]),
  ]);
  const { values } = await drain(summarize(streamOf(bytewise(wire))));
  assert.deepEqual(values.map((v) => [v.framing, v.body]), [["chunked", payload]]);
  // With decompress off only the content coding stays: the body is the gzip member the server's content was.
  const raw = await drain(streamOf([wire]).pipeThrough(new Http1ResponseDecoderStream({ decompress: false })));
  const body = concat((await drain(raw.values[0].body)).values);
  assert.equal(text([gunzipSync(body)]), payload);
});

test("http1: split invariance of a keep-alive connection with transfer-coded bodies, down to single bytes", async () => {
  const text = (n: number) => `{"n":${n},"pad":"${"x".repeat(n * 40)}"}\n`;
  const deflated = deflateSync(utf8(text(2)));
  const wire = concat([
    utf8("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
    chunkedBytes([gzipSync(utf8(text(1)))]),
    utf8(`HTTP/1.1 200 OK\r\nContent-Length: ${deflated.length}\r\nTransfer-Encoding: deflate\r\n\r\n`),
    deflated,
  ]);
  const { values, error } = await assertSplitInvariant(wire, summarize, { runs: 40 });
  assert.equal(error, undefined);
  assert.deepEqual(values.map((v) => [v.framing, v.body]), [["chunked", text(1)], ["close", text(2)]]);
});

test("http1: a corrupt transfer-coded body fails the body with DECOMPRESSION_FAILED", async () => {
  const gz = gzipSync(utf8("x".repeat(100)));
  gz[gz.length - 5] ^= 0xff; // the CRC-32 no longer matches
  const wire = concat([utf8("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), chunkedBytes([gz])]);
  const { values } = await drain(streamOf([wire]).pipeThrough(new Http1ResponseDecoderStream()));
  const { error } = await drain(values[0].body);
  assert.ok(error instanceof DecodeError && error.code === "DECOMPRESSION_FAILED", String(error));
});

test("http1: a fault in a gzip or deflate body's compressed bytes is placed at its byte in the connection", async () => {
  const payload = utf8(
    Array.from({ length: 150 }, (_, i) => JSON.stringify({ type: "MODIFIED", object: { n: i, s: "x".repeat(i % 40) } }))
      .join("\n") + "\n",
  );
  const coded = { gzip: gzipSync(payload), deflate: deflateSync(payload) };
  let placed = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom("gzip" as const, "deflate" as const),
      fc.constantFrom("content, chunked", "content, length", "transfer, chunked"),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      fc.integer({ min: 1, max: 255 }),
      fc.integer({ min: 1, max: 1500 }),
      async (coding, how, where, mask, maxPiece) => {
        const bad = coded[coding].slice();
        const at = Math.floor(where * bad.length);
        bad[at] ^= mask;
        // The decoding stage alone says which byte of the body it finds the fault at, and what comes before it.
        const alone = await drain(
          streamOf([bad]).pipeThrough(coding === "gzip" ? new GunzipStream() : new InflateStream()),
        );
        // The wire, with where each piece of the body lies in it.
        const [kind, framing] = how.split(", ");
        const head = `HTTP/1.1 200 OK\r\n${kind === "content" ? `Content-Encoding: ${coding}\r\n` : ""}` +
          (framing === "length"
            ? `Content-Length: ${bad.length}\r\n\r\n`
            : `Transfer-Encoding: ${kind === "transfer" ? `${coding}, ` : ""}chunked\r\n\r\n`);
        const parts: Uint8Array[] = [utf8(head)];
        const pieces: Array<{ payload: number; input: number }> = [];
        let input = parts[0].length;
        for (let from = 0, k = 0; from < bad.length; k++) {
          const piece = bad.subarray(from, from + 1 + ((at * 7 + k * 131) % maxPiece));
          const line = framing === "length" ? new Uint8Array(0) : utf8(`${piece.length.toString(16)}\r\n`);
          pieces.push({ payload: from, input: input + line.length });
          parts.push(line, piece);
          if (framing !== "length") parts.push(utf8("\r\n"));
          input += line.length + piece.length + (framing === "length" ? 0 : 2);
          from += piece.length;
        }
        if (framing !== "length") parts.push(utf8("0\r\n\r\n"));
        const { values } = await drain(streamOf([concat(parts)]).pipeThrough(new Http1ResponseDecoderStream()));
        const body = await drain(values[0].body);
        assert.deepEqual(concat(body.values), concat(alone.values));
        if (alone.error === undefined) {
          assert.equal(body.error, undefined);
          return;
        }
        assert.ok(alone.error instanceof DecodeError, String(alone.error));
        assert.ok(body.error instanceof DecodeError, String(body.error));
        const piece = pieces.filter((p) => p.payload <= (alone.error as DecodeError).offset).pop()!;
        assert.deepEqual(
          [body.error.code, body.error.detail, body.error.context, body.error.offset],
          [
            alone.error.code,
            alone.error.detail,
            `${coding} ${kind} coding of response 1`,
            piece.input + alone.error.offset - piece.payload,
          ],
        );
        placed++;
      },
    ),
    { numRuns: 150 },
  );
  assert.ok(placed > 50, `${placed} of 150 flips were faults`);
});

test("http1: Transfer-Encoding overrides Content-Length; a repeated equal Content-Length is one", async () => {
  const wire = utf8(
    "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" +
      "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3, 3\r\n\r\ndef",
  );
  const { values, error } = await drain(summarize(streamOf([wire])));
  assert.equal(error, undefined);
  assert.deepEqual(values.map((v) => [v.framing, v.body]), [["chunked", "abc"], ["content-length", "def"]]);
});

test("http1: empty lines before a status line are skipped", async () => {
  const wire = utf8("\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  for (const chunks of [[wire], bytewise(wire)]) {
    const { values } = await drain(streamOf(chunks).pipeThrough(new Http1ResponseDecoderStream()));
    assert.equal(values.length, 1);
    assert.equal(values[0].offset, 4);
    assert.equal(text((await drain(values[0].body)).values), "ok");
  }
});

test("http1: after 101 Switching Protocols the connection's bytes are the body, raw", async () => {
  const after = "\x81\x05hello then anything";
  const wire = utf8("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" + after);
  for (const chunks of [[wire], bytewise(wire)]) {
    const { values } = await drain(streamOf(chunks).pipeThrough(new Http1ResponseDecoderStream()));
    assert.equal(values.length, 1);
    assert.equal(values[0].framing, "upgrade");
    assert.throws(() => values[0].toResponse(), RangeError);
    assert.deepEqual(concat((await drain(values[0].body)).values), utf8(after));
  }
});

test("http1: toResponse of a 204 or 304 has a null body", async () => {
  const wire = utf8("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nETag: x\r\n\r\n");
  const { values } = await drain(streamOf([wire]).pipeThrough(new Http1ResponseDecoderStream()));
  assert.deepEqual(values.map((r) => [r.status, r.framing]), [[204, "none"], [304, "none"]]);
  for (const r of values) assert.equal(r.toResponse().body, null);
});

test("http1: each response's offset, bodyOffset and head faults count from the start of the connection", async () => {
  const wire = text(keepAlive);
  const { values } = await drain(streamOf([keepAlive]).pipeThrough(new Http1ResponseDecoderStream()));
  const starts = [0, wire.indexOf("HTTP/1.1 404"), wire.indexOf("HTTP/1.1 100"), wire.indexOf("HTTP/1.1 204")];
  starts.push(wire.indexOf("HTTP/1.0 200"));
  assert.deepEqual(values.map((r) => r.offset), starts);
  assert.equal(values[1].bodyOffset, wire.indexOf("nope!"));
  for (const r of values) await r.body.cancel();
  // A fault in the head of a later response is placed in the connection's bytes too.
  const second = "HTTP/1.1 204 No Content\r\n\r\n";
  await connectionFault(second + "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "HEADER_INVALID", second.length + 17 + 3);
  await connectionFault(second + "HTTP/1.1 2000 OK\r\n\r\n", "STATUS_LINE_INVALID", second.length);
});
