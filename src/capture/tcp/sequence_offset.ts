/**
 * {@linkcode streamOffsetOf}: a TCP sequence number (32 bits, wrapping) to an offset in its direction's stream (a plain
 * number that grows past 2^32). Internal.
 *
 * @module
 */

/**
 * The stream offset of the 32-bit `sequence` in a direction whose offset 0 is the sequence number `base`: of the
 * offsets that sequence number can stand for (one every 2^32), the one nearest to `near` (less than 2^31 away). With
 * `near` the offset the stream has reached, offsets go on past 2^32 as sequence numbers wrap around.
 */
export function streamOffsetOf(sequence: number, base: number, near: number): number {
  // `| 0` (ToInt32) takes the difference modulo 2^32 as a signed number: exact for any integer below 2^53.
  return near + ((sequence - base - near) | 0);
}
