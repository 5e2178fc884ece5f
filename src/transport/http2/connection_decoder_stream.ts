/**
 * {@linkcode Http2ConnectionDecoderStream}: one direction of an HTTP/2 connection to one message per stream, each with
 * its header fields, its body as a stream (DATA frame by DATA frame), its trailers and how it ended.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import { DecoderStream, type StreamDecoder } from "../../streams/decoder_stream.ts";
import { BodyFeed, DEFAULT_BODY_HIGH_WATER_MARK } from "../body_feed.ts";
import { PayloadOffsets, placeIn } from "../payload_offsets.ts";
import { contentCodingOf, removeContentCoding } from "../content_coding.ts";
import { type FieldList, toHeaders } from "../field_line.ts";
import { HpackDecoder } from "../hpack/hpack_decoder.ts";
import { Http2FrameDecoder } from "./frame_decoder.ts";
import {
  HTTP2_DEFAULT_MAX_FRAME_SIZE,
  HTTP2_FRAME_HEADER_LENGTH,
  HTTP2_MAX_FRAME_SIZE_LIMIT,
  type Http2Frame,
  type Http2Settings,
} from "./frames.ts";

/** SETTINGS_HEADER_TABLE_SIZE before any is acknowledged (RFC 9113 §6.5.2). */
const INITIAL_HEADER_TABLE_SIZE = 4096;
/** The first octet of the client connection preface ("P"), and its length. */
const PREFACE_FIRST = 0x50;
const PREFACE_LENGTH = 24;
const SETTINGS_TYPE = 0x4;

/**
 * Options of {@linkcode Http2ConnectionDecoderStream}.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames } from "watchwire/wire";
 * import { Http2ConnectionDecoderStream } from "watchwire/capture";
 * import type { Http2ConnectionDecoderOptions } from "watchwire/capture";
 *
 * const options: Http2ConnectionDecoderOptions = { preface: "none", maxHeaderListSize: 8192, bodyHighWaterMark: 1024 };
 * const wire = encodeHttp2Frames([
 *   { type: "SETTINGS", streamId: 0, parameters: [] },
 *   { type: "HEADERS", streamId: 1, endHeaders: true, endStream: true, fragment: Uint8Array.of(0x8d) }, // :status 404
 * ]);
 * for await (const message of ReadableStream.from([wire]).pipeThrough(new Http2ConnectionDecoderStream(options))) {
 *   console.log(message.streamId, message.toResponse().status); // 1 404
 * }
 * ```
 */
export interface Http2ConnectionDecoderOptions {
  /**
   * The client connection preface: `"expect"` (client-to-server bytes), `"none"` (server-to-client bytes) or
   * `"detect"` (the default).
   */
  preface?: "expect" | "none" | "detect";
  /**
   * Largest frame payload accepted. SETTINGS_MAX_FRAME_SIZE is announced by the receiver, in the other direction,
   * which a single direction does not see: so every frame up to this ceiling is accepted. 16384 to 16777215; default
   * 16777215.
   */
  maxFrameSizeCeiling?: number;
  /**
   * Largest HPACK dynamic table size update accepted. SETTINGS_HEADER_TABLE_SIZE is announced by the receiver, in the
   * other direction, so updates up to this ceiling are accepted. Default 65536.
   */
  maxHeaderTableSizeCeiling?: number;
  /** Largest decoded header list (RFC 9113 §6.5.2 counting). Default 65536. */
  maxHeaderListSize?: number;
  /** Most CONTINUATION frames after one HEADERS or PUSH_PROMISE. Default 64. */
  maxContinuationFrames?: number;
  /** Most bytes of one field block. Default 262144. */
  maxHeaderBlockBytes?: number;
  /** Bytes a body may hold unread before the decoder waits for its reader (backpressure). Default 1 MiB. */
  bodyHighWaterMark?: number;
  /**
   * The SETTINGS announced by the receiver of this direction (seen in the other direction), in the order announced:
   * `next()` resolves to the next one, or `undefined` when there are no more (the other direction ended, failed or
   * started mid-connection). When given and both directions start with their SETTINGS, they are applied as the
   * receiver applies them (RFC 9113 §6.5.3): the n-th takes effect after this direction's n-th SETTINGS ACK.
   * SETTINGS_MAX_FRAME_SIZE then limits frames (still capped by `maxFrameSizeCeiling`), SETTINGS_HEADER_TABLE_SIZE
   * bounds HPACK dynamic table size updates (capped by `maxHeaderTableSizeCeiling`, RFC 7541 §4.2) and
   * SETTINGS_MAX_HEADER_LIST_SIZE may lower `maxHeaderListSize`. Used by {@linkcode decodeHttp2Exchanges}.
   */
  peerSettings?: { next(): Promise<Http2Settings | undefined> };
  /**
   * Told of each SETTINGS (not ACK) this direction carries, in order, as it is decoded; `close()` once no more will be
   * told (the direction ended, failed or was cancelled, or does not start with SETTINGS). Used by
   * {@linkcode decodeHttp2Exchanges} to feed the other direction's `peerSettings`.
   */
  settingsSink?: { settings(settings: Http2Settings): void; close(): void };
}

/**
 * How a stream ended.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames, Http2ErrorCode } from "watchwire/wire";
 * import { Http2ConnectionDecoderStream } from "watchwire/capture";
 * import type { Http2StreamEnd } from "watchwire/capture";
 *
 * const wire = encodeHttp2Frames([
 *   { type: "SETTINGS", streamId: 0, parameters: [] },
 *   { type: "HEADERS", streamId: 1, endHeaders: true, fragment: Uint8Array.of(0x88) }, // :status 200
 *   { type: "DATA", streamId: 1, data: new TextEncoder().encode("{}") },
 *   // A reset with NO_ERROR ends the stream without failing its body.
 *   { type: "RST_STREAM", streamId: 1, errorCode: Http2ErrorCode.NO_ERROR },
 * ]);
 * for await (const message of ReadableStream.from([wire]).pipeThrough(new Http2ConnectionDecoderStream())) {
 *   const body = await new Response(message.body).text();
 *   const end: Http2StreamEnd = await message.end;
 *   console.log(body, end.reason, end.errorCode); // {} reset 0
 * }
 * ```
 */
export interface Http2StreamEnd {
  /**
   * `"end-stream"`: a frame with END_STREAM; `"reset"`: RST_STREAM; `"goaway"`: a GOAWAY whose last-stream-id is
   * below the stream; `"connection-end"`: the input ended (or failed) with the stream still open.
   */
  reason: "end-stream" | "reset" | "goaway" | "connection-end";
  /** The RST_STREAM or GOAWAY error code. */
  errorCode?: number;
  /** With `"connection-end"`: the connection's fault (e.g. a {@linkcode DecodeError}), if it failed. */
  error?: unknown;
}

/**
 * The error a body fails with when its stream is reset (with a code other than NO_ERROR) or cut off by GOAWAY.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames, Http2ErrorCode } from "watchwire/wire";
 * import { Http2ConnectionDecoderStream, Http2StreamError } from "watchwire/capture";
 *
 * const bytes = encodeHttp2Frames([
 *   { type: "SETTINGS", streamId: 0, parameters: [] },
 *   { type: "HEADERS", streamId: 1, fragment: Uint8Array.of(0x88), endHeaders: true }, // :status 200
 *   { type: "DATA", streamId: 1, data: new TextEncoder().encode("{}") },
 *   { type: "RST_STREAM", streamId: 1, errorCode: Http2ErrorCode.CANCEL },
 * ]);
 * const connection = new ReadableStream<Uint8Array>({
 *   start(controller) {
 *     controller.enqueue(bytes);
 *     controller.close();
 *   },
 * });
 * for await (const message of connection.pipeThrough(new Http2ConnectionDecoderStream())) {
 *   try {
 *     await new Response(message.body).text();
 *   } catch (error) {
 *     if (error instanceof Http2StreamError) console.log(error.reason, error.errorCode); // reset 8
 *   }
 * }
 * ```
 */
export class Http2StreamError extends Error {
  /** The stream. */
  readonly streamId: number;
  /** The RST_STREAM or GOAWAY error code (RFC 9113 §7). */
  readonly errorCode: number;
  /** What ended the stream. */
  readonly reason: "reset" | "goaway";

  /** An error for stream `streamId`, ended by `reason` with `errorCode`. */
  constructor(streamId: number, reason: "reset" | "goaway", errorCode: number) {
    super(
      reason === "reset"
        ? `HTTP/2 stream ${streamId} was reset (error code 0x${errorCode.toString(16)})`
        : `HTTP/2 stream ${streamId} was cut off by GOAWAY (error code 0x${errorCode.toString(16)})`,
    );
    this.name = "Http2StreamError";
    this.streamId = streamId;
    this.errorCode = errorCode;
    this.reason = reason;
  }
}

/**
 * One stream of one direction of a connection: a request (client to server) or a response (server to client).
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames } from "watchwire/wire";
 * import { Http2ConnectionDecoderStream } from "watchwire/capture";
 * import type { Http2Message } from "watchwire/capture";
 *
 * // Trailers: "grpc-status: 0" as an HPACK literal field with a new name (RFC 7541 §6.2.2).
 * const trailers = new TextEncoder().encode("\0\x0bgrpc-status\x010");
 * const wire = encodeHttp2Frames([
 *   { type: "SETTINGS", streamId: 0, parameters: [] },
 *   { type: "HEADERS", streamId: 1, endHeaders: true, fragment: Uint8Array.of(0x88) }, // :status 200
 *   { type: "DATA", streamId: 1, data: new TextEncoder().encode("ok") },
 *   { type: "HEADERS", streamId: 1, endHeaders: true, endStream: true, fragment: trailers },
 * ]);
 * async function show(message: Http2Message): Promise<void> {
 *   const body = await new Response(message.body).text();
 *   const status = new Headers(await message.trailers).get("grpc-status");
 *   console.log(message.streamId, message.headers?.[0].join(" "), body, status, (await message.end).reason);
 * }
 * for await (const message of ReadableStream.from([wire]).pipeThrough(new Http2ConnectionDecoderStream())) {
 *   await show(message); // 1 :status 200 ok 0 end-stream
 * }
 * ```
 */
export interface Http2Message {
  /** The stream id. */
  streamId: number;
  /** Byte offset, in this direction's input, of the frame that opened the message (its HEADERS, or its first DATA). */
  offset: number;
  /**
   * The header fields, pseudo-header fields (`:status`, `:method`, ...) included, in order; `undefined` when the
   * capture started after them (`headersMissing`) or they could not be decoded (`headerError`).
   */
  headers: FieldList | undefined;
  /** True when the stream's first frame seen was not HEADERS: the capture started after them. */
  headersMissing: boolean;
  /**
   * Why `headers` could not be decoded, when the capture started mid-connection and the block refers to dynamic table
   * entries sent before it started.
   */
  headerError?: DecodeError;
  /**
   * The DATA payloads as they arrive (zero-copy views; a frame that spans input chunks in pieces). Must be read or
   * cancelled for the decoder to move on past it.
   */
  body: ReadableStream<Uint8Array>;
  /** The trailer fields (a HEADERS block after DATA); empty when there are none. */
  trailers: Promise<FieldList>;
  /** Resolves when the stream ends, with how. */
  end: Promise<Http2StreamEnd>;
  /**
   * Where byte `payloadOffset` of `body` (the DATA payloads, padding excluded, before any content decoding) lies in
   * this direction's input; `undefined` when it is too far back to remember (more than 4096 DATA frames ago).
   */
  inputOffsetOf(payloadOffset: number): number | undefined;
  /**
   * A `fetch` {@linkcode Response} with `:status`, the other header fields and the body, as `fetch` would give it: a
   * `content-encoding` of gzip (x-gzip) or deflate is removed, the body decoded (`body` above stays as it came); a fault
   * in the coded bytes is a `DecodeError` placed in this direction's input (`context` e.g. `"gzip content coding of
   * stream 1"`). Throws a `RangeError` when the headers are missing, have no valid `:status`, or the status is 1xx.
   */
  toResponse(): Response;
}

/**
 * Decodes one direction of an HTTP/2 connection (RFC 9113), e.g. a capture, into one {@linkcode Http2Message} per
 * stream, handed on as soon as its header block is complete; its body flows DATA frame by DATA frame (a watch never
 * ends), as views of the input (a frame that spans input chunks flows in pieces as its bytes arrive, never copied). HEADERS and CONTINUATION are reassembled and decoded with one HPACK decoder; RST_STREAM and GOAWAY end
 * streams. A capture may start mid-connection at a frame boundary: DATA of streams whose HEADERS were not seen still
 * yields messages (`headersMissing`), and header blocks that refer to dynamic table entries from before the capture
 * are reported per stream (`headerError`).
 *
 * Frame and HPACK faults are {@linkcode DecodeError}s with the byte offset in this direction's input; the bodies open
 * at the fault fail with it. Bodies have their own backpressure: read each body (or cancel it), concurrently when
 * streams interleave.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse } from "watchwire";
 * import { encodeHttp2Frames } from "watchwire/wire";
 * import { Http2ConnectionDecoderStream } from "watchwire/capture";
 *
 * const line = '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a"}}}\n';
 * const wire = encodeHttp2Frames([
 *   { type: "SETTINGS", streamId: 0, parameters: [] },
 *   // ":status: 200" is static table entry 8 (0x88).
 *   { type: "HEADERS", streamId: 1, endHeaders: true, priority: undefined, fragment: Uint8Array.of(0x88) },
 *   { type: "DATA", streamId: 1, endStream: true, data: new TextEncoder().encode(line) },
 * ]);
 * for await (const message of ReadableStream.from([wire]).pipeThrough(new Http2ConnectionDecoderStream())) {
 *   console.log(message.streamId, message.headers); // 1 [ [ ":status", "200" ] ]
 *   for await (const event of decodeWatchResponse(message.toResponse())) console.log(event.type); // ADDED
 * }
 * ```
 */
export class Http2ConnectionDecoderStream extends DecoderStream<Uint8Array, Http2Message> {
  /** A decoder for one direction; throws a `RangeError` for an option out of its range. */
  constructor(options: Http2ConnectionDecoderOptions = {}) {
    // Messages may wait unread while bodies are read (see Http1ResponseDecoderStream); bodies apply backpressure.
    super(new Http2Connection(options), { readableHighWaterMark: 16 });
  }
}

interface StreamState {
  id: number;
  feed: BodyFeed;
  message: Http2Message;
  settleTrailers: (fields: FieldList) => void;
  settleEnd: (end: Http2StreamEnd) => void;
  done: boolean;
  /** Where the body's DATA lay in the input. */
  offsets: PayloadOffsets;
  /** Payload bytes handed on so far. */
  payload: number;
  /** The input offset of the next piece of a DATA frame handed on in pieces (`undefined` between frames). */
  nextPiece: number | undefined;
}

interface OpenBlock {
  streamId: number;
  /** PUSH_PROMISE blocks are decoded (to keep the table in step) and dropped. */
  push: boolean;
  endStream: boolean;
  offset: number;
  fragments: Uint8Array[];
  /** Input offset of each fragment's first byte. */
  at: number[];
}

class Http2Connection implements StreamDecoder<Uint8Array, Http2Message> {
  readonly #frames: Http2FrameDecoder;
  #hpack: HpackDecoder;
  readonly #maxHeaderTableSizeCeiling: number;
  readonly #maxHeaderListSize: number | undefined;
  /** The receiver's SETTINGS (peer mode); `undefined` without them (the configurable ceilings apply, as before). */
  #peer: { next(): Promise<Http2Settings | undefined> } | undefined;
  #sink: { settings(settings: Http2Settings): void; close(): void } | undefined;
  /** The receiver's first SETTINGS, applied at this direction's first SETTINGS ACK. */
  #firstPeerSettings: Http2Settings | undefined;
  /** SETTINGS ACKs seen so far (peer mode). */
  #acks = 0;
  /** The header list limit from an acknowledged SETTINGS_MAX_HEADER_LIST_SIZE (peer mode). */
  #headerListLimit = Infinity;
  // A scan of frame boundaries (peer mode), to hand the frame decoder input only up to the end of a frame after which
  // limits may change (the first frame, SETTINGS): it checks frame lengths as it reads their headers.
  /** Preface bytes still to skip; -1 while to be detected. */
  #scanPreface: number;
  readonly #scanHead = new Uint8Array(HTTP2_FRAME_HEADER_LENGTH);
  #scanFill = 0;
  /** Payload bytes of the current frame still to come; -1 while reading a header. */
  #scanPayload = -1;
  #scanCut = false;
  #scanFrames = 0;
  readonly #bodyHighWaterMark: number;
  readonly #streams = new Map<number, StreamState>();
  /** Streams that have ended: later frames for them are ignored. */
  readonly #ended = new Set<number>();
  #block: OpenBlock | undefined;
  /** Whether this direction was seen from its start (a first SETTINGS frame): HPACK faults are then fatal. */
  #fromStart: boolean | undefined;

  constructor(options: Http2ConnectionDecoderOptions) {
    const maxFrameSizeCeiling = options.maxFrameSizeCeiling ?? HTTP2_MAX_FRAME_SIZE_LIMIT;
    this.#frames = new Http2FrameDecoder({
      preface: options.preface ?? "detect",
      // Until the receiver's SETTINGS are known (if ever: they are in the other direction), the ceiling is the limit.
      maxFrameSize: maxFrameSizeCeiling,
      maxFrameSizeCeiling,
      maxContinuationFrames: options.maxContinuationFrames,
      maxHeaderBlockBytes: options.maxHeaderBlockBytes,
      // A DATA frame that spans reads flows into its body as its bytes arrive: views, no copy of the frame.
      dataInPieces: true,
    });
    this.#maxHeaderTableSizeCeiling = options.maxHeaderTableSizeCeiling ?? 65536;
    this.#maxHeaderListSize = options.maxHeaderListSize;
    // As for frames: until the receiver's SETTINGS_HEADER_TABLE_SIZE is known, the ceiling is the table size limit.
    this.#hpack = new HpackDecoder({
      maxTableSize: this.#maxHeaderTableSizeCeiling,
      maxHeaderListSize: this.#maxHeaderListSize,
    });
    this.#bodyHighWaterMark = options.bodyHighWaterMark ?? DEFAULT_BODY_HIGH_WATER_MARK;
    this.#peer = options.peerSettings;
    this.#sink = options.settingsSink;
    const preface = options.preface ?? "detect";
    this.#scanPreface = preface === "none" ? 0 : preface === "expect" ? PREFACE_LENGTH : -1;
  }

  async push(chunk: Uint8Array, emit: (message: Http2Message) => void): Promise<void> {
    if (this.#peer === undefined) return this.#pushPart(chunk, emit);
    // Peer mode: frames after the first and after a SETTINGS frame are read only once it has been handled (and the
    // receiver's SETTINGS it acknowledges applied).
    let start = 0;
    for (const cut of this.#cuts(chunk)) {
      await this.#pushPart(chunk.subarray(start, cut), emit);
      start = cut;
    }
    if (start < chunk.length) await this.#pushPart(chunk.subarray(start), emit);
  }

  /** The offsets in `chunk` just after the first frame and after each SETTINGS frame. */
  #cuts(chunk: Uint8Array): number[] {
    const cuts: number[] = [];
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (this.#scanPreface < 0) {
        this.#scanPreface = chunk[i] === PREFACE_FIRST ? PREFACE_LENGTH : 0;
      } else if (this.#scanPreface > 0) {
        const take = Math.min(this.#scanPreface, n - i);
        this.#scanPreface -= take;
        i += take;
      } else if (this.#scanPayload < 0) {
        const take = Math.min(HTTP2_FRAME_HEADER_LENGTH - this.#scanFill, n - i);
        this.#scanHead.set(chunk.subarray(i, i + take), this.#scanFill);
        this.#scanFill += take;
        i += take;
        if (this.#scanFill === HTTP2_FRAME_HEADER_LENGTH) {
          const h = this.#scanHead;
          this.#scanFill = 0;
          this.#scanPayload = (h[0] << 16) | (h[1] << 8) | h[2];
          this.#scanCut = this.#scanFrames === 0 || h[3] === SETTINGS_TYPE;
          this.#scanFrames++;
        }
      } else {
        const take = Math.min(this.#scanPayload, n - i);
        this.#scanPayload -= take;
        i += take;
      }
      if (this.#scanPayload === 0) {
        this.#scanPayload = -1;
        if (this.#scanCut && i < n) cuts.push(i);
      }
    }
    return cuts;
  }

  async #pushPart(chunk: Uint8Array, emit: (message: Http2Message) => void): Promise<void> {
    const frames: Http2Frame[] = [];
    let fault: unknown;
    try {
      this.#frames.push(chunk, (frame) => void frames.push(frame));
    } catch (error) {
      fault = error; // the frames before it are handled first
    }
    for (const frame of frames) {
      const wait = this.#frame(frame, emit);
      if (wait !== undefined) await wait;
    }
    if (fault !== undefined) throw fault;
  }

  finish(): void {
    this.#closeSink();
    this.#frames.finish();
    for (const state of [...this.#streams.values()]) {
      this.#end(state, { reason: "connection-end" }, undefined);
    }
  }

  failed(reason: unknown): void {
    this.#closeSink();
    for (const state of [...this.#streams.values()]) {
      this.#end(state, { reason: "connection-end", error: reason }, reason);
    }
  }

  #closeSink(): void {
    const sink = this.#sink;
    this.#sink = undefined;
    sink?.close();
  }

  #frame(frame: Http2Frame, emit: (message: Http2Message) => void): Promise<void> | undefined {
    if (this.#fromStart === undefined) {
      this.#fromStart = frame.type === "SETTINGS" && !frame.ack;
      if (!this.#fromStart) {
        // Mid-connection: SETTINGS ACKs cannot be matched with what they acknowledge. The ceilings apply.
        this.#closeSink();
        this.#peer = undefined;
      }
    }
    switch (frame.type) {
      case "SETTINGS": {
        // SETTINGS here govern what the other direction sends (told to it through the sink); the other direction's
        // SETTINGS govern this one from the ACK here on.
        if (!frame.ack) {
          this.#sink?.settings(frame.settings);
          return this.#peer !== undefined && this.#acks === 0 && this.#firstPeerSettings === undefined
            ? this.#startPeerMode()
            : undefined;
        }
        return this.#peer === undefined ? undefined : this.#acknowledged();
      }
      case "HEADERS":
      case "PUSH_PROMISE": {
        const padding = frame.padded ? 1 : 0;
        const extra = frame.type === "PUSH_PROMISE" ? 4 : frame.priority !== undefined ? 5 : 0;
        this.#block = {
          streamId: frame.streamId,
          push: frame.type === "PUSH_PROMISE",
          endStream: frame.type === "HEADERS" && frame.endStream,
          offset: frame.offset,
          fragments: [frame.fragment],
          at: [frame.offset + HTTP2_FRAME_HEADER_LENGTH + padding + extra],
        };
        if (frame.endHeaders) this.#endBlock(emit);
        return undefined;
      }
      case "CONTINUATION": {
        const block = this.#block!; // the frame decoder checked there is one
        block.fragments.push(frame.fragment);
        block.at.push(frame.offset + HTTP2_FRAME_HEADER_LENGTH);
        if (frame.endHeaders) this.#endBlock(emit);
        return undefined;
      }
      case "DATA": {
        if (this.#ended.has(frame.streamId)) return undefined;
        let state = this.#streams.get(frame.streamId);
        if (state === undefined) {
          state = this.#open(frame.streamId, frame.offset, undefined, true, undefined);
          emit(state.message);
        }
        // A frame's content starts after its header and pad length; its pieces follow one another in the input.
        const at = state.nextPiece ?? frame.offset + HTTP2_FRAME_HEADER_LENGTH + (frame.padded ? 1 : 0);
        if (frame.data.length > 0) state.offsets.record(state.payload, at);
        state.payload += frame.data.length;
        state.nextPiece = frame.more === true ? at + frame.data.length : undefined;
        state.feed.enqueue(frame.data);
        if (frame.endStream) {
          this.#end(state, { reason: "end-stream" }, undefined);
          return undefined;
        }
        return state.feed.ready();
      }
      case "RST_STREAM": {
        const state = this.#streams.get(frame.streamId);
        this.#ended.add(frame.streamId);
        if (state === undefined) return undefined;
        const error = frame.errorCode === 0
          ? undefined
          : new Http2StreamError(frame.streamId, "reset", frame.errorCode);
        this.#end(state, { reason: "reset", errorCode: frame.errorCode }, error);
        return undefined;
      }
      case "GOAWAY": {
        for (const state of [...this.#streams.values()]) {
          if (state.id <= frame.lastStreamId) continue;
          const error = new Http2StreamError(state.id, "goaway", frame.errorCode);
          this.#end(state, { reason: "goaway", errorCode: frame.errorCode }, error);
        }
        return undefined;
      }
      default:
        // PRIORITY, PING, WINDOW_UPDATE and extension frames carry nothing of a message.
        return undefined;
    }
  }

  /** At this direction's first frame (its SETTINGS): the limits before the first SETTINGS ACK. */
  async #startPeerMode(): Promise<void> {
    const first = await this.#peer!.next();
    if (first === undefined) {
      // The other direction holds no SETTINGS (empty, failed or mid-connection): the ceilings apply.
      this.#peer = undefined;
      return;
    }
    this.#firstPeerSettings = first;
    // Before the first ACK the RFC initial values apply (RFC 9113 §6.5.3: 16384 and 4096). To be lenient with
    // captures (a sender may already use what the receiver announced before the ACK arrives, and a capture's timing of
    // the two directions is approximate), the larger of the initial and the first announced value is accepted until
    // the first ACK. No header block has been decoded yet, so the HPACK decoder starts over with that table size.
    this.#frames.setMaxFrameSize(Math.max(HTTP2_DEFAULT_MAX_FRAME_SIZE, first.maxFrameSize ?? 0));
    this.#hpack = new HpackDecoder({
      maxTableSize: Math.min(
        this.#maxHeaderTableSizeCeiling,
        Math.max(INITIAL_HEADER_TABLE_SIZE, first.headerTableSize ?? 0),
      ),
      maxHeaderListSize: this.#maxHeaderListSize,
    });
  }

  /** A SETTINGS ACK: the receiver's SETTINGS it acknowledges take effect for the frames after it. */
  async #acknowledged(): Promise<void> {
    const first = this.#acks === 0;
    this.#acks++;
    const settings = first ? this.#firstPeerSettings : await this.#peer!.next();
    if (settings === undefined) return; // it acknowledges SETTINGS the capture does not hold: nothing changes
    if (first) {
      // From the lenient values to the acknowledged ones (a value not announced keeps its initial value).
      this.#frames.setMaxFrameSize(settings.maxFrameSize ?? HTTP2_DEFAULT_MAX_FRAME_SIZE);
      this.#hpack.setMaxTableSize(
        Math.min(this.#maxHeaderTableSizeCeiling, settings.headerTableSize ?? INITIAL_HEADER_TABLE_SIZE),
      );
    } else {
      if (settings.maxFrameSize !== undefined) this.#frames.setMaxFrameSize(settings.maxFrameSize);
      if (settings.headerTableSize !== undefined) {
        this.#hpack.setMaxTableSize(Math.min(this.#maxHeaderTableSizeCeiling, settings.headerTableSize));
      }
    }
    if (settings.maxHeaderListSize !== undefined) this.#headerListLimit = settings.maxHeaderListSize;
  }

  /** A field block is complete: decode it and open, continue (trailers) or skip its stream. */
  #endBlock(emit: (message: Http2Message) => void): void {
    const block = this.#block!;
    this.#block = undefined;
    let bytes: Uint8Array;
    if (block.fragments.length === 1) {
      bytes = block.fragments[0];
    } else {
      bytes = new Uint8Array(block.fragments.reduce((n, f) => n + f.length, 0));
      let at = 0;
      for (const f of block.fragments) {
        bytes.set(f, at);
        at += f.length;
      }
    }
    let fields: FieldList | undefined;
    let headerError: DecodeError | undefined;
    try {
      fields = this.#hpack.decode(bytes, 0);
      if (this.#headerListLimit !== Infinity) {
        // An acknowledged SETTINGS_MAX_HEADER_LIST_SIZE (RFC 9113 §6.5.2 counting, as the HPACK decoder's limit).
        let size = 0;
        for (const [name, value] of fields) size += 32 + name.length + value.length;
        if (size > this.#headerListLimit) {
          throw new DecodeError(
            "HEADER_TOO_LARGE",
            0,
            `header list of ${size} octets exceeds SETTINGS_MAX_HEADER_LIST_SIZE (${this.#headerListLimit})`,
          );
        }
      }
    } catch (error) {
      if (!(error instanceof DecodeError)) throw error;
      const placed = new DecodeError(error.code, this.#inputOffset(block, error.offset), error.detail, {
        cause: error.cause,
        context: `field block of stream ${block.streamId}`,
      });
      // From the start of the direction, the table is known: a fault is the connection's. Mid-connection, it may
      // come from entries sent before the capture started.
      if (this.#fromStart === true) throw placed;
      headerError = placed;
    }
    if (block.push || this.#ended.has(block.streamId)) return;
    const state = this.#streams.get(block.streamId);
    if (state === undefined) {
      // Interim responses (1xx other than 101) are followed by the final header block.
      const status = fields?.find(([name]) => name === ":status")?.[1];
      if (status !== undefined && status.length === 3 && status[0] === "1" && status !== "101") return;
      const opened = this.#open(block.streamId, block.offset, fields, false, headerError);
      emit(opened.message);
      if (block.endStream) this.#end(opened, { reason: "end-stream" }, undefined);
      return;
    }
    // A block after the first: trailers.
    state.settleTrailers(fields ?? []);
    if (block.endStream) this.#end(state, { reason: "end-stream" }, undefined);
  }

  /** The input offset of byte `i` of a reassembled block. */
  #inputOffset(block: OpenBlock, i: number): number {
    for (let k = 0; k < block.fragments.length; k++) {
      if (i < block.fragments[k].length || k === block.fragments.length - 1) return block.at[k] + i;
      i -= block.fragments[k].length;
    }
    return block.offset;
  }

  #open(
    id: number,
    offset: number,
    headers: FieldList | undefined,
    headersMissing: boolean,
    headerError: DecodeError | undefined,
  ): StreamState {
    const feed = new BodyFeed(this.#bodyHighWaterMark);
    let settleTrailers!: (fields: FieldList) => void;
    let settleEnd!: (end: Http2StreamEnd) => void;
    const trailers = new Promise<FieldList>((resolve) => (settleTrailers = resolve));
    const end = new Promise<Http2StreamEnd>((resolve) => (settleEnd = resolve));
    const body = feed.stream;
    const offsets = new PayloadOffsets();
    const message: Http2Message = {
      streamId: id,
      offset,
      headers,
      headersMissing,
      body,
      trailers,
      end,
      inputOffsetOf: (payloadOffset) => offsets.inputOffsetOf(payloadOffset),
      toResponse() {
        if (headers === undefined) {
          throw new RangeError(
            headersMissing
              ? `the headers of stream ${id} were not captured`
              : `the headers of stream ${id} could not be decoded`,
          );
        }
        return toResponse(id, headers, body, (payloadOffset) => offsets.inputOffsetOf(payloadOffset));
      },
    };
    if (headerError !== undefined) message.headerError = headerError;
    const state: StreamState = {
      id,
      feed,
      message,
      settleTrailers,
      settleEnd,
      done: false,
      offsets,
      payload: 0,
      nextPiece: undefined,
    };
    this.#streams.set(id, state);
    return state;
  }

  #end(state: StreamState, end: Http2StreamEnd, error: unknown): void {
    if (state.done) return;
    state.done = true;
    this.#streams.delete(state.id);
    this.#ended.add(state.id);
    if (error === undefined) state.feed.close();
    else state.feed.error(error);
    state.settleTrailers([]);
    state.settleEnd(end);
  }
}

/**
 * A `Response` from a decoded header list (pseudo-header fields removed) and a body, as `fetch` gives it: a gzip or
 * deflate content coding removed (and with it `content-encoding` and `content-length`), its faults placed in the
 * connection's bytes by `inputOffsetOf`.
 */
function toResponse(
  id: number,
  headers: FieldList,
  body: ReadableStream<Uint8Array>,
  inputOffsetOf: (payloadOffset: number) => number | undefined,
): Response {
  const status = headers.find(([name]) => name === ":status")?.[1];
  if (status === undefined || !/^[1-5][0-9][0-9]$/.test(status)) {
    throw new RangeError(`stream ${id} has no valid :status (${status === undefined ? "none" : status})`);
  }
  const code = Number(status);
  if (code < 200) throw new RangeError(`a ${code} response cannot be a fetch Response`);
  const nullBody = code === 204 || code === 205 || code === 304;
  if (nullBody) body.cancel().catch(() => {});
  const content = nullBody ? { body: null, decoded: undefined } : removeContentCoding(headers, body, {
    placeFault: placeIn(inputOffsetOf, `${contentCodingOf(headers)} content coding of stream ${id}`),
  });
  const fields = toHeaders(headers.filter(([name]) => {
    if (name.startsWith(":")) return false;
    return content.decoded === undefined || (name !== "content-encoding" && name !== "content-length");
  }));
  return new Response(content.body, { status: code, headers: fields });
}
