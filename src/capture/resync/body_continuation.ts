/**
 * {@linkcode BodyContinuation}: the bodies of one HTTP/2 stream after the gaps that cut it, from the connection's
 * decoding to the reader of the stream. Internal.
 *
 * @module
 */

/**
 * A stream's body goes on after a gap as a new body (the DATA after the resumption): the connection's decoding gives
 * each (`give`) and says when no more will come (`end`); the stream's reader takes them in turn (`next`), and says
 * when it reads no more (`close`: later bodies are cancelled).
 */
export class BodyContinuation {
  readonly #bodies: ReadableStream<Uint8Array>[] = [];
  #ended = false;
  #closed = false;
  #wake: (() => void) | undefined;

  /** The stream's body after its latest gap. */
  give(body: ReadableStream<Uint8Array>): void {
    if (this.#closed) {
      body.cancel().catch(() => {});
      return;
    }
    this.#bodies.push(body);
    this.#notify();
  }

  /** No more bodies will come. */
  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /** The reader reads no more: what was given and not taken, and what will be, is cancelled. */
  close(): void {
    this.#closed = true;
    for (const body of this.#bodies.splice(0)) body.cancel().catch(() => {});
  }

  /** The next body, once given; undefined once no more will come. */
  async next(): Promise<ReadableStream<Uint8Array> | undefined> {
    while (this.#bodies.length === 0 && !this.#ended) await new Promise<void>((resolve) => (this.#wake = resolve));
    return this.#bodies.shift();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
