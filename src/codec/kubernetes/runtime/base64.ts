/**
 * Go's JSON for `[]byte`: standard base64 (RFC 4648 alphabet, `=` padding), as `encoding/json` prints it.
 *
 * @module
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Engines that implement the TC39 Uint8Array base64 proposal (`Uint8Array.prototype.toBase64`) encode natively.
type NativeBase64 = (this: Uint8Array) => string;
const nativeToBase64 = (Uint8Array.prototype as unknown as { toBase64?: NativeBase64 }).toBase64;

// Fallback: every 12-bit group maps to two output characters, written as one 16-bit store into the output buffer;
// the ASCII buffer then becomes a string with one TextDecoder call.
const littleEndian = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
const PAIRS = new Uint16Array(4096);
for (let i = 0; i < 4096; i++) {
  const a = ALPHABET.charCodeAt(i >> 6);
  const b = ALPHABET.charCodeAt(i & 63);
  PAIRS[i] = littleEndian ? a | (b << 8) : (a << 8) | b;
}
// The same pairs as strings, for short inputs: a few concatenations beat TextDecoder's fixed per-call cost.
const PAIR_STRINGS: string[] = [];
for (let i = 0; i < 4096; i++) PAIR_STRINGS.push(ALPHABET[i >> 6] + ALPHABET[i & 63]);
const SHORT_MAX = 48;
const ascii = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Returns the standard, padded base64 of `bytes[start:end]`: the string Go's `encoding/json` prints for a
 * non-nil `[]byte` holding those bytes (`""` for an empty one). A nil `[]byte` prints `null`, which is the caller's
 * business: after protobuf `Unmarshal`, an absent `bytes` field is nil, a present one (even empty) is not.
 *
 * Uses `Uint8Array.prototype.toBase64` for inputs over 48 bytes where the engine has it, else a table-driven
 * encoder.
 *
 * @param bytes The buffer holding the bytes (not copied, not retained).
 * @param start Offset of the first byte.
 * @param end Offset after the last byte.
 */
export function base64Std(bytes: Uint8Array, start: number, end: number): string {
  if (start === end) return "";
  // The native encoder has a per-call cost that short inputs do not repay.
  if (nativeToBase64 !== undefined && end - start > SHORT_MAX) return nativeToBase64.call(bytes.subarray(start, end));
  return encodeTable(bytes, start, end);
}

/** The portable encoder (exported for tests, which check it against the native one and against Go). */
export function encodeTable(bytes: Uint8Array, start: number, end: number): string {
  const length = end - start;
  const whole = start + length - (length % 3);
  let head: string;
  if (length <= SHORT_MAX) {
    head = "";
    for (let i = start; i < whole; i += 3) {
      const v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      head += PAIR_STRINGS[v >> 12] + PAIR_STRINGS[v & 0xfff];
    }
  } else {
    const out = new Uint8Array(((whole - start) / 3) * 4);
    const pairs = new Uint16Array(out.buffer);
    let j = 0;
    for (let i = start; i < whole; i += 3) {
      const v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      pairs[j++] = PAIRS[v >> 12];
      pairs[j++] = PAIRS[v & 0xfff];
    }
    head = ascii.decode(out);
  }
  switch (end - whole) {
    case 1: {
      const b0 = bytes[whole];
      return head + ALPHABET[b0 >> 2] + ALPHABET[(b0 & 3) << 4] + "==";
    }
    case 2: {
      const b0 = bytes[whole];
      const b1 = bytes[whole + 1];
      return head + ALPHABET[b0 >> 2] + ALPHABET[((b0 & 3) << 4) | (b1 >> 4)] + ALPHABET[(b1 & 15) << 2] + "=";
    }
    default:
      return head;
  }
}
