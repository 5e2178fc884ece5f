/**
 * {@linkcode Backoff}: how long to wait before the next attempt after failures: exponential with full jitter, reset
 * after a stretch of health.
 *
 * @module
 */

/**
 * Options of {@linkcode Backoff}: client-go's watch loop defaults (800 ms doubling up to 30 s, reset after 2 minutes
 * without a failure).
 *
 * @example
 * ```ts
 * import type { BackoffOptions } from "watchwire";
 *
 * const options: BackoffOptions = { initialMs: 100, maxMs: 5000 };
 * console.log(options.initialMs); // 100
 * ```
 */
export interface BackoffOptions {
  /** The ceiling of the first wait. Default 800 ms. */
  initialMs?: number;
  /** The largest ceiling. Default 30 000 ms. */
  maxMs?: number;
  /** A failure after this long without one starts again from `initialMs`. Default 120 000 ms. */
  resetAfterMs?: number;
  /** A number in [0, 1): `Math.random` by default. */
  random?: () => number;
  /** The clock, in ms: `Date.now` by default. */
  now?: () => number;
}

/**
 * Exponential backoff with full jitter: the n-th failure in a row waits a random time in [0, min(max, initial·2ⁿ)).
 *
 * @example
 * ```ts
 * import { Backoff } from "watchwire";
 *
 * const backoff = new Backoff({ random: () => 0.5 });
 * console.log(backoff.next(), backoff.next(), backoff.next()); // 400 800 1600
 * ```
 */
export class Backoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #resetAfterMs: number;
  readonly #random: () => number;
  readonly #now: () => number;
  #failures = 0;
  #lastFailure = -Infinity;

  constructor(options: BackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 800;
    this.#maxMs = options.maxMs ?? 30_000;
    this.#resetAfterMs = options.resetAfterMs ?? 120_000;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
  }

  /** The ceiling of the next wait (for reports and tests). */
  get ceilingMs(): number {
    return Math.min(this.#maxMs, this.#initialMs * 2 ** Math.min(this.#failures, 30));
  }

  /** Records a failure and returns how long to wait before trying again. */
  next(): number {
    const now = this.#now();
    if (now - this.#lastFailure >= this.#resetAfterMs) this.#failures = 0;
    const ceiling = this.ceilingMs;
    this.#failures++;
    this.#lastFailure = now;
    return Math.floor(this.#random() * ceiling);
  }

  /** Forgets the failures (after a success that proves health, e.g. a completed initial sync). */
  reset(): void {
    this.#failures = 0;
    this.#lastFailure = -Infinity;
  }
}
