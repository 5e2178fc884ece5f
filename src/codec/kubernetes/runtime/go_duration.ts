/**
 * The JSON of `metav1.Duration`: Go's `time.Duration.String()` of the int64 nanoseconds in its protobuf field 1.
 *
 * @module
 */

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Returns Go's `time.Duration(nanos).String()`, which is what `metav1.Duration` prints as JSON (`"1h2m3.5s"`,
 * `"1.5ms"`, `"-1µs"`, `"0s"`): hours, minutes and seconds with the fraction's trailing zeros dropped for a
 * duration of at least one second; below one second the largest of `ms`, `µs` (U+00B5) and `ns` that keeps the
 * leading digit non-zero. Exact over the whole int64 range, `"-2562047h47m16.854775808s"` included.
 *
 * @param nanos The int64 `duration` field. A `number` must be an integer; pass a `bigint` for values beyond 2^53
 *   whose exact value matters.
 * @throws RangeError if `nanos` is not an integer in the int64 range.
 */
export function formatDuration(nanos: number | bigint): string {
  let neg: boolean;
  let seconds: number;
  let fraction: number; // nanoseconds below one second, 0..999999999
  if (typeof nanos === "number" && Number.isSafeInteger(nanos)) {
    neg = nanos < 0;
    const u = Math.abs(nanos);
    fraction = u % 1e9;
    seconds = (u - fraction) / 1e9; // exact: a multiple of 1e9 below 2^53
  } else {
    if (typeof nanos === "number" && !Number.isInteger(nanos)) {
      throw new RangeError(`nanos must be an integer, got ${nanos}`);
    }
    const v = BigInt(nanos);
    if (v < INT64_MIN || v > INT64_MAX) throw new RangeError(`nanos must be an int64, got ${nanos}`);
    neg = v < 0n;
    const u = neg ? -v : v; // 2^63 for the minimum, as Go's uint64 negation
    fraction = Number(u % 1000000000n);
    seconds = Number(u / 1000000000n); // below 2^34
  }
  let out: string;
  if (seconds === 0) {
    if (fraction === 0) return "0s";
    if (fraction < 1000) out = fraction + "ns";
    else if (fraction < 1000000) out = withFraction(fraction, 3) + "µs";
    else out = withFraction(fraction, 6) + "ms";
  } else {
    const s = seconds % 60;
    const minutes = (seconds - s) / 60;
    out = s + withFraction(fraction, 9).slice(1) + "s"; // slice: the integer part of a <1e9 fraction is "0"
    if (minutes > 0) {
      const m = minutes % 60;
      const hours = (minutes - m) / 60;
      out = m + "m" + out;
      if (hours > 0) out = hours + "h" + out;
    }
  }
  return neg ? "-" + out : out;
}

/**
 * `v / 10^prec` written as Go's fmtFrac + fmtInt: the integer part, then `.` and the fraction's digits without
 * trailing zeros (nothing when the fraction is 0).
 */
function withFraction(v: number, prec: number): string {
  const scale = 10 ** prec;
  const frac = v % scale;
  const int = (v - frac) / scale;
  if (frac === 0) return String(int);
  let digits = String(frac).padStart(prec, "0");
  let end = digits.length;
  while (digits.charCodeAt(end - 1) === 0x30) end--;
  digits = digits.slice(0, end);
  return int + "." + digits;
}
