/**
 * {@linkcode JsonWatchEventDecoder}: the decoding of a JSON watch body (bytes to typed watch events) without a stream.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../events.ts";
import { type NdjsonDecoderOptions, NdjsonLineParser } from "./ndjson_decoder_stream.ts";
import { toWatchEvent } from "./watch_event_decoder_stream.ts";

/**
 * Options of {@linkcode JsonWatchEventDecoder} and `JsonWatchEventDecoderStream`.
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import { JsonWatchEventDecoderStream, type JsonWatchEventDecoderOptions } from "watchwire/wire";
 *
 * const options: JsonWatchEventDecoderOptions = { maxEventBytes: 64 };
 * const body = new Blob([`{"type":"ADDED","object":{"metadata":{"name":"${"x".repeat(100)}"}}}\n`]).stream();
 * try {
 *   await body.pipeThrough(new JsonWatchEventDecoderStream(options)).pipeTo(new WritableStream());
 * } catch (e) {
 *   if (e instanceof DecodeError) console.log(e.code, e.offset); // LINE_TOO_LONG 0
 * }
 * ```
 */
export type JsonWatchEventDecoderOptions = Pick<NdjsonDecoderOptions<unknown>, "maxEventBytes">;

/**
 * What `JsonWatchEventDecoderStream` does, as a `StreamDecoder`: the lines of a Kubernetes JSON watch body to typed
 * {@linkcode WatchEvent}s ({@linkcode NdjsonLineParser} with {@linkcode toWatchEvent}). For a stream of event batches
 * (`BatchDecoderStream`), or to decode inside another stage without a stream of its own.
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "watchwire";
 * import { JsonWatchEventDecoder } from "watchwire/wire";
 *
 * const decoder = new JsonWatchEventDecoder();
 * const events: WatchEvent[] = [];
 * const bytes = new TextEncoder().encode('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"DEL');
 * decoder.push(bytes, (event) => events.push(event));
 * decoder.push(new TextEncoder().encode('ETED","object":{"metadata":{"name":"a"}}}\n'), (event) => events.push(event));
 * decoder.finish((event) => events.push(event));
 * console.log(events.map((e) => e.type)); // [ "ADDED", "DELETED" ]
 * ```
 */
export class JsonWatchEventDecoder<T = KubernetesObject> extends NdjsonLineParser<WatchEvent<T>> {
  constructor(options: JsonWatchEventDecoderOptions = {}) {
    super({ ...options, map: toWatchEvent<T> });
  }
}
