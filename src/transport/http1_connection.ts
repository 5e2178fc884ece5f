/**
 * The state machine shared by the HTTP/1.1 request and response decoders: one direction of a connection read as a
 * sequence of messages (head, then a body framed as the head says), each handed on as soon as its head is read.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import type { StreamDecoder } from "../streams/decoder_stream.ts";
import { BodyFeed, DEFAULT_BODY_HIGH_WATER_MARK } from "./body_feed.ts";
import { ChunkedDecoder } from "./chunked_decoder.ts";
import { contentCodingOf, removeCoding, removeContentCoding } from "./content_coding.ts";
import type { FieldList } from "./field_line.ts";
import type { Http1BodyFraming, TransferCoding } from "./http1_head.ts";
import { LineBuffer } from "./line_buffer.ts";
import { PayloadOffsets, placeIn } from "./payload_offsets.ts";

/**
 * Limits and choices common to the HTTP/1.1 request and response decoders.
 *
 * @example
 * ```ts
 * import { type Http1DecoderOptions, Http1RequestDecoderStream } from "watchwire/capture";
 *
 * const limits: Http1DecoderOptions = { maxHeaderBytes: 16, bodyHighWaterMark: 65536 };
 * const wire = new Blob(["GET /api/v1/namespaces/default/pods?watch=1 HTTP/1.1\r\n\r\n"]).stream();
 * await wire.pipeThrough(new Http1RequestDecoderStream(limits)).pipeTo(new WritableStream()).catch((e) => {
 *   console.log(e.code, e.offset); // HEADER_TOO_LARGE 0
 * });
 * ```
 */
export interface Http1DecoderOptions {
  /** Largest message head (start line and header section) accepted. Default 64 KiB. */
  maxHeaderBytes?: number;
  /** Longest chunk-size line accepted in a chunked body. Default `DEFAULT_MAX_CHUNK_LINE_BYTES` (4096). */
  maxChunkLineBytes?: number;
  /** Largest trailer section accepted. Default `DEFAULT_MAX_TRAILER_BYTES` (16 KiB). */
  maxTrailerBytes?: number;
  /** Remove `Content-Encoding: gzip` / `x-gzip` / `deflate` from bodies. Default true. */
  decompress?: boolean;
  /** Bytes a body may hold unread before the decoder waits for its reader (backpressure). Default 1 MiB. */
  bodyHighWaterMark?: number;
}

/** What a head tells the connection: its fields, and how the body that follows is delimited. */
export interface Http1HeadFraming {
  headers: FieldList;
  framing: Http1BodyFraming;
  transferCodings: TransferCoding[];
  contentLength: number;
}

/**
 * What every message read from an HTTP/1.1 connection carries besides its head: where it is, and its body.
 *
 * @example
 * ```ts
 * import { type Http1Message, Http1RequestDecoderStream, Http1ResponseDecoderStream } from "watchwire/capture";
 *
 * const where = (message: Http1Message) => `#${message.index} at ${message.offset}, body at ${message.bodyOffset}`;
 * const requests = new Blob(["POST /a HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"]).stream();
 * for await (const request of requests.pipeThrough(new Http1RequestDecoderStream())) {
 *   console.log(where(request), await new Response(request.body).text()); // #0 at 0, body at 39 {}
 * }
 * const responses = new Blob(["HTTP/1.1 204 No Content\r\n\r\n"]).stream();
 * for await (const response of responses.pipeThrough(new Http1ResponseDecoderStream())) {
 *   console.log(where(response)); // #0 at 0, body at 27
 * }
 * ```
 */
export interface Http1Message {
  /** Position of the message in its direction of the connection, 0 for the first. */
  index: number;
  /** Byte offset of the start line (request line or status line) in the connection's bytes. */
  offset: number;
  /** Byte offset of the first body byte in the connection's bytes. */
  bodyOffset: number;
  /**
   * The content coding removed from `body` (`"gzip"`, `"deflate"`), if any. A fault in the coded bytes fails `body`
   * with a `DecodeError` placed in the connection's bytes (`context` e.g. `"gzip content coding of response 1"`), as
   * the connection's own faults are; a transfer coding's likewise.
   */
  decoded: string | undefined;
  /**
   * The payload: transfer codings removed (chunked, and any in `transferCodings`), and content coding too where
   * `decoded` says so; empty when the message has none. A body must be read or cancelled for the decoder to move on
   * past it (as with `fetch`).
   */
  body: ReadableStream<Uint8Array>;
  /** Trailer fields of a chunked body once it has ended (empty for other framings). */
  trailers: Promise<FieldList>;
  /**
   * Where payload byte `payloadOffset` (of the body before content decoding) lies in the connection's bytes; `undefined`
   * when it is too far back to remember (more than 4096 chunks ago).
   */
  inputOffsetOf(payloadOffset: number): number | undefined;
}

/** What the connection gives a role to build its message from. */
export interface Http1MessageParts<H> extends Http1Message {
  head: H;
  /** Settled once the body has ended: the bytes that follow it if the connection then switched protocols. */
  tunnel: Promise<ReadableStream<Uint8Array> | undefined>;
}

/** What differs between the directions. */
export interface Http1Role<H extends Http1HeadFraming, M> {
  /** `"request"` or `"response"`, for messages. */
  readonly noun: string;
  /** Parses a head (lines without their CRLF, with their input offsets); may wait for what it needs to know. */
  parse(lines: Uint8Array[], offsets: number[]): H | Promise<H>;
  message(parts: Http1MessageParts<H>): M;
  /**
   * Asked once the body of a message that may switch protocols has ended: whether the bytes that follow belong to
   * another protocol (they are then handed on raw through the message's `tunnel`).
   */
  switches?(head: H, index: number): boolean | Promise<boolean>;
}

interface PendingMessage<H> {
  head: H;
  index: number;
  openTunnel(tunnel: ReadableStream<Uint8Array> | undefined): void;
}

const CR = 13;
const LF = 10;

const enum Phase {
  Head,
  Body,
  /** Another protocol: bytes go to `#feed` raw until the input ends. */
  Raw,
}

/** One direction of an HTTP/1.1 connection. */
export class Http1Connection<H extends Http1HeadFraming, M> implements StreamDecoder<Uint8Array, M> {
  readonly #maxHeaderBytes: number;
  readonly #options: Http1DecoderOptions;
  readonly #role: Http1Role<H, M>;
  #phase = Phase.Head;
  #consumed = 0;
  #index = 0;
  // Head being read.
  readonly #head = new LineBuffer();
  #headStart = 0;
  #lineStart = 0;
  #headDone = false;
  // Body being read.
  #feed: BodyFeed | undefined;
  #framing: Http1BodyFraming = "none";
  #remaining = 0;
  #chunked: ChunkedDecoder | undefined;
  #bodyStart = 0;
  #payload = 0;
  #settleTrailers: ((fields: FieldList) => void) | undefined;
  #offsets: PayloadOffsets | undefined;
  /** The message being read: its head, and how to settle its `tunnel`. */
  #message: PendingMessage<H> | undefined;
  /** A message whose body has ended: the role is asked whether the connection switches (see `#asked`). */
  #ask: PendingMessage<H> | undefined;

  constructor(role: Http1Role<H, M>, options: Http1DecoderOptions) {
    this.#role = role;
    this.#options = options;
    this.#maxHeaderBytes = options.maxHeaderBytes ?? 65536;
  }

  async push(chunk: Uint8Array, emit: (message: M) => void): Promise<void> {
    let i = 0;
    while (i < chunk.length) {
      if (this.#phase === Phase.Head) {
        try {
          i = this.#readHead(chunk, i);
        } catch (error) {
          throw this.#inHead(error);
        }
        if (this.#headDone) await this.#startBody(emit);
      } else {
        i = this.#readBody(chunk, i);
        // Wait while the body's reader is behind: memory stays bounded however fast the input comes.
        const ready = this.#feed?.ready();
        if (ready !== undefined) await ready;
      }
      if (this.#ask !== undefined) await this.#asked();
    }
  }

  /** The connection failed (a fault here, or its input failed): the body being read fails with it. */
  failed(reason: unknown): void {
    this.#feed?.error(reason);
  }

  async finish(): Promise<void> {
    if (this.#ask !== undefined) await this.#asked();
    const noun = this.#role.noun;
    if (this.#phase === Phase.Head) {
      if (this.#head.length > 0 && !isOnlyCrlf(this.#head.view())) {
        throw new DecodeError("TRUNCATED", this.#consumed, "the connection ended", {
          context: `head of ${noun} ${this.#index + 1}`,
        });
      }
      return;
    }
    if (this.#framing === "close" || this.#phase === Phase.Raw) {
      this.#endBody(false);
      return;
    }
    const missing = this.#framing === "content-length" ? ` (${this.#remaining} bytes missing)` : "";
    const error = new DecodeError("TRUNCATED", this.#consumed, `the connection ended${missing}`, {
      context: `body of ${noun} ${this.#index}`,
    });
    this.#feed?.error(error);
    throw error;
  }

  /** Reads head bytes from `chunk[i..]`; returns the index after what it used (and sets `#headDone` at its end). */
  #readHead(chunk: Uint8Array, i: number): number {
    while (i < chunk.length) {
      const lf = chunk.indexOf(LF, i);
      const end = lf === -1 ? chunk.length : lf + 1;
      if (this.#head.length + end - i > this.#maxHeaderBytes) {
        throw new DecodeError(
          "HEADER_TOO_LARGE",
          this.#headStart,
          `${this.#role.noun} head longer than ${this.#maxHeaderBytes} bytes`,
        );
      }
      this.#head.append(chunk.subarray(i, end));
      this.#consumed += end - i;
      i = end;
      if (lf === -1) return i;
      const head = this.#head.view();
      const lineEnd = head.length - 1; // the LF
      if (lineEnd === this.#lineStart || head[lineEnd - 1] !== CR) {
        throw new DecodeError(
          "CRLF_EXPECTED",
          this.#consumed - 1,
          `bare LF in a ${this.#role.noun} head (CRLF required)`,
        );
      }
      if (lineEnd - 1 === this.#lineStart) {
        // An empty line: before a start line it is stray (tolerated, RFC 9112 §2.2), after one it ends the head.
        if (this.#lineStart === 0) {
          this.#head.clear();
          this.#headStart = this.#consumed;
          continue;
        }
        this.#headDone = true;
        return i;
      }
      this.#lineStart = head.length;
    }
    return i;
  }

  async #startBody(emit: (message: M) => void): Promise<void> {
    this.#headDone = false;
    const bytes = this.#head.view();
    const lines: Uint8Array[] = [];
    const offsets: number[] = [];
    for (let from = 0; from < bytes.length - 2;) {
      const lf = bytes.indexOf(LF, from);
      lines.push(bytes.slice(from, lf - 1));
      offsets.push(this.#headStart + from);
      from = lf + 1;
    }
    const offset = this.#headStart;
    this.#head.clear();
    this.#lineStart = 0;
    const role = this.#role;
    let head: H;
    try {
      head = await role.parse(lines, offsets);
    } catch (error) {
      throw this.#inHead(error);
    }
    const index = this.#index++;
    const feed = new BodyFeed(this.#options.bodyHighWaterMark ?? DEFAULT_BODY_HIGH_WATER_MARK);
    let settle!: (fields: FieldList) => void;
    const trailers = new Promise<FieldList>((resolve) => (settle = resolve));
    let openTunnel!: (tunnel: ReadableStream<Uint8Array> | undefined) => void;
    const tunnel = new Promise<ReadableStream<Uint8Array> | undefined>((resolve) => (openTunnel = resolve));
    this.#feed = feed;
    this.#settleTrailers = settle;
    this.#framing = head.framing;
    this.#remaining = head.contentLength;
    this.#bodyStart = this.#consumed;
    this.#payload = 0;
    this.#chunked = head.framing === "chunked"
      ? new ChunkedDecoder({
        maxChunkLineBytes: this.#options.maxChunkLineBytes,
        maxTrailerBytes: this.#options.maxTrailerBytes,
      })
      : undefined;
    const pieces = head.framing === "chunked" ? new PayloadOffsets() : undefined;
    this.#offsets = pieces;
    const bodyStart = this.#bodyStart;
    this.#message = { head, index, openTunnel };

    const inputOffsetOf = (payloadOffset: number) =>
      pieces === undefined ? bodyStart + payloadOffset : pieces.inputOffsetOf(payloadOffset);
    // The first coding undone reads the payload itself, so its faults can be placed in the connection's bytes.
    const placed = (what: string) => ({ placeFault: placeIn(inputOffsetOf, `${what} of ${role.noun} ${index + 1}`) });
    // Transfer codings are undone last to first (the sender applied them in the order listed), then the content's.
    let payload = feed.stream;
    for (let k = head.transferCodings.length - 1; k >= 0; k--) {
      const coding = head.transferCodings[k];
      const first = k === head.transferCodings.length - 1;
      payload = removeCoding(coding, payload, first ? placed(`${coding} transfer coding`) : {});
    }
    const decompress = (this.#options.decompress ?? true) && head.framing !== "none" && head.framing !== "upgrade";
    const { body, decoded } = decompress
      ? removeContentCoding(
        head.headers,
        payload,
        head.transferCodings.length === 0 ? placed(`${contentCodingOf(head.headers)} content coding`) : {},
      )
      : { body: payload, decoded: undefined };
    emit(role.message({ head, index, offset, bodyOffset: bodyStart, body, decoded, trailers, tunnel, inputOffsetOf }));
    if (head.framing === "upgrade") {
      this.#phase = Phase.Raw;
      settle([]);
      openTunnel(undefined);
      this.#message = undefined;
    } else if (head.framing === "none" || (head.framing === "content-length" && head.contentLength === 0)) {
      this.#endBody(true);
    } else {
      this.#phase = Phase.Body;
    }
  }

  /** Asks the role whether the connection switches protocols after the message whose body has just ended. */
  async #asked(): Promise<void> {
    const { head, index, openTunnel } = this.#ask!;
    this.#ask = undefined;
    if (!(await this.#role.switches!(head, index))) return openTunnel(undefined);
    // Another protocol follows the body: its bytes are handed on raw until the input ends.
    this.#feed = new BodyFeed(this.#options.bodyHighWaterMark ?? DEFAULT_BODY_HIGH_WATER_MARK);
    this.#phase = Phase.Raw;
    openTunnel(this.#feed.stream);
  }

  /** Feeds body bytes from `chunk[i..]`; returns the index after what belonged to the body. */
  #readBody(chunk: Uint8Array, i: number): number {
    const feed = this.#feed!;
    if (this.#phase === Phase.Raw) {
      feed.enqueue(chunk.subarray(i));
      this.#consumed += chunk.length - i;
      return chunk.length;
    }
    switch (this.#framing) {
      case "content-length": {
        const take = Math.min(this.#remaining, chunk.length - i);
        feed.enqueue(chunk.subarray(i, i + take));
        this.#remaining -= take;
        this.#consumed += take;
        if (this.#remaining === 0) this.#endBody(true);
        return i + take;
      }
      case "chunked": {
        const decoder = this.#chunked!;
        const offsets = this.#offsets!;
        const base = this.#consumed - i; // input offset of chunk[0]
        let used: number;
        try {
          used = decoder.push(chunk.subarray(i), (payload) => {
            offsets.record(this.#payload, base + (payload.byteOffset - chunk.byteOffset));
            this.#payload += payload.length;
            feed.enqueue(payload);
          });
        } catch (error) {
          throw this.#bodyError(error);
        }
        this.#consumed += used;
        if (decoder.done) {
          this.#settleTrailers?.(decoder.trailers);
          this.#endBody(true);
        }
        return i + used;
      }
      default: {
        // Until close.
        feed.enqueue(chunk.subarray(i));
        this.#consumed += chunk.length - i;
        return chunk.length;
      }
    }
  }

  /**
   * A fault in a head, placed there: every fault of the connection names where it is (`context`), so that a reader
   * can tell its offset (in the connection's bytes) from that of a fault found in a body by whatever decodes it.
   */
  #inHead(error: unknown): unknown {
    if (!(error instanceof DecodeError) || error.context !== undefined) return error;
    return new DecodeError(error.code, error.offset, error.detail, {
      cause: error.cause,
      context: `head of ${this.#role.noun} ${this.#index + 1}`,
    });
  }

  #bodyError(error: unknown): unknown {
    if (!(error instanceof DecodeError)) return error;
    const placed = new DecodeError(error.code, this.#bodyStart + error.offset, error.detail, {
      cause: error.cause,
      context: `chunked body of ${this.#role.noun} ${this.#index}`,
    });
    this.#feed?.error(placed);
    return placed;
  }

  /** Ends the current body; `more` when the connection may carry more (the role is asked whether it switches). */
  #endBody(more: boolean): void {
    this.#feed?.close();
    this.#settleTrailers?.([]);
    this.#feed = undefined;
    this.#settleTrailers = undefined;
    this.#chunked = undefined;
    this.#offsets = undefined;
    this.#phase = Phase.Head;
    this.#headStart = this.#consumed; // the next head starts here
    const message = this.#message;
    this.#message = undefined;
    if (message === undefined) return;
    if (more && this.#role.switches !== undefined) this.#ask = message;
    else message.openTunnel(undefined);
  }
}

function isOnlyCrlf(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b !== CR && b !== LF) return false;
  return true;
}
