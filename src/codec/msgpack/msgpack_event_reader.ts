/**
 * The watchwire msgpack event stream, version 1, and the decoding behind {@linkcode MsgpackEventDecoderStream} (the
 * encoding behind {@linkcode MsgpackEventEncoderStream} is in msgpack_event_writer.ts). Internal.
 *
 * The stream is a sequence of frames, each a 4-byte big-endian length and that many bytes (the framing of a
 * Kubernetes protobuf watch):
 *
 * - the first frame is the header `WWMP` + version byte 1 (so the stream starts `00 00 00 05 57 57 4D 50 01`);
 * - every other frame is one watch event, one msgpack value written by msgpackr with records
 *   (`useRecords`, `sequential`): the first object of each shape (set of keys) carries a record definition, later ones
 *   only its id and values, so a definition is in the stream before its first use and a decoder that starts at the
 *   beginning of the stream knows every shape without being told;
 * - a header frame later in the stream starts a new segment that forgets every record definition, so recordings
 *   can be concatenated.
 *
 * Framing each event, rather than reading msgpack values back to back, tells the decoder where an event ends before
 * it parses it: a split value is not re-parsed as more bytes arrive (msgpackr's incomplete-data retry is quadratic for
 * a large event in small chunks), `maxEventBytes` is checked on the length before anything is buffered, and every
 * error names the offset of its event's frame.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import { FrameSplitter, MAX_FRAME_LENGTH } from "../../framing/frame_splitter.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../../limits.ts";
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import { toWatchEvent } from "../watch_event_decoder_stream.ts";
import { fromWire } from "./json_values.ts";

/** The header frame's payload: `WWMP` and the format version. */
const HEADER_PAYLOAD = Uint8Array.of(0x57, 0x57, 0x4d, 0x50, 0x01);
/** The header frame as it starts every stream. */
const HEADER = Uint8Array.of(0, 0, 0, HEADER_PAYLOAD.length, ...HEADER_PAYLOAD);
const VERSION_AT = HEADER.length - 1;

/** The header frame as it starts every stream (a copy: the caller may hand it on). */
export function headerFrame(): Uint8Array {
  return HEADER.slice();
}

/** `max` as `maxEventBytes`, checked: a RangeError unless an integer a frame's length can hold. */
export function checkLimit(max: number): number {
  if (!Number.isSafeInteger(max) || max < 0 || max > MAX_FRAME_LENGTH) {
    throw new RangeError(`maxEventBytes must be an integer from 0 to ${MAX_FRAME_LENGTH}, not ${max}`);
  }
  return max;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * What {@linkcode MsgpackEventReader} needs of a msgpack decoder: msgpackr's `Unpackr`, from either of its builds
 * (this module imports neither, so that a bundle holds only the one its entry point names).
 */
export interface MsgpackUnpacker {
  unpack(bytes: Uint8Array): unknown;
}

/**
 * The options of every msgpackr decoder of a stream segment, a fresh object each time (a decoder shares nothing with
 * another): records with their definitions in the stream; a map is an object (the encoder writes none, but
 * other writers may), never a Map; 64-bit integers are numbers (as `JSON.parse` reads them), never BigInt; no
 * reference extensions (they could build cyclic values).
 */
export function unpackrOptions(): {
  sequential: true;
  useRecords: true;
  mapsAsObjects: true;
  int64AsType: "number";
  structuredClone: false;
} {
  return { sequential: true, useRecords: true, mapsAsObjects: true, int64AsType: "number", structuredClone: false };
}

/** Options of {@linkcode MsgpackEventReader}. */
export interface MsgpackEventReaderOptions {
  /** The largest event (here: one frame, without its length prefix) accepted, in bytes. Default 16 MiB. */
  maxEventBytes?: number | undefined;
}

/** The bytes of a stream to its watch events. */
export class MsgpackEventReader<T = KubernetesObject> implements StreamDecoder<Uint8Array, WatchEvent<T>> {
  readonly #splitter: FrameSplitter;
  readonly #max: number;
  readonly #newUnpackr: () => MsgpackUnpacker;
  /** The current segment's decoder, made at its first event (so that a stream of no event needs no msgpackr). */
  #unpackr: MsgpackUnpacker | undefined;
  /** Header bytes checked so far. */
  #headerChecked = 0;
  #frames = 0;

  /** `newUnpackr`: a new msgpackr decoder, for each segment of the stream (called at the segment's first event). */
  constructor(options: MsgpackEventReaderOptions, newUnpackr: () => MsgpackUnpacker) {
    this.#newUnpackr = newUnpackr;
    const max = checkLimit(options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES);
    this.#max = max;
    // The splitter checks every length before buffering; the header's 5 bytes pass even under a smaller maxEventBytes.
    this.#splitter = new FrameSplitter({ flagged: false, maxEventBytes: Math.max(max, HEADER_PAYLOAD.length) });
  }

  push(chunk: Uint8Array, emit: (event: WatchEvent<T>) => void): void {
    if (this.#headerChecked < HEADER.length) this.#checkHeader(chunk);
    this.#splitter.push(chunk, (frame, _flag, offset) => {
      if (this.#frames++ === 0) return; // the header, checked byte by byte above
      if (frame.length === HEADER_PAYLOAD.length && sameBytes(frame, HEADER_PAYLOAD)) {
        this.#unpackr = undefined; // a new segment: its records are defined afresh
        return;
      }
      if (frame.length > this.#max) {
        throw new DecodeError(
          "MESSAGE_TOO_LARGE",
          offset,
          `message of ${frame.length} bytes is over maxEventBytes (${this.#max} bytes)`,
        );
      }
      emit(this.#decode(frame, offset));
    });
  }

  finish(): void {
    if (this.#headerChecked === 0) {
      throw new DecodeError("TRUNCATED", 0, "input ended before the header of a watchwire msgpack stream");
    }
    this.#splitter.finish();
  }

  /** Compares the first bytes of the input with the header as they arrive, so that other data fails at once. */
  #checkHeader(chunk: Uint8Array): void {
    const n = Math.min(chunk.length, HEADER.length - this.#headerChecked);
    for (let i = 0; i < n; i++) {
      const at = this.#headerChecked;
      if (chunk[i] !== HEADER[at]) {
        const detail = at === VERSION_AT
          ? `watchwire msgpack stream version ${chunk[i]} is not supported (only version ${HEADER[at]})`
          : "not a watchwire msgpack stream (it starts 00 00 00 05 57 57 4D 50 01)";
        throw new DecodeError("MESSAGE_INVALID", at, detail);
      }
      this.#headerChecked++;
    }
  }

  #decode(frame: Uint8Array, offset: number): WatchEvent<T> {
    const unpackr = this.#unpackr ??= this.#newUnpackr();
    let value: unknown;
    try {
      value = fromWire(unpackr.unpack(frame));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new DecodeError("MESSAGE_INVALID", offset, `event is not valid msgpack JSON: ${reason}`, { cause: error });
    }
    try {
      return toWatchEvent<T>(value);
    } catch (error) {
      const e = error as DecodeError;
      throw new DecodeError(e.code, offset, e.detail);
    }
  }
}
