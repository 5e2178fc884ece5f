/**
 * {@linkcode JsonWatchEventDecoderStream}: a JSON watch body (bytes) to typed watch events in one stage.
 *
 * @module
 */
import { DecoderStream } from "../streams/decoder_stream.ts";
import type { KubernetesObject, WatchEvent } from "../events.ts";
import { JsonWatchEventDecoder, type JsonWatchEventDecoderOptions } from "./json_watch_event_decoder.ts";

/**
 * The body of a Kubernetes JSON watch (`application/json;stream=watch`, one event per line) to typed
 * {@linkcode WatchEvent}s: {@linkcode NdjsonDecoderStream} and `toWatchEvent` fused into one stage
 * ({@linkcode JsonWatchEventDecoder}), so each event costs one enqueue. Errors carry the byte offset of the offending line.
 *
 * @example
 * ```ts
 * import { JsonWatchEventDecoderStream } from "watchwire/wire";
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
    super(new JsonWatchEventDecoder<T>(options));
  }
}
