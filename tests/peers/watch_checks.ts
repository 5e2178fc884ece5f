/**
 * What a runtime without Node APIs does with watches from the watch server (tests/peers/watch_server.ts), reported as
 * plain data for the test to check (tests/_watch_check_results.ts): bundled with watchwire by esbuild and run as a
 * Worker in workerd (tests/peers/workerd_worker.ts) and as a page's module in Chromium and Firefox
 * (tests/peers/browser_page.ts). Only what all have: `fetch`, Web Streams.
 *
 * @module
 */
import {
  DecodeError,
  decodeWatchResponse,
  decodeWatchResponseBatches,
  KubernetesProtobufObject,
  type WatchEvent,
} from "../../mod.ts";
import { MsgpackEventDecoderStream, MsgpackEventEncoderStream } from "../../wire.ts";
import { builtinDecoders } from "../../kubernetes.ts";
import { MsgpackEventDecoderStream as NoEvalMsgpackEventDecoderStream } from "../../msgpack_no_eval.ts";
import { piecesOf } from "./pieces.ts";

/** How a decoded stream ended: the error that ended it (name and, for a DecodeError, its code), if any. */
export interface Ended {
  error?: { name: string; code?: string };
}

/** A decoded watch: the response's Content-Type, its events, how it ended. */
export interface Decoded extends Ended {
  type: string;
  events: unknown[];
}

/**
 * A refgen stream pair as decoded here: the JSON stream, and the protobuf one in full and in metadata mode, in metadata
 * mode again with `inputViews: "always"` (objects keep views of this runtime's reads, never copies), and in full mode
 * again in batches (`decodeWatchResponseBatches`; its events flattened).
 */
export interface PairResult {
  json: Decoded;
  full: Decoded;
  metadata: Decoded;
  views: Decoded;
  batched: Decoded;
}

/** Whether `eval` and `new Function` work here: "allowed", or the text of what each threw. */
export interface Codegen {
  eval: string;
  Function: string;
}

/** Every built-in kind decoded in full, as the JSON stream of the same objects. */
const FULL = { protobuf: { decoders: builtinDecoders } };

function ended(error: unknown): Ended {
  return { error: error instanceof DecodeError ? { name: error.name, code: error.code } : { name: String(error) } };
}

/** An event of metadata mode as plain data: an object kept as bytes becomes what it offers. */
export function metadataView(event: WatchEvent<unknown>): unknown {
  const object = (event as { object?: unknown }).object;
  if (!(object instanceof KubernetesProtobufObject)) return event;
  const { apiVersion, kind, metadata } = object;
  return { type: event.type, kept: { apiVersion, kind, metadata, decoded: object.decode() } };
}

async function decode(url: string, mode: "full" | "metadata", inputViews?: "always"): Promise<Decoded> {
  const response = await fetch(url);
  const type = response.headers.get("content-type") ?? "";
  const events: unknown[] = [];
  try {
    for await (
      const event of decodeWatchResponse(response, { protobuf: { decoders: builtinDecoders, mode, inputViews } })
    ) {
      events.push(mode === "metadata" ? metadataView(event) : event);
    }
  } catch (error) {
    return { type, events, ...ended(error) };
  }
  return { type, events };
}

async function decodeBatches(url: string): Promise<Decoded> {
  const response = await fetch(url);
  const type = response.headers.get("content-type") ?? "";
  const events: unknown[] = [];
  try {
    for await (const batch of decodeWatchResponseBatches(response, FULL)) events.push(...batch);
  } catch (error) {
    return { type, events, ...ended(error) };
  }
  return { type, events };
}

/** Fetches the stream pair `name` (`ORIGIN/streams/NAME.pb` and `.json`) and decodes it in each way. */
export async function decodePair(origin: string, name: string): Promise<PairResult> {
  const base = `${origin}/streams/${encodeURIComponent(name)}`;
  return {
    json: await decode(`${base}.json`, "full"),
    full: await decode(`${base}.pb`, "full"),
    metadata: await decode(`${base}.pb`, "metadata"),
    views: await decode(`${base}.pb`, "metadata", "always"),
    batched: await decodeBatches(`${base}.pb`),
  };
}

/**
 * Follows the live watch `ORIGIN/live/NAME`, whose server sends each event only after `ORIGIN/ack?n=K` says that K
 * events have arrived: it can only end if every event is delivered as soon as its bytes arrive.
 */
export async function followLiveWatch(origin: string, name: string): Promise<Ended & { events: unknown[] }> {
  const response = await fetch(`${origin}/live/${encodeURIComponent(name)}`);
  const events: unknown[] = [];
  try {
    for await (const event of decodeWatchResponse(response, FULL)) {
      events.push(event);
      await (await fetch(`${origin}/ack?n=${events.length}`)).arrayBuffer();
    }
  } catch (error) {
    return { events, ...ended(error) };
  }
  return { events };
}

/**
 * {@linkcode followLiveWatch} with `decodeWatchResponseBatches`: each batch's size too. As the server sends each event
 * only after the last was acknowledged, every batch must hold one event, handed on without waiting for more bytes.
 */
export async function followLiveWatchBatches(
  origin: string,
  name: string,
): Promise<Ended & { events: unknown[]; batches: number[] }> {
  const response = await fetch(`${origin}/live/${encodeURIComponent(name)}`);
  const events: unknown[] = [];
  const batches: number[] = [];
  try {
    for await (const batch of decodeWatchResponseBatches(response, FULL)) {
      events.push(...batch);
      batches.push(batch.length);
      await (await fetch(`${origin}/ack?n=${events.length}`)).arrayBuffer();
    }
  } catch (error) {
    return { events, batches, ...ended(error) };
  }
  return { events, batches };
}

/** Whether code generation from strings works here. */
export function codegen(): Codegen {
  const attempt = (f: () => unknown): string => {
    try {
      f();
      return "allowed";
    } catch (error) {
      return String(error);
    }
  };
  // Indirect eval: what a bundler cannot rewrite.
  const indirectEval = globalThis.eval;
  return { eval: attempt(() => indirectEval("1")), Function: attempt(() => new Function("return 1")()) };
}

/** The msgpack round trip of every JSON stream's events here: how many, how many bytes, and the first difference. */
export interface MsgpackRoundTrip {
  events: number;
  bytes: number;
  /** Where the decoded events first differ from the encoded ones (a path and both values), or null. */
  difference: string | null;
  /**
   * CSP violations reported while it ran, or null where they cannot be counted (msgpackr's main build tries
   * `new Function` for shapes it reads often, once per context; its build without code generation never does).
   */
  violations: number | null;
}

/** Where `b` first differs from `a` (`Object.is` for primitives, the same keys in the same order), or null. */
function firstDifference(a: unknown, b: unknown, path: string): string | null {
  if (Object.is(a, b)) return null;
  const show = (v: unknown) => (Object.is(v, -0) ? "-0" : JSON.stringify(v) ?? String(v)).slice(0, 80);
  if (
    typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)
  ) {
    return `${path}: ${show(a)} became ${show(b)}`;
  }
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.join("\0") !== keysB.join("\0")) return `${path}: keys ${show(keysA)} became ${show(keysB)}`;
  for (const key of keysA) {
    const found = firstDifference(
      (a as Record<string, unknown>)[key],
      (b as Record<string, unknown>)[key],
      `${path}.${key}`,
    );
    if (found !== null) return found;
  }
  return null;
}

/**
 * Decodes the JSON stream of every stream pair the watch server lists (`ORIGIN/names`), writes all their events as one
 * msgpack event stream (`MsgpackEventEncoderStream`), reads it back in the watch server's uneven pieces of 1 to 4096
 * bytes (`MsgpackEventDecoderStream`) and compares: msgpack's round trip where code generation may be forbidden.
 * `decoder`: `"main"`, the decoder of the main entry points (msgpackr's main build, which tries `new Function`), or
 * `"no-eval"`, that of watchwire/msgpack-no-eval (msgpackr's build without code generation).
 */
export async function msgpackRoundTrip(origin: string, decoder: "main" | "no-eval"): Promise<MsgpackRoundTrip> {
  const { names } = (await (await fetch(`${origin}/names`)).json()) as { names: string[] };
  const events: WatchEvent<unknown>[] = [];
  for (const name of names) {
    const response = await fetch(`${origin}/streams/${encodeURIComponent(name)}.json`);
    try {
      for await (const event of decodeWatchResponse(response, FULL)) events.push(event);
    } catch {
      // Kinds that are not objects refuse their BOOKMARK: the events before it are the ones to send.
    }
  }
  let violations: number | null = null;
  const count = () => violations !== null && violations++;
  if ("SecurityPolicyViolationEvent" in globalThis) {
    violations = 0;
    addEventListener("securitypolicyviolation", count);
  }
  try {
    const encoded = new Uint8Array(
      await new Response(
        new ReadableStream<WatchEvent<unknown>>({
          start(controller) {
            for (const event of events) controller.enqueue(event);
            controller.close();
          },
        }).pipeThrough(new MsgpackEventEncoderStream()),
      ).arrayBuffer(),
    );
    const pieces = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const piece of piecesOf(encoded, encoded.length)) controller.enqueue(piece);
        controller.close();
      },
    });
    const decoded: unknown[] = [];
    const stream = decoder === "main" ? new MsgpackEventDecoderStream() : new NoEvalMsgpackEventDecoderStream();
    for await (const event of pieces.pipeThrough(stream)) decoded.push(event);
    // Reports come in a task of their own after the violation.
    await new Promise((resolve) => setTimeout(resolve, 50));
    return {
      events: events.length,
      bytes: encoded.length,
      difference: firstDifference(events, decoded, "events"),
      violations,
    };
  } finally {
    if (violations !== null) removeEventListener("securitypolicyviolation", count);
  }
}
