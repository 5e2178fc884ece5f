/**
 * Adler-32 (RFC 1950 §8.2), the checksum of a zlib stream's uncompressed data.
 *
 * @module
 */

const BASE = 65521;
// zlib's NMAX: the most bytes that can be summed before reducing modulo BASE with both sums still below 2^32.
const NMAX = 5552;

/** The Adler-32 of `bytes` continued from `adler` (1 for a new checksum). */
export function adler32(adler: number, bytes: Uint8Array): number {
  let a = adler & 0xffff;
  let b = adler >>> 16;
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const end = Math.min(n, i + NMAX);
    for (; i < end; i++) {
      a += bytes[i];
      b += a;
    }
    a %= BASE;
    b %= BASE;
  }
  return ((b << 16) | a) >>> 0;
}
