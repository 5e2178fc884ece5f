/**
 * The one error type every watchwire decoder throws for bad input.
 *
 * @module
 */

/**
 * What went wrong, machine-readable.
 *
 * @example
 * ```ts
 * import { DecodeError, type DecodeErrorCode } from "watchwire";
 * import { NdjsonDecoderStream } from "watchwire/wire";
 *
 * function advice(code: DecodeErrorCode): string {
 *   switch (code) {
 *     case "TRUNCATED":
 *       return "the body was cut short: watch again from the last resourceVersion";
 *     case "LINE_TOO_LONG":
 *       return "raise maxEventBytes";
 *     default:
 *       return `bad input (${code})`;
 *   }
 * }
 * try {
 *   await new Blob(['{"a":1}\n{"b":']).stream().pipeThrough(new NdjsonDecoderStream()).pipeTo(new WritableStream());
 * } catch (e) {
 *   if (e instanceof DecodeError) console.log(advice(e.code)); // the body was cut short: watch again from the last resourceVersion
 * }
 * ```
 */
export type DecodeErrorCode =
  /** The input ended inside a frame, chunk, header block or line. */
  | "TRUNCATED"
  /** A chunk-size line of HTTP/1.1 chunked coding is malformed. */
  | "CHUNK_SIZE_INVALID"
  /** A chunk size does not fit in a safe integer or exceeds the configured limit. */
  | "CHUNK_SIZE_OVERFLOW"
  /** A CRLF was required (after a chunk-size line, chunk data or a field line) and something else came. */
  | "CRLF_EXPECTED"
  /** A header or trailer field line is malformed. */
  | "HEADER_INVALID"
  /** A header section, trailer section or chunk-size line is longer than its limit. */
  | "HEADER_TOO_LARGE"
  /** An HTTP/1.1 status line is malformed. */
  | "STATUS_LINE_INVALID"
  /** An HTTP/1.1 request line is malformed. */
  | "REQUEST_LINE_INVALID"
  /** A Content-Length is malformed or the message framing headers contradict each other. */
  | "CONTENT_LENGTH_INVALID"
  /** A Transfer-Encoding or Content-Encoding this decoder does not implement. */
  | "ENCODING_UNSUPPORTED"
  /** Compressed data is corrupt. */
  | "DECOMPRESSION_FAILED"
  /** Bytes follow the end of a message where none may. */
  | "TRAILING_DATA"
  /** A line (an NDJSON event) is longer than `maxEventBytes`. */
  | "LINE_TOO_LONG"
  /** A line is not valid JSON. */
  | "JSON_INVALID"
  /** A watch event is not an object with a known `type` and an `object`. */
  | "EVENT_INVALID"
  /** A watch event's `type` is not ADDED, MODIFIED, DELETED, BOOKMARK or ERROR. */
  | "EVENT_TYPE_UNKNOWN"
  /** A response's Content-Type names a format watchwire cannot decode. */
  | "CONTENT_TYPE_UNSUPPORTED"
  /** An HTTP/2 connection does not start with the client preface where one is required. */
  | "PREFACE_INVALID"
  /** An HTTP/2 frame is longer than the frame size limit in force. */
  | "FRAME_SIZE_ERROR"
  /**
   * An HTTP/2 frame breaks RFC 9113 (padding longer than the frame, a wrong length for its type, a bad stream id), or
   * a WebSocket frame breaks RFC 6455 (a reserved bit or opcode, a wrong mask bit, a bad control frame or close code).
   */
  | "FRAME_INVALID"
  /** An HPACK header block breaks RFC 7541 (index out of range, integer overflow, bad Huffman code or padding). */
  | "HPACK_INVALID"
  /**
   * A message (gRPC, Kubernetes protobuf, msgpack, a CBOR item, a WebSocket message) is longer than `maxEventBytes`
   * (or an etcd fragmented response than `maxFragmentedBytes`).
   */
  | "MESSAGE_TOO_LARGE"
  /** A message's prefix or contents are malformed (a WebSocket text message or close reason that is not UTF-8 too). */
  | "MESSAGE_INVALID"
  /** A capture file (pcap, pcapng) is malformed: bad magic, a block whose lengths lie, a truncated record. */
  | "CAPTURE_INVALID"
  /** A TLS record or handshake message is malformed, or a record fails authentication with the logged keys. */
  | "TLS_INVALID";

/**
 * Options of {@linkcode DecodeError}.
 *
 * @example
 * ```ts
 * import { DecodeError, type DecodeErrorOptions } from "watchwire";
 *
 * const options: DecodeErrorOptions = { cause: new SyntaxError("Unexpected token"), context: "body of response 2" };
 * const error = new DecodeError("JSON_INVALID", 40, "line is not valid JSON", options);
 * console.log(error.message); // line is not valid JSON at byte 40 (in the body of response 2)
 * console.log(error.cause instanceof SyntaxError, error.context); // true body of response 2
 * ```
 */
export interface DecodeErrorOptions {
  /** The underlying error, e.g. the `SyntaxError` of `JSON.parse`. */
  cause?: unknown;
  /** Where in a larger input the fault is, e.g. `"body of response 2"`. */
  context?: string;
}

/**
 * A decoding fault: what (`code`), where (`offset`, the byte offset in the input of the stream that found it) and a
 * message a person understands.
 *
 * A stream that throws it has first delivered everything it decoded before the fault.
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import { NdjsonDecoderStream } from "watchwire/wire";
 *
 * const body = new Blob(['{"a":1}\n{oops}\n']).stream();
 * const values: unknown[] = [];
 * try {
 *   for await (const v of body.pipeThrough(new NdjsonDecoderStream())) values.push(v);
 * } catch (e) {
 *   if (e instanceof DecodeError) console.log(e.code, e.offset); // JSON_INVALID 8
 * }
 * console.log(values); // [ { a: 1 } ]
 * ```
 */
export class DecodeError extends Error {
  /** What went wrong. */
  readonly code: DecodeErrorCode;
  /** Byte offset, in the input of the stream that found the fault, where the fault is. */
  readonly offset: number;
  /** Where in a larger input, if a wrapping decoder said so (e.g. `"body of response 2"`). */
  readonly context: string | undefined;
  /** The message without the location suffix. */
  readonly detail: string;

  constructor(code: DecodeErrorCode, offset: number, detail: string, options: DecodeErrorOptions = {}) {
    super(
      DecodeError.#format(detail, offset, options),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "DecodeError";
    this.code = code;
    this.offset = offset;
    this.detail = detail;
    this.context = options.context;
  }

  static #format(detail: string, offset: number, options: DecodeErrorOptions): string {
    let where = `at byte ${offset}`;
    if (options.context !== undefined) where += ` (in the ${options.context})`;
    return `${detail} ${where}`;
  }
}
