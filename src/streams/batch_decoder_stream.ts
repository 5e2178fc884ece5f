/**
 * {@linkcode BatchDecoderStream}: a {@linkcode DecoderStream} that hands on, for each input chunk, the values it
 * completed as one array.
 *
 * @module
 */
import { DecoderStream, type DecoderStreamOptions, type StreamDecoder } from "./decoder_stream.ts";

/**
 * A `TransformStream` that runs a {@linkcode StreamDecoder} as {@linkcode DecoderStream} does, but enqueues the
 * values each input chunk completes as one array (none for a chunk that completes nothing), so a stream item costs
 * once per chunk rather than once per value. A Web Streams item costs far more than decoding a small event in some
 * runtimes (browsers above all: bench/RESULTS.md §1), so a reader that handles many events at a time (replaying a
 * capture, applying a burst of watch events to a store) reads them fastest this way. No value waits for later input: a batch holds
 * exactly what its chunk completed, and is handed on when the chunk has been decoded.
 *
 * Failures as in {@linkcode DecoderStream}: the values decoded before a fault, in earlier chunks and in the faulty
 * chunk itself (as a last, shorter batch), reach the reader before the error. `finish` and `salvage` each hand on
 * what they complete as one more batch. `readableHighWaterMark` counts batches.
 *
 * @example
 * ```ts
 * import { BatchDecoderStream, JsonWatchEventDecoder } from "watchwire/wire";
 *
 * // Two reads: the first completes two events and begins a third, which the second completes.
 * const reads = [
 *   '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ADDED","object":{"metadata":{"name":"b"}}}\n{"type"',
 *   ':"DELETED","object":{"metadata":{"name":"a"}}}\n',
 * ].map((text) => new TextEncoder().encode(text));
 * const batches = await Array.fromAsync(ReadableStream.from(reads).pipeThrough(new BatchDecoderStream(new JsonWatchEventDecoder())));
 * console.log(batches.map((batch) => batch.map((event) => event.type))); // [ [ "ADDED", "ADDED" ], [ "DELETED" ] ]
 * ```
 */
export class BatchDecoderStream<I, O> extends DecoderStream<I, O[]> {
  constructor(decoder: StreamDecoder<I, O>, options: DecoderStreamOptions = {}) {
    super(new BatchingDecoder(decoder), options);
  }
}

/** `decoder` with the values of each call gathered into one array. */
class BatchingDecoder<I, O> implements StreamDecoder<I, O[]> {
  readonly #decoder: StreamDecoder<I, O>;
  #batch: O[] = [];
  // One function for the stream's whole life, handed to every call of the decoder.
  readonly #add = (value: O): void => {
    this.#batch.push(value);
  };
  readonly salvage?: (emit: (batch: O[]) => void) => void | Promise<void>;

  constructor(decoder: StreamDecoder<I, O>) {
    this.#decoder = decoder;
    const salvage = decoder.salvage;
    if (salvage !== undefined) this.salvage = (emit) => this.#gather(emit, () => salvage.call(decoder, this.#add));
  }

  push(chunk: I, emit: (batch: O[]) => void): void | Promise<void> {
    return this.#gather(emit, () => this.#decoder.push(chunk, this.#add));
  }

  finish(emit: (batch: O[]) => void): void | Promise<void> {
    return this.#gather(emit, () => this.#decoder.finish(this.#add));
  }

  failed(reason: unknown): void {
    this.#decoder.failed?.(reason);
  }

  /**
   * Runs one call of the decoder, then hands on what it emitted as one batch once the call has settled, also when it
   * throws or rejects (what came before the fault).
   */
  #gather(emit: (batch: O[]) => void, call: () => void | Promise<void>): void | Promise<void> {
    let result: void | Promise<void>;
    try {
      result = call();
    } catch (error) {
      this.#flush(emit);
      throw error;
    }
    if (typeof (result as PromiseLike<void> | undefined)?.then !== "function") {
      this.#flush(emit);
      return;
    }
    return Promise.resolve(result).then(
      () => this.#flush(emit),
      (error) => {
        this.#flush(emit);
        throw error;
      },
    );
  }

  #flush(emit: (batch: O[]) => void): void {
    const batch = this.#batch;
    if (batch.length === 0) return;
    this.#batch = [];
    emit(batch);
  }
}
