/**
 * `MsgpackEventDecoder` of `watchwire/msgpack-no-eval`: the same decoder on msgpackr's build without code generation.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../../../events.ts";
import type { StreamDecoder } from "../../../streams/decoder_stream.ts";
import { MsgpackEventReader } from "../msgpack_event_reader.ts";
import type { MsgpackEventDecoderOptions } from "../msgpack_event_decoder_stream.ts";
import { InOrder, type UnpackrModule } from "../msgpackr.ts";
import { msgpackrUnpackrNoEval, newUnpackrNoEval } from "../unpackr_no_eval.ts";

/**
 * The `MsgpackEventDecoder` of the `watchwire` entry point, with the same options, events and errors, on msgpackr's
 * decoder built without code generation: it never calls `new Function`, so under a Content-Security-Policy without
 * `'unsafe-eval'` the browser reports no violation. The one of `watchwire` tries `new Function` once a record shape
 * has been read three times, for a faster reader of that shape, and where code generation is forbidden falls back to
 * reading as this one always does (in a browser, the two then read alike). Elsewhere this one is slower: no compiled
 * readers, and in Node, Deno and Bun no native string extraction either (see docs/performance.md).
 * As there, `push` and `finish` return a promise until msgpackr has loaded (when a decoder first decodes).
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "watchwire";
 * import { BatchDecoderStream, MsgpackEventEncoderStream } from "watchwire/wire";
 * import { MsgpackEventDecoder } from "watchwire/msgpack-no-eval";
 *
 * const events: WatchEvent[] = ["a", "b", "c", "d"].map((name) => ({ type: "ADDED", object: { metadata: { name } } }));
 * const recording = new Uint8Array(
 *   await new Response(ReadableStream.from(events).pipeThrough(new MsgpackEventEncoderStream())).arrayBuffer(),
 * );
 * const batches = await Array.fromAsync(
 *   ReadableStream.from([recording]).pipeThrough(new BatchDecoderStream(new MsgpackEventDecoder())),
 * );
 * console.log(batches.length, batches[0].length); // 1 4
 * ```
 */
export class MsgpackEventDecoder<T = KubernetesObject> implements StreamDecoder<Uint8Array, WatchEvent<T>> {
  // Held, not extended: the reader's module names msgpackr's types (which mention Node's Buffer), and the public
  // declarations must not, so that a consumer type-checks without @types/node.
  readonly #reader: MsgpackEventReader<T>;
  readonly #calls: InOrder<UnpackrModule> = new InOrder(msgpackrUnpackrNoEval);

  constructor(options: MsgpackEventDecoderOptions = {}) {
    this.#reader = new MsgpackEventReader<T>(options, newUnpackrNoEval);
  }

  /** Decodes the events `chunk` completes. Throws (or rejects with) a `DecodeError` on a fault. */
  push(chunk: Uint8Array, emit: (event: WatchEvent<T>) => void): void | Promise<void> {
    return this.#calls.run(() => this.#reader.push(chunk, emit));
  }

  /** Ends the input: `TRUNCATED` if it stopped inside the header or an event. */
  finish(): void | Promise<void> {
    return this.#calls.after(() => this.#reader.finish());
  }
}
