/**
 * {@linkcode Http1ResponseDecoderStream}: the server-to-client bytes of an HTTP/1.1 connection to its responses.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import { DecoderStream, type StreamDecoder } from "../streams/decoder_stream.ts";
import { BodyFeed } from "./body_feed.ts";
import { ChunkedDecoder } from "./chunked_decoder.ts";
import { type FieldList, toHeaders } from "./field_line.ts";
import { removeCoding, removeContentCoding } from "./content_coding.ts";
import { type Http1BodyFraming, type Http1Head, parseHead } from "./http1_head.ts";
import { LineBuffer } from "./line_buffer.ts";

/**
 * Options of {@linkcode Http1ResponseDecoderStream}.
 *
 * @example
 * ```ts
 * import { type Http1ResponseDecoderOptions, Http1ResponseDecoderStream } from "watchwire";
 *
 * const gzipped = await new Response(new Blob(["{}"]).stream().pipeThrough(new CompressionStream("gzip"))).blob();
 * const wire = new Blob(["HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n", gzipped]).stream();
 * const options: Http1ResponseDecoderOptions = { decompress: false, maxHeaderBytes: 8192 };
 * for await (const response of wire.pipeThrough(new Http1ResponseDecoderStream(options))) {
 *   const body = new Uint8Array(await new Response(response.body).arrayBuffer());
 *   console.log(response.decoded, body[0], body[1]); // undefined 31 139 (still gzip)
 * }
 * ```
 */
export interface Http1ResponseDecoderOptions {
  /** Largest response head (status line and header section) accepted. Default 64 KiB. */
  maxHeaderBytes?: number;
  /** Longest chunk-size line accepted in a chunked body. Default 4096. */
  maxChunkLineBytes?: number;
  /** Largest trailer section accepted. Default 16 KiB. */
  maxTrailerBytes?: number;
  /** Remove `Content-Encoding: gzip` / `x-gzip` / `deflate` from bodies. Default true. */
  decompress?: boolean;
  /** Bytes a body may hold unread before the decoder waits for its reader (backpressure). Default 1 MiB. */
  bodyHighWaterMark?: number;
}

/**
 * One response read from a connection.
 *
 * @example
 * ```ts
 * import { type Http1Response, Http1ResponseDecoderStream } from "watchwire";
 *
 * const wire = new Blob([
 *   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
 *   "2\r\n{}\r\n0\r\nX-Done: 1\r\n\r\n",
 * ]).stream();
 * const responses: ReadableStream<Http1Response> = wire.pipeThrough(new Http1ResponseDecoderStream());
 * for await (const response of responses) {
 *   console.log(response.index, response.status, response.framing, response.bodyOffset); // 0 200 chunked 47
 *   console.log(await new Response(response.body).text(), JSON.stringify(await response.trailers)); // {} [["x-done","1"]]
 * }
 * ```
 */
export interface Http1Response extends Omit<Http1Head, "contentLength"> {
  /** Position of the response on the connection, 0 for the first. */
  index: number;
  /** Byte offset of the status line in the connection's bytes. */
  offset: number;
  /** Byte offset of the first body byte in the connection's bytes. */
  bodyOffset: number;
  /** The content coding removed from `body` (`"gzip"`, `"deflate"`), if any. */
  decoded: string | undefined;
  /**
   * The payload: transfer codings removed (chunked, and any in `transferCodings`), and content coding too where
   * `decoded` says so. A body must be read or cancelled for the decoder to move on past it (as with `fetch`).
   */
  body: ReadableStream<Uint8Array>;
  /** Trailer fields of a chunked body once it has ended (empty for other framings). */
  trailers: Promise<FieldList>;
  /**
   * Where payload byte `payloadOffset` (of the body before content decoding) lies in the connection's bytes; `undefined`
   * when it is too far back to remember (more than 4096 chunks ago).
   */
  inputOffsetOf(payloadOffset: number): number | undefined;
  /**
   * A `fetch` {@linkcode Response} with this status, headers and body, so a captured response goes through the same
   * code as a live one. Throws a `RangeError` for 1xx responses, which `Response` cannot represent.
   */
  toResponse(): Response;
}

const CR = 13;
const LF = 10;
const SEGMENTS = 4096;

const enum Phase {
  Head,
  Body,
  Upgraded,
}

/**
 * Reads the server-to-client bytes of an HTTP/1.1 connection, e.g. a capture: status line, headers, then a body
 * framed by chunked coding, Content-Length or the connection's close; several responses in sequence on a keep-alive
 * connection. Each response is handed on as soon as its head is read, with its body as a stream that flows as the
 * bytes arrive (a watch body never ends). Transfer codings `gzip` and `deflate` (before `chunked`, or on a body that
 * runs until close) and `Content-Encoding: gzip` (multi-member too) and `deflate` are removed. Errors are
 * {@linkcode DecodeError}s with the byte offset in the connection.
 *
 * @example
 * ```ts
 * import { Http1ResponseDecoderStream, decodeWatchResponse } from "watchwire";
 *
 * const capture = new Blob([
 *   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
 *   '41\r\n{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a"}}}\n\r\n0\r\n\r\n',
 * ]).stream();
 * for await (const response of capture.pipeThrough(new Http1ResponseDecoderStream())) {
 *   for await (const event of decodeWatchResponse(response.toResponse())) console.log(event.type); // ADDED
 * }
 * ```
 */
export class Http1ResponseDecoderStream extends DecoderStream<Uint8Array, Http1Response> {
  constructor(options: Http1ResponseDecoderOptions = {}) {
    // Responses may queue unread while their bodies are read: with no room for them, a body waiting for bytes and
    // the connection waiting for its reader would wait on each other. Bodies apply the real backpressure.
    super(new Http1Connection(options), { readableHighWaterMark: 16 });
  }
}

/** The connection state machine behind {@linkcode Http1ResponseDecoderStream}. */
class Http1Connection implements StreamDecoder<Uint8Array, Http1Response> {
  readonly #maxHead: number;
  readonly #options: Http1ResponseDecoderOptions;
  #phase = Phase.Head;
  #consumed = 0;
  #index = 0;
  // Head being read.
  readonly #head = new LineBuffer();
  #headStart = 0;
  #lineStart = 0;
  // Body being read.
  #feed: BodyFeed | undefined;
  #framing: Http1BodyFraming = "none";
  #remaining = 0;
  #chunked: ChunkedDecoder | undefined;
  #bodyStart = 0;
  #payload = 0;
  #settleTrailers: ((fields: FieldList) => void) | undefined;
  #segments: { payload: Float64Array; input: Float64Array; count: number } | undefined;

  constructor(options: Http1ResponseDecoderOptions) {
    this.#options = options;
    this.#maxHead = options.maxHeaderBytes ?? 65536;
  }

  async push(chunk: Uint8Array, emit: (response: Http1Response) => void): Promise<void> {
    let i = 0;
    while (i < chunk.length) {
      if (this.#phase === Phase.Head) {
        i = this.#readHead(chunk, i, emit);
      } else {
        i = this.#readBody(chunk, i);
        // Wait while the body's reader is behind: memory stays bounded however fast the input comes.
        const ready = this.#feed?.ready();
        if (ready !== undefined) await ready;
      }
    }
  }

  /** The connection failed (a fault here, or its input failed): the body being read fails with it. */
  failed(reason: unknown): void {
    this.#feed?.error(reason);
  }

  finish(): void {
    if (this.#phase === Phase.Head) {
      if (this.#head.length > 0 && !isOnlyCrlf(this.#head.view())) {
        throw new DecodeError(
          "TRUNCATED",
          this.#consumed,
          `connection ended inside the head of response ${this.#index + 1}`,
        );
      }
      return;
    }
    if (this.#framing === "close" || this.#phase === Phase.Upgraded) {
      this.#endBody();
      return;
    }
    const missing = this.#framing === "content-length" ? ` (${this.#remaining} bytes missing)` : "";
    const error = new DecodeError(
      "TRUNCATED",
      this.#consumed,
      `connection ended inside the body of response ${this.#index}${missing}`,
    );
    this.#feed?.error(error);
    throw error;
  }

  /** Reads head bytes from `chunk[i..]`; returns the index after what it used. */
  #readHead(chunk: Uint8Array, i: number, emit: (response: Http1Response) => void): number {
    while (i < chunk.length) {
      const lf = chunk.indexOf(LF, i);
      const end = lf === -1 ? chunk.length : lf + 1;
      if (this.#head.length + end - i > this.#maxHead) {
        throw new DecodeError("HEADER_TOO_LARGE", this.#headStart, `response head longer than ${this.#maxHead} bytes`);
      }
      this.#head.append(chunk.subarray(i, end));
      this.#consumed += end - i;
      i = end;
      if (lf === -1) return i;
      const head = this.#head.view();
      const lineEnd = head.length - 1; // the LF
      if (lineEnd === this.#lineStart || head[lineEnd - 1] !== CR) {
        throw new DecodeError("CRLF_EXPECTED", this.#consumed - 1, "bare LF in a response head (CRLF required)");
      }
      if (lineEnd - 1 === this.#lineStart) {
        // An empty line: before a status line it is stray (tolerated), after one it ends the head.
        if (this.#lineStart === 0) {
          this.#head.clear();
          this.#headStart = this.#consumed;
          continue;
        }
        this.#startBody(emit);
        return i;
      }
      this.#lineStart = head.length;
    }
    return i;
  }

  #startBody(emit: (response: Http1Response) => void): void {
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
    const head = parseHead(lines, offsets);
    // The response carries the head's fields; the body stream accounts for the length.
    const { contentLength, ...fields } = head;
    const index = this.#index++;
    const feed = new BodyFeed(this.#options.bodyHighWaterMark ?? 1 << 20);
    let settle!: (fields: FieldList) => void;
    const trailers = new Promise<FieldList>((resolve) => (settle = resolve));
    this.#feed = feed;
    this.#settleTrailers = settle;
    this.#framing = head.framing;
    this.#remaining = contentLength;
    this.#bodyStart = this.#consumed;
    this.#payload = 0;
    this.#chunked = head.framing === "chunked"
      ? new ChunkedDecoder({
        maxChunkLineBytes: this.#options.maxChunkLineBytes,
        maxTrailerBytes: this.#options.maxTrailerBytes,
      })
      : undefined;
    this.#segments = head.framing === "chunked"
      ? { payload: new Float64Array(SEGMENTS), input: new Float64Array(SEGMENTS), count: 0 }
      : undefined;
    const segments = this.#segments;
    const bodyStart = this.#bodyStart;

    // Transfer codings are undone last to first (the server applied them in the order listed), then the content's.
    let payload = feed.stream;
    for (let k = head.transferCodings.length - 1; k >= 0; k--) payload = removeCoding(head.transferCodings[k], payload);
    const decompress = (this.#options.decompress ?? true) && head.framing !== "none";
    const { body, decoded } = decompress
      ? removeContentCoding(head.headers, payload)
      : { body: payload, decoded: undefined };
    const response: Http1Response = {
      index,
      offset,
      bodyOffset: bodyStart,
      ...fields,
      decoded,
      body,
      trailers,
      inputOffsetOf(payloadOffset) {
        if (segments === undefined) return bodyStart + payloadOffset;
        const { payload, input, count } = segments;
        const first = Math.max(0, count - SEGMENTS);
        for (let k = count - 1; k >= first; k--) {
          const slot = k % SEGMENTS;
          if (payload[slot] <= payloadOffset) return input[slot] + (payloadOffset - payload[slot]);
        }
        return undefined;
      },
      toResponse() {
        if (head.status < 200) throw new RangeError(`a ${head.status} response cannot be a fetch Response`);
        const headers = toHeaders(head.headers.filter(([name]) => {
          // The body handed on is already de-framed (and decoded, where `decoded` says so).
          if (name === "transfer-encoding") return false;
          if (decoded !== undefined && (name === "content-encoding" || name === "content-length")) return false;
          return true;
        }));
        const nullBody = head.status === 204 || head.status === 205 || head.status === 304;
        if (nullBody) body.cancel().catch(() => {});
        return new Response(nullBody ? null : body, { status: head.status, statusText: head.statusText, headers });
      },
    };
    emit(response);
    if (head.framing === "upgrade") {
      this.#phase = Phase.Upgraded;
      settle([]);
    } else if (head.framing === "none" || (head.framing === "content-length" && contentLength === 0)) {
      this.#endBody();
    } else {
      this.#phase = Phase.Body;
    }
  }

  /** Feeds body bytes from `chunk[i..]`; returns the index after what belonged to the body. */
  #readBody(chunk: Uint8Array, i: number): number {
    const feed = this.#feed!;
    switch (this.#framing) {
      case "content-length": {
        const take = Math.min(this.#remaining, chunk.length - i);
        feed.enqueue(chunk.subarray(i, i + take));
        this.#remaining -= take;
        this.#consumed += take;
        if (this.#remaining === 0) this.#endBody();
        return i + take;
      }
      case "chunked": {
        const decoder = this.#chunked!;
        const segments = this.#segments!;
        const base = this.#consumed - i; // input offset of chunk[0]
        let used: number;
        try {
          used = decoder.push(chunk.subarray(i), (payload) => {
            const slot = segments.count++ % SEGMENTS;
            segments.payload[slot] = this.#payload;
            segments.input[slot] = base + (payload.byteOffset - chunk.byteOffset);
            this.#payload += payload.length;
            feed.enqueue(payload);
          });
        } catch (error) {
          throw this.#bodyError(error);
        }
        this.#consumed += used;
        if (decoder.done) {
          this.#settleTrailers?.(decoder.trailers);
          this.#endBody();
        }
        return i + used;
      }
      default: {
        // Until close, or an upgraded connection's bytes.
        feed.enqueue(chunk.subarray(i));
        this.#consumed += chunk.length - i;
        return chunk.length;
      }
    }
  }

  #bodyError(error: unknown): unknown {
    if (!(error instanceof DecodeError)) return error;
    const placed = new DecodeError(error.code, this.#bodyStart + error.offset, error.detail, {
      cause: error.cause,
      context: `chunked body of response ${this.#index}`,
    });
    this.#feed?.error(placed);
    return placed;
  }

  #endBody(): void {
    this.#feed?.close();
    this.#settleTrailers?.([]);
    this.#feed = undefined;
    this.#settleTrailers = undefined;
    this.#chunked = undefined;
    this.#segments = undefined;
    this.#phase = Phase.Head;
    this.#headStart = this.#consumed; // the next head starts here
  }
}

function isOnlyCrlf(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b !== CR && b !== LF) return false;
  return true;
}
