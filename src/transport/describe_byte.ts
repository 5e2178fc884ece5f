/** A byte as a person reads it in an error message: `'a'` for printable ASCII, else `byte 0x0a`. */
export function describe(b: number): string {
  if (b >= 0x21 && b < 0x7f) return `'${String.fromCharCode(b)}'`;
  return `byte 0x${b.toString(16).padStart(2, "0")}`;
}
