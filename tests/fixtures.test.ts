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
import { decodeHttp1Exchanges, Http1ResponseDecoderStream } from "../mod.ts";
import { cutsFor, splitAt, text } from "./_util.ts";
import { type CapturedEvent, decodeCaptureBytes, lazyStream } from "./peers/decode_capture.ts";

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
