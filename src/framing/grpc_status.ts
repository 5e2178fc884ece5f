/**
 * {@linkcode parseGrpcStatus}: the status of a gRPC call from its trailers.
 *
 * @module
 */

/**
 * The status of a gRPC call.
 *
 * @example
 * ```ts
 * import { type GrpcStatus, parseGrpcStatus } from "watchwire/wire";
 *
 * const trailers = new Headers({ "grpc-status": "14", "grpc-message": "connection%20reset" });
 * const status: GrpcStatus | undefined = parseGrpcStatus(trailers);
 * if (status !== undefined) console.log(status.code, status.name, status.message); // 14 UNAVAILABLE connection reset
 * ```
 */
export interface GrpcStatus {
  /** The status code, 0 to 16; a code outside that list, or one that is not a number, is read as 2 (UNKNOWN). */
  code: number;
  /** The code's name, e.g. `"OK"`, `"NOT_FOUND"`. */
  name: GrpcStatusName;
  /** The `grpc-message`, percent-decoded (UTF-8); `""` if there is none. */
  message: string;
}

/**
 * The gRPC status codes by number (https://grpc.github.io/grpc/core/md_doc_statuscodes.html).
 *
 * @example
 * ```ts
 * import { GRPC_STATUS_NAMES } from "watchwire/wire";
 *
 * console.log(GRPC_STATUS_NAMES[14]); // UNAVAILABLE
 * ```
 */
export const GRPC_STATUS_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
] as const;

/**
 * The name of a gRPC status code.
 *
 * @example
 * ```ts
 * import { type GrpcStatusName, parseGrpcStatus } from "watchwire/wire";
 *
 * function retry(name: GrpcStatusName): boolean {
 *   switch (name) {
 *     case "UNAVAILABLE":
 *     case "RESOURCE_EXHAUSTED":
 *       return true;
 *     default:
 *       return false;
 *   }
 * }
 * const status = parseGrpcStatus(new Headers({ "grpc-status": "14" }));
 * if (status !== undefined) console.log(status.name, retry(status.name)); // UNAVAILABLE true
 * ```
 */
export type GrpcStatusName = (typeof GRPC_STATUS_NAMES)[number];

const UNKNOWN = 2;

/**
 * Reads `grpc-status` and `grpc-message` from a gRPC response's trailers (or its headers, for a trailers-only
 * response). Returns `undefined` when there is no `grpc-status`. Names are matched case-insensitively; of repeated
 * fields the first counts.
 *
 * A `grpc-status` that is not a decimal code in the list (0 to 16) is read as UNKNOWN (2), as grpc-js does. The
 * `grpc-message` is percent-decoded as UTF-8; as the gRPC spec asks, malformed input never fails: a `%` not followed
 * by two hex digits stays as it is, an octet sent unencoded is kept (a value's characters up to U+00FF are its octets,
 * as HPACK and `Headers` give them), and invalid UTF-8 becomes U+FFFD.
 *
 * @example
 * ```ts
 * import { parseGrpcStatus } from "watchwire/wire";
 *
 * const trailers = new Headers({ "grpc-status": "5", "grpc-message": "key %22a%22 not found %E2%9C%97" });
 * console.log(parseGrpcStatus(trailers)); // { code: 5, name: "NOT_FOUND", message: 'key "a" not found ✗' }
 * ```
 */
export function parseGrpcStatus(trailers: Headers | Iterable<[string, string]>): GrpcStatus | undefined {
  let status: string | undefined;
  let message: string | undefined;
  for (const [name, value] of trailers) {
    const lower = name.toLowerCase();
    if (lower === "grpc-status") status ??= value;
    else if (lower === "grpc-message") message ??= value;
  }
  if (status === undefined) return undefined;
  const trimmed = status.trim();
  let code = /^[0-9]{1,9}$/.test(trimmed) ? Number(trimmed) : UNKNOWN;
  if (code >= GRPC_STATUS_NAMES.length) code = UNKNOWN;
  return { code, name: GRPC_STATUS_NAMES[code], message: message === undefined ? "" : percentDecode(message) };
}

/** Decodes `%XX` escapes to bytes and the bytes as UTF-8, leniently. */
function percentDecode(text: string): string {
  if (!/[%\x80-\xff]/.test(text)) return text;
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x25 && i + 2 < text.length && isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c < 0x100) {
      // Header values are byte strings (HPACK and `Headers` give each octet as one character): an octet sent
      // unencoded, which the spec does not allow, is kept as that octet, as grpc-go keeps it.
      bytes.push(c);
    } else {
      // Only in values built by hand: one code point (a surrogate pair counts as one) as UTF-8.
      const cp = text.codePointAt(i)!;
      for (const b of encoder.encode(String.fromCodePoint(cp))) bytes.push(b);
      if (cp > 0xffff) i++;
    }
  }
  return new TextDecoder().decode(Uint8Array.from(bytes));
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}
