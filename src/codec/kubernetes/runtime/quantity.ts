/**
 * The JSON of `resource.Quantity` after protobuf `Unmarshal`, exactly as Go prints it.
 *
 * A Quantity travels as a message whose field 1 is a string `s`; `Quantity.Unmarshal` (apimachinery
 * `pkg/api/resource/quantity_proto.go`) calls `ParseQuantity(s)` and fails if it fails; `MarshalJSON` then prints
 * the string `ParseQuantity` kept when the input was already canonical, else the canonical form
 * (`CanonicalizeBytes`). This module re-implements that code path (quantity.go, amount.go, math.go, suffix.go and
 * the parts of gopkg.in/inf.v0 it uses) step by step, including its quirks:
 *
 * - Canonical-looking input is printed verbatim, sign and leading zeros included: `"+1"`, `"01"`, `"1.500k"`,
 *   `"1e3"`, `"+5Ki"`.
 * - Empty numbers are zero: `"+"`, `"."`, `"Ki"`, `"e5"` print `"0"`; `""`, `"e"`, `"1e"` fail.
 * - Values are rounded up (away from zero) to whole nanos; BinarySI magnitudes are capped at 2^63-1; BinarySI values
 *   that are not whole numbers, or below 1024 in magnitude, print as DecimalSI.
 * - DecimalSI exponents above 18 have no suffix, so Go prints the mantissa alone: `"1000E"` prints `"1"`.
 * - Exponents are int32 and wrap around like Go's (`"1e4294967296"` has exponent 0).
 *
 * @module
 */

/** `resource.Format`. */
type Format = "DecimalExponent" | "BinarySI" | "DecimalSI";

const MAX_INT64 = 2n ** 63n - 1n;
// Past this many factors of ten, inf.Dec's rounding and factor removal are computed symbolically (Go would
// materialise the power of ten; the result is the same).
const SYMBOLIC_SHIFT = 64;

const wrap32 = (n: number): number => n | 0;

const DECIMAL_SUFFIXES = new Map<number, string>([
  [-9, "n"],
  [-6, "u"],
  [-3, "m"],
  [0, ""],
  [3, "k"],
  [6, "M"],
  [9, "G"],
  [12, "T"],
  [15, "P"],
  [18, "E"],
]);
const BINARY_SUFFIXES = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
const SUFFIX_TABLE = new Map<string, [base: 10 | 2, exponent: number, format: Format]>([
  ["", [10, 0, "DecimalSI"]],
  ["n", [10, -9, "DecimalSI"]],
  ["u", [10, -6, "DecimalSI"]],
  ["m", [10, -3, "DecimalSI"]],
  ["k", [10, 3, "DecimalSI"]],
  ["M", [10, 6, "DecimalSI"]],
  ["G", [10, 9, "DecimalSI"]],
  ["T", [10, 12, "DecimalSI"]],
  ["P", [10, 15, "DecimalSI"]],
  ["E", [10, 18, "DecimalSI"]],
  ["Ki", [2, 10, "BinarySI"]],
  ["Mi", [2, 20, "BinarySI"]],
  ["Gi", [2, 30, "BinarySI"]],
  ["Ti", [2, 40, "BinarySI"]],
  ["Pi", [2, 50, "BinarySI"]],
  ["Ei", [2, 60, "BinarySI"]],
]);

// Recent results: real objects repeat a handful of quantities ("100m", "128Mi", "1"). Cleared when full.
const CACHE_MAX = 4096;
const cache = new Map<string, string | null>();

/**
 * Returns what Go's `json.Marshal` prints (as the string `JSON.parse` reads back) for the `resource.Quantity` that
 * `Quantity.Unmarshal` makes of a message whose field 1 is `s`, or `undefined` where that `Unmarshal` fails
 * (`ParseQuantity` rejects `s`).
 *
 * `canonicalQuantity("1000m")` is `"1"`, `("0.5")` `"500m"`, `("1.5Gi")` `"1536Mi"`, `("1e3")` `"1e3"`,
 * `("100m")` `"100m"`, `("")` `undefined`. A Quantity message without field 1 (an empty message) is the zero
 * Quantity and prints `"0"`: do not call this for it.
 *
 * Inputs for which Go's own arithmetic would not finish in reasonable time (a decimal exponent in the millions or
 * billions on a value that leaves the int64 fast path: more than 18 digits, or a scale below nanos) get the result
 * Go's algorithm defines, computed without materialising the huge powers of ten (the vectors cannot cover them); one
 * input class on which Go panics (an exponent that makes inf.Dec's rounding shift exactly -2^31) returns
 * `undefined`.
 *
 * @param s The string of field 1, as {@linkcode readGoString} returns it (Go rejects every non-ASCII byte, so
 *   U+FFFD replacement does not change the outcome).
 */
export function canonicalQuantity(s: string): string | undefined {
  let result = cache.get(s);
  if (result === undefined) {
    result = marshalQuantity(s) ?? null;
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(s, result);
  }
  return result ?? undefined;
}

/** ParseQuantity followed by MarshalJSON; undefined where ParseQuantity fails. */
function marshalQuantity(str: string): string | undefined {
  if (str.length === 0) return undefined; // ErrFormatWrong
  if (str === "0") return str;
  const parts = parseQuantityString(str);
  if (parts === undefined) return undefined; // ErrFormatWrong
  const { positive, value, num, denom, suffix } = parts;
  const interpreted = interpretSuffix(suffix);
  if (interpreted === undefined) return undefined; // ErrSuffix
  const [base, exponent] = interpreted;
  let format = interpreted[2];

  let precision = 0;
  let scale = 0;
  let mantissa = 1n;
  if (format === "BinarySI") {
    if (exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      // Go: 15 - len(num) - int32(float32(exponent)*3/10) - 1; exact for the exponents 10..60 that reach here.
      precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  }

  // The int64 fast path. Go multiplies first and keeps the input string if it is canonical; the multiplication
  // cannot overflow here (the mantissa is 1 for decimal formats, and for BinarySI precision >= 0 keeps the product
  // below 2^47), so the canonical-input test comes first and needs no BigInt.
  if (precision >= 0) {
    scale = wrap32(scale - denom.length);
    if (scale >= -9) {
      const shifted = num + denom;
      if (format === "BinarySI") {
        // value & 7 of the parsed number: 1000 is a multiple of 8, so the last three digits decide.
        if (exponent % 10 === 0 && (Number(shifted.slice(-3)) & 7) !== 0) return str;
      } else if (scale % 3 === 0 && !shifted.endsWith("000") && shifted.charCodeAt(0) !== 0x30) {
        return str;
      }
      const product = int64Multiply(BigInt(shifted), mantissa); // at most 18 digits: ParseInt cannot fail
      if (product !== undefined) return canonicalizeInt64(positive ? product : -product, scale, format);
    }
  }

  // The inf.Dec path.
  const dec = parseDec(value);
  if (dec === undefined) return undefined; // ErrNumeric
  let unscaled = dec.unscaled;
  let decScale = dec.scale; // inf.Dec scale: value = unscaled * 10^-scale
  let zeros = 0; // value = unscaled * 10^zeros * 10^-scale (symbolic factors of ten, base 10 only)
  if (base === 10) {
    decScale = wrap32(decScale + wrap32(-exponent));
  } else {
    unscaled *= 1n << BigInt(exponent);
  }
  const negative = unscaled < 0n;
  if (negative) unscaled = -unscaled;
  if (unscaled !== 0n) {
    // amount.Round(amount, 9, inf.RoundUp): quoRem with shift = 9 - scale (int32), then +1 if a remainder is left.
    const shift = wrap32(9 - decScale);
    if (shift > 0) {
      if (shift > SYMBOLIC_SHIFT) zeros = shift;
      else unscaled *= 10n ** BigInt(shift);
    } else if (shift < 0) {
      if (shift === -2147483648) return undefined; // Go panics: exp10(-shift) indexes a table with a negative number
      const k = -shift;
      if (k > unscaled.toString().length) {
        unscaled = 1n; // 0 < unscaled < 10^k: quotient 0, remainder non-zero
      } else {
        const divisor = 10n ** BigInt(k);
        const quotient = unscaled / divisor;
        unscaled = quotient * divisor === unscaled ? quotient : quotient + 1n;
      }
    }
    decScale = 9;
  }
  if (format === "BinarySI") {
    // Cap at 2^63-1 (base 2: never symbolic). Then a value in (0, 1) is shown as DecimalSI.
    if (decScale >= 0 && unscaled > MAX_INT64 * 10n ** BigInt(decScale)) {
      unscaled = MAX_INT64;
      decScale = 0;
    }
    if (unscaled > 0n && decScale >= 0 && unscaled < 10n ** BigInt(decScale)) format = "DecimalSI";
  }
  if (negative) unscaled = -unscaled;
  return canonicalizeDec(unscaled, zeros, decScale, format);
}

interface QuantityParts {
  positive: boolean;
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isSuffixChar = (c: number): boolean => "eEinumkKMGTP".includes(String.fromCharCode(c));

/** Go's parseQuantityString; undefined for ErrFormatWrong. */
function parseQuantityString(str: string): QuantityParts | undefined {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (pos < end) {
    const c = str.charCodeAt(0);
    if (c === 0x2d) {
      positive = false;
      pos++;
    } else if (c === 0x2b) {
      pos++;
    }
  }
  // strip leading zeros; only zeros (or nothing) means zero, whatever came before
  for (let i = pos;; i++) {
    if (i >= end) return { positive, value: "0", num: "0", denom: "", suffix: "" };
    if (str.charCodeAt(i) !== 0x30) break;
    pos++;
  }
  let num: string;
  let i = pos;
  for (;; i++) {
    if (i >= end) return { positive, value: str, num: str.slice(pos), denom: "", suffix: "" };
    if (!isDigit(str.charCodeAt(i))) break;
  }
  num = str.slice(pos, i);
  pos = i;
  if (num.length === 0) num = "0";
  let denom = "";
  if (pos < end && str.charCodeAt(pos) === 0x2e) {
    pos++;
    for (i = pos;; i++) {
      if (i >= end) return { positive, value: str, num, denom: str.slice(pos), suffix: "" };
      if (!isDigit(str.charCodeAt(i))) break;
    }
    denom = str.slice(pos, i);
    pos = i;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  for (i = pos;; i++) {
    if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
    if (!isSuffixChar(str.charCodeAt(i))) break;
  }
  pos = i;
  if (pos < end && (str.charCodeAt(pos) === 0x2d || str.charCodeAt(pos) === 0x2b)) pos++;
  for (i = pos;; i++) {
    if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
    if (!isDigit(str.charCodeAt(i))) return undefined;
  }
}

/** quantitySuffixer.interpret: [base, exponent, format], or undefined. */
function interpretSuffix(suffix: string): [base: 10 | 2, exponent: number, format: Format] | undefined {
  const known = SUFFIX_TABLE.get(suffix);
  if (known !== undefined) return known;
  const c = suffix.charCodeAt(0);
  if (suffix.length > 1 && (c === 0x65 || c === 0x45)) {
    const parsed = parseInt64(suffix.slice(1));
    if (parsed === undefined) return undefined;
    return [10, Number(BigInt.asIntN(32, parsed)), "DecimalExponent"]; // Go: int32(parsed)
  }
  return undefined;
}

/** strconv.ParseInt(s, 10, 64). */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v > MAX_INT64 || v < -MAX_INT64 - 1n ? undefined : v;
}

/** inf.Dec.SetString of `value` ([+-]?digits[.digits]): unscaled and scale; undefined without any digit. */
function parseDec(value: string): { unscaled: bigint; scale: number } | undefined {
  const dot = value.indexOf(".");
  const digits = dot < 0 ? value : value.slice(0, dot) + value.slice(dot + 1);
  if (!/[0-9]/.test(digits)) return undefined;
  return { unscaled: BigInt(digits), scale: dot < 0 ? 0 : value.length - dot - 1 };
}

/** Go's int64Multiply: a*b, or undefined on int64 overflow (detected as Go does, by dividing back). */
function int64Multiply(a: bigint, b: bigint): bigint | undefined {
  if (a === 0n || b === 0n || a === 1n || b === 1n) return a * b;
  const c = BigInt.asIntN(64, a * b);
  return c / b === a ? c : undefined;
}

/** CanonicalizeBytes of an int64Amount {value, scale} (value != 0 unless zero). */
function canonicalizeInt64(value: bigint, scale: number, format: Format): string {
  if (value === 0n) return "0";
  if (format === "BinarySI") {
    // The fast path only makes BinarySI amounts of scale 0.
    if (value > -1024n && value < 1024n) return int64CanonicalBytes(value, scale, "DecimalSI");
    let amount = value < 0n ? -value : value;
    let times = 0;
    while (amount >= 1024n && amount % 1024n === 0n) {
      amount /= 1024n;
      times++;
    }
    return (value < 0n ? "-" : "") + amount + BINARY_SUFFIXES[times];
  }
  return int64CanonicalBytes(value, scale, format);
}

/** int64Amount.AsCanonicalBytes plus the suffix; falls back to the inf.Dec form on int64 overflow, as Go does. */
function int64CanonicalBytes(value: bigint, scale: number, format: Format): string {
  // removeInt64Factors(value, 10)
  let amount = value < 0n ? -value : value;
  let times = 0;
  while (amount >= 10n && amount % 10n === 0n) {
    amount /= 10n;
    times++;
  }
  if (value < 0n) amount = -amount;
  let exponent = wrap32(scale + times);
  const r = exponent % 3;
  if (r === 1 || r === -2) {
    const c = BigInt.asIntN(64, amount * 10n);
    if (amount !== 0n && amount !== 1n && c / 10n !== amount) {
      return decCanonicalBytes(value, 0, wrap32(-scale), format);
    }
    amount = c;
    exponent = wrap32(exponent - 1);
  } else if (r === 2 || r === -1) {
    const c = BigInt.asIntN(64, amount * 100n);
    if (amount !== 0n && amount !== 1n && c / 100n !== amount) {
      return decCanonicalBytes(value, 0, wrap32(-scale), format);
    }
    amount = c;
    exponent = wrap32(exponent - 2);
  }
  return amount + decimalSuffix(exponent, format);
}

/**
 * CanonicalizeBytes of an inf.Dec amount `unscaled * 10^zeros * 10^-scale` (`zeros` > 0 only for base 10, where
 * the format is DecimalSI or DecimalExponent).
 */
function canonicalizeDec(unscaled: bigint, zeros: number, scale: number, format: Format): string {
  if (unscaled === 0n) return "0";
  if (format === "BinarySI") {
    // Base 2: zeros is 0 and scale >= 0 (the input's fraction digits, 9 after rounding, 0 when capped).
    const unit = 10n ** BigInt(scale);
    // q.CmpInt64(-1024) > 0 && q.CmpInt64(1024) < 0: shown as DecimalSI, and so is a value AsScale(0) would round.
    if ((unscaled > -1024n * unit && unscaled < 1024n * unit) || unscaled % unit !== 0n) {
      return decCanonicalBytes(unscaled, 0, scale, "DecimalSI");
    }
    // AsCanonicalBase1024Bytes: removeBigIntFactors(whole, 1024).
    const whole = unscaled / unit;
    let amount = whole < 0n ? -whole : whole;
    let times = 0;
    while (amount % 1024n === 0n) {
      amount /= 1024n;
      times++;
    }
    return (whole < 0n ? "-" : "") + amount + BINARY_SUFFIXES[times];
  }
  return decCanonicalBytes(unscaled, zeros, scale, format);
}

/** infDecAmount.AsCanonicalBytes plus the suffix, with Go's int32 exponent arithmetic. */
function decCanonicalBytes(unscaled: bigint, zeros: number, scale: number, format: Format): string {
  // removeBigIntFactors(mantissa, 10), on the decimal digits; `times` is an int32 counter in Go.
  let digits = unscaled.toString();
  let end = digits.length;
  while (digits.charCodeAt(end - 1) === 0x30) end--;
  const times = wrap32(zeros + (digits.length - end));
  digits = digits.slice(0, end);
  let exponent = wrap32(wrap32(-scale) + times);
  while (exponent % 3 !== 0) {
    digits += "0";
    exponent = wrap32(exponent - 1);
  }
  return digits + decimalSuffix(exponent, format);
}

/** constructBytes(10, exponent, format): "" where DecimalSI has no suffix for the exponent (Go ignores the miss). */
function decimalSuffix(exponent: number, format: Format): string {
  if (format === "DecimalExponent") return exponent === 0 ? "" : "e" + exponent;
  return DECIMAL_SUFFIXES.get(exponent) ?? "";
}
