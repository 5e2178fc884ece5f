/**
 * Joining byte arrays, for the few places that must (a message or line that spans input chunks, an encoder's output).
 *
 * @module
 */

/**
 * The bytes of `parts` one after another in one array of exactly their total size. A single part is returned as it
 * is, not copied. `length`, when the caller already knows the total, saves a pass.
 */
export function concatBytes(parts: readonly Uint8Array[], length?: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  let total = length ?? 0;
  if (length === undefined) { for (const part of parts) total += part.length; }
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
