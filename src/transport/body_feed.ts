/**
 * {@linkcode BodyFeed}: a message body being fed to its reader, with backpressure; shared by the HTTP/1.1 and HTTP/2
 * decoders.
 *
 * @module
 */

/** The default of `bodyHighWaterMark` (the HTTP/1.1 and HTTP/2 decoders' option): 1 MiB. */
export const DEFAULT_BODY_HIGH_WATER_MARK = 1 << 20;

/** A response body being fed: its stream's controller and the backpressure handshake with its reader. */
export class BodyFeed {
  readonly stream: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #wake: (() => void) | undefined;
  #failure: { reason: unknown } | undefined;
  readonly #bodyHighWaterMark: number;
  cancelled = false;
  closed = false;

  /** A body that holds up to `bodyHighWaterMark` bytes unread before its writer waits. */
  constructor(bodyHighWaterMark: number) {
    this.#bodyHighWaterMark = bodyHighWaterMark;
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      pull: () => {
        this.#errorIfDrained();
        this.#resume();
      },
      cancel: () => {
        this.cancelled = true;
        this.#resume();
      },
    }, new ByteLengthQueuingStrategy({ highWaterMark: bodyHighWaterMark }));
  }

  enqueue(bytes: Uint8Array): void {
    if (!this.cancelled && !this.closed && bytes.length > 0) this.#controller.enqueue(bytes);
  }

  /** Resolves once the reader wants more (or has gone away). */
  ready(): Promise<void> | undefined {
    if (this.cancelled || this.closed || (this.#controller.desiredSize ?? 1) > 0) return undefined;
    return new Promise((resolve) => (this.#wake = resolve));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.cancelled) this.#controller.close();
    this.#resume();
  }

  /** Fails the body once the reader has taken the bytes already queued (erroring at once would discard them). */
  error(reason: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.#failure = { reason };
    if (!this.cancelled) this.#errorIfDrained();
    this.#resume();
  }

  #errorIfDrained(): void {
    if (this.#failure === undefined || (this.#controller.desiredSize ?? 0) < this.#bodyHighWaterMark) return;
    this.#controller.error(this.#failure.reason);
    this.#failure = undefined;
  }

  #resume(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
