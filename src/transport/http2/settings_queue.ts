/**
 * {@linkcode SettingsQueue}: one direction's SETTINGS handed to the decoder of the other direction. Internal.
 *
 * @module
 */
import { HTTP2_DEFAULT_MAX_FRAME_SIZE, type Http2Settings } from "./frames.ts";

/** One direction's SETTINGS in order: written by its decoder (the sink), read by the other direction's decoder. */
export class SettingsQueue {
  readonly #items: Http2Settings[] = [];
  #closed = false;
  #wake: (() => void) | undefined;
  /** The SETTINGS_MAX_FRAME_SIZE this direction announced last: the limit of the other direction's frames. */
  maxFrameSize = HTTP2_DEFAULT_MAX_FRAME_SIZE;

  settings(settings: Http2Settings): void {
    if (settings.maxFrameSize !== undefined) this.maxFrameSize = settings.maxFrameSize;
    this.#items.push(settings);
    this.#notify();
  }

  close(): void {
    this.#closed = true;
    this.#notify();
  }

  /** The next SETTINGS once its direction has decoded it; `undefined` when the direction holds no more. */
  async next(): Promise<Http2Settings | undefined> {
    while (this.#items.length === 0 && !this.#closed) {
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
    return this.#items.shift();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
