/**
 * {@linkcode JsonWatchEventDecoderStream}: a JSON watch body (bytes) to typed watch events in one stage.
 *
 * @module
 */
import { DecoderStream } from "../streams/decoder_stream.ts";
import type { KubernetesObject, WatchEvent } from "../events.ts";
import { type NdjsonDecoderOptions, NdjsonLineParser } from "./ndjson_decoder_stream.ts";
import { toWatchEvent } from "./watch_event.ts";

/**
 * Options of {@linkcode JsonWatchEventDecoderStream}.
 *
 * @example
 * ```ts
 * import { DecodeError, JsonWatchEventDecoderStream, type JsonWatchEventDecoderOptions } from "watchwire";
 *
 * const options: JsonWatchEventDecoderOptions = { maxLineBytes: 64 };
 * const body = new Blob([`{"type":"ADDED","object":{"metadata":{"name":"${"x".repeat(100)}"}}}\n`]).stream();
 * try {
 *   await body.pipeThrough(new JsonWatchEventDecoderStream(options)).pipeTo(new WritableStream());
 * } catch (e) {
 *   if (e instanceof DecodeError) console.log(e.code, e.offset); // LINE_TOO_LONG 0
 * }
 * ```
 */
export type JsonWatchEventDecoderOptions = Pick<NdjsonDecoderOptions<unknown>, "maxLineBytes">;

/**
 * The body of a Kubernetes JSON watch (`application/json;stream=watch`, one event per line) to typed
 * {@linkcode WatchEvent}s: {@linkcode NdjsonDecoderStream} and {@linkcode toWatchEvent} fused into one stage, so each
 * event costs one enqueue. Errors carry the byte offset of the offending line.
 *
 * @example
 * ```ts
 * import { JsonWatchEventDecoderStream } from "watchwire";
 *
 * const body = new Blob([
 *   '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web","resourceVersion":"7"}}}\n',
 *   '{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}\n',
 * ]).stream();
 * for await (const event of body.pipeThrough(new JsonWatchEventDecoderStream())) {
 *   console.log(event.type); // ADDED, then ERROR
 * }
 * ```
 */
export class JsonWatchEventDecoderStream<T = KubernetesObject> extends DecoderStream<Uint8Array, WatchEvent<T>> {
  constructor(options: JsonWatchEventDecoderOptions = {}) {
    super(new NdjsonLineParser<WatchEvent<T>>({ ...options, map: toWatchEvent<T> }));
  }
}
