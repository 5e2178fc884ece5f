/**
 * Uneven pieces of a byte string, the same for a given seed everywhere: used by the watch server to write its responses
 * (tests/peers/watch_server.ts) and by the checks that run inside a runtime to cut what they decode
 * (tests/peers/watch_checks.ts), so it uses nothing but the language.
 *
 * @module
 */

/** Views of `bytes` in order, of 1 to 4096 bytes each (half of them at most 64), sizes from a fixed sequence. */
export function* piecesOf(bytes: Uint8Array, seed: number): Generator<Uint8Array> {
  let state = seed | 1;
  for (let at = 0; at < bytes.length;) {
    state = Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) ^ 0x9e3779b9;
    const size = 1 + ((state >>> 8) % (state & 1 ? 4096 : 64));
    yield bytes.subarray(at, at + size);
    at += size;
  }
}
