/**
 * Every capture in fixtures/ (recorded from real servers by scripts/record-fixtures.ts, see fixtures/README.md)
 * decodes, through Http1ResponseDecoderStream and decodeWatchResponse on each response, to exactly the events of its
 * `.events.ndjson` (written from the generator, not from the decoder), whole and split.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { constants, gunzipSync } from "node:zlib";
import { DecodeError } from "../mod.ts";
import { decodeHttp1Exchanges, Http1ResponseDecoderStream } from "../capture.ts";
import { concat, cutsFor, drain, splitAt, text } from "./_util.ts";
import { type CapturedEvent, decodeCapture, decodeCaptureBytes, lazyStream } from "./peers/decode_capture.ts";

const dir = fileURLToPath(new URL("../fixtures/", import.meta.url));
const captures = readdirSync(dir)
  .filter((name) => name.endsWith(".http") && !name.endsWith(".request.http"))
  .sort();

function read(name: string): Uint8Array {
  return new Uint8Array(readFileSync(dir + name));
}

function expectedEvents(base: string): CapturedEvent[] {
  return text(read(`${base}.events.ndjson`))
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as CapturedEvent);
}

/** Status and framing of every response of a capture (bodies skipped). */
async function heads(capture: Uint8Array): Promise<Array<{ status: number; framing: string; decoded?: string }>> {
  const out: Array<{ status: number; framing: string; decoded?: string }> = [];
  const reader = lazyStream([capture]).pipeThrough(new Http1ResponseDecoderStream()).getReader();
  for (;;) {
    const r = await reader.read();
    if (r.done) return out;
    out.push({
      status: r.value.status,
      framing: r.value.framing,
      ...(r.value.decoded ? { decoded: r.value.decoded } : {}),
    });
    await r.value.body.cancel();
  }
}

test("fixtures: the three servers' captures are all there, each with its request and expected events", () => {
  const files = new Set(readdirSync(dir));
  for (const server of ["node-http", "deno-serve", "bun-serve"]) {
    assert.ok(files.has(`${server}-watch.http`), `${server}-watch.http`);
    assert.ok(files.has(`${server}-expired.http`), `${server}-expired.http`);
  }
  assert.ok(files.has("node-http-watch-gzip.http"));
  for (const name of captures) {
    const base = name.slice(0, -".http".length);
    assert.ok(files.has(`${base}.request.http`), `${base}.request.http`);
    assert.ok(files.has(`${base}.events.ndjson`), `${base}.events.ndjson`);
  }
  for (const name of files) {
    const base = /^(.*?)(\.request\.http|\.events\.ndjson)$/.exec(name)?.[1];
    if (base !== undefined) assert.ok(captures.includes(`${base}.http`), `${name} belongs to no capture`);
  }
});

for (const name of captures) {
  const base = name.slice(0, -".http".length);

  test(`fixtures/${name}: decodes to exactly the events of ${base}.events.ndjson`, async () => {
    const capture = read(name);
    const expected = expectedEvents(base);
    assert.ok(expected.length > 0);
    assert.deepEqual(await decodeCaptureBytes([capture]), expected);
    // One response per request, with the statuses the expected events name.
    const requests = text(read(`${base}.request.http`)).match(/^GET [^ ]+ HTTP\/1\.1\r$/gm) ?? [];
    const got = await heads(capture);
    assert.equal(got.length, requests.length);
    const statuses: number[] = [];
    for (const e of expected) statuses[e.response] = e.status;
    assert.deepEqual(got.map((h) => h.status), statuses);
    for (const h of got) assert.equal(h.framing, h.status === 200 ? "chunked" : "content-length");
    if (base.endsWith("-gzip")) assert.ok(got.every((h) => h.decoded === "gzip"));
    // With the request direction, each response is paired with the request the line scan above found.
    const paired: string[] = [];
    const exchanges = decodeHttp1Exchanges(lazyStream([capture]), lazyStream([read(`${base}.request.http`)]));
    for await (const { request, response } of exchanges) {
      paired.push(`${request?.method} ${request?.target} ${request?.version}\r`);
      await response.body.cancel();
    }
    assert.deepEqual(paired, requests);
  });

  test(`fixtures/${name}: split invariance (random cut points, dense pieces)`, async () => {
    const capture = read(name);
    const expected = expectedEvents(base);
    for (const cuts of fc.sample(cutsFor(capture.length), { numRuns: 3, seed: capture.length })) {
      assert.deepEqual(await decodeCaptureBytes(splitAt(capture, cuts)), expected, `cuts ${cuts}`);
    }
    const dense: number[] = [];
    for (let at = 0, step = 1; at < capture.length; step = (step * 5 + 2) % 31 + 1) dense.push(at += step);
    assert.deepEqual(await decodeCaptureBytes(splitAt(capture, dense)), expected, "dense pieces");
  });
}

/**
 * Where the chunk data of each chunked response of `capture` lies (`[start, end)` in the capture), read with a
 * parser of this test's own: hex size line, data, CRLF, up to the last chunk (no extensions or trailers here).
 */
function chunkData(capture: Uint8Array): Array<Array<[number, number]>> {
  const latin1 = new TextDecoder("latin1").decode(capture);
  const responses: Array<Array<[number, number]>> = [];
  for (let at = latin1.indexOf("HTTP/1.1 "); at >= 0; at = latin1.indexOf("HTTP/1.1 ", at)) {
    const pieces: Array<[number, number]> = [];
    at = latin1.indexOf("\r\n\r\n", at) + 4;
    for (;;) {
      const eol = latin1.indexOf("\r\n", at);
      const size = parseInt(latin1.slice(at, eol), 16);
      at = eol + 2;
      if (size === 0) break;
      pieces.push([at, at + size]);
      at += size + 2;
    }
    at += 2;
    responses.push(pieces);
  }
  return responses;
}

test("fixtures/node-http-watch-gzip.http cut off anywhere: every event its gzip bytes so far hold arrives, then TRUNCATED", async () => {
  const capture = read("node-http-watch-gzip.http");
  const expected = expectedEvents("node-http-watch-gzip");
  const responses = chunkData(capture);
  assert.equal(responses.length, 2);
  /** The events a reader must get from the capture cut at `cut`: per response, the whole lines zlib makes of its
   * gzip bytes before the cut (flushed, as a decoder handing on all it can must). */
  const eventsBefore = (cut: number) => {
    const out: CapturedEvent[] = [];
    responses.forEach((pieces, response) => {
      const payload = concat(
        pieces.filter(([start]) => start < cut).map(([start, end]) => capture.subarray(start, Math.min(end, cut))),
      );
      const lines =
        text(new Uint8Array(gunzipSync(payload, { finishFlush: constants.Z_SYNC_FLUSH }))).split("\n").length - 1;
      out.push(...expected.filter((e) => e.response === response).slice(0, lines));
    });
    return out;
  };
  const cuts = fc.sample(fc.integer({ min: 0, max: capture.length }), { numRuns: 60, seed: 7 });
  const last = responses[1][responses[1].length - 1][1];
  cuts.push(last - 1, last - 30, responses[0][responses[0].length - 1][1] - 5, capture.length);
  let partial = 0;
  for (const cut of cuts) {
    const want = eventsBefore(cut);
    const { values, error } = await drain(decodeCapture(lazyStream(splitAt(capture.subarray(0, cut), [cut >> 1]))));
    assert.deepEqual(values, want, `cut at ${cut}`);
    if (cut === capture.length) assert.equal(error, undefined);
    else if (error !== undefined) {
      assert.ok(
        error instanceof DecodeError && error.code === "TRUNCATED" && error.offset === cut,
        `cut at ${cut}: ${error}`,
      );
    }
    const response = cut > responses[1][0][0] ? 1 : 0;
    const ofCut = want.filter((e) => e.response === response).length;
    if (ofCut > 0 && ofCut < expected.filter((e) => e.response === response).length) partial++;
  }
  // The cuts include ones inside a body after some of its events, which is what this is about.
  assert.ok(partial >= 3, `${partial} cuts fell after some but not all events of a body`);
});
