/**
 * Octets to a JavaScript string with one character per octet (ISO-8859-1, "latin1"): lossless, and
 * `string.length` is the octet count HPACK sizes are counted in.
 *
 * Not `TextDecoder("latin1")`: the Encoding Standard maps that label to windows-1252, which changes 0x80-0x9f.
 *
 * @module
 */

// Strings up to SHORT octets (nearly every header name and value): the octets are copied into a plain array of
// exactly that length, kept from call to call, and handed to one `String.fromCharCode.apply`: engines take a plain
// array there faster than a typed array view.
const SHORT = 128;
const ARRAYS: number[][] = Array.from({ length: SHORT + 1 }, (_, n) => new Array<number>(n).fill(0));
// Longer strings: typed array views of at most CHUNK octets per call, well under every engine's argument limit.
const CHUNK = 8192;

/** `octets[start..end)` as a string of char codes 0-255. */
export function latin1(octets: Uint8Array, start: number, end: number): string {
  const n = end - start;
  if (n <= 0) return "";
  if (n <= SHORT) {
    const codes = ARRAYS[n];
    for (let k = 0; k < n; k++) codes[k] = octets[start + k];
    return String.fromCharCode.apply(null, codes);
  }
  const parts: string[] = [];
  for (let at = start; at < end; at += CHUNK) {
    parts.push(String.fromCharCode.apply(null, octets.subarray(at, Math.min(end, at + CHUNK)) as unknown as number[]));
  }
  return parts.join("");
}
