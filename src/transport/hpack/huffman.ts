/**
 * The HPACK Huffman code (RFC 7541 Appendix B) and its decoder.
 *
 * The code is canonical: codes of one length are consecutive in symbol order and every shorter code precedes every
 * longer one, so the code lengths alone determine it. The decoder is a state machine that reads 4 bits at a time:
 * a state is an internal node of the code tree (256 of them), and one table lookup per nibble gives the next state,
 * the symbol completed on the way (at most one: the shortest code has 5 bits), whether the EOS symbol was completed
 * and whether the state is a valid place for the string to end. Both tables are built once, at module load.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";

/** Length in bits of the code of each symbol: octets 0 to 255, then EOS (256). RFC 7541 Appendix B. */
// deno-fmt-ignore
export const HUFFMAN_CODE_LENGTHS: Uint8Array = Uint8Array.of(
  // 0x00-0x0f
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
  // 0x10-0x1f
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  // 0x20-0x2f: ' ' to '/'
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
  // 0x30-0x3f: '0' to '?'
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  // 0x40-0x4f: '@' to 'O'
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
  // 0x50-0x5f: 'P' to '_'
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  // 0x60-0x6f: '`' to 'o'
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
  // 0x70-0x7f: 'p' to DEL
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  // 0x80-0x8f
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
  // 0x90-0x9f
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  // 0xa0-0xaf
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
  // 0xb0-0xbf
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  // 0xc0-0xcf
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  // 0xd0-0xdf
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  // 0xe0-0xef
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
  // 0xf0-0xff
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  // EOS
  30,
);

/** The EOS symbol (RFC 7541 §5.2): never valid inside a string. */
export const EOS = 256;

/** The code of each symbol (0-255, EOS at 256), right-aligned: `HUFFMAN_CODE_LENGTHS[s]` low bits of `HUFFMAN_CODES[s]`. */
export const HUFFMAN_CODES: Uint32Array = (() => {
  const codes = new Uint32Array(257);
  let code = 0;
  let length = 0;
  for (let bits = 1; bits <= 30; bits++) {
    for (let s = 0; s <= EOS; s++) {
      if (HUFFMAN_CODE_LENGTHS[s] !== bits) continue;
      code <<= bits - length; // canonical: the next code, widened to this length
      length = bits;
      codes[s] = code;
      code++;
    }
  }
  // A complete prefix code ends with the all-ones code of the longest length (EOS: 30 ones).
  if (code !== 2 ** 30 || codes[EOS] !== 0x3fffffff) throw new Error("HPACK Huffman code table is inconsistent");
  return codes;
})();

// Decoder table entry layout (one 32-bit word per state and nibble).
const NEXT_MASK = 0xff; // bits 0-7: the next state
const SYMBOL_SHIFT = 8; // bits 8-15: the symbol completed, if EMIT
const EMIT = 1 << 16; // a symbol was completed during this nibble
const ACCEPT = 1 << 17; // the next state is a valid end: the root, or at most 7 one-bits into the EOS code
const FAIL = 1 << 18; // the EOS code was completed during this nibble

/** `DECODE[state << 4 | nibble]`: see the entry layout above. 256 states x 16 nibbles. */
const DECODE: Uint32Array = (() => {
  // The code tree. Internal nodes are 0..255 (0 the root); a child is a node number, or ~symbol for a leaf.
  const zero = new Int32Array(256);
  const one = new Int32Array(256);
  // Depth of a node along the all-ones path from the root, -1 for a node off that path.
  const onesDepth = new Int32Array(256).fill(-1);
  onesDepth[0] = 0;
  let nodes = 1;
  for (let s = 0; s <= EOS; s++) {
    const length = HUFFMAN_CODE_LENGTHS[s];
    const code = HUFFMAN_CODES[s];
    let node = 0;
    for (let b = length - 1; b > 0; b--) {
      const children = (code >>> b) & 1 ? one : zero;
      if (children[node] === 0) {
        if (nodes === 256) throw new Error("HPACK Huffman code tree overflow");
        children[node] = nodes;
        if (children === one && onesDepth[node] >= 0) onesDepth[nodes] = onesDepth[node] + 1;
        nodes++;
      }
      node = children[node];
    }
    ((code & 1) ? one : zero)[node] = ~s;
  }
  const table = new Uint32Array(256 * 16);
  for (let state = 0; state < 256; state++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = state;
      let entry = 0;
      for (let b = 3; b >= 0; b--) {
        const child = (nibble >>> b) & 1 ? one[node] : zero[node];
        if (child >= 0) {
          node = child;
          continue;
        }
        const symbol = ~child;
        if (symbol === EOS) {
          entry |= FAIL;
          node = 0;
          break;
        }
        entry |= EMIT | (symbol << SYMBOL_SHIFT);
        node = 0;
      }
      if (onesDepth[node] >= 0 && onesDepth[node] <= 7) entry |= ACCEPT;
      table[(state << 4) | nibble] = entry | node;
    }
  }
  return table;
})();

/** Upper bound of the decoded length of `encodedLength` Huffman-coded octets (every code has at least 5 bits). */
export function maxDecodedLength(encodedLength: number): number {
  return Math.floor((encodedLength * 8) / 5);
}

/**
 * Decodes the Huffman-coded octets `src[start..end)` into `dst` (which must hold
 * {@linkcode maxDecodedLength}`(end - start)` octets) and returns the decoded length.
 *
 * Throws {@linkcode DecodeError} `HPACK_INVALID` at `base + k` for the octet `k` of `src` that completes the EOS
 * symbol, or at `base + end - 1` if the string does not end on a symbol boundary followed by at most 7 one-bits
 * (RFC 7541 §5.2).
 */
export function decodeHuffman(src: Uint8Array, start: number, end: number, dst: Uint8Array, base: number): number {
  let state = 0;
  let entry = ACCEPT;
  let out = 0;
  for (let k = start; k < end; k++) {
    const octet = src[k];
    entry = DECODE[(state << 4) | (octet >>> 4)];
    if ((entry & EMIT) !== 0) dst[out++] = (entry >>> SYMBOL_SHIFT) & 0xff;
    const low = DECODE[((entry & NEXT_MASK) << 4) | (octet & 15)];
    if (((entry | low) & FAIL) !== 0) {
      throw new DecodeError("HPACK_INVALID", base + k, "Huffman-coded string contains the EOS symbol");
    }
    if ((low & EMIT) !== 0) dst[out++] = (low >>> SYMBOL_SHIFT) & 0xff;
    entry = low;
    state = low & NEXT_MASK;
  }
  if ((entry & ACCEPT) === 0) {
    throw new DecodeError(
      "HPACK_INVALID",
      base + end - 1,
      "Huffman-coded string ends with padding that is not 0-7 one-bits (a prefix of EOS)",
    );
  }
  return out;
}
