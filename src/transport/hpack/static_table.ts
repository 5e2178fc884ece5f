/**
 * The HPACK static table (RFC 7541 Appendix A): 61 fixed entries, index 1 to 61.
 *
 * @module
 */

/** Number of entries of the static table; dynamic table indices start at `STATIC_TABLE_LENGTH + 1` (62). */
export const STATIC_TABLE_LENGTH = 61;

/** The static table's entries as `[name, value]`, entry `i` (1-based, as on the wire) at position `i - 1`. */
export const STATIC_TABLE: ReadonlyArray<readonly [name: string, value: string]> = [
  [":authority", ""],
  [":method", "GET"],
  [":method", "POST"],
  [":path", "/"],
  [":path", "/index.html"],
  [":scheme", "http"],
  [":scheme", "https"],
  [":status", "200"],
  [":status", "204"],
  [":status", "206"],
  [":status", "304"],
  [":status", "400"],
  [":status", "404"],
  [":status", "500"],
  ["accept-charset", ""],
  ["accept-encoding", "gzip, deflate"],
  ["accept-language", ""],
  ["accept-ranges", ""],
  ["accept", ""],
  ["access-control-allow-origin", ""],
  ["age", ""],
  ["allow", ""],
  ["authorization", ""],
  ["cache-control", ""],
  ["content-disposition", ""],
  ["content-encoding", ""],
  ["content-language", ""],
  ["content-length", ""],
  ["content-location", ""],
  ["content-range", ""],
  ["content-type", ""],
  ["cookie", ""],
  ["date", ""],
  ["etag", ""],
  ["expect", ""],
  ["expires", ""],
  ["from", ""],
  ["host", ""],
  ["if-match", ""],
  ["if-modified-since", ""],
  ["if-none-match", ""],
  ["if-range", ""],
  ["if-unmodified-since", ""],
  ["last-modified", ""],
  ["link", ""],
  ["location", ""],
  ["max-forwards", ""],
  ["proxy-authenticate", ""],
  ["proxy-authorization", ""],
  ["range", ""],
  ["referer", ""],
  ["refresh", ""],
  ["retry-after", ""],
  ["server", ""],
  ["set-cookie", ""],
  ["strict-transport-security", ""],
  ["transfer-encoding", ""],
  ["user-agent", ""],
  ["vary", ""],
  ["via", ""],
  ["www-authenticate", ""],
];

/** Names by wire index (position 0 unused), for lookups without a tuple access. */
export const STATIC_NAMES: readonly string[] = ["", ...STATIC_TABLE.map((e) => e[0])];
/** Values by wire index (position 0 unused). */
export const STATIC_VALUES: readonly string[] = ["", ...STATIC_TABLE.map((e) => e[1])];
