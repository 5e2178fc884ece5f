/**
 * IP addresses as text: dotted IPv4, and IPv6 in the RFC 5952 form. Internal.
 *
 * @module
 */

/** The IPv4 address in the 4 bytes of `data` at `at`, dotted (`"10.0.0.1"`). */
export function ipv4Text(data: Uint8Array, at: number): string {
  return data[at] + "." + data[at + 1] + "." + data[at + 2] + "." + data[at + 3];
}

/**
 * The IPv6 address in the 16 bytes of `data` at `at`, as RFC 5952 writes it: lowercase hexadecimal groups without
 * leading zeros, the longest run of two or more zero groups (the first of equal runs) as `::`, and an IPv4-mapped
 * address as `::ffff:1.2.3.4`.
 */
export function ipv6Text(data: Uint8Array, at: number): string {
  if (isIpv4Mapped(data, at)) return "::ffff:" + ipv4Text(data, at + 12);
  // The longest run of zero groups, and where it starts.
  let runStart = -1;
  let runLength = 0;
  for (let group = 0; group < 8;) {
    if (data[at + 2 * group] !== 0 || data[at + 2 * group + 1] !== 0) {
      group++;
      continue;
    }
    let end = group + 1;
    while (end < 8 && data[at + 2 * end] === 0 && data[at + 2 * end + 1] === 0) end++;
    if (end - group > runLength) {
      runStart = group;
      runLength = end - group;
    }
    group = end;
  }
  // RFC 5952 4.2.2: a single zero group is written "0", not "::".
  if (runLength < 2) runStart = -1;
  const runEnd = runStart === -1 ? -1 : runStart + runLength;
  let text = "";
  for (let group = 0; group < 8; group++) {
    if (group === runStart) {
      text += "::";
      group = runEnd - 1;
      continue;
    }
    if (group !== 0 && group !== runEnd) text += ":";
    text += ((data[at + 2 * group] << 8) | data[at + 2 * group + 1]).toString(16);
  }
  return text;
}

/** Whether the 16 bytes at `at` are `::ffff:0:0/96`: ten zero bytes, then two 0xff. */
function isIpv4Mapped(data: Uint8Array, at: number): boolean {
  if (data[at + 10] !== 0xff || data[at + 11] !== 0xff) return false;
  for (let i = 0; i < 10; i++) if (data[at + i] !== 0) return false;
  return true;
}
