/**
 * {@linkcode Http1RequestDecoderStream}: the client-to-server bytes of an HTTP/1.1 connection to its requests.
 *
 * @module
 */
import { DecoderStream } from "../streams/decoder_stream.ts";
import {
  Http1Connection,
  type Http1DecoderOptions,
  type Http1Message,
  type Http1MessageParts,
  type Http1Role,
} from "./http1_connection.ts";
import { type Http1RequestHead, mayUpgrade, parseRequestHead } from "./http1_head.ts";

/**
 * Options of {@linkcode Http1RequestDecoderStream}.
 *
 * @example
 * ```ts
 * import { type Http1RequestDecoderOptions, Http1RequestDecoderStream } from "watchwire/capture";
 *
 * // The server refused the upgrade (say its response was a 200): the client's next bytes are HTTP/1.1 again.
 * const options: Http1RequestDecoderOptions = { switchedProtocols: () => false };
 * const wire = new Blob([
 *   "GET / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
 *   "GET /healthz HTTP/1.1\r\n\r\n",
 * ]).stream();
 * for await (const request of wire.pipeThrough(new Http1RequestDecoderStream(options))) {
 *   console.log(request.index, request.target, await request.tunnel); // 0 / undefined, then 1 /healthz undefined
 * }
 * ```
 */
export interface Http1RequestDecoderOptions extends Http1DecoderOptions {
  /**
   * Whether the server switched the connection to another protocol after `request`, a CONNECT request or one with
   * an `Upgrade` field: it did if it answered `101 Switching Protocols`, or a 2xx to CONNECT. The client's bytes after
   * such a request are then the other protocol's (handed on through `tunnel`), otherwise more requests. Asked once
   * the request's body has ended; it may wait (for the response to be read). Without it, a CONNECT is taken as
   * accepted and an `Upgrade` as refused. {@linkcode decodeHttp1Exchanges} answers it from the server-to-client bytes.
   */
  switchedProtocols?: (request: Http1Request) => boolean | Promise<boolean>;
}

/**
 * One request read from a connection.
 *
 * @example
 * ```ts
 * import { type Http1Request, Http1RequestDecoderStream } from "watchwire/capture";
 *
 * const wire = new Blob([
 *   "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n",
 *   "2\r\n{}\r\n0\r\n\r\n",
 * ]).stream();
 * const requests: ReadableStream<Http1Request> = wire.pipeThrough(new Http1RequestDecoderStream());
 * for await (const request of requests) {
 *   console.log(request.method, request.framing, request.bodyOffset); // POST chunked 92
 *   console.log(await new Response(request.body).text()); // {}
 * }
 * ```
 */
export interface Http1Request extends Omit<Http1RequestHead, "contentLength">, Http1Message {
  /**
   * Settled once the body has ended: the client's bytes that follow, raw, if the connection then switched protocols
   * (see `switchedProtocols`), else `undefined`. Read or cancel it as a body.
   */
  tunnel: Promise<ReadableStream<Uint8Array> | undefined>;
}

/**
 * Reads the client-to-server bytes of an HTTP/1.1 connection, e.g. a capture: request line, headers, then a body
 * framed by chunked coding or Content-Length (RFC 9112 §6.3: a request without either has none); several requests in
 * sequence, pipelined or not. Each request is handed on as soon as its head is read, with its body as a stream.
 * Transfer codings `gzip` and `deflate` before `chunked`, and `Content-Encoding: gzip` and `deflate`, are removed.
 * After a CONNECT or an `Upgrade` the server accepted, the rest of the bytes go to the request's `tunnel`. Errors are
 * {@linkcode DecodeError}s with the byte offset in the connection.
 *
 * Where RFC 9112 lets a server choose, this decoder takes the reading that keeps a capture decodable: a method is any
 * token (not only the methods a server knows), a higher minor version (`HTTP/1.2`) reads as HTTP/1.1, and a request
 * with both Transfer-Encoding and Content-Length is framed by Transfer-Encoding (§6.3; a server may refuse such a
 * request instead, and must close the connection after it either way). Node's llhttp, for one, refuses all three.
 * `Host` is not checked (a server must refuse an HTTP/1.1 request without exactly one): it does not change the framing.
 *
 * @example
 * ```ts
 * import { Http1RequestDecoderStream } from "watchwire/capture";
 *
 * const capture = new Blob([
 *   "HEAD /api/v1/pods HTTP/1.1\r\nHost: k\r\n\r\n",
 *   "GET /api/v1/pods?watch=1&resourceVersion=10 HTTP/1.1\r\nHost: k\r\n\r\n",
 * ]).stream();
 * for await (const request of capture.pipeThrough(new Http1RequestDecoderStream())) {
 *   console.log(request.index, request.method, request.target); // 0 HEAD /api/v1/pods, then 1 GET /api/v1/pods?watch=1&resourceVersion=10
 * }
 * ```
 */
export class Http1RequestDecoderStream extends DecoderStream<Uint8Array, Http1Request> {
  constructor(options: Http1RequestDecoderOptions = {}) {
    // As the response decoder: requests may queue unread while their bodies are read.
    super(new Http1Connection(new RequestRole(options.switchedProtocols), options), { readableHighWaterMark: 16 });
  }
}

/** What makes the connection state machine read requests. */
class RequestRole implements Http1Role<Http1RequestHead, Http1Request> {
  readonly noun = "request";
  readonly #switchedProtocols: Http1RequestDecoderOptions["switchedProtocols"];
  readonly #requests: Http1Request[] = [];

  constructor(switchedProtocols: Http1RequestDecoderOptions["switchedProtocols"]) {
    this.#switchedProtocols = switchedProtocols;
  }

  parse(lines: Uint8Array[], offsets: number[]): Http1RequestHead {
    return parseRequestHead(lines, offsets);
  }

  message(parts: Http1MessageParts<Http1RequestHead>): Http1Request {
    const { head, ...message } = parts;
    const { contentLength: _, ...fields } = head;
    const request: Http1Request = { ...message, ...fields };
    // Kept only until `switches` is asked about it: the request object is what `switchedProtocols` is given.
    if (mayUpgrade(request)) this.#requests.push(request);
    return request;
  }

  async switches(head: Http1RequestHead, index: number): Promise<boolean> {
    if (!mayUpgrade(head)) return false;
    const at = this.#requests.findIndex((r) => r.index === index);
    const [request] = this.#requests.splice(at, 1);
    if (this.#switchedProtocols !== undefined) return await this.#switchedProtocols(request);
    return head.method === "CONNECT";
  }
}
