/**
 * The head of an HTTP/1.1 message (RFC 9112 §3-§5): the request line or status line, the header section, and the
 * body framing they imply (§6.3).
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import { removableCoding } from "./content_coding.ts";
import { type FieldList, fieldValues, latin1, parseFieldLine } from "./field_line.ts";

/**
 * How a response body is delimited on the connection.
 *
 * @example
 * ```ts
 * import { type Http1BodyFraming, Http1ResponseDecoderStream } from "watchwire/capture";
 *
 * const bodyEnd: Record<Http1BodyFraming, string> = {
 *   chunked: "at the last chunk",
 *   "content-length": "after Content-Length bytes",
 *   close: "when the connection closes",
 *   none: "no body",
 *   upgrade: "no body: another protocol follows",
 * };
 * const wire = new Blob(["HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n\r\n{}"]).stream();
 * for await (const response of wire.pipeThrough(new Http1ResponseDecoderStream())) {
 *   await response.body.cancel();
 *   console.log(response.status, bodyEnd[response.framing]); // 204 no body, then 200 when the connection closes
 * }
 * ```
 */
export type Http1BodyFraming =
  /** `Transfer-Encoding: chunked`. */
  | "chunked"
  /** `Content-Length`. */
  | "content-length"
  /** Until the connection closes (a response with no length, or a transfer coding other than chunked last). */
  | "close"
  /** No body: 1xx, 204, 304, a response to HEAD, a request with neither Content-Length nor Transfer-Encoding. */
  | "none"
  /**
   * `101 Switching Protocols`, or a 2xx response to CONNECT: what follows on the connection is another protocol (or a
   * tunnel), handed on raw.
   */
  | "upgrade";

/**
 * A parsed response head: what every `Http1Response` carries (all but `contentLength`, which its body
 * stream accounts for).
 *
 * @example
 * ```ts
 * import { type Http1Head, Http1ResponseDecoderStream } from "watchwire/capture";
 *
 * const summary = (head: Omit<Http1Head, "contentLength">) => `${head.version} ${head.status} ${head.framing}`;
 * const wire = new Blob(["HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n"]).stream();
 * for await (const response of wire.pipeThrough(new Http1ResponseDecoderStream())) {
 *   console.log(summary(response), response.statusText, response.headers.length); // HTTP/1.0 404 content-length Not Found 1
 * }
 * ```
 */
export interface Http1Head {
  /** `HTTP/1.1` or `HTTP/1.0`. */
  version: string;
  /** The status code. */
  status: number;
  /** The reason phrase (may be empty). */
  statusText: string;
  /** Header fields in arrival order, names lower-cased. */
  headers: FieldList;
  /** How the body is delimited. */
  framing: Http1BodyFraming;
  /**
   * The transfer codings applied on top of the content besides `chunked`, in the order the server applied them
   * (`Transfer-Encoding: gzip, chunked` gives `["gzip"]`): each is `"gzip"` or `"deflate"`, and the body handed on
   * has them removed. Usually empty.
   */
  transferCodings: TransferCoding[];
  /** The body length for `content-length` framing. */
  contentLength: number;
}

/**
 * A transfer coding that watchwire removes besides `chunked` (RFC 9112 §7.2; `x-gzip` is read as `gzip`).
 *
 * @example
 * ```ts
 * import { Http1ResponseDecoderStream, type TransferCoding } from "watchwire/capture";
 *
 * const gzipped = await new Response(new Blob(["{}"]).stream().pipeThrough(new CompressionStream("gzip"))).blob();
 * const wire = new Blob(["HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", gzipped]).stream();
 * for await (const response of wire.pipeThrough(new Http1ResponseDecoderStream())) {
 *   const codings: TransferCoding[] = response.transferCodings;
 *   console.log(response.framing, codings, await new Response(response.body).text()); // close [ "gzip" ] {}
 * }
 * ```
 */
export type TransferCoding = "gzip" | "deflate";

/**
 * Parses a response head (status line and field lines, each given without its CRLF); `lineOffsets[i]` is the input
 * offset of `lines[i]`. `requestMethod`, when known, is the method of the request the response answers: a response to
 * HEAD has no body, and a 2xx response to CONNECT starts a tunnel. `statusLine`: the status line, if already parsed.
 */
export function parseHead(
  lines: Uint8Array[],
  lineOffsets: number[],
  requestMethod?: string,
  statusLine: StatusLine = parseStatusLine(lines[0], lineOffsets[0]),
): Http1Head {
  const { version, status, statusText } = statusLine;
  const headers = parseFields(lines, lineOffsets);
  const { framing, transferCodings, contentLength } = responseFraming(status, requestMethod, headers, lineOffsets);
  return { version, status, statusText, headers, framing, transferCodings, contentLength };
}

/** The status codes of interim responses, which answer no request by themselves (all 1xx but 101). */
export function isInterim(status: number): boolean {
  return status < 200 && status !== 101;
}

/**
 * A parsed request head: what every `Http1Request` carries (all but `contentLength`, which its body stream
 * accounts for).
 *
 * @example
 * ```ts
 * import { type Http1RequestHead, Http1RequestDecoderStream } from "watchwire/capture";
 *
 * const line = (head: Omit<Http1RequestHead, "contentLength">) => `${head.method} ${head.target} ${head.version}`;
 * const wire = new Blob(["GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: k\r\n\r\n"]).stream();
 * for await (const request of wire.pipeThrough(new Http1RequestDecoderStream())) {
 *   console.log(line(request), request.framing, request.headers.length); // GET /api/v1/pods?watch=1 HTTP/1.1 none 1
 * }
 * ```
 */
export interface Http1RequestHead {
  /** The method, as sent (methods are case-sensitive). */
  method: string;
  /** The request target, as sent: origin form (`/path?query`), absolute form, authority form (CONNECT) or `*`. */
  target: string;
  /** `HTTP/1.1` or `HTTP/1.0` (a higher minor version as sent, e.g. `HTTP/1.2`: it reads as HTTP/1.1). */
  version: string;
  /** Header fields in arrival order, names lower-cased. */
  headers: FieldList;
  /** How the body is delimited: `chunked`, `content-length` or `none` (a request body never runs until close). */
  framing: Exclude<Http1BodyFraming, "close" | "upgrade">;
  /** The transfer codings applied besides `chunked`, in the order the client applied them; usually empty. */
  transferCodings: TransferCoding[];
  /** The body length for `content-length` framing. */
  contentLength: number;
}

/** Parses a request head (request line and field lines, each given without its CRLF), as {@linkcode parseHead}. */
export function parseRequestHead(lines: Uint8Array[], lineOffsets: number[]): Http1RequestHead {
  const { method, target, version } = parseRequestLine(lines[0], lineOffsets[0]);
  const headers = parseFields(lines, lineOffsets);
  const offsetOf = fieldOffset(headers, lineOffsets);
  const te = fieldValues(headers, "transfer-encoding");
  if (te.length > 0) {
    const { chunked, transferCodings } = transferFraming(te, offsetOf);
    if (!chunked) {
      // RFC 9112 §6.3 item 4: a request's length cannot be "until close", the client still needs a response.
      throw new DecodeError(
        "ENCODING_UNSUPPORTED",
        offsetOf("transfer-encoding"),
        `request transfer coding ${JSON.stringify(te.join(", "))} does not end in chunked, so the body has no length`,
      );
    }
    return { method, target, version, headers, framing: "chunked", transferCodings, contentLength: 0 };
  }
  const length = contentLength(headers, offsetOf);
  return length === undefined
    ? { method, target, version, headers, framing: "none", transferCodings: [], contentLength: 0 }
    : { method, target, version, headers, framing: "content-length", transferCodings: [], contentLength: length };
}

/** Whether a request may switch the connection to another protocol: CONNECT, or an `Upgrade` field. */
export function mayUpgrade(request: Pick<Http1RequestHead, "method" | "headers">): boolean {
  return request.method === "CONNECT" || request.headers.some(([name]) => name === "upgrade");
}

function parseFields(lines: Uint8Array[], lineOffsets: number[]): FieldList {
  const headers: FieldList = [];
  for (let i = 1; i < lines.length; i++) headers.push(parseFieldLine(lines[i], lineOffsets[i]));
  return headers;
}

/** Framing errors are placed at the first field line of the name at fault. */
function fieldOffset(headers: FieldList, lineOffsets: number[]): (name: string) => number {
  return (name) => lineOffsets[1 + headers.findIndex(([n]) => n === name)];
}

function parseRequestLine(line: Uint8Array, offset: number) {
  // method SP request-target SP HTTP-version (RFC 9112 §3): a token, then visible ASCII (no obs-text in a URI).
  const text = latin1(line);
  const match = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([\x21-\x7e]+) HTTP\/(\d)\.(\d)$/.exec(text);
  if (match === null) {
    throw new DecodeError(
      "REQUEST_LINE_INVALID",
      offset,
      `not an HTTP/1.x request line: ${JSON.stringify(text.slice(0, 80))}`,
    );
  }
  if (match[3] !== "1") {
    const at = offset + text.length - 3;
    throw new DecodeError("REQUEST_LINE_INVALID", at, `unsupported HTTP version ${match[3]}.${match[4]}`);
  }
  return { method: match[1], target: match[2], version: `HTTP/${match[3]}.${match[4]}` };
}

/** A parsed status line. */
export interface StatusLine {
  version: string;
  status: number;
  statusText: string;
}

/** Parses a status line (without its CRLF) found at input offset `offset`. */
export function parseStatusLine(line: Uint8Array, offset: number): StatusLine {
  // HTTP-version SP 3DIGIT SP [ reason-phrase ]
  const text = latin1(line);
  const match = /^HTTP\/(\d)\.(\d) (\d{3})(?: ([\t\x20-\x7e\x80-\xff]*))?$/.exec(text);
  if (match === null) {
    throw new DecodeError(
      "STATUS_LINE_INVALID",
      offset,
      `not an HTTP/1.x status line: ${JSON.stringify(text.slice(0, 80))}`,
    );
  }
  if (match[1] !== "1") {
    throw new DecodeError("STATUS_LINE_INVALID", offset + 5, `unsupported HTTP version ${match[1]}.${match[2]}`);
  }
  return { version: `HTTP/${match[1]}.${match[2]}`, status: Number(match[3]), statusText: match[4] ?? "" };
}

function responseFraming(
  status: number,
  requestMethod: string | undefined,
  headers: FieldList,
  lineOffsets: number[],
): { framing: Http1BodyFraming; transferCodings: TransferCoding[]; contentLength: number } {
  // RFC 9112 §6.3 items 1 and 2, in that order.
  if (status === 101) return { framing: "upgrade", transferCodings: [], contentLength: 0 };
  if (requestMethod === "HEAD" || status < 200 || status === 204 || status === 304) {
    return { framing: "none", transferCodings: [], contentLength: 0 };
  }
  if (requestMethod === "CONNECT" && status < 300) return { framing: "upgrade", transferCodings: [], contentLength: 0 };
  const offsetOf = fieldOffset(headers, lineOffsets);
  const te = fieldValues(headers, "transfer-encoding");
  if (te.length > 0) {
    // Transfer-Encoding overrides Content-Length (RFC 9112 §6.3 item 3). Without chunked last the body runs until the
    // connection closes.
    const { chunked, transferCodings } = transferFraming(te, offsetOf);
    return { framing: chunked ? "chunked" : "close", transferCodings, contentLength: 0 };
  }
  const length = contentLength(headers, offsetOf);
  return length === undefined
    ? { framing: "close", transferCodings: [], contentLength: 0 }
    : { framing: "content-length", transferCodings: [], contentLength: length };
}

function transferFraming(
  te: string[],
  offsetOf: (name: string) => number,
): { chunked: boolean; transferCodings: TransferCoding[] } {
  // Chunked, if present, is applied once and last (RFC 9112 §7). The other codings are removed from the body; one
  // watchwire cannot remove (compress, or chunked anywhere but last) fails here rather than hand on bytes still coded
  // (Go's net/http refuses every coding but chunked).
  const codings = te.join(",").split(",").map((c) => c.trim().toLowerCase()).filter((c) => c !== "");
  const chunked = codings[codings.length - 1] === "chunked";
  const transferCodings: TransferCoding[] = [];
  for (const coding of chunked ? codings.slice(0, -1) : codings) {
    const removable = removableCoding(coding);
    if (removable !== undefined) transferCodings.push(removable);
    else {
      throw new DecodeError(
        "ENCODING_UNSUPPORTED",
        offsetOf("transfer-encoding"),
        coding === "chunked"
          ? `transfer coding ${JSON.stringify(te.join(", "))}: chunked must be the last coding, and only once`
          : `transfer coding ${JSON.stringify(coding.slice(0, 40))} (chunked, gzip and deflate are implemented)`,
      );
    }
  }
  return { chunked, transferCodings };
}

/** The Content-Length, or `undefined` when there is none. */
function contentLength(headers: FieldList, offsetOf: (name: string) => number): number | undefined {
  const cl = fieldValues(headers, "content-length");
  if (cl.length === 0) return undefined;
  const values = new Set(cl.join(",").split(",").map((v) => v.trim()));
  if (values.size !== 1) {
    throw new DecodeError(
      "CONTENT_LENGTH_INVALID",
      offsetOf("content-length"),
      `conflicting Content-Length values ${JSON.stringify(cl.join(", "))}`,
    );
  }
  const [value] = values;
  const length = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(length)) {
    throw new DecodeError(
      "CONTENT_LENGTH_INVALID",
      offsetOf("content-length"),
      `invalid Content-Length ${JSON.stringify(value.slice(0, 40))}`,
    );
  }
  return length;
}
