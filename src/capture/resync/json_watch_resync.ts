/**
 * {@linkcode JsonWatchResync}: a JSON watch body after bytes were lost from it, cut to start at its next whole line.
 * Internal.
 *
 * @module
 */
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import { ScanBuffer } from "./scan_buffer.ts";

const LF = 0x0a;
const utf8 = new TextDecoder();

/**
 * Passes on a JSON (newline-delimited) watch body after a gap from its first whole line: the first line after the gap
 * is kept only if it is a whole watch event (a JSON object with a `type` and an `object` member), else it is dropped
 * and the body goes on after its newline. So an event the gap cut is dropped whole, and none is decoded from bytes on
 * both sides of the gap: the rest of a compact JSON line, cut anywhere, is never a JSON object with a `type` member
 * (cut outside a string, its brackets do not balance; cut inside one, the next member names would be the punctuation
 * between the line's strings). `found` is told how many bytes were dropped; a body that ends without a newline, or
 * whose first line is longer than `maxEventBytes`, has it dropped whole.
 */
export class JsonWatchResync implements StreamDecoder<Uint8Array, Uint8Array> {
  readonly #maxEventBytes: number;
  readonly #found: (skippedBytes: number) => void;
  readonly #line = new ScanBuffer();
  /** Bytes of a first line too long to hold, dropped so far; -1 while it is held. */
  #dropping = -1;
  #done = false;

  /** A resync for lines up to `maxEventBytes`, telling `found` where the body goes on. */
  constructor(maxEventBytes: number, found: (skippedBytes: number) => void) {
    this.#maxEventBytes = maxEventBytes;
    this.#found = found;
  }

  push(chunk: Uint8Array, emit: (bytes: Uint8Array) => void): void {
    if (this.#done) {
      emit(chunk);
      return;
    }
    const newline = chunk.indexOf(LF);
    const part = newline < 0 ? chunk : chunk.subarray(0, newline);
    if (this.#dropping < 0 && this.#line.length + part.length > this.#maxEventBytes) {
      this.#dropping = this.#line.length;
      this.#line.take();
    }
    if (this.#dropping >= 0) this.#dropping += part.length;
    else this.#line.append(part);
    if (newline < 0) return;
    this.#done = true;
    const rest = chunk.subarray(newline + 1);
    if (this.#dropping < 0 && isWatchEvent(this.#line.view)) {
      this.#found(0);
      const line = this.#line.take();
      const whole = new Uint8Array(line.length + 1 + rest.length);
      whole.set(line);
      whole[line.length] = LF;
      whole.set(rest, line.length + 1);
      emit(whole);
      return;
    }
    this.#found((this.#dropping >= 0 ? this.#dropping : this.#line.length) + 1);
    this.#line.take();
    if (rest.length > 0) emit(rest);
  }

  finish(): void {}
}

/** Whether `line` is a JSON object with a `type` (a string) and an `object` (an object) member. */
function isWatchEvent(line: Uint8Array): boolean {
  let i = 0;
  while (i < line.length && (line[i] === 0x20 || line[i] === 0x09)) i++;
  if (line[i] !== 0x7b) return false; // '{'
  try {
    const value = JSON.parse(utf8.decode(line));
    return value !== null && typeof value === "object" && !Array.isArray(value) && typeof value.type === "string" &&
      value.object !== null && typeof value.object === "object";
  } catch {
    return false;
  }
}
