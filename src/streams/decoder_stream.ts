/**
 * {@linkcode DecoderStream}: the `TransformStream` every watchwire decoder stage is, with one guarantee a plain
 * `TransformStream` does not give: when decoding fails, everything decoded before the fault reaches the reader first.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";

/**
 * The decoding logic of a stage: no streams, just input in and values out.
 *
 * @example
 * ```ts
 * import { DecoderStream, type StreamDecoder } from "watchwire/wire";
 *
 * // Text to lines; a line split across chunks waits in `#tail` for the rest.
 * class LineDecoder implements StreamDecoder<string, string> {
 *   #tail = "";
 *   push(chunk: string, emit: (line: string) => void): void {
 *     const lines = (this.#tail + chunk).split("\n");
 *     this.#tail = lines.pop() ?? "";
 *     for (const line of lines) emit(line);
 *   }
 *   finish(emit: (line: string) => void): void {
 *     if (this.#tail !== "") emit(this.#tail);
 *   }
 * }
 * const lines = await Array.fromAsync(ReadableStream.from(["a\nb", "c\nd"]).pipeThrough(new DecoderStream(new LineDecoder())));
 * console.log(lines.join(" ")); // a bc d
 * ```
 */
export interface StreamDecoder<I, O> {
  /** Decodes `chunk`, passing each output value to `emit`. May wait (e.g. for a body's reader). Throws on a fault. */
  push(chunk: I, emit: (value: O) => void): void | Promise<void>;
  /** The input has ended: emits what remains, or throws if the input ended too early. */
  finish(emit: (value: O) => void): void | Promise<void>;
  /**
   * The input has failed (the stream piped in errored, or the writer aborted): emits what the input received so far
   * still decodes to, before the stage passes the failure on. Only a decoder whose output can lag behind its input
   * needs it (one that hands the work to an asynchronous engine); one that emits as it decodes has nothing left. A
   * fault it throws (one of its own, in input that came before the failure) replaces the input's failure.
   */
  salvage?(emit: (value: O) => void): void | Promise<void>;
  /** Told once when the stage fails (its own fault, the input's failure, or the reader's cancellation). */
  failed?(reason: unknown): void;
}

/**
 * Options of {@linkcode DecoderStream}.
 *
 * @example
 * ```ts
 * import { DecoderStream, type DecoderStreamOptions } from "watchwire/wire";
 *
 * // Up to 16 decoded values may wait for a slow reader before the stage stops taking input.
 * const options: DecoderStreamOptions = { readableHighWaterMark: 16 };
 * const upper = new DecoderStream<string, string>({ push: (s, emit) => emit(s.toUpperCase()), finish() {} }, options);
 * const writer = upper.writable.getWriter();
 * await writer.write("a"); // with the default (0) this would wait for a reader
 * await writer.write("b");
 * await writer.close();
 * console.log((await Array.fromAsync(upper.readable)).join("")); // AB
 * ```
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import { InflateStream } from "watchwire/wire";
 *
 * // A deflate body that starts at byte 100 of a larger input: its faults named there (as the HTTP decoders do).
 * const inflate = new InflateStream({
 *   placeFault: (e) => new DecodeError(e.code, 100 + e.offset, e.detail, { context: "body of message 1" }),
 * });
 * try {
 *   await new Response(new Blob([Uint8Array.of(0x78, 0x9c, 0xff)]).stream().pipeThrough(inflate)).text();
 * } catch (e) {
 *   if (e instanceof DecodeError) console.log(e.code, e.offset, e.context); // DECOMPRESSION_FAILED 102 body of message 1
 * }
 * ```
 */
export interface DecoderStreamOptions {
  /** Output values that may wait unread before the stage stops taking input. Default 0, as `TransformStream`. */
  readableHighWaterMark?: number;
  /**
   * Maps each fault this stage finds itself (a {@linkcode DecodeError} its decoder throws; not a failure of its input,
   * which is passed on as it is) before it is reported: how a wrapping decoder places the stage's faults in its own
   * larger input, e.g. a gzip body's fault at its byte in the connection.
   */
  placeFault?: (fault: DecodeError) => DecodeError;
}

/**
 * A `TransformStream` driven by a {@linkcode StreamDecoder}. It behaves as a `TransformStream` (same backpressure,
 * `pipeThrough` in any runtime) except for failure: a `TransformStream` that errors discards the values still queued
 * for its reader, so a fault in the middle of a chunk, a truncated final line, or a failure further up a pipeline would
 * lose events that were decoded before it. Here the reader receives every one of them (and, when the input fails,
 * whatever a decoder's `salvage` still makes of the input it had), then the error.
 *
 * @example
 * ```ts
 * import { DecoderStream } from "watchwire/wire";
 *
 * // Each input string to its words; a "!" is a fault, but the words before it still arrive.
 * const words = new DecoderStream<string, string>({
 *   push(chunk, emit) {
 *     for (const word of chunk.split(" ")) {
 *       if (word === "!") throw new Error("bang");
 *       emit(word);
 *     }
 *   },
 *   finish() {},
 * });
 * const seen: string[] = [];
 * try {
 *   for await (const word of ReadableStream.from(["a b", "c ! d"]).pipeThrough(words)) seen.push(word);
 * } catch (e) {
 *   console.log(seen, (e as Error).message); // [ "a", "b", "c" ] bang
 * }
 * ```
 */
export class DecoderStream<I, O> extends TransformStream<I, O> {
  // Own properties shadow TransformStream's accessors; `pipeThrough` reads these two properties.
  declare readonly readable: ReadableStream<O>;
  declare readonly writable: WritableStream<I>;

  constructor(decoder: StreamDecoder<I, O>, options: DecoderStreamOptions = {}) {
    super();
    const highWaterMark = options.readableHighWaterMark ?? 0;
    const placeFault = options.placeFault;
    const own = (error: unknown) =>
      placeFault !== undefined && error instanceof DecodeError ? placeFault(error) : error;
    let out!: ReadableStreamDefaultController<O>;
    let inlet!: WritableStreamDefaultController;
    let failure: { reason: unknown } | undefined;
    let ended = false; // the readable side is closed, errored or cancelled
    let wake: (() => void) | undefined;
    let pullPending = false;

    // A function, not an inline test: TypeScript would narrow `failure` across the awaits below.
    const throwIfFailed = () => {
      if (failure !== undefined) throw failure.reason;
    };
    const emit = (value: O) => {
      if (ended) return;
      out.enqueue(value);
      pullPending = false; // the reader's request is answered; it asks again when it wants more
    };
    const resume = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    /** Fails the stage: the reader gets what is queued, then `reason`. */
    const fail = (reason: unknown) => {
      if (failure !== undefined || ended) return;
      failure = { reason };
      decoder.failed?.(reason);
      if ((out.desiredSize ?? 0) >= highWaterMark) {
        ended = true;
        out.error(reason);
      } // else: pull() errors the readable once the queue has been read.
      resume();
    };

    const readable = new ReadableStream<O>({
      start(controller) {
        out = controller;
      },
      pull() {
        if (failure !== undefined) {
          // Error only once everything queued has been read (pull also runs while a queue is under its mark).
          if (!ended && (out.desiredSize ?? 0) >= highWaterMark) {
            ended = true;
            out.error(failure.reason);
          }
          return;
        }
        pullPending = true;
        resume();
      },
      cancel(reason) {
        ended = true;
        if (failure === undefined) {
          failure = { reason };
          decoder.failed?.(reason);
        }
        inlet.error(reason);
        resume();
      },
    }, { highWaterMark });

    const writable = new WritableStream<I>({
      start(controller) {
        inlet = controller;
      },
      async write(chunk) {
        throwIfFailed();
        try {
          // Awaited only when asynchronous: `await` of a plain value still costs a turn of the microtask queue per chunk.
          const pending = decoder.push(chunk, emit);
          if (pending !== undefined) await pending;
        } catch (error) {
          const fault = own(error);
          fail(fault);
          throw fault;
        }
        // Backpressure: take no more input while the reader is behind.
        while (!ended && failure === undefined && !pullPending && (out.desiredSize ?? 0) <= 0) {
          await new Promise<void>((resolve) => (wake = resolve));
        }
        throwIfFailed();
      },
      async close() {
        throwIfFailed();
        try {
          await decoder.finish(emit);
        } catch (error) {
          const fault = own(error);
          fail(fault);
          throw fault;
        }
        if (!ended) {
          ended = true;
          out.close();
        }
      },
      async abort(reason) {
        if (decoder.salvage !== undefined && failure === undefined && !ended) {
          try {
            await decoder.salvage(emit);
          } catch (error) {
            fail(own(error));
            return;
          }
        }
        fail(reason);
      },
    }, { highWaterMark: 1 });

    Object.defineProperty(this, "readable", { value: readable, enumerable: true });
    Object.defineProperty(this, "writable", { value: writable, enumerable: true });
  }
}
