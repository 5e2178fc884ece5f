/**
 * {@linkcode sideOfFirstBytes}: which peer a connection direction's first bytes come from, and whether they are TLS,
 * told by the bytes rather than by port numbers. Internal.
 *
 * @module
 */

/** What a direction's first bytes say: who sent them (`undefined`: they do not say), and whether they are TLS. */
export interface FirstBytes {
  readonly side: "client" | "server" | undefined;
  readonly tls: boolean;
}

/** The fewest bytes {@linkcode sideOfFirstBytes} needs to tell what it can tell. */
export const FIRST_BYTES_NEEDED = 16;

const HTTP2_PREFACE = "PRI * HTTP/2.0\r\n";
const METHODS = /^(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|CONNECT|TRACE) \S/;

/**
 * Who sent `head` (a direction's first bytes, at least {@linkcode FIRST_BYTES_NEEDED} of them unless the direction
 * ended sooner): a TLS ClientHello or ServerHello record; the HTTP/2 client preface; an HTTP/1.1 request line or
 * status line; a server's first HTTP/2 frame (SETTINGS on stream 0).
 */
export function sideOfFirstBytes(head: Uint8Array): FirstBytes {
  // TLS: a handshake record (22) of version 3.x whose first message is a ClientHello (1) or ServerHello (2).
  if (head.length >= 6 && head[0] === 22 && head[1] === 3 && head[2] <= 4) {
    if (head[5] === 1) return { side: "client", tls: true };
    if (head[5] === 2) return { side: "server", tls: true };
    return { side: undefined, tls: true };
  }
  const text = String.fromCharCode(...head.subarray(0, FIRST_BYTES_NEEDED));
  if (text.startsWith(HTTP2_PREFACE) || METHODS.test(text)) return { side: "client", tls: false };
  if (text.startsWith("HTTP/1.")) return { side: "server", tls: false };
  // An HTTP/2 server starts with SETTINGS (type 4) on stream 0, its length a multiple of 6.
  if (head.length >= 9 && head[3] === 4 && (head[4] & 0xfe) === 0 && (head[5] | head[6] | head[7] | head[8]) === 0) {
    const length = (head[0] << 16) | (head[1] << 8) | head[2];
    if (length % 6 === 0) return { side: "server", tls: false };
  }
  return { side: undefined, tls: false };
}
