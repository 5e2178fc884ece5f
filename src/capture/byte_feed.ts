/**
 * {@linkcode ByteFeed}: bytes pushed in capture order, read as a `ReadableStream`, with the capture time of the bytes
 * the reader took last. Internal.
 *
 * @module
 */
import type { CaptureTime } from "./records.ts";

/** A chunk of a feed and when the packet that completed it was captured. */
interface TimedChunk {
  bytes: Uint8Array;
  time: CaptureTime;
}

/**
 * One direction of a captured connection as a stream: the capture pushes its bytes as the packets come, the reader
 * (HTTP, then the watch decoders) pulls them, and {@linkcode ByteFeed.time} is the capture time of the chunk it pulled
 * last: for a decoder that reads a chunk only once it is done with the one before, the time of the packet that
 * completed what it hands on. Nothing is awaited on the pushing side: the bytes a reader has not taken are counted
 * ({@linkcode ByteFeed.unread}), and the capture gives up a connection whose reader falls too far behind.
 */
export class ByteFeed {
  readonly stream: ReadableStream<Uint8Array>;
  #queue: TimedChunk[] = [];
  #head = 0;
  #unread = 0;
  #time: CaptureTime;
  #ended: { error: unknown } | undefined;
  #cancelled = false;
  #wake: (() => void) | undefined;

  readonly #taken: (bytes: number) => void;

  /** `taken` is told of the bytes each time the reader takes a chunk (the capture's back-pressure watches it). */
  constructor(time: CaptureTime, taken: (bytes: number) => void = () => {}) {
    this.#time = time;
    this.#taken = taken;
    this.stream = new ReadableStream<Uint8Array>({
      pull: (controller) => this.#pull(controller),
      cancel: () => {
        this.#taken(this.#unread);
        this.#cancelled = true;
        this.#queue = [];
        this.#head = 0;
        this.#unread = 0;
      },
    }, { highWaterMark: 0 });
  }

  /** When the packet that completed the chunk the reader took last was captured. */
  get time(): CaptureTime {
    return this.#time;
  }

  /** Bytes pushed that the reader has not taken. */
  get unread(): number {
    return this.#unread;
  }

  /** Whether the reader cancelled the stream (nothing pushed is kept then). */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** The next bytes, captured at `time`. */
  push(bytes: Uint8Array, time: CaptureTime): void {
    if (this.#cancelled || this.#ended !== undefined || bytes.length === 0) return;
    this.#queue.push({ bytes, time });
    this.#unread += bytes.length;
    this.#wakeReader();
  }

  /** No more bytes: the stream ends (with `error`, if given) once the reader has taken what was pushed. */
  end(error?: unknown): void {
    if (this.#ended !== undefined) return;
    this.#ended = { error };
    this.#wakeReader();
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async #pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    while (this.#head === this.#queue.length && this.#ended === undefined) {
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
    if (this.#head < this.#queue.length) {
      const chunk = this.#queue[this.#head++];
      if (this.#head === this.#queue.length) {
        this.#queue = [];
        this.#head = 0;
      }
      this.#unread -= chunk.bytes.length;
      this.#time = chunk.time;
      controller.enqueue(chunk.bytes);
      this.#taken(chunk.bytes.length);
      return;
    }
    const { error } = this.#ended!;
    if (error === undefined) controller.close();
    else controller.error(error);
  }
}
