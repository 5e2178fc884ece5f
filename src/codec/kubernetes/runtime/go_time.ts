/**
 * The JSON of `metav1.Time` and `metav1.MicroTime` after protobuf `Unmarshal`, exactly as Go prints it.
 *
 * Both travel as a `Timestamp` message {`seconds` = 1 (int64 varint), `nanos` = 2 (int32 varint)}. Rules taken from
 * k8s.io/apimachinery `pkg/apis/meta/v1/time_proto.go`, `micro_time_proto.go`, `time.go`, `micro_time.go` and Go's
 * `time` package:
 *
 * - An empty message (no bytes, e.g. an absent field) unmarshals to the zero time, which prints `null`.
 * - `Time.Unmarshal` sets `time.Unix(seconds, 0)`: nanos are dropped. `MicroTime.Unmarshal` sets
 *   `time.Unix(seconds, nanos truncated toward zero to a multiple of 1000)`; `time.Unix` then normalises nanos
 *   outside [0, 1e9) into the seconds.
 * - The zero time (0001-01-01T00:00:00Z, Unix -62135596800, no nanos) prints `null`; anything else prints UTC, Time
 *   as RFC 3339 seconds (`2006-01-02T15:04:05Z`), MicroTime with exactly six fraction digits
 *   (`2006-01-02T15:04:05.000000Z`). The year is Go's `appendInt(year, 4)`: at least four digits, more when needed,
 *   `-` before negative years (`-0001`, `10000`).
 * - Go's calendar arithmetic runs on a uint64 count of seconds since its "absolute" epoch; for seconds below about
 *   -9.22e18 that count wraps around, and Go prints the wrapped date. This is reproduced.
 *
 * @module
 */

/** Unix seconds of Go's zero `time.Time` (January 1, year 1, 00:00:00 UTC): it prints `null`. */
export const ZERO_TIME_SECONDS = -62135596800;

// time.unixToInternal + time.internalToAbsolute, in seconds and in days (it is a whole number of days).
const UNIX_TO_ABSOLUTE = 9223372028741760000n;
const UNIX_TO_ABSOLUTE_DAYS = 106751991073400;
// time.absoluteYears
const ABSOLUTE_YEARS = 292277022400;
const SECONDS_PER_DAY = 86400;
// Below this magnitude Number arithmetic on seconds (and on seconds plus normalised nanos) is exact.
const NUMBER_LIMIT = 2 ** 52;
const INT64_MIN = -(2n ** 63n);
/** "00".."99" */
export const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => (i < 10 ? "0" : "") + i);
// Recent formatTime results by Unix seconds (objects in a stream share timestamps: creation, managedFields,
// conditions). Direct-mapped on the low bits.
const TIME_CACHE_BITS = 8;
const timeCacheKeys = new Float64Array(1 << TIME_CACHE_BITS).fill(NaN);
const timeCacheValues: string[] = new Array<string>(1 << TIME_CACHE_BITS).fill("");
const INT64_MAX = 2n ** 63n - 1n;

/**
 * The JSON value of a `metav1.Time` whose protobuf `Timestamp` message has `seconds` (field 1): an RFC 3339 string in
 * UTC with whole seconds, or `null` for the zero time (`seconds === ZERO_TIME_SECONDS`). The message's nanos do not
 * matter (Go drops them). For an empty or absent message the JSON is `null`: do not call this.
 *
 * @param seconds The int64 `seconds` field. A `number` must be an integer; pass a `bigint` for values beyond 2^53
 *   whose exact value matters (a `number` there has already been rounded by whoever read the varint).
 * @returns e.g. `"2024-03-01T12:00:00Z"`, `"0000-01-01T00:00:00Z"`, `"-0001-12-31T23:59:59Z"`, `"10000-01-01T00:00:00Z"`.
 * @throws RangeError if `seconds` is not an integer in the int64 range.
 */
export function formatTime(seconds: number | bigint): string | null {
  if (typeof seconds === "number" && Math.abs(seconds) < NUMBER_LIMIT) {
    if (!Number.isInteger(seconds)) throw new RangeError(`seconds must be an integer, got ${seconds}`);
    if (seconds === ZERO_TIME_SECONDS) return null;
    const slot = seconds & ((1 << TIME_CACHE_BITS) - 1);
    if (timeCacheKeys[slot] === seconds) return timeCacheValues[slot];
    const formatted = formatNumber(seconds, -1);
    timeCacheKeys[slot] = seconds;
    timeCacheValues[slot] = formatted;
    return formatted;
  }
  const s = toInt64(seconds, "seconds");
  if (s === -62135596800n) return null;
  return formatBig(s, -1);
}

/**
 * The JSON value of a `metav1.MicroTime` whose protobuf `Timestamp` message has `seconds` (field 1) and `nanos`
 * (field 2): `null` for the zero time, else RFC 3339 in UTC with six fraction digits. `nanos` is truncated toward zero
 * to whole microseconds, then normalised into the seconds when outside [0, 1e9) (Go's `time.Unix`), so
 * `(-62135596801, 1000000000)` and `(-62135596800, 999)` are the zero time too. For an empty or absent message the
 * JSON is `null`: do not call this.
 *
 * @param seconds The int64 `seconds` field (see {@linkcode formatTime}).
 * @param nanos The int32 `nanos` field as Go reads it: the low 32 bits of the varint, signed.
 * @returns e.g. `"2024-03-01T12:00:00.123456Z"`.
 * @throws RangeError if `seconds` is not an int64 or `nanos` not an int32.
 */
export function formatMicroTime(seconds: number | bigint, nanos: number): string | null {
  if (!Number.isInteger(nanos) || nanos < -2147483648 || nanos > 2147483647) {
    throw new RangeError(`nanos must be an int32, got ${nanos}`);
  }
  // time.Duration(nanos).Truncate(time.Microsecond): toward zero (Go's % keeps the dividend's sign).
  let ns = nanos - (nanos % 1000);
  if (typeof seconds === "number" && Math.abs(seconds) < NUMBER_LIMIT) {
    if (!Number.isInteger(seconds)) throw new RangeError(`seconds must be an integer, got ${seconds}`);
    let sec = seconds;
    if (ns < 0 || ns >= 1e9) {
      const n = Math.trunc(ns / 1e9);
      sec += n;
      ns -= n * 1e9;
      if (ns < 0) {
        ns += 1e9;
        sec--;
      }
    }
    if (sec === ZERO_TIME_SECONDS && ns === 0) return null;
    return formatNumber(sec, ns);
  }
  let sec = toInt64(seconds, "seconds");
  if (ns < 0 || ns >= 1e9) {
    const n = Math.trunc(ns / 1e9);
    sec = BigInt.asIntN(64, sec + BigInt(n));
    ns -= n * 1e9;
    if (ns < 0) {
      ns += 1e9;
      sec = BigInt.asIntN(64, sec - 1n);
    }
  }
  if (sec === -62135596800n && ns === 0) return null;
  return formatBig(sec, ns);
}

function toInt64(value: number | bigint, name: string): bigint {
  if (typeof value === "number" && !Number.isInteger(value)) {
    throw new RangeError(`${name} must be an integer, got ${value}`);
  }
  const v = BigInt(value);
  if (v < INT64_MIN || v > INT64_MAX) throw new RangeError(`${name} must be an int64, got ${value}`);
  return v;
}

/** Formats Unix `seconds` (|seconds| < 2^52) with six fraction digits of `nanos`, or none when `nanos` < 0. */
function formatNumber(seconds: number, nanos: number): string {
  let secOfDay = seconds % SECONDS_PER_DAY;
  if (secOfDay < 0) secOfDay += SECONDS_PER_DAY;
  // Exact: seconds - secOfDay is a multiple of 86400 below 2^53.
  const days = (seconds - secOfDay) / SECONDS_PER_DAY + UNIX_TO_ABSOLUTE_DAYS;
  return format(days, secOfDay, nanos);
}

/** Formats int64 Unix `seconds` the way Go does, with its uint64 wrap-around of absolute seconds. */
function formatBig(seconds: bigint, nanos: number): string {
  const abs = BigInt.asUintN(64, seconds + UNIX_TO_ABSOLUTE);
  const days = Number(abs / 86400n);
  const secOfDay = Number(abs % 86400n);
  return format(days, secOfDay, nanos);
}

/**
 * Go's `absDays.date()` (Neri-Schneider, as in Go's time.go) and `absSeconds.clock()`, then the layout. `days` counts
 * days since Go's absolute epoch (March 1 of year -292277022399) and is below 2^48, so all steps are exact in
 * doubles.
 */
function format(days: number, secOfDay: number, nanos: number): string {
  // absDays.split
  const d = 4 * days + 3;
  const century = Math.floor(d / 146097);
  const cd = (d % 146097) | 3;
  const product = 2939745 * cd; // bits.Mul32(2939745, cd), below 2^39
  const cyear = Math.floor(product / 4294967296);
  const lo = product % 4294967296;
  const ayday = Math.floor(Math.floor(lo / 2939745) / 4);
  // absYday.split
  const d2 = 2141 * ayday + 197913;
  const amonth = d2 >>> 16;
  const day = 1 + Math.floor((d2 & 0xffff) / 2141);
  const janFeb = ayday >= 306 ? 1 : 0;
  const year = century * 100 - ABSOLUTE_YEARS + cyear + janFeb;
  const month = amonth - janFeb * 12;
  const hour = Math.floor(secOfDay / 3600);
  const minute = Math.floor((secOfDay % 3600) / 60);
  const second = secOfDay % 60;
  // Go's appendInt(year, 4): at least four digits, more if needed, "-" first for negative years.
  const y = year < 0 ? -year : year;
  let out = (year < 0 ? "-" : "") + (y < 10000 ? TWO_DIGITS[Math.floor(y / 100)] + TWO_DIGITS[y % 100] : String(y));
  out += "-" + TWO_DIGITS[month] + "-" + TWO_DIGITS[day] + "T" + TWO_DIGITS[hour] + ":" + TWO_DIGITS[minute] + ":" +
    TWO_DIGITS[second];
  if (nanos >= 0) {
    const micros = Math.floor(nanos / 1000);
    out += "." + TWO_DIGITS[Math.floor(micros / 10000)] + TWO_DIGITS[Math.floor(micros / 100) % 100] +
      TWO_DIGITS[micros % 100];
  }
  return out + "Z";
}

/** Go's RFC 3339 fraction with nanoseconds (`time.RFC3339Nano`): no trailing zeros, nothing when `nanos` is 0. */
export function nanoFraction(nanos: number): string {
  if (nanos === 0) return "";
  return ("." + String(nanos).padStart(9, "0")).replace(/0+$/, "");
}

/**
 * `time.Unix(seconds, nanos).UTC().Format(time.RFC3339Nano)` for |seconds| < 2^52 and `nanos` in [0, 1e9): e.g.
 * `"2013-03-21T20:04:00.5Z"`.
 */
export function formatRfc3339Nano(seconds: number, nanos: number): string {
  const whole = formatNumber(seconds, -1);
  return nanos === 0 ? whole : whole.slice(0, -1) + nanoFraction(nanos) + "Z";
}
