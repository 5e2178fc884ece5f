/**
 * {@linkcode ProtobufWatchResync}: a Kubernetes protobuf watch body after bytes were lost from it, cut to start at
 * its next frame. Internal.
 *
 * @module
 */
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import { ScanBuffer } from "./scan_buffer.ts";

/** The event types a frame may name (`meta.v1.WatchEvent.type`), as bytes. */
const TYPES = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"].map((t) => new TextEncoder().encode(t));

/**
 * Passes on a Kubernetes protobuf watch body (4-byte big-endian length, then a `meta.v1.WatchEvent`) from the first
 * place after a gap where a frame plausibly starts, and everything after it:
 *
 * - its length is within `maxEventBytes`, and the event fills it exactly: field 1 (`type`) one of ADDED, MODIFIED,
 *   DELETED, BOOKMARK, ERROR, then field 2 (`object`, a `runtime.RawExtension`) whose only field, `raw`, holds an
 *   object that starts with the `k8s\0` magic;
 * - and the frame after it starts plausibly too (a length within the limit, field 1 a known type, field 2 follows), or
 *   the body ends right after it.
 *
 * So an event the gap cut is dropped whole, never decoded from bytes of two events. It waits for the bytes each
 * decision needs (the frame, and the head of the next), so its output does not depend on the chunking, and holds at
 * most one frame (bounded by `maxEventBytes`) and the next head. `found` is told how many bytes were skipped.
 */
export class ProtobufWatchResync implements StreamDecoder<Uint8Array, Uint8Array> {
  readonly #maxEventBytes: number;
  readonly #found: (skippedBytes: number) => void;
  readonly #held = new ScanBuffer();
  #done = false;

  /** A resync for events up to `maxEventBytes`, telling `found` where the body goes on. */
  constructor(maxEventBytes: number, found: (skippedBytes: number) => void) {
    this.#maxEventBytes = maxEventBytes;
    this.#found = found;
  }

  push(chunk: Uint8Array, emit: (bytes: Uint8Array) => void): void {
    if (this.#done) {
      emit(chunk);
      return;
    }
    this.#held.append(chunk);
    this.#scan(false, emit);
  }

  finish(emit: (bytes: Uint8Array) => void): void {
    if (!this.#done) this.#scan(true, emit);
  }

  #scan(final: boolean, emit: (bytes: Uint8Array) => void): void {
    const b = this.#held.view;
    let i = 0;
    for (; i + 4 <= b.length; i++) {
      const head = frameHead(b, i, this.#maxEventBytes);
      if (head === WAIT) {
        if (!final) break;
        continue;
      }
      if (head === NO) continue;
      const end = i + 4 + head;
      if (end > b.length) {
        if (!final) break;
        continue;
      }
      if (!wholeEvent(b, i + 4, end)) continue;
      if (end !== b.length) {
        const next = frameHead(b, end, this.#maxEventBytes);
        if (next === WAIT && !final) break;
        if (next === NO || next === WAIT) continue;
      } else if (!final) break; // the next frame's head decides
      this.#held.drop(i);
      this.#done = true;
      this.#found(this.#held.dropped);
      emit(this.#held.take());
      return;
    }
    this.#held.drop(final ? b.length : i);
  }
}

const NO = -1;
const WAIT = -2;

/**
 * The length of a frame plausibly starting at `b[i]` (its prefix, a known event type, the object's tag), NO, or WAIT
 * when the bytes end before that can be told.
 */
function frameHead(b: Uint8Array, i: number, maxEventBytes: number): number {
  if (i + 4 > b.length) return WAIT;
  const length = ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;
  // The smallest event: type (2 + 5 bytes), object (2 bytes), RawExtension's raw (2 bytes) and the magic (4 bytes).
  if (length > maxEventBytes || length < 15) return NO;
  let at = i + 4;
  if (at + 2 > b.length) return WAIT;
  if (b[at] !== 0x0a) return NO;
  const n = b[at + 1];
  if (n < 5 || n > 8) return NO;
  at += 2;
  if (at + n + 1 > b.length) return Math.min(b.length - at, n) > 0 && !typePrefix(b, at, b.length) ? NO : WAIT;
  if (!isType(b, at, n) || b[at + n] !== 0x12) return NO;
  return length;
}

/** Whether `b[at..at+n)` is one of the event types. */
function isType(b: Uint8Array, at: number, n: number): boolean {
  return TYPES.some((t) => t.length === n && t.every((c, k) => b[at + k] === c));
}

/** Whether `b[at..end)` begins one of the event types. */
function typePrefix(b: Uint8Array, at: number, end: number): boolean {
  return TYPES.some((t) => t.every((c, k) => at + k >= end || b[at + k] === c));
}

/** Whether `b[start..end)` is exactly a type field and an object field whose RawExtension is only a k8s\0 raw. */
function wholeEvent(b: Uint8Array, start: number, end: number): boolean {
  let at = start + 2 + b[start + 1]; // the type, checked by frameHead
  if (b[at++] !== 0x12) return false;
  const object = varint(b, at, end);
  if (object === undefined || object.next + object.value !== end) return false;
  at = object.next;
  if (b[at++] !== 0x0a) return false;
  const raw = varint(b, at, end);
  if (raw === undefined || raw.next + raw.value !== end || raw.value < 4) return false;
  at = raw.next;
  return b[at] === 0x6b && b[at + 1] === 0x38 && b[at + 2] === 0x73 && b[at + 3] === 0;
}

/** A varint (at most 5 bytes: lengths) at `b[at]`, and where it ends. */
function varint(b: Uint8Array, at: number, end: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let k = 0; k < 5 && at + k < end; k++) {
    value += (b[at + k] & 0x7f) * 2 ** (7 * k);
    if ((b[at + k] & 0x80) === 0) return { value, next: at + k + 1 };
  }
  return undefined;
}
