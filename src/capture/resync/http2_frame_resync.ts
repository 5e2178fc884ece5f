/**
 * {@linkcode Http2FrameResync}: one direction of an HTTP/2 connection after bytes were lost from it, cut to start at a
 * frame header. Internal.
 *
 * @module
 */
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import { ScanBuffer } from "./scan_buffer.ts";
import { HTTP2_FRAME_HEADER_LENGTH, Http2Flag, Http2FrameType } from "../../transport/http2/frames.ts";

const HEADER = HTTP2_FRAME_HEADER_LENGTH;
const { DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION } =
  Http2FrameType;
const { END_HEADERS } = Http2Flag;
const PADDED = 0x8;
const PRIORITY_FLAG = 0x20;
/** The flags each frame type defines (others are never set by the peers this reads; a frame with one is not taken). */
const FLAGS = [0x09, 0x2d, 0, 0, 0x01, 0x0c, 0x01, 0, 0, 0x04];

/** What {@linkcode Http2FrameResync} knows of the direction before the gap. */
export interface Http2FrameResyncOptions {
  /** The largest frame payload the receiver allowed (its SETTINGS_MAX_FRAME_SIZE, 16384 when not known). */
  readonly maxFrameSize: number;
  /** The streams open when the bytes were lost: frames of theirs may follow. */
  readonly openStreams: ReadonlySet<number>;
  /** The highest stream id seen before the gap: a client-initiated (odd) one above it is a new stream. */
  readonly highestStreamId: number;
  /** Told once, at the frame found, with how many bytes were skipped before it. */
  readonly found: (skippedBytes: number) => void;
}

/**
 * Passes on the bytes of one direction of an HTTP/2 connection from the first place after a gap where a frame
 * plausibly starts, and everything after it:
 *
 * - its 9-byte header is plausible: a known type with only its defined flags, a length within `maxFrameSize` and right
 *   for the type, the reserved bit clear, the stream id 0 where the type needs it and otherwise a stream open before
 *   the gap or a new client-initiated one; not a CONTINUATION (its HEADERS was lost) nor a SETTINGS other than an ACK
 *   (a decoder takes a SETTINGS first frame for the connection's start);
 * - and the header right after its payload is plausible too (a CONTINUATION exactly where a header block goes on), or
 *   the bytes end there.
 *
 * It waits for the bytes each decision needs, so its output does not depend on the chunking. It holds at most one
 * frame and the next header (bounded by `maxFrameSize`) while it looks.
 */
export class Http2FrameResync implements StreamDecoder<Uint8Array, Uint8Array> {
  readonly #options: Http2FrameResyncOptions;
  readonly #held = new ScanBuffer();
  #found = false;
  /** Bytes taken so far. */
  received = 0;

  /** A resync of a direction of which `options` tells what came before the gap. */
  constructor(options: Http2FrameResyncOptions) {
    this.#options = options;
  }

  push(chunk: Uint8Array, emit: (bytes: Uint8Array) => void): void {
    this.received += chunk.length;
    if (this.#found) {
      emit(chunk);
      return;
    }
    this.#held.append(chunk);
    this.#scan(false, emit);
  }

  finish(emit: (bytes: Uint8Array) => void): void {
    if (!this.#found) this.#scan(true, emit);
  }

  #scan(final: boolean, emit: (bytes: Uint8Array) => void): void {
    const b = this.#held.view;
    let i = 0;
    for (; i + HEADER <= b.length; i++) {
      const length = this.#plausible(b, i, true, undefined);
      if (length < 0) continue;
      const next = i + HEADER + length;
      if (next + HEADER > b.length) {
        if (!final) break; // wait for the bytes that confirm it (or for the end)
        if (next !== b.length) continue; // cut short: no frame
      } else if (this.#plausible(b, next, false, { at: i, b }) < 0) continue;
      this.#held.drop(i);
      this.#found = true;
      this.#options.found(this.#held.dropped);
      emit(this.#held.take());
      return;
    }
    this.#held.drop(final ? b.length : i);
  }

  /**
   * The payload length of a plausible frame header at `b[i]`, or -1. `start`: as the first frame; `after`: the frame
   * it follows (its header at `after.at`), for a CONTINUATION.
   */
  #plausible(b: Uint8Array, i: number, start: boolean, after: { at: number; b: Uint8Array } | undefined): number {
    const length = (b[i] << 16) | (b[i + 1] << 8) | b[i + 2];
    const type = b[i + 3];
    const flags = b[i + 4];
    if (type > CONTINUATION || (flags & ~FLAGS[type]) !== 0 || length > this.#options.maxFrameSize) return -1;
    if ((b[i + 5] & 0x80) !== 0) return -1;
    const id = ((b[i + 5] << 24) | (b[i + 6] << 16) | (b[i + 7] << 8) | b[i + 8]) >>> 0;
    // A header block left open by the frame before must go on in a CONTINUATION of the same stream, and only then.
    if (after !== undefined) {
      const prior = after.b[after.at + 3];
      const open = (prior === HEADERS || prior === PUSH_PROMISE || prior === CONTINUATION) &&
        (after.b[after.at + 4] & END_HEADERS) === 0;
      const priorId = ((after.b[after.at + 5] << 24) | (after.b[after.at + 6] << 16) | (after.b[after.at + 7] << 8) |
        after.b[after.at + 8]) >>> 0;
      if (open !== (type === CONTINUATION) || (open && id !== priorId)) return -1;
    }
    switch (type) {
      case SETTINGS:
        if (id !== 0 || length % 6 !== 0 || ((flags & 1) === 1 && length !== 0)) return -1;
        return start && (flags & 1) === 0 ? -1 : length;
      case PING:
        return id === 0 && length === 8 ? length : -1;
      case GOAWAY:
        return id === 0 && length >= 8 ? length : -1;
      case WINDOW_UPDATE:
        return length === 4 && (id === 0 || this.#knownOrNew(id)) ? length : -1;
      case CONTINUATION:
        return start ? -1 : this.#knownOrNew(id) ? length : -1;
    }
    if (id === 0 || !this.#knownOrNew(id)) return -1;
    switch (type) {
      case DATA:
        return (flags & PADDED) === 0 || length >= 1 ? length : -1;
      case HEADERS:
        return length >= ((flags & PADDED) !== 0 ? 1 : 0) + ((flags & PRIORITY_FLAG) !== 0 ? 5 : 0) ? length : -1;
      case PRIORITY:
        return length === 5 ? length : -1;
      case RST_STREAM:
        return length === 4 ? length : -1;
      case PUSH_PROMISE:
        return length >= 4 && this.#options.openStreams.has(id) ? length : -1;
    }
    return -1;
  }

  /** A stream open before the gap, or a new client-initiated one. */
  #knownOrNew(id: number): boolean {
    return this.#options.openStreams.has(id) || (id % 2 === 1 && id > this.#options.highestStreamId);
  }
}
