/**
 * The head of an HTTP/1.1 response (RFC 9112 §4, §5): status line and header section, and the body framing they
 * imply (§6.3).
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
 * import { type Http1BodyFraming, Http1ResponseDecoderStream } from "watchwire";
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
  /** Until the connection closes (no length, or a transfer coding other than chunked last). */
  | "close"
  /** No body: 1xx, 204, 304. */
  | "none"
  /** `101 Switching Protocols`: what follows on the connection is another protocol, handed on raw. */
  | "upgrade";

/**
 * A parsed response head: what every `Http1Response` carries (all but `contentLength`, which its body
 * stream accounts for).
 *
 * @example
 * ```ts
 * import { type Http1Head, Http1ResponseDecoderStream } from "watchwire";
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
 * import { Http1ResponseDecoderStream, type TransferCoding } from "watchwire";
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
 * Parses a head (status line and field lines, each given without its CRLF) found at input offset `offset`;
 * `lineOffsets[i]` is the input offset of `lines[i]`.
 */
export function parseHead(lines: Uint8Array[], lineOffsets: number[]): Http1Head {
  const { version, status, statusText } = parseStatusLine(lines[0], lineOffsets[0]);
  const headers: FieldList = [];
  for (let i = 1; i < lines.length; i++) headers.push(parseFieldLine(lines[i], lineOffsets[i]));
  // Framing errors are placed at the first field line of the name at fault.
  const offsetOf = (name: string) => lineOffsets[1 + headers.findIndex(([n]) => n === name)];
  const { framing, transferCodings, contentLength } = bodyFraming(status, headers, offsetOf);
  return { version, status, statusText, headers, framing, transferCodings, contentLength };
}

function parseStatusLine(line: Uint8Array, offset: number) {
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

function bodyFraming(
  status: number,
  headers: FieldList,
  offsetOf: (name: string) => number,
): { framing: Http1BodyFraming; transferCodings: TransferCoding[]; contentLength: number } {
  if (status === 101) return { framing: "upgrade", transferCodings: [], contentLength: 0 };
  if (status < 200 || status === 204 || status === 304) {
    return { framing: "none", transferCodings: [], contentLength: 0 };
  }
  const te = fieldValues(headers, "transfer-encoding");
  if (te.length > 0) {
    // Transfer-Encoding overrides Content-Length (RFC 9112 §6.3 item 3). Chunked, if present, is applied once and
    // last (§7); without it last the body runs until the connection closes. The other codings are removed from the
    // body; one watchwire cannot remove (compress, or chunked anywhere but last) fails here rather than hand on bytes
    // still coded (Go's net/http refuses every coding but chunked).
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
    return { framing: chunked ? "chunked" : "close", transferCodings, contentLength: 0 };
  }
  const cl = fieldValues(headers, "content-length");
  if (cl.length > 0) {
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
    return { framing: "content-length", transferCodings: [], contentLength: length };
  }
  return { framing: "close", transferCodings: [], contentLength: 0 };
}
