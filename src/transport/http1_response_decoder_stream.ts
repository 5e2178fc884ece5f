/**
 * {@linkcode Http1ResponseDecoderStream}: the server-to-client bytes of an HTTP/1.1 connection to its responses.
 *
 * @module
 */
import { DecoderStream } from "../streams/decoder_stream.ts";
import { toHeaders } from "./field_line.ts";
import { type Http1Head, isInterim, parseHead, parseStatusLine } from "./http1_head.ts";
import {
  Http1Connection,
  type Http1DecoderOptions,
  type Http1Message,
  type Http1MessageParts,
  type Http1Role,
} from "./http1_connection.ts";

/**
 * Options of {@linkcode Http1ResponseDecoderStream}.
 *
 * @example
 * ```ts
 * import { type Http1ResponseDecoderOptions, Http1ResponseDecoderStream } from "watchwire/capture";
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
export interface Http1ResponseDecoderOptions extends Http1DecoderOptions {
  /**
   * The method of request `requestIndex` (0 for the first request on the connection), when known: a response to
   * HEAD has no body whatever its Content-Length says, and a 2xx response to CONNECT starts a tunnel (framing
   * `"upgrade"`). Asked for each final response (status 200 and up) before its body is read; it may wait, e.g. for
   * the request bytes of a capture to be read that far. Without it (or when it gives `undefined`) every response is
   * framed as one to GET. {@linkcode decodeHttp1Exchanges} answers it from the client-to-server bytes.
   */
  requestMethod?: (requestIndex: number) => string | undefined | Promise<string | undefined>;
}

/**
 * One response read from a connection.
 *
 * @example
 * ```ts
 * import { type Http1Response, Http1ResponseDecoderStream } from "watchwire/capture";
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
export interface Http1Response extends Omit<Http1Head, "contentLength">, Http1Message {
  /**
   * Position on the connection of the request this response answers, 0 for the first: interim responses (1xx but
   * 101) share it with the final response that follows them.
   */
  requestIndex: number;
  /**
   * A `fetch` {@linkcode Response} with this status, headers and body, so a captured response goes through the same
   * code as a live one. Throws a `RangeError` for 1xx responses, which `Response` cannot represent.
   */
  toResponse(): Response;
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
 * import { decodeWatchResponse } from "watchwire";
 * import { Http1ResponseDecoderStream } from "watchwire/capture";
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
    super(new Http1Connection(new ResponseRole(options.requestMethod), options), { readableHighWaterMark: 16 });
  }
}

/** What makes the connection state machine read responses. */
class ResponseRole implements Http1Role<Http1Head, Http1Response> {
  readonly noun = "response";
  readonly #requestMethod: Http1ResponseDecoderOptions["requestMethod"];
  /** Requests answered so far (by final responses and 101). */
  #answered = 0;
  #requestIndex = 0;

  constructor(requestMethod: Http1ResponseDecoderOptions["requestMethod"]) {
    this.#requestMethod = requestMethod;
  }

  async parse(lines: Uint8Array[], offsets: number[]): Promise<Http1Head> {
    const statusLine = parseStatusLine(lines[0], offsets[0]);
    const { status } = statusLine;
    this.#requestIndex = this.#answered;
    if (!isInterim(status)) this.#answered++;
    // Only a final response's framing depends on the method (101 is always "upgrade").
    const method = status >= 200 && this.#requestMethod !== undefined
      ? await this.#requestMethod(this.#requestIndex)
      : undefined;
    return parseHead(lines, offsets, method, statusLine);
  }

  message(parts: Http1MessageParts<Http1Head>): Http1Response {
    const { head, tunnel: _, ...message } = parts;
    const { contentLength: _length, ...fields } = head;
    const { body, decoded } = message;
    return {
      ...message,
      ...fields,
      requestIndex: this.#requestIndex,
      toResponse() {
        if (head.status < 200) throw new RangeError(`a ${head.status} response cannot be a fetch Response`);
        const headers = toHeaders(head.headers.filter(([name]) => {
          // The body handed on is already de-framed (and decoded, where `decoded` says so).
          if (name === "transfer-encoding") return false;
          if (decoded !== undefined && (name === "content-encoding" || name === "content-length")) return false;
          return true;
        }));
        const nullBody = head.framing === "none" || head.status === 205;
        if (nullBody) body.cancel().catch(() => {});
        return new Response(nullBody ? null : body, { status: head.status, statusText: head.statusText, headers });
      },
    };
  }
}
