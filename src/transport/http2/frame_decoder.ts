/**
 * HTTP/2 framing (RFC 9113 §4, §6) as an incremental state machine: bytes of one direction of a connection to
 * {@linkcode Http2Frame}s. {@linkcode Http2FrameDecoderStream} wraps it as a stream.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import { describe } from "../../describe_byte.ts";
import {
  HTTP2_CLIENT_PREFACE,
  HTTP2_DEFAULT_MAX_FRAME_SIZE,
  HTTP2_FRAME_HEADER_LENGTH,
  HTTP2_MAX_FRAME_SIZE_LIMIT,
  type Http2Frame,
  type Http2FrameTypeName,
  type Http2Priority,
  type Http2Settings,
} from "./frames.ts";

/**
 * Options of {@linkcode Http2FrameDecoder}.
 *
 * @example
 * ```ts
 * import { Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2FrameDecoderOptions } from "watchwire/wire";
 *
 * // The server-to-client direction, whose client announced SETTINGS_MAX_FRAME_SIZE = 65536.
 * const options: Http2FrameDecoderOptions = { preface: "none", maxFrameSize: 65536, maxContinuationFrames: 8 };
 * const decoder = new Http2FrameDecoder(options);
 * console.log(decoder.maxFrameSize); // 65536
 * ```
 */
export interface Http2FrameDecoderOptions {
  /**
   * The client connection preface (RFC 9113 §3.4): `"expect"` requires it (the client-to-server direction),
   * `"none"` forbids it (the server-to-client direction), `"detect"` (the default) accepts either. Detection looks at
   * the first byte: a connection's first frame is a SETTINGS frame no longer than 16384 bytes, so its first byte is 0,
   * and the preface starts with `P`.
   */
  preface?: "expect" | "none" | "detect";
  /**
   * The largest frame payload accepted: the SETTINGS_MAX_FRAME_SIZE the receiver of this direction announced.
   * 16384 to 16777215; default 16384, the protocol's initial value. Change it with
   * {@linkcode Http2FrameDecoder.setMaxFrameSize}.
   */
  maxFrameSize?: number;
  /**
   * A local ceiling on the frame payload size whatever SETTINGS announce, bounding the memory one frame can take.
   * 16384 to 16777215; default 16777215 (no ceiling below the protocol's).
   */
  maxFrameSizeCeiling?: number;
  /** Most CONTINUATION frames after one HEADERS or PUSH_PROMISE (a CONTINUATION flood defence). Default 64. */
  maxContinuationFrames?: number;
  /** Most bytes of one field block (all its fragments, padding excluded). Default 262144 (256 KiB). */
  maxHeaderBlockBytes?: number;
  /**
   * Hand on a DATA frame that spans input chunks in pieces, as its bytes arrive (each a view of its chunk, `more` set
   * on all but the last), rather than copied into a buffer of its own once complete. A body consumer sees the same
   * bytes with no copy and sooner; the frame-level output then depends on how the input was cut. Default false.
   */
  dataInPieces?: boolean;
}

const PREFACE = new TextEncoder().encode(HTTP2_CLIENT_PREFACE);
const EMPTY = new Uint8Array(0);

// Frame type codes and flag bits (see frames.ts for the named constants).
const DATA = 0x0;
const HEADERS = 0x1;
const PRIORITY = 0x2;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PUSH_PROMISE = 0x5;
const PING = 0x6;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const CONTINUATION = 0x9;
const F_END_STREAM = 0x1;
const F_ACK = 0x1;
const F_END_HEADERS = 0x4;
const F_PADDED = 0x8;
const F_PRIORITY = 0x20;

const TYPE_NAMES: readonly Http2FrameTypeName[] = [
  "DATA",
  "HEADERS",
  "PRIORITY",
  "RST_STREAM",
  "SETTINGS",
  "PUSH_PROMISE",
  "PING",
  "GOAWAY",
  "WINDOW_UPDATE",
  "CONTINUATION",
];

/** A frame type as a person reads it: its RFC name, or `frame type 0x..`. */
function typeName(type: number): string {
  return type < TYPE_NAMES.length ? TYPE_NAMES[type] : `frame type 0x${type.toString(16).padStart(2, "0")}`;
}

const enum State {
  /** Matching the client preface; `#fill` bytes matched so far. */
  Preface,
  /** Reading a 9-byte frame header; `#fill` bytes of it in `#head` so far. */
  Header,
  /** Reading a payload that spans chunks into `#payload`; `#fill` bytes so far. */
  Payload,
  /** Handing on a DATA payload that spans chunks in pieces (`dataInPieces`); `#fill` bytes of it so far. */
  DataPieces,
}

function u32(p: Uint8Array, i: number): number {
  return ((p[i] << 24) | (p[i + 1] << 16) | (p[i + 2] << 8) | p[i + 3]) >>> 0;
}

function checkFrameSize(name: string, n: number): number {
  if (!Number.isInteger(n) || n < HTTP2_DEFAULT_MAX_FRAME_SIZE || n > HTTP2_MAX_FRAME_SIZE_LIMIT) {
    throw new RangeError(`${name} must be an integer from 16384 to 16777215, got ${n}`);
  }
  return n;
}

function checkCount(name: string, n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
  return n;
}

/**
 * Decodes the bytes of one direction of an HTTP/2 connection into frames, incrementally: feed it chunks as they come
 * with {@linkcode Http2FrameDecoder.push}, then call {@linkcode Http2FrameDecoder.finish}.
 *
 * A frame header split across chunks is assembled in a 9-byte buffer. A payload that lies within one chunk is passed
 * on as `subarray` views of that chunk; a payload that spans chunks is copied once into a buffer of exactly its
 * length, allocated only after the length passed the size limit.
 *
 * It checks what RFC 9113 §4–§6 lets one direction be checked for without connection state, and throws a
 * {@linkcode DecodeError} whose `offset` is the byte at fault in this direction's input:
 *
 * - `PREFACE_INVALID`: the first byte that differs from the client preface;
 * - `FRAME_SIZE_ERROR`: a frame longer than the limit in force (at its header, before any of its payload is read);
 * - `FRAME_INVALID`: a length wrong for the frame type (at the header); a stream id of 0 where forbidden or non-zero
 *   where required (at the stream id, header + 5); a field block interrupted by another frame, or a CONTINUATION
 *   outside one (at the type, header + 3, or the stream id); a pad length too large (at the pad length byte); a
 *   stream depending on itself, a promised stream id of 0, a window increment of 0, or a SETTINGS value out of its
 *   range (at that field);
 * - `HEADER_TOO_LARGE`: a field block with more CONTINUATION frames or more bytes than allowed (at the header of the
 *   frame that goes over);
 * - `TRUNCATED`: the input ended inside the preface, a frame or a field block (at the end of the input).
 *
 * Frames decoded before a fault have been emitted; after a fault the decoder throws the same error again.
 *
 * @example
 * ```ts
 * import { Http2FrameDecoder } from "watchwire/wire";
 *
 * const decoder = new Http2FrameDecoder({ preface: "none" });
 * // A SETTINGS frame with one parameter (MAX_CONCURRENT_STREAMS = 100), then a PING.
 * const wire = Uint8Array.of(0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100, 0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8);
 * decoder.push(wire.subarray(0, 20), (frame) => console.log(frame.type, frame.offset)); // SETTINGS 0
 * decoder.push(wire.subarray(20), (frame) => console.log(frame.type, frame.offset)); // PING 15
 * decoder.finish();
 * ```
 */
export class Http2FrameDecoder {
  #state: State;
  #detect: boolean;
  #fill = 0;
  /** Bytes consumed before the current chunk. */
  #consumed = 0;
  readonly #head = new Uint8Array(HTTP2_FRAME_HEADER_LENGTH);
  #payload: Uint8Array = EMPTY;
  // The frame whose header has been read.
  #frameOffset = 0;
  #length = 0;
  #type = 0;
  #flags = 0;
  #streamId = 0;
  // The open field block: its stream (0 if none), CONTINUATION frames and fragment bytes so far.
  #blockStream = 0;
  #blockFrames = 0;
  #blockBytes = 0;
  #maxFrameSize: number;
  readonly #maxFrameSizeCeiling: number;
  readonly #maxContinuationFrames: number;
  readonly #maxHeaderBlockBytes: number;
  readonly #dataInPieces: boolean;
  /** The pad length of the DATA frame handed on in pieces (-1 until its first payload byte has been read). */
  #piecePad = 0;
  #failure: DecodeError | undefined;

  /** A decoder for one direction of a connection; throws a `RangeError` for an option out of its range. */
  constructor(options: Http2FrameDecoderOptions = {}) {
    const preface = options.preface ?? "detect";
    if (preface !== "expect" && preface !== "none" && preface !== "detect") {
      throw new RangeError(`preface must be "expect", "none" or "detect", got ${String(preface)}`);
    }
    this.#state = preface === "none" ? State.Header : State.Preface;
    this.#detect = preface === "detect";
    this.#maxFrameSize = checkFrameSize("maxFrameSize", options.maxFrameSize ?? HTTP2_DEFAULT_MAX_FRAME_SIZE);
    this.#maxFrameSizeCeiling = checkFrameSize(
      "maxFrameSizeCeiling",
      options.maxFrameSizeCeiling ?? HTTP2_MAX_FRAME_SIZE_LIMIT,
    );
    this.#maxContinuationFrames = checkCount("maxContinuationFrames", options.maxContinuationFrames ?? 64);
    this.#maxHeaderBlockBytes = checkCount("maxHeaderBlockBytes", options.maxHeaderBlockBytes ?? 262144);
    this.#dataInPieces = options.dataInPieces === true;
  }

  /** Bytes of input consumed so far. */
  get offset(): number {
    return this.#consumed;
  }

  /** The largest frame payload accepted now: the SETTINGS_MAX_FRAME_SIZE in force, capped by the ceiling. */
  get maxFrameSize(): number {
    return Math.min(this.#maxFrameSize, this.#maxFrameSizeCeiling);
  }

  /**
   * Applies a new SETTINGS_MAX_FRAME_SIZE, as announced by the receiver of this direction (so: from the SETTINGS of
   * the other direction). Applies to frames whose header has not been read yet. Throws a `RangeError` for a value
   * outside 16384..16777215, which RFC 9113 §6.5.2 makes a protocol error.
   */
  setMaxFrameSize(size: number): void {
    this.#maxFrameSize = checkFrameSize("SETTINGS_MAX_FRAME_SIZE", size);
  }

  /** Decodes `chunk`, passing each complete frame to `emit`. Throws {@linkcode DecodeError} on a fault. */
  push(chunk: Uint8Array, emit: (frame: Http2Frame) => void): void {
    if (this.#failure !== undefined) throw this.#failure;
    try {
      this.#push(chunk, emit);
    } catch (error) {
      if (error instanceof DecodeError) this.#failure = error;
      throw error;
    }
  }

  /** Declares the end of input: throws a `TRUNCATED` {@linkcode DecodeError} if it ended inside something. */
  finish(): void {
    if (this.#failure !== undefined) throw this.#failure;
    let where: string | undefined;
    if (this.#state === State.Preface && this.#fill > 0) {
      where = `inside the client preface (${this.#fill} of 24 bytes)`;
    } else if (this.#state === State.Header && this.#fill > 0) {
      where = `inside a frame header (${this.#fill} of 9 bytes)`;
    } else if (this.#state === State.Payload || this.#state === State.DataPieces) {
      where = `inside the payload of a ${typeName(this.#type)} frame (${this.#fill} of ${this.#length} bytes)`;
    } else if (this.#blockStream !== 0) {
      where = `inside the field block of stream ${this.#blockStream} (no frame with END_HEADERS)`;
    }
    if (where !== undefined) {
      this.#failure = new DecodeError("TRUNCATED", this.#consumed, `HTTP/2 input ended ${where}`);
      throw this.#failure;
    }
  }

  #push(input: Uint8Array, emit: (frame: Http2Frame) => void): void {
    const n = input.length;
    let i = 0;
    while (i < n) {
      switch (this.#state) {
        case State.Header: {
          if (this.#fill === 0 && n - i >= HTTP2_FRAME_HEADER_LENGTH) {
            // The whole header is in this chunk: read it in place.
            this.#frameOffset = this.#consumed + i;
            this.#readHeader(input, i);
            i += HTTP2_FRAME_HEADER_LENGTH;
          } else {
            if (this.#fill === 0) this.#frameOffset = this.#consumed + i;
            const take = Math.min(HTTP2_FRAME_HEADER_LENGTH - this.#fill, n - i);
            this.#head.set(input.subarray(i, i + take), this.#fill);
            this.#fill += take;
            i += take;
            if (this.#fill < HTTP2_FRAME_HEADER_LENGTH) break;
            this.#fill = 0;
            this.#readHeader(this.#head, 0);
          }
          const length = this.#length;
          if (length === 0) {
            this.#frame(EMPTY, emit);
          } else if (n - i >= length) {
            // The whole payload is in this chunk: a view, no copy.
            const payload = input.subarray(i, i + length);
            i += length;
            this.#frame(payload, emit);
          } else if (this.#type === DATA && this.#dataInPieces) {
            this.#piecePad = (this.#flags & F_PADDED) !== 0 ? -1 : 0;
            this.#state = State.DataPieces;
          } else {
            // The length was checked against the limit in #readHeader.
            this.#payload = new Uint8Array(length);
            this.#state = State.Payload;
          }
          break;
        }
        case State.DataPieces: {
          const take = Math.min(this.#length - this.#fill, n - i);
          this.#dataPiece(input, i, i + take, emit);
          i += take;
          break;
        }
        case State.Payload: {
          const take = Math.min(this.#length - this.#fill, n - i);
          this.#payload.set(input.subarray(i, i + take), this.#fill);
          this.#fill += take;
          i += take;
          if (this.#fill === this.#length) {
            const payload = this.#payload;
            this.#payload = EMPTY;
            this.#fill = 0;
            this.#state = State.Header;
            this.#frame(payload, emit);
          }
          break;
        }
        case State.Preface: {
          if (this.#detect) {
            this.#detect = false;
            if (input[i] !== PREFACE[0]) {
              this.#state = State.Header;
              break;
            }
          }
          while (i < n && this.#fill < PREFACE.length) {
            if (input[i] !== PREFACE[this.#fill]) {
              throw new DecodeError(
                "PREFACE_INVALID",
                this.#consumed + i,
                `expected the HTTP/2 client preface, found ${describe(input[i])} at its byte ${this.#fill}`,
              );
            }
            this.#fill++;
            i++;
          }
          if (this.#fill === PREFACE.length) {
            this.#fill = 0;
            this.#state = State.Header;
          }
          break;
        }
      }
    }
    this.#consumed += n;
  }

  /** Reads and checks the frame header at `p[i..i+9]`; all checks that need no payload happen here. */
  #readHeader(p: Uint8Array, i: number): void {
    const length = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
    const type = p[i + 3];
    const flags = p[i + 4];
    const streamId = u32(p, i + 5) & 0x7fffffff; // the reserved bit is ignored (RFC 9113 §4.1)
    const at = this.#frameOffset;
    this.#length = length;
    this.#type = type;
    this.#flags = flags;
    this.#streamId = streamId;

    if (length > this.#maxFrameSize) {
      throw new DecodeError(
        "FRAME_SIZE_ERROR",
        at,
        `${typeName(type)} frame of ${length} bytes exceeds SETTINGS_MAX_FRAME_SIZE (${this.#maxFrameSize})`,
      );
    }
    if (length > this.#maxFrameSizeCeiling) {
      throw new DecodeError(
        "FRAME_SIZE_ERROR",
        at,
        `${typeName(type)} frame of ${length} bytes exceeds the configured ceiling (${this.#maxFrameSizeCeiling})`,
      );
    }

    // A field block must continue with CONTINUATION frames of its stream and nothing else (RFC 9113 §6.10).
    if (this.#blockStream !== 0) {
      if (type !== CONTINUATION) {
        throw new DecodeError(
          "FRAME_INVALID",
          at + 3,
          `${typeName(type)} frame inside the field block of stream ${this.#blockStream} (CONTINUATION expected)`,
        );
      }
      if (streamId !== this.#blockStream) {
        throw new DecodeError(
          "FRAME_INVALID",
          at + 5,
          `CONTINUATION on stream ${streamId} inside the field block of stream ${this.#blockStream}`,
        );
      }
      if (++this.#blockFrames > this.#maxContinuationFrames) {
        throw new DecodeError(
          "HEADER_TOO_LARGE",
          at,
          `field block of stream ${streamId} has more than ${this.#maxContinuationFrames} CONTINUATION frames`,
        );
      }
      if (this.#blockBytes + length > this.#maxHeaderBlockBytes) {
        throw new DecodeError(
          "HEADER_TOO_LARGE",
          at,
          `field block of stream ${streamId} is longer than ${this.#maxHeaderBlockBytes} bytes`,
        );
      }
    } else if (type === CONTINUATION) {
      throw new DecodeError("FRAME_INVALID", at + 3, "CONTINUATION frame without a field block to continue");
    }

    switch (type) {
      case DATA:
      case HEADERS:
      case PRIORITY:
      case RST_STREAM:
      case PUSH_PROMISE:
      case CONTINUATION:
        if (streamId === 0) throw new DecodeError("FRAME_INVALID", at + 5, `${typeName(type)} frame on stream 0`);
        break;
      case SETTINGS:
      case PING:
      case GOAWAY:
        if (streamId !== 0) {
          throw new DecodeError(
            "FRAME_INVALID",
            at + 5,
            `${typeName(type)} frame on stream ${streamId} (only stream 0 is allowed)`,
          );
        }
        break;
    }

    let wrong: string | undefined;
    switch (type) {
      case DATA:
        if ((flags & F_PADDED) !== 0 && length < 1) wrong = "a padded DATA frame needs at least 1 byte";
        break;
      case HEADERS: {
        const min = ((flags & F_PADDED) !== 0 ? 1 : 0) + ((flags & F_PRIORITY) !== 0 ? 5 : 0);
        if (length < min) wrong = `this HEADERS frame needs at least ${min} bytes for its flags`;
        break;
      }
      case PRIORITY:
        if (length !== 5) wrong = "a PRIORITY frame has 5 bytes";
        break;
      case RST_STREAM:
        if (length !== 4) wrong = "an RST_STREAM frame has 4 bytes";
        break;
      case SETTINGS:
        if ((flags & F_ACK) !== 0 && length !== 0) wrong = "a SETTINGS frame with ACK has no payload";
        else if (length % 6 !== 0) wrong = "a SETTINGS frame's length is a multiple of 6";
        break;
      case PUSH_PROMISE: {
        const min = ((flags & F_PADDED) !== 0 ? 1 : 0) + 4;
        if (length < min) wrong = `this PUSH_PROMISE frame needs at least ${min} bytes for its flags`;
        break;
      }
      case PING:
        if (length !== 8) wrong = "a PING frame has 8 bytes";
        break;
      case GOAWAY:
        if (length < 8) wrong = "a GOAWAY frame has at least 8 bytes";
        break;
      case WINDOW_UPDATE:
        if (length !== 4) wrong = "a WINDOW_UPDATE frame has 4 bytes";
        break;
    }
    if (wrong !== undefined) {
      throw new DecodeError("FRAME_INVALID", at, `${typeName(type)} frame of ${length} bytes: ${wrong}`);
    }
  }

  /**
   * Hands on `input[s..e)`, the next bytes of the DATA payload being read in pieces (`#fill` bytes of it before), as a
   * piece: its part of the content (padding excluded), `more` until the payload's last byte.
   */
  #dataPiece(input: Uint8Array, s: number, e: number, emit: (frame: Http2Frame) => void): void {
    const length = this.#length;
    const from = this.#fill; // payload coordinates of input[s]
    const to = from + (e - s);
    const padded = (this.#flags & F_PADDED) !== 0;
    if (this.#piecePad < 0) this.#piecePad = this.#padLength(input[s], 1, length);
    const padLength = this.#piecePad;
    // The content is payload[start..length - padLength); this piece covers payload[from..to).
    const lo = Math.max(from, padded ? 1 : 0);
    const hi = Math.min(to, length - padLength);
    const more = to < length;
    this.#fill = to;
    if (!more) {
      this.#fill = 0;
      this.#state = State.Header;
    } else if (hi <= lo) return; // nothing of the content here (the pad length byte, or padding), and more to come
    const flags = more ? this.#flags & ~F_END_STREAM : this.#flags;
    emit({
      type: "DATA",
      streamId: this.#streamId,
      flags,
      length,
      offset: this.#frameOffset,
      endStream: (flags & F_END_STREAM) !== 0,
      padded,
      padLength,
      data: hi > lo ? input.subarray(s + (lo - from), s + (hi - from)) : EMPTY,
      more,
    });
  }

  /** Builds the frame whose header was read from its complete payload `p`, checks it, and emits it. */
  #frame(p: Uint8Array, emit: (frame: Http2Frame) => void): void {
    const offset = this.#frameOffset;
    const length = this.#length;
    const flags = this.#flags;
    const streamId = this.#streamId;
    const at = offset + HTTP2_FRAME_HEADER_LENGTH; // offset of the payload
    switch (this.#type) {
      case DATA: {
        const padded = (flags & F_PADDED) !== 0;
        const padLength = padded ? this.#padLength(p[0], 1, p.length) : 0;
        const start = padded ? 1 : 0;
        emit({
          type: "DATA",
          streamId,
          flags,
          length,
          offset,
          endStream: (flags & F_END_STREAM) !== 0,
          padded,
          padLength,
          data: p.subarray(start, length - padLength),
        });
        return;
      }
      case HEADERS: {
        const padded = (flags & F_PADDED) !== 0;
        const hasPriority = (flags & F_PRIORITY) !== 0;
        const start = (padded ? 1 : 0) + (hasPriority ? 5 : 0);
        const padLength = padded ? this.#padLength(p[0], start, p.length) : 0;
        const priority = hasPriority ? this.#priority(p, padded ? 1 : 0) : undefined;
        const fragment = p.subarray(start, length - padLength);
        const endHeaders = (flags & F_END_HEADERS) !== 0;
        this.#openBlock(fragment.length, endHeaders);
        emit({
          type: "HEADERS",
          streamId,
          flags,
          length,
          offset,
          endStream: (flags & F_END_STREAM) !== 0,
          endHeaders,
          padded,
          padLength,
          priority,
          fragment,
        });
        return;
      }
      case PRIORITY:
        emit({ type: "PRIORITY", streamId, flags, length, offset, priority: this.#priority(p, 0) });
        return;
      case RST_STREAM:
        emit({ type: "RST_STREAM", streamId, flags, length, offset, errorCode: u32(p, 0) });
        return;
      case SETTINGS: {
        const parameters: Array<[number, number]> = [];
        const settings: Http2Settings = {};
        for (let j = 0; j < length; j += 6) {
          const id = (p[j] << 8) | p[j + 1];
          const value = u32(p, j + 2);
          parameters.push([id, value]);
          this.#setting(settings, id, value, at + j);
        }
        emit({
          type: "SETTINGS",
          streamId,
          flags,
          length,
          offset,
          ack: (flags & F_ACK) !== 0,
          parameters,
          settings,
        });
        return;
      }
      case PUSH_PROMISE: {
        const padded = (flags & F_PADDED) !== 0;
        const start = (padded ? 1 : 0) + 4;
        const padLength = padded ? this.#padLength(p[0], start, p.length) : 0;
        const promisedStreamId = u32(p, start - 4) & 0x7fffffff;
        if (promisedStreamId === 0) {
          throw new DecodeError("FRAME_INVALID", at + start - 4, "PUSH_PROMISE promises stream 0");
        }
        const fragment = p.subarray(start, length - padLength);
        const endHeaders = (flags & F_END_HEADERS) !== 0;
        this.#openBlock(fragment.length, endHeaders);
        emit({
          type: "PUSH_PROMISE",
          streamId,
          flags,
          length,
          offset,
          endHeaders,
          padded,
          padLength,
          promisedStreamId,
          fragment,
        });
        return;
      }
      case PING:
        emit({ type: "PING", streamId, flags, length, offset, ack: (flags & F_ACK) !== 0, opaqueData: p });
        return;
      case GOAWAY:
        emit({
          type: "GOAWAY",
          streamId,
          flags,
          length,
          offset,
          lastStreamId: u32(p, 0) & 0x7fffffff,
          errorCode: u32(p, 4),
          debugData: p.subarray(8),
        });
        return;
      case WINDOW_UPDATE: {
        const increment = u32(p, 0) & 0x7fffffff;
        if (increment === 0) throw new DecodeError("FRAME_INVALID", at, "WINDOW_UPDATE with an increment of 0");
        emit({ type: "WINDOW_UPDATE", streamId, flags, length, offset, increment });
        return;
      }
      case CONTINUATION: {
        const endHeaders = (flags & F_END_HEADERS) !== 0;
        this.#blockBytes += length;
        if (endHeaders) this.#blockStream = 0;
        emit({ type: "CONTINUATION", streamId, flags, length, offset, endHeaders, fragment: p });
        return;
      }
      default:
        emit({ type: "UNKNOWN", streamId, flags, length, offset, frameType: this.#type, payload: p });
        return;
    }
  }

  /**
   * The pad length byte of a padded frame (its payload's first byte), checked against a payload of `length` bytes with
   * `fixed` bytes before the content.
   */
  #padLength(padLength: number, fixed: number, length: number): number {
    if (padLength > length - fixed) {
      throw new DecodeError(
        "FRAME_INVALID",
        this.#frameOffset + HTTP2_FRAME_HEADER_LENGTH,
        `${typeName(this.#type)} frame of ${length} bytes with ${padLength} bytes of padding`,
      );
    }
    return padLength;
  }

  /** The priority fields at `p[j..j+5]`; a stream may not depend on itself (RFC 9113 §5.3.1). */
  #priority(p: Uint8Array, j: number): Http2Priority {
    const word = u32(p, j);
    const streamDependency = word & 0x7fffffff;
    if (streamDependency === this.#streamId) {
      throw new DecodeError(
        "FRAME_INVALID",
        this.#frameOffset + HTTP2_FRAME_HEADER_LENGTH + j,
        `stream ${streamDependency} depends on itself`,
      );
    }
    return { exclusive: word >>> 31 === 1, streamDependency, weight: p[j + 4] + 1 };
  }

  /** Starts the field block of a HEADERS or PUSH_PROMISE frame whose fragment has `bytes` bytes. */
  #openBlock(bytes: number, endHeaders: boolean): void {
    if (bytes > this.#maxHeaderBlockBytes) {
      throw new DecodeError(
        "HEADER_TOO_LARGE",
        this.#frameOffset,
        `field block of stream ${this.#streamId} is longer than ${this.#maxHeaderBlockBytes} bytes`,
      );
    }
    if (!endHeaders) {
      this.#blockStream = this.#streamId;
      this.#blockFrames = 0;
      this.#blockBytes = bytes;
    }
  }

  /** Records a SETTINGS parameter by name if known, checking its value's range (RFC 9113 §6.5.2). */
  #setting(settings: Http2Settings, id: number, value: number, at: number): void {
    const bad = (range: string) =>
      new DecodeError("FRAME_INVALID", at, `SETTINGS parameter 0x${id.toString(16)} is ${value}, outside ${range}`);
    switch (id) {
      case 0x1:
        settings.headerTableSize = value;
        break;
      case 0x2:
        if (value > 1) throw bad("0..1");
        settings.enablePush = value === 1;
        break;
      case 0x3:
        settings.maxConcurrentStreams = value;
        break;
      case 0x4:
        if (value > 0x7fffffff) throw bad("0..2147483647");
        settings.initialWindowSize = value;
        break;
      case 0x5:
        if (value < HTTP2_DEFAULT_MAX_FRAME_SIZE || value > HTTP2_MAX_FRAME_SIZE_LIMIT) throw bad("16384..16777215");
        settings.maxFrameSize = value;
        break;
      case 0x6:
        settings.maxHeaderListSize = value;
        break;
      case 0x8:
        if (value > 1) throw bad("0..1");
        settings.enableConnectProtocol = value === 1;
        break;
      case 0x9:
        if (value > 1) throw bad("0..1");
        settings.noRfc7540Priorities = value === 1;
        break;
    }
  }
}
