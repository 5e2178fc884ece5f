/**
 * The checks on what a runtime without Node APIs made of the watch server's watches (tests/peers/watch_checks.ts
 * reports it): shared by tests/workerd.test.ts (workerd) and scripts/browser-check.ts (Chromium, Firefox). Each
 * throws an AssertionError naming the stream pair and event on a difference.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { JsonWatchEventDecoderStream } from "../wire.ts";
import type { StreamPair } from "./_kubernetes_streams.ts";
import { drain, streamOf } from "./_util.ts";
import type { Codegen, Ended, MsgpackRoundTrip, PairResult } from "./peers/watch_checks.ts";
import { fixtures, JSON_WATCH, LIVE_EVENTS, pairName, PROTOBUF_WATCH, streamPairs } from "./peers/watch_server.ts";

/** `eval` and `new Function` both threw an EvalError `where` (a Worker, a page whose CSP forbids `'unsafe-eval'`). */
export function checkCodegenForbidden(codegen: Codegen, where: string): void {
  assert.match(codegen.eval, /EvalError/, `eval is forbidden in ${where}`);
  assert.match(codegen.Function, /EvalError/, `new Function is forbidden in ${where}`);
}

/**
 * A stream pair as decoded there: the JSON stream as this runtime decodes it; the protobuf stream in full mode to the
 * same events and the same end (kinds that are not objects refuse the BOOKMARK in both), one by one and in batches; in metadata mode, each object
 * kept as bytes with the full object's apiVersion, kind and metadata, and `decode()` the full object, whether objects
 * keep views of the reads within the bound or always. Returns how many objects metadata mode kept as bytes.
 */
async function checkPairResult(pair: StreamPair, result: PairResult): Promise<number> {
  const name = pairName(pair);
  const { json, full, metadata, views, batched } = result;
  assert.equal(json.type, JSON_WATCH);
  assert.equal(full.type, PROTOBUF_WATCH);
  const here = await drain(
    streamOf([new Uint8Array(readFileSync(join(fixtures, pair.json)))]).pipeThrough(
      new JsonWatchEventDecoderStream<unknown>(),
    ),
  );
  assert.deepEqual(json.events, JSON.parse(JSON.stringify(here.values)), `${name}: the JSON stream`);
  assert.equal(json.error?.code, (here.error as { code?: string } | undefined)?.code, `${name}: the JSON stream's end`);
  assert.deepEqual(full.events, json.events, `${name}: protobuf vs JSON`);
  assert.equal(full.error === undefined, json.error === undefined, `${name}: ${JSON.stringify(full.error)}`);
  assert.ok(full.events.length >= (full.error === undefined ? 5 : 2), `${name}: ${full.events.length} events`);
  assert.deepEqual(batched.events, full.events, `${name}: in batches vs one by one`);
  assert.deepEqual(batched.error, full.error, `${name}: the end in batches`);
  assert.deepEqual(metadata.error, full.error, `${name}: metadata mode's end`);
  assert.equal(metadata.events.length, full.events.length, `${name}: metadata mode's events`);
  assert.deepEqual(views.events, metadata.events, `${name}: metadata mode keeping views of the reads`);
  assert.deepEqual(views.error, metadata.error, `${name}: the end, keeping views of the reads`);
  let kept = 0;
  metadata.events.forEach((event, i) => {
    const expected = full.events[i] as { type: string; object: Record<string, unknown> };
    const partial = (event as { kept?: Record<string, unknown> }).kept;
    if (partial === undefined) return assert.deepEqual(event, expected, `${name} event ${i}`);
    kept++;
    assert.equal((event as { type: string }).type, expected.type);
    const { apiVersion, kind, metadata } = expected.object;
    assert.deepEqual(
      { apiVersion: partial.apiVersion, kind: partial.kind, metadata: partial.metadata },
      { apiVersion, kind, metadata },
      `${name} event ${i}: metadata`,
    );
    assert.deepEqual(partial.decoded, expected.object, `${name} event ${i}: decode()`);
  });
  return kept;
}

/**
 * {@linkcode checkPairResult} for every stream pair, with its result from `resultOf`, then {@linkcode checkKept}.
 * Returns the events compared (each pair's JSON events, equal to its protobuf ones: what
 * {@linkcode checkMsgpackRoundTrip} expects) and the objects metadata mode kept as bytes.
 */
export async function checkPairResults(
  resultOf: (pair: StreamPair) => PairResult | Promise<PairResult>,
): Promise<{ events: number; kept: number }> {
  let events = 0;
  let kept = 0;
  for (const pair of streamPairs) {
    const result = await resultOf(pair);
    kept += await checkPairResult(pair, result);
    events += result.json.events.length;
  }
  checkKept(kept, streamPairs.length);
  return { events, kept };
}

/** Metadata mode kept most objects as bytes: ADDED, MODIFIED and DELETED of every kind that is an object. */
function checkKept(kept: number, pairs: number): void {
  assert.ok(kept > 2 * pairs, `${kept} objects kept as bytes`);
}

/** The live watch gave every event, so each was delivered when its bytes arrived. */
export function checkLiveWatch(live: Ended & { events: unknown[] }): void {
  assert.equal(live.error, undefined);
  assert.deepEqual(live.events.map((e) => (e as { type: string }).type), LIVE_EVENTS);
}

/** The live watch in batches gave every event, each in a batch of its own, as it came. */
export function checkLiveWatchBatches(live: Ended & { events: unknown[]; batches: number[] }): void {
  checkLiveWatch(live);
  assert.deepEqual(live.batches, LIVE_EVENTS.map(() => 1));
}

/**
 * Every JSON stream's events (those before a kind that is not an object refuses its BOOKMARK) went through msgpack
 * there and came back the same: `jsonEvents` of them (the JSON events of the pair results, which
 * {@linkcode checkPairResult} compared with what this runtime decodes), no difference. Where CSP violations were
 * counted: exactly the one try of msgpackr's main build, or none with `noEval` (watchwire/msgpack-no-eval's decoder).
 */
export function checkMsgpackRoundTrip(
  result: MsgpackRoundTrip,
  jsonEvents: number,
  { noEval = false }: { noEval?: boolean } = {},
): void {
  const what = noEval ? "msgpack round trip (watchwire/msgpack-no-eval)" : "msgpack round trip";
  assert.equal(result.difference, null, what);
  assert.equal(result.events, jsonEvents, `events through ${what}`);
  assert.ok(result.bytes > 0);
  // Where violations can be counted: none without code generation; the main build's one try shows that they are.
  if (result.violations !== null) assert.equal(result.violations, noEval ? 0 : 1, `CSP violations in ${what}`);
}
