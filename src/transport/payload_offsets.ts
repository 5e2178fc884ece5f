/**
 * {@linkcode PayloadOffsets}: where the pieces of a framed body (chunks, DATA frames) lay in the connection's bytes.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";

/** Pieces remembered: a fault further back than this many pieces cannot be placed in the input. */
const MAX_PIECES = 4096;

/**
 * Remembers, for the last {@link MAX_PIECES} pieces of a body, the payload offset each starts at and its input offset,
 * so that a fault found in the payload (by whatever decodes the body) can be placed in the connection's bytes. Grows
 * from a small size: a connection may hold many bodies at once (HTTP/2 streams).
 */
export class PayloadOffsets {
  #payload = new Float64Array(8);
  #input = new Float64Array(8);
  #count = 0;

  /** Payload bytes `payloadOffset...` start at input offset `inputOffset` (pieces come in payload order). */
  record(payloadOffset: number, inputOffset: number): void {
    let slot = this.#count;
    if (slot >= this.#payload.length) {
      if (this.#payload.length < MAX_PIECES) {
        const size = Math.min(MAX_PIECES, this.#payload.length * 2);
        const payload = new Float64Array(size);
        const input = new Float64Array(size);
        payload.set(this.#payload);
        input.set(this.#input);
        this.#payload = payload;
        this.#input = input;
      } else {
        slot %= MAX_PIECES;
      }
    }
    this.#payload[slot] = payloadOffset;
    this.#input[slot] = inputOffset;
    this.#count++;
  }

  /** The input offset of payload byte `payloadOffset`, or `undefined` if its piece is not (or no longer) known. */
  inputOffsetOf(payloadOffset: number): number | undefined {
    const count = this.#count;
    const first = Math.max(0, count - MAX_PIECES);
    for (let k = count - 1; k >= first; k--) {
      const slot = k % MAX_PIECES;
      if (this.#payload[slot] <= payloadOffset) return this.#input[slot] + (payloadOffset - this.#payload[slot]);
    }
    return undefined;
  }
}

/**
 * A `placeFault` (see `DecoderStreamOptions`) for the stage that decodes a body's payload (a gzip or deflate coding):
 * its fault moved to the connection's bytes and named `context`, as the connection's own faults are. A fault whose
 * payload offset can no longer be placed (see {@linkcode PayloadOffsets}) is left as it is.
 */
export function placeIn(
  inputOffsetOf: (payloadOffset: number) => number | undefined,
  context: string,
): (fault: DecodeError) => DecodeError {
  return (fault) => {
    const at = inputOffsetOf(fault.offset);
    return at === undefined ? fault : new DecodeError(fault.code, at, fault.detail, { cause: fault.cause, context });
  };
}
