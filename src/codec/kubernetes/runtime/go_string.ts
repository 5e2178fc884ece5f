/**
 * Go string semantics for protobuf `string` fields: the text Go's `encoding/json` prints for a Go string holding
 * arbitrary bytes (gogo-generated Kubernetes decoders do not validate UTF-8).
 *
 * @module
 */

import { sameBytes } from "./same_bytes.ts";

// Not fatal (fatal decoding costs more in some runtimes): the result holds U+FFFD only if the input is ill-formed
// or spells U+FFFD itself, and then the Go-semantics path decodes it again. WHATWG's notion of well-formed UTF-8 is
// Go's (no surrogates, no overlongs, nothing above U+10FFFF), so any other result is exactly Go's string.
// ignoreBOM: a leading U+FEFF is part of the Go string and must be kept.
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

// Strings that repeat across objects (label and annotation keys, namespaces, field managers, kinds, condition types
// and messages, image names, owners' UIDs) are interned in two direct-mapped tables keyed by their bytes: a repeat
// then costs a hash and a compare instead of building a string. A colliding string replaces the entry.
// - ASCII strings of 1-32 bytes: building them with String.fromCharCode costs less than TextDecoder's fixed per-call
//   cost up to about this length, so a miss builds them that way.
// - Any string of 33-128 bytes: a miss decodes it as a longer string is decoded, and keeps what that gave. Strings of
//   65-128 bytes (image names with digests, messages) are compared four bytes at a time when the caller passes a
//   DataView; above 128 bytes even that compare costs about what decoding them does.
const SHORT_MAX = 32;
const SHORT_BITS = 12;
const LONG_MAX = 128;
const LONG_BITS = 10;
const shortStrings: (string | undefined)[] = new Array<string | undefined>(1 << SHORT_BITS).fill(undefined);
// Each entry's length (0: empty slot) and bytes (SHORT_MAX / LONG_MAX per slot).
const shortLengths = new Uint8Array(1 << SHORT_BITS);
const shortBytes = new Uint8Array((1 << SHORT_BITS) * SHORT_MAX);
const longStrings: (string | undefined)[] = new Array<string | undefined>(1 << LONG_BITS).fill(undefined);
const longLengths = new Uint8Array(1 << LONG_BITS);
const longBytes = new Uint8Array((1 << LONG_BITS) * LONG_MAX);
// The same bytes as 32-bit words (each slot starts at a multiple of 4).
const shortWords = new Uint32Array(shortBytes.buffer);
const longWords = new Uint32Array(longBytes.buffer);
// Chunk size for String.fromCharCode.apply over code units (far below engines' argument limits).
const CHUNK = 4096;

const fromCharCode = String.fromCharCode;

/**
 * Returns the string Go's `encoding/json` prints (as `JSON.parse` reads it back) for a Go string holding
 * `bytes[start:end]`.
 *
 * Well-formed UTF-8 comes out unchanged (a leading byte order mark included). Each byte at which Go's
 * `utf8.DecodeRuneInString` reports an error (`RuneError` with width 1) becomes one U+FFFD, and decoding resumes at
 * the next byte. This differs from WHATWG `TextDecoder`'s replacement, which replaces a maximal ill-formed subpart
 * with a single U+FFFD: `E2 82 41` is `"\uFFFD\uFFFDA"` here and `"\uFFFDA"` for `TextDecoder`; a surrogate
 * `ED A0 80` is three U+FFFD in both.
 *
 * Cost: strings that repeat are interned: ASCII strings of up to 32 bytes and any string of 33 to 128 bytes are
 * looked up by a hash of their length and a few of their bytes, then compared in full (a hit allocates nothing; a
 * miss builds a short ASCII string from 8-byte `String.fromCharCode` chunks and decodes any other). A longer string
 * (or a short non-ASCII one) is one `TextDecoder.decode` of a `subarray` view; only input containing U+FFFD or
 * ill-formed sequences takes the byte-wise Go path.
 *
 * @param bytes The buffer holding the string's bytes (not copied, not retained).
 * @param start Offset of the first byte.
 * @param end Offset after the last byte (`start <= end <= bytes.length`).
 * @param words Optionally, a DataView of exactly `bytes` (its buffer, offset and length): an interned string is then
 * compared four bytes at a time (a decoder that reads many strings of one buffer makes it once).
 */
export function readGoString(bytes: Uint8Array, start: number, end: number, words?: DataView): string {
  const length = end - start;
  if (length <= SHORT_MAX) {
    if (length <= 0) return "";
    const slot = slotOf(bytes, start, length, SHORT_BITS);
    const at = slot * SHORT_MAX;
    if (shortLengths[slot] === length && sameBytes(shortBytes, shortWords, at, bytes, start, length, words)) {
      return shortStrings[slot]!;
    }
    let any = 0;
    for (let i = start; i < end; i++) any |= bytes[i];
    if (any < 0x80) {
      const s = asciiString(bytes, start, end);
      shortStrings[slot] = s;
      shortLengths[slot] = length;
      for (let i = 0; i < length; i++) shortBytes[at + i] = bytes[start + i];
      return s;
    }
  } else if (length <= LONG_MAX) {
    const slot = slotOf(bytes, start, length, LONG_BITS);
    const at = slot * LONG_MAX;
    if (longLengths[slot] === length && sameBytes(longBytes, longWords, at, bytes, start, length, words)) {
      return longStrings[slot]!;
    }
    const view = bytes.subarray(start, end);
    const s = decode(view, bytes, start, end);
    longStrings[slot] = s;
    longLengths[slot] = length;
    longBytes.set(view, at);
    return s;
  }
  return decode(bytes.subarray(start, end), bytes, start, end);
}

/** `view` (= `bytes[start:end]`) as Go's string: TextDecoder's result, unless that holds U+FFFD. */
function decode(view: Uint8Array, bytes: Uint8Array, start: number, end: number): string {
  const s = utf8.decode(view);
  return s.indexOf("\uFFFD") === -1 ? s : decodeGoUtf8(bytes, start, end);
}

/**
 * An intern table slot for `length` (>= 1) bytes at `start`: a hash of the length and bytes at both ends and
 * inside (where strings of the same length that repeat in objects tend to differ: "worker-1"/"worker-2",
 * "False"/"True", UIDs); the caller compares all bytes.
 */
function slotOf(bytes: Uint8Array, start: number, length: number, bits: number): number {
  let hash = Math.imul(length ^ bytes[start], 0x01000193);
  hash = Math.imul(hash ^ bytes[start + length - 1], 0x01000193);
  hash = Math.imul(hash ^ bytes[start + (length >>> 1)], 0x01000193);
  hash = Math.imul(hash ^ bytes[start + (length >>> 2)], 0x01000193);
  hash = Math.imul(hash ^ bytes[start + ((length * 3) >>> 2)], 0x01000193);
  hash = Math.imul(hash ^ bytes[start + ((length * 7) >>> 3)], 0x01000193);
  return (hash ^ (hash >>> 15)) & ((1 << bits) - 1);
}

/** ASCII bytes to a string in 8-byte String.fromCharCode chunks (no per-byte concatenation, no array). */
function asciiString(b: Uint8Array, start: number, end: number): string {
  let s = "";
  let i = start;
  for (; i + 8 <= end; i += 8) {
    s += fromCharCode(b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7]);
  }
  switch (end - i) {
    case 0:
      return s;
    case 1:
      return s + fromCharCode(b[i]);
    case 2:
      return s + fromCharCode(b[i], b[i + 1]);
    case 3:
      return s + fromCharCode(b[i], b[i + 1], b[i + 2]);
    case 4:
      return s + fromCharCode(b[i], b[i + 1], b[i + 2], b[i + 3]);
    case 5:
      return s + fromCharCode(b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4]);
    case 6:
      return s + fromCharCode(b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5]);
    default:
      return s + fromCharCode(b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6]);
  }
}

/**
 * The byte-wise decoder with Go's error semantics (utf8.DecodeRune in Go's unicode/utf8): the accepted second-byte
 * ranges are E0: A0..BF, ED: 80..9F, F0: 90..BF, F4: 80..8F, otherwise 80..BF; an invalid lead byte, a
 * bad continuation or a truncated sequence yields U+FFFD and consumes one byte.
 */
function decodeGoUtf8(bytes: Uint8Array, start: number, end: number): string {
  // UTF-16 needs at most one code unit per input byte (4 bytes -> 2 units, 1 invalid byte -> 1 unit).
  const units = new Uint16Array(Math.min(end - start, CHUNK * 4) + 4);
  let parts: string[] | undefined;
  let n = 0;
  let i = start;
  while (i < end) {
    if (n >= units.length - 2) {
      (parts ??= []).push(flush(units, n));
      n = 0;
    }
    const b0 = bytes[i];
    if (b0 < 0x80) {
      units[n++] = b0;
      i++;
      continue;
    }
    let cp = -1;
    let width = 1;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      if (i + 1 < end) {
        const b1 = bytes[i + 1];
        if (b1 >= 0x80 && b1 <= 0xbf) {
          cp = ((b0 & 0x1f) << 6) | (b1 & 0x3f);
          width = 2;
        }
      }
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      if (i + 2 < end) {
        const b1 = bytes[i + 1];
        const b2 = bytes[i + 2];
        const lo = b0 === 0xe0 ? 0xa0 : 0x80;
        const hi = b0 === 0xed ? 0x9f : 0xbf;
        if (b1 >= lo && b1 <= hi && b2 >= 0x80 && b2 <= 0xbf) {
          cp = ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
          width = 3;
        }
      }
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      if (i + 3 < end) {
        const b1 = bytes[i + 1];
        const b2 = bytes[i + 2];
        const b3 = bytes[i + 3];
        const lo = b0 === 0xf0 ? 0x90 : 0x80;
        const hi = b0 === 0xf4 ? 0x8f : 0xbf;
        if (b1 >= lo && b1 <= hi && b2 >= 0x80 && b2 <= 0xbf && b3 >= 0x80 && b3 <= 0xbf) {
          cp = ((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b2 & 0x3f) << 6) | (b3 & 0x3f);
          width = 4;
        }
      }
    }
    // Go checks the first continuation byte's range before the following ones, but a failure at any of them
    // yields the same (RuneError, 1), so checking all at once is equivalent.
    if (cp < 0) {
      units[n++] = 0xfffd;
    } else if (cp < 0x10000) {
      units[n++] = cp;
    } else {
      const v = cp - 0x10000;
      units[n++] = 0xd800 | (v >> 10);
      units[n++] = 0xdc00 | (v & 0x3ff);
    }
    i += width;
  }
  const last = flush(units, n);
  if (parts === undefined) return last;
  parts.push(last);
  return parts.join("");
}

function flush(units: Uint16Array, n: number): string {
  let s = "";
  for (let at = 0; at < n; at += CHUNK) {
    s += fromCharCode.apply(null, units.subarray(at, Math.min(n, at + CHUNK)) as unknown as number[]);
  }
  return s;
}
