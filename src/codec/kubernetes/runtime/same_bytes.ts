/**
 * {@linkcode sameBytes}: whether a recorded copy of some bytes equals bytes of the input, as the intern tables of
 * {@link ./go_string.ts} and {@link ./repeated_json.ts} compare them. Internal.
 *
 * @module
 */

/** Whether this platform stores a Uint32Array's words little-endian (the tables' words are read that way). */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/**
 * True if `table[at:at+length]` equals `bytes[start:start+length]`: the bytes are compared rather than the string's code
 * units, since typed-array loads are the cheapest compare in every engine; with `words` (a DataView of `bytes`), four
 * at a time against the table's words (`table32`, the same memory as `table`; `at` is a multiple of 4).
 */
export function sameBytes(
  table: Uint8Array,
  table32: Uint32Array,
  at: number,
  bytes: Uint8Array,
  start: number,
  length: number,
  words: DataView | undefined,
): boolean {
  let i = 0;
  if (words !== undefined) {
    const whole = length & ~3;
    for (; i < whole; i += 4) if (table32[(at + i) >>> 2] !== words.getUint32(start + i, LITTLE_ENDIAN)) return false;
  }
  for (; i < length; i++) if (table[at + i] !== bytes[start + i]) return false;
  return true;
}
