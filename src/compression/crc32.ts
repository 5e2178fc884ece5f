/**
 * CRC-32 as gzip uses it (ISO 3309, RFC 1952 §8): reflected polynomial 0xEDB88320, initial value and final XOR
 * 0xFFFFFFFF. Table-driven, eight bytes per step ("slicing by 8").
 *
 * @module
 */

// TABLES[0] is the classic byte-at-a-time table; TABLES[k][i] is the CRC of byte i followed by k zero bytes, which
// lets eight input bytes be folded in with eight independent lookups.
const TABLES: Int32Array[] = [];
{
  const t0 = new Int32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t0[i] = c;
  }
  TABLES.push(t0);
  for (let k = 1; k < 8; k++) {
    const prev = TABLES[k - 1];
    const t = new Int32Array(256);
    for (let i = 0; i < 256; i++) t[i] = t0[prev[i] & 0xff] ^ (prev[i] >>> 8);
    TABLES.push(t);
  }
}
const [T0, T1, T2, T3, T4, T5, T6, T7] = TABLES;

/**
 * Continues the CRC-32 `crc` (a finished value, 0 for none yet) over `bytes[from..to)` and returns the new finished
 * value, an unsigned 32-bit integer.
 */
export function crc32(crc: number, bytes: Uint8Array, from = 0, to = bytes.length): number {
  let c = ~crc;
  let i = from;
  for (const stop = to - 7; i < stop; i += 8) {
    const lo = c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
    c = T7[lo & 0xff] ^ T6[(lo >>> 8) & 0xff] ^ T5[(lo >>> 16) & 0xff] ^ T4[lo >>> 24] ^
      T3[bytes[i + 4]] ^ T2[bytes[i + 5]] ^ T1[bytes[i + 6]] ^ T0[bytes[i + 7]];
  }
  for (; i < to; i++) c = T0[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/** Continues the CRC-32 `crc` (a finished value) over the single byte `byte`. */
export function crc32Byte(crc: number, byte: number): number {
  const c = ~crc;
  return ~(T0[(c ^ byte) & 0xff] ^ (c >>> 8)) >>> 0;
}
