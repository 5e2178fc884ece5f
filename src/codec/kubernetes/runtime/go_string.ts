/**
 * Go string semantics for protobuf `string` fields: the text Go's `encoding/json` prints for a Go string holding
 * arbitrary bytes (gogo-generated Kubernetes decoders do not validate UTF-8).
 *
 * @module
 */

// Not fatal (fatal decoding is several times slower in Deno): the result holds U+FFFD only if the input is ill-formed
// or spells U+FFFD itself, and then the Go-semantics path decodes it again. WHATWG's notion of well-formed UTF-8 is
// Go's (no surrogates, no overlongs, nothing above U+10FFFF), so any other result is exactly Go's string.
// ignoreBOM: a leading U+FEFF is part of the Go string and must be kept.
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

// ASCII strings up to this length are interned: most short strings of Kubernetes objects (label and annotation
// keys, namespaces, field managers, kinds, condition types) repeat across objects, and a repeat then costs a hash
// and a compare instead of an allocation. On V8 building them with String.fromCharCode beats TextDecoder's
// fixed per-call cost up to about this length too.
const INTERN_MAX = 32;
const INTERN_BITS = 12;
const INTERN_MASK = (1 << INTERN_BITS) - 1;
// Direct-mapped: a colliding string simply replaces the previous one.
const interned: (string | undefined)[] = new Array<string | undefined>(1 << INTERN_BITS).fill(undefined);
// Each entry's length (0: empty slot) and bytes (INTERN_MAX per slot).
const internedLength = new Uint8Array(1 << INTERN_BITS);
const internedBytes = new Uint8Array((1 << INTERN_BITS) * INTERN_MAX);
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
 * Cost: ASCII strings of up to 32 bytes are looked up in a small intern table by a hash of their length and six
 * of their bytes, then compared in full (a hit allocates nothing; a miss builds the string from 8-byte `String.fromCharCode` chunks); anything else is one `TextDecoder.decode` of
 * a `subarray` view; only input containing U+FFFD or ill-formed sequences takes the byte-wise Go path.
 *
 * @param bytes The buffer holding the string's bytes (not copied, not retained).
 * @param start Offset of the first byte.
 * @param end Offset after the last byte (`start <= end <= bytes.length`).
 */
export function readGoString(bytes: Uint8Array, start: number, end: number): string {
  const length = end - start;
  if (length <= INTERN_MAX) {
    if (length <= 0) return "";
    // The slot: a hash of the length and a few bytes at both ends and the middle (where strings of the same length
    // that repeat in objects tend to differ: "worker-1"/"worker-2", "False"/"True"...); the compare below checks all.
    const last = end - 1;
    let hash = Math.imul(length ^ bytes[start], 0x01000193);
    hash = Math.imul(hash ^ bytes[last], 0x01000193);
    hash = Math.imul(hash ^ bytes[start + (length >>> 1)], 0x01000193);
    hash = Math.imul(hash ^ bytes[start + (length >>> 2)], 0x01000193);
    hash = Math.imul(hash ^ bytes[start + ((length * 3) >>> 2)], 0x01000193);
    hash = Math.imul(hash ^ bytes[start + ((length * 7) >>> 3)], 0x01000193);
    const slot = (hash ^ (hash >>> 15)) & INTERN_MASK;
    // The entry's bytes are compared rather than its string's code units: typed-array loads are the cheapest
    // compare in every engine. Equal to an interned (ASCII) entry: the bytes are that ASCII.
    const at = slot * INTERN_MAX;
    if (internedLength[slot] === length) {
      let i = 0;
      while (i < length && internedBytes[at + i] === bytes[start + i]) i++;
      if (i === length) return interned[slot]!;
    }
    let any = 0;
    for (let i = start; i < end; i++) any |= bytes[i];
    if (any < 0x80) {
      const s = asciiString(bytes, start, end);
      interned[slot] = s;
      internedLength[slot] = length;
      for (let i = 0; i < length; i++) internedBytes[at + i] = bytes[start + i];
      return s;
    }
  }
  const s = utf8.decode(bytes.subarray(start, end));
  return s.indexOf("\uFFFD") === -1 ? s : decodeGoUtf8(bytes, start, end);
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
