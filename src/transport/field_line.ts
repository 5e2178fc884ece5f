/**
 * HTTP/1.1 field lines (RFC 9110 §5, RFC 9112 §5): parsing shared by header and trailer sections.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";

/**
 * Header or trailer fields in arrival order, names lower-cased, values with surrounding whitespace removed.
 *
 * @example
 * ```ts
 * import { ChunkedDecoderStream, type FieldList } from "watchwire/wire";
 *
 * const wire = new Blob(["2\r\nok\r\n0\r\nGrpc-Status: 0\r\nX-Note:  a b \r\n\r\n"]).stream();
 * const chunked = new ChunkedDecoderStream();
 * await wire.pipeThrough(chunked).pipeTo(new WritableStream());
 * const trailers: FieldList = await chunked.trailerFields;
 * console.log(JSON.stringify(trailers)); // [["grpc-status","0"],["x-note","a b"]]
 * ```
 */
export type FieldList = Array<[name: string, value: string]>;

/** 1 for each tchar (RFC 9110 §5.6.2), the bytes of a token; 0 for the others. */
export const TOKEN = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
  TOKEN[c.charCodeAt(0)] = 1;
}

/** Latin-1 text of `bytes` (each byte one UTF-16 unit): how HTTP/1.1 field values are read. */
export function latin1(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    out += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192) as unknown as number[]);
  }
  return out;
}

/** True when `b` is SP or HTAB. */
export function isWhitespace(b: number): boolean {
  return b === 0x20 || b === 0x09;
}

/** True when `b` is a control byte other than HTAB (what field values and quoted strings may not hold). */
export function isControl(b: number): boolean {
  return (b < 0x20 && b !== 0x09) || b === 0x7f;
}

/**
 * Parses one field line (without its CRLF) into a lower-cased name and a trimmed value.
 * `offset` is the line's byte offset in the input, for errors.
 */
export function parseFieldLine(line: Uint8Array, offset: number): [string, string] {
  if (line.length > 0 && isWhitespace(line[0])) {
    throw new DecodeError("HEADER_INVALID", offset, "obsolete line folding (a field line starting with whitespace)");
  }
  let colon = 0;
  while (colon < line.length && TOKEN[line[colon]] === 1) colon++;
  if (colon === line.length || line[colon] !== 0x3a) {
    throw new DecodeError("HEADER_INVALID", offset + colon, "a field name must be a token followed by ':'");
  }
  if (colon === 0) throw new DecodeError("HEADER_INVALID", offset, "empty field name");
  let start = colon + 1;
  let end = line.length;
  while (start < end && isWhitespace(line[start])) start++;
  while (end > start && isWhitespace(line[end - 1])) end--;
  for (let i = start; i < end; i++) {
    const b = line[i];
    if (isControl(b)) {
      throw new DecodeError(
        "HEADER_INVALID",
        offset + i,
        `control byte 0x${b.toString(16).padStart(2, "0")} in a field value`,
      );
    }
  }
  return [latin1(line.subarray(0, colon)).toLowerCase(), latin1(line.subarray(start, end))];
}

/** The values of every field named `name` (lower-case), in order. */
export function fieldValues(fields: FieldList, name: string): string[] {
  const out: string[] = [];
  for (const [n, v] of fields) if (n === name) out.push(v);
  return out;
}

/**
 * A web `Headers` holding `fields` (repeated fields combined as `Headers` does).
 *
 * @example
 * ```ts
 * import { toHeaders } from "watchwire/wire";
 *
 * const headers = toHeaders([["content-type", "application/json"], ["vary", "a"], ["vary", "b"]]);
 * console.log(headers.get("vary")); // a, b
 * ```
 */
export function toHeaders(fields: FieldList): Headers {
  const headers = new Headers();
  for (const [name, value] of fields) headers.append(name, value);
  return headers;
}
