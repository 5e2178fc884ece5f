/**
 * Unsigned integers of a capture file, in the byte order its header or section declares. Internal.
 *
 * @module
 */

/** The unsigned 16-bit integer at `at` in `bytes`, little-endian or big-endian. */
export function readUint16(bytes: Uint8Array, at: number, littleEndian: boolean): number {
  return littleEndian ? bytes[at] | (bytes[at + 1] << 8) : (bytes[at] << 8) | bytes[at + 1];
}

/** The unsigned 32-bit integer at `at` in `bytes`, little-endian or big-endian. */
export function readUint32(bytes: Uint8Array, at: number, littleEndian: boolean): number {
  return littleEndian
    ? (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) >>> 0
    : ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0;
}
