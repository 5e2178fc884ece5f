/**
 * {@linkcode TimestampUnits}: a pcapng interface's 64-bit timestamps to seconds and nanoseconds. Internal.
 *
 * @module
 */

/** 10^k for k = 0..9. */
const POWERS_OF_TEN = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/**
 * The unit of an interface's timestamps (its `if_tsresol`: 10^-k or 2^-k seconds) and its `if_tsoffset` (seconds
 * added), converting a 64-bit count of units exactly to whole seconds and nanoseconds (units finer than a nanosecond
 * truncated). {@linkcode convert} leaves its result in {@linkcode seconds} and {@linkcode nanoseconds}, so that
 * converting allocates nothing.
 */
export class TimestampUnits {
  /** The seconds of the last {@linkcode convert}. */
  seconds = 0;
  /** The nanoseconds of the last {@linkcode convert}, 0 to 999,999,999. */
  nanoseconds = 0;
  /** For 10^-k with 4 <= k <= 9 (µs, ns, ...): 10^k, for the division in plain numbers; else 0. */
  readonly #divisor: number;
  readonly #offsetSeconds: number;
  /** Units per second (10^k or 2^k), or the bit count k of 2^k, and the nanosecond scaling: for the BigInt path. */
  #perSecond = 0n;
  #binaryBits = -1n;
  #scale = 1n;
  #scaleUp = true;

  /**
   * `resolution`: the `if_tsresol` byte (high bit clear: 10^-value seconds; set: 2^-(value & 0x7f) seconds; 6, i.e.
   * microseconds, when the interface names none); `offsetSeconds`: its `if_tsoffset` (0 when none).
   */
  constructor(resolution = 6, offsetSeconds = 0) {
    this.#offsetSeconds = offsetSeconds;
    const exponent = resolution & 0x7f;
    const binary = (resolution & 0x80) !== 0;
    this.#divisor = !binary && exponent >= 4 && exponent <= 9 ? POWERS_OF_TEN[exponent] : 0;
    if (this.#divisor !== 0) return;
    if (binary) {
      this.#binaryBits = BigInt(exponent);
    } else {
      this.#perSecond = 10n ** BigInt(exponent);
      this.#scaleUp = exponent <= 9;
      this.#scale = 10n ** BigInt(exponent <= 9 ? 9 - exponent : exponent - 9);
    }
  }

  /** Converts the timestamp `high` * 2^32 + `low` (in units) to {@linkcode seconds} and {@linkcode nanoseconds}. */
  convert(high: number, low: number): void {
    const d = this.#divisor;
    if (d !== 0) {
      // Long division in 16-bit digits: each partial value stays under 2^46, and the quotient (at most 2^64 / 10^4)
      // under 2^53, so every step is exact in a double.
      let value = high >>> 16;
      const q3 = Math.floor(value / d);
      value = (value - q3 * d) * 0x10000 + (high & 0xffff);
      const q2 = Math.floor(value / d);
      value = (value - q2 * d) * 0x10000 + (low >>> 16);
      const q1 = Math.floor(value / d);
      value = (value - q1 * d) * 0x10000 + (low & 0xffff);
      const q0 = Math.floor(value / d);
      const remainder = value - q0 * d;
      const quotient = ((q3 * 0x10000 + q2) * 0x10000 + q1) * 0x10000 + q0;
      this.seconds = quotient + this.#offsetSeconds;
      this.nanoseconds = remainder * (1e9 / d);
      return;
    }
    // Any other unit (rare): exact in BigInt.
    const ticks = (BigInt(high) << 32n) | BigInt(low);
    let seconds: bigint;
    let nanoseconds: bigint;
    if (this.#binaryBits >= 0n) {
      const bits = this.#binaryBits;
      seconds = ticks >> bits;
      nanoseconds = ((ticks - (seconds << bits)) * 1_000_000_000n) >> bits;
    } else {
      seconds = ticks / this.#perSecond;
      const remainder = ticks - seconds * this.#perSecond;
      nanoseconds = this.#scaleUp ? remainder * this.#scale : remainder / this.#scale;
    }
    this.seconds = Number(seconds) + this.#offsetSeconds;
    this.nanoseconds = Number(nanoseconds);
  }
}
