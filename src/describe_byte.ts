/** A 32-bit value (a checksum) as `0x` and eight hex digits. */
export function hex32(n: number): string {
  return `0x${n.toString(16).padStart(8, "0")}`;
}

/** A byte as a person reads it in an error message: `'a'` for printable ASCII, else `byte 0x0a`. */
export function describe(b: number): string {
  if (b >= 0x21 && b < 0x7f) return `'${String.fromCharCode(b)}'`;
  return `byte 0x${b.toString(16).padStart(2, "0")}`;
}
