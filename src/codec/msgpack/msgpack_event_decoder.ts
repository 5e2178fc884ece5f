/**
 * {@linkcode MsgpackEventDecoder}: the decoding of a watchwire msgpack event stream (bytes to typed watch events)
 * without a stream.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import { MsgpackEventReader } from "./msgpack_event_reader.ts";
import { InOrder, type UnpackrModule } from "./msgpackr.ts";
import { msgpackrUnpackr, newUnpackr } from "./unpackr.ts";
import type { MsgpackEventDecoderOptions } from "./msgpack_event_decoder_stream.ts";

/**
 * What `MsgpackEventDecoderStream` does, as a `StreamDecoder`: the bytes of a watchwire msgpack event stream to its
 * typed {@linkcode WatchEvent}s, with the same options and errors (see the stream). For a stream of event batches
 * (`BatchDecoderStream`: replaying a recording with one stream item per read), or to decode without a stream.
 * msgpackr loads when a decoder first decodes: until it has loaded (once per process), `push` and `finish` return a
 * promise (await it before the next call); from then on they return none.
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "watchwire";
 * import { BatchDecoderStream, MsgpackEventDecoder, MsgpackEventEncoderStream } from "watchwire/wire";
 *
 * const events: WatchEvent[] = ["a", "b", "c"].map((name) => ({ type: "ADDED", object: { metadata: { name } } }));
 * const recording = new Uint8Array(
 *   await new Response(ReadableStream.from(events).pipeThrough(new MsgpackEventEncoderStream())).arrayBuffer(),
 * );
 * const batches = await Array.fromAsync(
 *   ReadableStream.from([recording]).pipeThrough(new BatchDecoderStream(new MsgpackEventDecoder())),
 * );
 * console.log(batches.length, batches[0].length); // 1 3
 * ```
 */
export class MsgpackEventDecoder<T = KubernetesObject> implements StreamDecoder<Uint8Array, WatchEvent<T>> {
  // Held, not extended: the reader's module names msgpackr's types (which mention Node's Buffer), and the public
  // declarations must not, so that a consumer type-checks without @types/node.
  readonly #reader: MsgpackEventReader<T>;
  readonly #calls: InOrder<UnpackrModule> = new InOrder(msgpackrUnpackr);

  constructor(options: MsgpackEventDecoderOptions = {}) {
    this.#reader = new MsgpackEventReader<T>(options, newUnpackr);
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
