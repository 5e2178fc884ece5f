/**
 * {@linkcode JsonWatchEventDecoder}: the decoding of a JSON watch body (bytes to typed watch events) without a stream.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
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
  /** The body's first two bytes, as they arrive (`-1` for one not seen yet). */
  readonly #head = [-1, -1];
  #seen = 0;

  constructor(options: JsonWatchEventDecoderOptions = {}) {
    super({ ...options, map: toWatchEvent<T> });
  }

  override push(chunk: Uint8Array, emit: (value: WatchEvent<T>) => void): void {
    for (let i = 0; this.#seen < 2 && i < chunk.length; i++) this.#head[this.#seen++] = chunk[i];
    try {
      super.push(chunk, emit);
    } catch (error) {
      throw this.#explained(error);
    }
  }

  override finish(emit: (value: WatchEvent<T>) => void): void {
    try {
      super.finish(emit);
    } catch (error) {
      throw this.#explained(error);
    }
  }

  /**
   * A body that opens a JSON document over several lines (`{` and a line break: Go's indented JSON, which
   * kube-apiserver writes for `?pretty=true` or to curl) is not a watch, whose events are one per line: most likely a
   * list's answer. Its first line's error says so; any other error is left as it is.
   */
  #explained(error: unknown): unknown {
    const [first, second] = this.#head;
    if (
      !(error instanceof DecodeError) || error.code !== "JSON_INVALID" || error.offset !== 0 || first !== 0x7b ||
      (second !== 0x0a && second !== 0x0d)
    ) return error;
    return new DecodeError(
      "JSON_INVALID",
      0,
      "the body is one JSON document over several lines (pretty-printed; a list's answer?), not a stream of watch " +
        "events, one per line: was watch=true left out of the URL?",
      { cause: error },
    );
  }
}
