/**
 * HTTP/2 connections to messages (Http2ConnectionDecoderStream) and to request/response pairs (decodeHttp2Exchanges):
 * a real node:http2 h2c server streaming JSON watches to a node:http2 client through a recording proxy (two streams
 * interleaved, one reset by the server), a capture cut to start mid-connection, split invariance of the whole
 * pipeline, and faults with their offsets.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import * as http2 from "node:http2";
import { DecodeError, decodeWatchResponse, type WatchEvent } from "../mod.ts";
import { encodeHttp2Frames, type Http2Frame, Http2FrameDecoder } from "../wire.ts";
import {
  decodeHttp2Exchanges,
  type Http2ConnectionDecoderOptions,
  Http2ConnectionDecoderStream,
  type Http2Message,
  Http2StreamError,
} from "../capture.ts";
import fc from "fast-check";
import { assertSplitInvariant, concat, cutsFor, drain, errorKey, splitAt, streamOf, text, utf8 } from "./_util.ts";
import { recordH2c } from "./peers/h2_client.ts";
import { delayAfter, ndjsonLines, watchEvents, type WatchResource } from "./peers/watch_events.ts";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const runtime = "Deno" in globalThis ? "Deno" : "Bun" in globalThis ? "Bun" : "Node";

const PATHS: Record<WatchResource, string> = {
  pods: "/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=true",
  configmaps: "/api/v1/namespaces/default/configmaps?watch=1",
};
const RESET_PATH = "/api/v1/namespaces/default/secrets?watch=1";
const RESET_LINE = '{"type":"ADDED","object":{"kind":"Secret","metadata":{"name":"s1","resourceVersion":"9"}}}\n';

interface Recording {
  c2s: Uint8Array;
  s2c: Uint8Array;
  /** What the client received per path (the reset stream: what came before the reset). */
  received: Record<string, string>;
}

/**
 * Runs three concurrent watches over one h2c connection through a recording proxy: pods and configmaps stream their
 * events (paced, so their DATA frames interleave), the third gets one event and then RST_STREAM (INTERNAL_ERROR).
 */
async function recordWatches(): Promise<Recording> {
  const server = http2.createServer();
  server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    const path = String(headers[":path"]);
    stream.on("error", () => {});
    stream.respond({ ":status": 200, "content-type": "application/json;stream=watch" });
    void (async () => {
      if (path === RESET_PATH) {
        stream.write(RESET_LINE);
        await sleep(40);
        stream.destroy(new Error("reset by the test server")); // RST_STREAM INTERNAL_ERROR
        return;
      }
      const resource = path === PATHS.pods ? "pods" : "configmaps";
      const lines = ndjsonLines(watchEvents(resource));
      for (let i = 0; i < lines.length; i++) {
        stream.write(lines[i]);
        await sleep(delayAfter(i) + 3);
      }
      stream.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  try {
    const paths = [PATHS.pods, PATHS.configmaps, RESET_PATH];
    const { c2s, s2c, results } = await recordH2c((server.address() as { port: number }).port, paths);
    return { c2s, s2c, received: Object.fromEntries(results.map((r) => [r.path, r.body])) };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

let recording: Promise<Recording> | undefined;
/** One recording shared by the tests below (with a deadline). */
function recorded(): Promise<Recording> {
  recording ??= (async () => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("node:http2 exchange took longer than 15 s")), 15000);
    });
    return await Promise.race([recordWatches(), deadline]).finally(() => clearTimeout(timer));
  })();
  return recording;
}

function frames(bytes: Uint8Array, preface: "none" | "expect"): Http2Frame[] {
  const out: Http2Frame[] = [];
  const decoder = new Http2FrameDecoder({ preface, maxFrameSize: 16777215 });
  decoder.push(bytes, (f) => out.push(f));
  decoder.finish();
  return out;
}

interface MessageSummary {
  streamId: number;
  status: string | undefined;
  headersMissing: boolean;
  headerError: string | undefined;
  events: WatchEvent[];
  error: string | undefined;
  end: string;
}

/** Every message of `messages` with its events, its bodies read concurrently (streams interleave). */
async function summarize(
  messages: ReadableStream<Http2Message>,
): Promise<{ values: MessageSummary[]; error: unknown }> {
  const pending: Promise<MessageSummary>[] = [];
  const { error } = await drain(
    messages.pipeThrough(
      new TransformStream<Http2Message, Http2Message>({
        transform(message, controller) {
          pending.push(summarizeOne(message));
          controller.enqueue(message);
        },
      }),
    ),
  );
  return { values: await Promise.all(pending), error };
}

async function summarizeOne(message: Http2Message): Promise<MessageSummary> {
  const response = message.headers === undefined
    ? new Response(message.body, { headers: { "content-type": "application/json" } })
    : message.toResponse();
  const { values, error } = await drain(decodeWatchResponse(response));
  const end = await message.end;
  return {
    streamId: message.streamId,
    status: message.headers?.find(([n]) => n === ":status")?.[1],
    headersMissing: message.headersMissing,
    headerError: errorKey(message.headerError),
    events: values,
    error: error instanceof Http2StreamError ? `${error.reason}:${error.errorCode}` : errorKey(error),
    end: `${end.reason}${end.errorCode === undefined ? "" : `:${end.errorCode}`}`,
  };
}

const decodeServer = (options: Http2ConnectionDecoderOptions = {}) => (source: ReadableStream<Uint8Array>) =>
  source.pipeThrough(new Http2ConnectionDecoderStream({ preface: "none", ...options }));

// ---------------------------------------------------------------------------------------------------------------
// A real peer

test(`http2 connection: a real node:http2 h2c server (${runtime}): exact events per stream, reset, pairing`, async () => {
  const { c2s, s2c, received } = await recorded();
  assert.equal(received[PATHS.pods], ndjsonLines(watchEvents("pods")).join(""));
  assert.equal(received[PATHS.configmaps], ndjsonLines(watchEvents("configmaps")).join(""));

  // The two watches' DATA frames interleave on the wire.
  const dataStreams = frames(s2c, "none").filter((f) => f.type === "DATA" && f.data.length > 0).map((f) => f.streamId);
  const switches = dataStreams.filter((id, i) => i > 0 && id !== dataStreams[i - 1]).length;
  assert.ok(switches >= 3, `DATA frames of different streams interleave (${dataStreams.join(",")})`);

  // Server-to-client bytes alone.
  const { values, error } = await summarize(decodeServer()(streamOf([s2c])));
  assert.equal(error, undefined);
  assert.deepEqual(values.map((m) => m.streamId), [1, 3, 5]);
  const [pods, configmaps, reset] = values;
  for (const m of values) {
    assert.equal(m.status, "200");
    assert.equal(m.headersMissing, false);
  }
  assert.deepEqual(pods.events, watchEvents("pods"));
  assert.equal(pods.end, "end-stream");
  assert.equal(pods.error, undefined);
  assert.deepEqual(configmaps.events, watchEvents("configmaps"));
  assert.equal(configmaps.end, "end-stream");
  // The reset stream: its event, then its body fails with the code (INTERNAL_ERROR = 2).
  assert.equal(reset.events.length, 1);
  assert.equal(reset.events[0].type, "ADDED");
  assert.equal(reset.error, "reset:2");
  assert.equal(reset.end, "reset:2");

  // Paired with the client's bytes: the request of each stream.
  const exchanges = await drain(decodeHttp2Exchanges(streamOf([s2c]), streamOf([c2s])));
  assert.equal(exchanges.error, undefined);
  assert.deepEqual(
    exchanges.values.map((x) => [x.streamId, x.request?.method, x.request?.path, x.request?.authority]),
    [
      [1, "GET", PATHS.pods, `127.0.0.1:${x127Port(exchanges.values[0].request?.authority)}`],
      [3, "GET", PATHS.configmaps, exchanges.values[0].request?.authority],
      [5, "GET", RESET_PATH, exchanges.values[0].request?.authority],
    ],
  );
  const events = await drain(decodeWatchResponse(exchanges.values[0].response.toResponse()));
  assert.deepEqual(events.values, watchEvents("pods"));
  for (const x of exchanges.values.slice(1)) await x.response.body.cancel();
});

/** The port of an `127.0.0.1:PORT` authority (the proxy's ephemeral port). */
function x127Port(authority: string | undefined): string {
  const match = /^127\.0\.0\.1:(\d+)$/.exec(authority ?? "");
  assert.ok(match !== null, `authority ${authority}`);
  return match[1];
}

test("http2 connection: a capture that starts mid-connection (after the first HEADERS) still yields events", async () => {
  const { s2c } = await recorded();
  const all = frames(s2c, "none");
  const firstHeaders = all.findIndex((f) => f.type === "HEADERS");
  const cut = all[firstHeaders + 1].offset;
  const { values, error } = await summarize(decodeServer()(streamOf([s2c.slice(cut)])));
  assert.equal(error, undefined);
  const first = values.find((m) => m.streamId === all[firstHeaders].streamId)!;
  assert.equal(first.headersMissing, true);
  assert.equal(first.status, undefined);
  // Stream 1's DATA all follow its HEADERS: every event is there.
  assert.deepEqual(first.events, watchEvents("pods"));
  // The other streams' header blocks may refer to the table entries of the block cut off: then headerError, no fault.
  for (const m of values.filter((v) => v !== first)) {
    assert.equal(m.headersMissing, false);
    assert.ok(m.status === "200" || m.headerError?.startsWith("HPACK_INVALID@"), JSON.stringify(m.headerError));
  }
  // A message without headers cannot be a Response.
  const cutMessages = (await drain(decodeServer()(streamOf([s2c.slice(cut)])))).values;
  const message = cutMessages.find((m) => m.streamId === first.streamId)!;
  assert.equal(message.headersMissing, true);
  assert.throws(() => message.toResponse(), RangeError);
  for (const m of cutMessages) await m.body.cancel();
});

test("http2 connection: the whole pipeline (bytes -> messages -> events) is split invariant", async () => {
  const { s2c } = await recorded();
  const decode = (source: ReadableStream<Uint8Array>) => {
    const result = summarize(decodeServer()(source));
    let next = 0;
    // One value per pull, then the error: erroring a stream discards what is queued.
    return new ReadableStream<MessageSummary>({
      async pull(controller) {
        const { values, error } = await result;
        if (next < values.length) controller.enqueue(values[next++]);
        else if (error !== undefined) controller.error(error);
        else controller.close();
      },
    }, { highWaterMark: 0 });
  };
  const reference = await assertSplitInvariant(s2c, decode, { runs: 15 });
  assert.equal(reference.values.length, 3);
  // A truncated capture too: the fault and what came before it.
  const truncated = s2c.slice(0, Math.floor(s2c.length / 2) + 3);
  const cut = await assertSplitInvariant(truncated, decode, { runs: 10 });
  assert.equal(errorKey(cut.error), `TRUNCATED@${truncated.length}`);
  assert.ok(cut.values.length >= 2);
});

// ---------------------------------------------------------------------------------------------------------------
// Synthetic connections

const SETTINGS = { type: "SETTINGS" as const, streamId: 0, parameters: [] as Array<[number, number]> };
/** ":status: 200" (static entry 8) and "content-type: application/json" as a literal without indexing. */
const STATUS_200 = Uint8Array.of(0x88);
const line = '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"1"}}}\n';

test("http2 connection: CONTINUATION, trailers, 1xx, padding, GOAWAY, large frames, table size updates", async () => {
  // A literal with incremental indexing: "x-a: 1" added to the dynamic table, then referenced as entry 62 (0xbe).
  const literal = concat([Uint8Array.of(0x40, 3), utf8("x-a"), Uint8Array.of(1), utf8("1")]);
  const big = "x".repeat(20000);
  const wire = encodeHttp2Frames([
    SETTINGS,
    // Stream 1: a table size update to 65536 (above 4096: the ceiling applies), a 103 first, then 200 split over
    // CONTINUATION, a padded DATA frame larger than 16384 bytes, trailers.
    {
      type: "HEADERS",
      streamId: 1,
      endHeaders: true,
      fragment: Uint8Array.of(0x3f, 0xe1, 0xff, 0x03, 0x08, 0x03, ...utf8("103")),
    },
    { type: "HEADERS", streamId: 1, fragment: STATUS_200 },
    { type: "CONTINUATION", streamId: 1, endHeaders: true, fragment: literal },
    { type: "DATA", streamId: 1, padded: true, padLength: 7, data: utf8(big) },
    { type: "HEADERS", streamId: 1, endHeaders: true, endStream: true, fragment: Uint8Array.of(0xbe) },
    // Stream 3: headers, then GOAWAY with last stream 1 cuts it off; stream 5 was never opened.
    { type: "HEADERS", streamId: 3, endHeaders: true, fragment: Uint8Array.of(0x88, 0xbe) },
    { type: "DATA", streamId: 3, data: utf8(line) },
    { type: "GOAWAY", streamId: 0, lastStreamId: 1, errorCode: 0, debugData: new Uint8Array(0) },
  ]);
  const messages = (await drain(decodeServer()(streamOf([wire])))).values;
  assert.deepEqual(messages.map((m) => m.streamId), [1, 3]);
  const [one, three] = messages;
  assert.deepEqual(one.headers, [[":status", "200"], ["x-a", "1"]]);
  assert.equal(text((await drain(one.body)).values), big);
  assert.deepEqual(await one.trailers, [["x-a", "1"]]);
  assert.deepEqual(await one.end, { reason: "end-stream" });
  assert.deepEqual(three.headers, [[":status", "200"], ["x-a", "1"]]);
  const body3 = await drain(three.body);
  assert.equal(text(body3.values), line);
  assert.ok(body3.error instanceof Http2StreamError && body3.error.reason === "goaway");
  assert.deepEqual(await three.end, { reason: "goaway", errorCode: 0 });

  // A table size update above the ceiling is a fault.
  const over = encodeHttp2Frames([SETTINGS, {
    type: "HEADERS",
    streamId: 1,
    endHeaders: true,
    fragment: Uint8Array.of(0x3f, 0xe2, 0xff, 0x03),
  }]);
  const fault = await drain(decodeServer()(streamOf([over])));
  assert.equal(errorKey(fault.error), "HPACK_INVALID@18");
  const lower = await drain(decodeServer({ maxHeaderTableSizeCeiling: 4096 })(streamOf([wire])));
  assert.equal(errorKey(lower.error), "HPACK_INVALID@18");
});

test("http2 connection: a JSON watch over HTTP/2 through decodeWatchResponse, with a reset that is NO_ERROR", async () => {
  const wire = encodeHttp2Frames([
    SETTINGS,
    { type: "HEADERS", streamId: 1, endHeaders: true, fragment: STATUS_200 },
    { type: "DATA", streamId: 1, data: utf8(line.slice(0, 20)) },
    { type: "DATA", streamId: 1, data: utf8(line.slice(20)) },
    { type: "RST_STREAM", streamId: 1, errorCode: 0 },
    { type: "DATA", streamId: 1, data: utf8("ignored after the reset") },
  ]);
  const [message] = (await drain(decodeServer()(streamOf([wire])))).values;
  const events = await drain(decodeWatchResponse(message.toResponse()));
  assert.equal(events.error, undefined);
  assert.deepEqual(events.values, [JSON.parse(line)]);
  assert.deepEqual(await message.end, { reason: "reset", errorCode: 0 });
});

test("http2 connection: faults are DecodeErrors with offsets; open bodies fail with them", async () => {
  // DATA on stream 0 (a frame fault) after an open stream: the message first, then the fault; its body fails too.
  const frameFault = concat([
    encodeHttp2Frames([
      SETTINGS,
      { type: "HEADERS", streamId: 1, endHeaders: true, fragment: STATUS_200 },
      { type: "DATA", streamId: 1, data: utf8("abc") },
    ]),
    Uint8Array.of(0, 0, 1, 0, 0, 0, 0, 0, 0, 0x61),
  ]);
  const result = await drain(decodeServer()(streamOf([frameFault])));
  assert.equal(result.values.length, 1);
  assert.ok(result.error instanceof DecodeError);
  assert.equal(errorKey(result.error), "FRAME_INVALID@36");
  const body = await drain(result.values[0].body);
  assert.equal(text(body.values), "abc");
  assert.equal(errorKey(body.error), "FRAME_INVALID@36");
  assert.deepEqual(await result.values[0].end, { reason: "connection-end", error: result.error });

  // An index out of range in a connection seen from its start: HPACK_INVALID at that byte, a connection fault.
  const hpackFault = encodeHttp2Frames([
    SETTINGS,
    { type: "HEADERS", streamId: 1, fragment: STATUS_200 },
    { type: "CONTINUATION", streamId: 1, endHeaders: true, fragment: Uint8Array.of(0xff, 0x10) },
  ]);
  const hpack = await drain(decodeServer()(streamOf([hpackFault])));
  assert.equal(hpack.values.length, 0);
  assert.equal(errorKey(hpack.error), "HPACK_INVALID@28");
  assert.equal((hpack.error as DecodeError).context, "field block of stream 1");

  // The same block mid-connection (no SETTINGS first): reported on the stream, decoding goes on.
  const mid = encodeHttp2Frames([
    { type: "HEADERS", streamId: 1, fragment: STATUS_200 },
    { type: "CONTINUATION", streamId: 1, endHeaders: true, fragment: Uint8Array.of(0xff, 0x10) },
    { type: "DATA", streamId: 1, endStream: true, data: utf8(line) },
    { type: "HEADERS", streamId: 3, endHeaders: true, endStream: true, fragment: STATUS_200 },
  ]);
  const midResult = await drain(decodeServer()(streamOf([mid])));
  assert.equal(midResult.error, undefined);
  const [bad, good] = midResult.values;
  assert.equal(bad.headers, undefined);
  assert.equal(bad.headersMissing, false);
  assert.equal(errorKey(bad.headerError), "HPACK_INVALID@19");
  assert.throws(() => bad.toResponse(), RangeError);
  assert.equal(text((await drain(bad.body)).values), line);
  assert.deepEqual(good.headers, [[":status", "200"]]);

  // Truncated inside a frame.
  const truncated = await drain(decodeServer()(streamOf([frameFault.subarray(0, 30)])));
  assert.equal(errorKey(truncated.error), "TRUNCATED@30");
  // A client preface required and missing.
  const preface = await drain(
    streamOf([frameFault]).pipeThrough(new Http2ConnectionDecoderStream({ preface: "expect" })),
  );
  assert.equal(errorKey(preface.error), "PREFACE_INVALID@0");
  // A frame above the configured ceiling.
  const large = encodeHttp2Frames([SETTINGS, { type: "DATA", streamId: 1, data: new Uint8Array(16385) }]);
  const ceiling = await drain(decodeServer({ maxFrameSizeCeiling: 16384 })(streamOf([large])));
  assert.equal(errorKey(ceiling.error), "FRAME_SIZE_ERROR@9");
});

test("http2 connection: decodeHttp2Exchanges without client bytes, and with a client fault", async () => {
  const s2c = encodeHttp2Frames([
    SETTINGS,
    { type: "HEADERS", streamId: 1, endHeaders: true, endStream: true, fragment: STATUS_200 },
  ]);
  const alone = await drain(decodeHttp2Exchanges(streamOf([s2c])));
  assert.equal(alone.error, undefined);
  assert.equal(alone.values.length, 1);
  assert.equal(alone.values[0].request, undefined);
  const badClient = await drain(decodeHttp2Exchanges(streamOf([s2c]), streamOf([utf8("PRI * HTTP/1.1")])));
  assert.equal(errorKey(badClient.error), "PREFACE_INVALID@11");
});

test("http2 connection: RST_STREAM with an error fails the body; toResponse's status checks and null bodies", async () => {
  // ":status" with a literal value (name from static entry 8, not indexed).
  const status = (value: string) => concat([Uint8Array.of(0x08, value.length), utf8(value)]);
  const wire = encodeHttp2Frames([
    SETTINGS,
    // A reset of a stream never seen is ignored, and so is what follows on it.
    { type: "RST_STREAM", streamId: 9, errorCode: 8 },
    { type: "HEADERS", streamId: 9, endHeaders: true, fragment: STATUS_200 },
    { type: "HEADERS", streamId: 1, endHeaders: true, fragment: STATUS_200 },
    { type: "DATA", streamId: 1, data: utf8("ab") },
    { type: "RST_STREAM", streamId: 1, errorCode: 8 }, // CANCEL
    { type: "HEADERS", streamId: 3, endHeaders: true, endStream: true, fragment: status("204") },
    { type: "HEADERS", streamId: 5, endHeaders: true, endStream: true, fragment: status("2xx") },
    {
      type: "HEADERS",
      streamId: 7,
      endHeaders: true,
      endStream: true,
      fragment: Uint8Array.of(0x0f, 0x10, 0x02, ...utf8("ok")),
    }, // no :status
  ]);
  const { values, error } = await drain(decodeServer()(streamOf([wire])));
  assert.equal(error, undefined);
  assert.deepEqual(values.map((m) => m.streamId), [1, 3, 5, 7]);
  const [reset, noContent, badStatus, noStatus] = values;
  const body = await drain(reset.body);
  assert.equal(text(body.values), "ab");
  assert.ok(body.error instanceof Http2StreamError && body.error.reason === "reset" && body.error.errorCode === 8);
  assert.deepEqual(await reset.end, { reason: "reset", errorCode: 8 });
  const response = noContent.toResponse();
  assert.equal(response.status, 204);
  assert.equal(response.body, null);
  assert.throws(() => badStatus.toResponse(), /no valid :status \(2xx\)/);
  assert.throws(() => noStatus.toResponse(), /no valid :status \(none\)/);
});

test("http2 connection: inputOffsetOf places every body byte in the input, padded frames and split frames too", async () => {
  const payload = (id: number, n: number) => utf8(`stream ${id} frame ${n}: ${"x".repeat(n * 7)}\n`);
  const framesIn: Http2Frame[] = [
    { type: "SETTINGS", streamId: 0, parameters: [] },
    { type: "HEADERS", streamId: 1, endHeaders: true, fragment: Uint8Array.of(0x88) },
    { type: "HEADERS", streamId: 3, endHeaders: true, fragment: Uint8Array.of(0x88) },
  ] as Http2Frame[];
  for (let n = 0; n < 12; n++) {
    const id = n % 3 === 0 ? 3 : 1;
    const padded = n % 4 === 1;
    framesIn.push({
      type: "DATA",
      streamId: id,
      endStream: false,
      data: payload(id, n),
      ...(padded ? { padded: true, padLength: n * 3 } : {}),
    } as Http2Frame);
  }
  framesIn.push({ type: "DATA", streamId: 1, endStream: true, data: new Uint8Array(0) } as Http2Frame);
  framesIn.push({ type: "DATA", streamId: 3, endStream: true, data: utf8("end") } as Http2Frame);
  const wire = encodeHttp2Frames(framesIn);
  assert.ok(frames(wire, "none").some((f) => f.type === "DATA" && f.padLength > 3), "some DATA frames are padded");
  const check = async (chunks: Uint8Array[]) => {
    const messages = (await drain(streamOf(chunks).pipeThrough(new Http2ConnectionDecoderStream()))).values;
    assert.equal(messages.length, 2);
    for (const message of messages) {
      const body = concat((await drain(message.body)).values);
      assert.ok(body.length > 100);
      for (let k = 0; k < body.length; k++) {
        const at = message.inputOffsetOf(k);
        assert.ok(at !== undefined && wire[at] === body[k], `stream ${message.streamId}: byte ${k} placed at ${at}`);
      }
    }
  };
  await check([wire]);
  await check(Array.from(wire, (b) => Uint8Array.of(b)));
  await fc.assert(fc.asyncProperty(cutsFor(wire.length), (cuts) => check(splitAt(wire, cuts))), { numRuns: 30 });
});
