/**
 * {@linkcode decodeHttp1Exchanges}: both directions of an HTTP/1.1 connection to request/response pairs.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import type { Http1DecoderOptions } from "./http1_connection.ts";
import { isInterim, mayUpgrade } from "./http1_head.ts";
import { type Http1Request, Http1RequestDecoderStream } from "./http1_request_decoder_stream.ts";
import { type Http1Response, Http1ResponseDecoderStream } from "./http1_response_decoder_stream.ts";

/**
 * A request as an exchange carries it: its head and where it was (its body is not kept).
 *
 * @example
 * ```ts
 * import { decodeHttp1Exchanges, type Http1ExchangeRequest } from "watchwire/capture";
 *
 * const c2s = new Blob(["GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: k\r\n\r\n"]).stream();
 * const s2c = new Blob(["HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"]).stream();
 * for await (const exchange of decodeHttp1Exchanges(s2c, c2s)) {
 *   const request: Http1ExchangeRequest | undefined = exchange.request;
 *   console.log(request?.method, request?.target, request?.offset, exchange.response.status); // GET /api/v1/pods?watch=1 0 200
 * }
 * ```
 */
export type Http1ExchangeRequest = Omit<Http1Request, "body" | "trailers" | "tunnel" | "inputOffsetOf">;

/**
 * One response of a connection and, when the client's bytes were given and held it, the request it answers.
 *
 * @example
 * ```ts
 * import { decodeHttp1Exchanges, type Http1Exchange } from "watchwire/capture";
 *
 * // Only the server-to-client bytes: the exchanges have no request.
 * const s2c = new Blob(["HTTP/1.1 204 No Content\r\n\r\n"]).stream();
 * const exchanges: ReadableStream<Http1Exchange> = decodeHttp1Exchanges(s2c);
 * for await (const { request, response } of exchanges) console.log(request === undefined, response.status); // true 204
 * ```
 */
export interface Http1Exchange {
  /** The request, if the client-to-server bytes were given and held it. */
  request?: Http1ExchangeRequest;
  /** The response. Interim (1xx) responses come as exchanges of their own, with the request they precede. */
  response: Http1Response;
}

/**
 * Options of {@linkcode decodeHttp1Exchanges}: the decoders' limits, and what to do with the client's bytes after a
 * protocol switch.
 *
 * @example
 * ```ts
 * import type { Http1ExchangeOptions } from "watchwire/capture";
 *
 * // The client's WebSocket frames after a 101, taken for reading (here only cancelled).
 * const options: Http1ExchangeOptions = {
 *   takeRequestTunnel: (request, tunnel) => {
 *     void tunnel.cancel();
 *     return request.headers.some(([name, value]) => name === "upgrade" && value === "websocket");
 *   },
 * };
 * console.log(typeof options.takeRequestTunnel); // function
 * ```
 */
export interface Http1ExchangeOptions extends Http1DecoderOptions {
  /**
   * Offered the client's bytes after a request whose protocol switch the server accepted (a `101` to an `Upgrade`, a
   * 2xx to CONNECT), when they start: return `true` to take them, and then read them as they come (or cancel them).
   * Bytes not taken are discarded.
   */
  takeRequestTunnel?: (request: Http1ExchangeRequest, tunnel: ReadableStream<Uint8Array>) => boolean;
}

/**
 * Decodes both directions of an HTTP/1.1 connection: the server-to-client bytes to responses and, if given, the
 * client-to-server bytes to requests, paired in order (RFC 9112 §9.3: responses come in the order of the requests).
 * The requests decide how some responses are framed: a response to HEAD has no body whatever its Content-Length says,
 * and a 2xx response to CONNECT starts a tunnel; without the client's bytes every response is framed as one to GET.
 * The responses decide in turn whether the client's bytes after a CONNECT or an `Upgrade` are more requests. Each
 * response is handed on once its request is known (or the client bytes have ended without it). Request bodies are not
 * kept. A fault in either direction fails the result (after the exchanges before it); one in the client's bytes says
 * so in its `context` (`"client-to-server bytes: head of request 2"`).
 *
 * @example
 * ```ts
 * import { decodeHttp1Exchanges } from "watchwire/capture";
 *
 * // A HEAD and a GET on one keep-alive connection: the HEAD response has no body despite its Content-Length.
 * const c2s = new Blob(["HEAD /api HTTP/1.1\r\nHost: k\r\n\r\nGET /api HTTP/1.1\r\nHost: k\r\n\r\n"]).stream();
 * const s2c = new Blob([
 *   "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n",
 *   "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
 * ]).stream();
 * for await (const { request, response } of decodeHttp1Exchanges(s2c, c2s)) {
 *   console.log(request?.method, response.framing, await new Response(response.body).text()); // HEAD none, then GET content-length {}
 * }
 * ```
 */
export function decodeHttp1Exchanges(
  serverToClient: ReadableStream<Uint8Array>,
  clientToServer?: ReadableStream<Uint8Array>,
  options: Http1ExchangeOptions = {},
): ReadableStream<Http1Exchange> {
  const { takeRequestTunnel, ...decoderOptions } = options;
  const requests = new Map<number, Http1ExchangeRequest>();
  let received = 0; // requests read so far
  /** Status of the final (or 101) response to each request, once read, until the client side asks for it. */
  const answers = new Map<number, number>();
  let clientDone = clientToServer === undefined;
  let clientFailure: { reason: unknown } | undefined;
  let serverDone = false;
  const wakers = new Set<() => void>();
  const wakeAll = () => {
    for (const wake of wakers) wake();
    wakers.clear();
  };
  const changed = () => new Promise<void>((resolve) => wakers.add(resolve));

  const requestAt = async (index: number): Promise<Http1ExchangeRequest | undefined> => {
    while (index >= received && !clientDone) await changed();
    if (clientFailure !== undefined && index >= received) throw clientFailure.reason;
    return requests.get(index);
  };
  const answerTo = async (index: number): Promise<number | undefined> => {
    while (!answers.has(index) && !serverDone) await changed();
    const status = answers.get(index);
    answers.delete(index);
    return status;
  };

  const responses = serverToClient.pipeThrough(
    new Http1ResponseDecoderStream({
      ...decoderOptions,
      requestMethod: clientToServer === undefined ? undefined : async (index) => (await requestAt(index))?.method,
    }),
  ).getReader();

  let requestReader: ReadableStreamDefaultReader<Http1Request> | undefined;
  if (clientToServer !== undefined) {
    requestReader = clientToServer.pipeThrough(
      new Http1RequestDecoderStream({
        ...decoderOptions,
        switchedProtocols: async (request) => {
          const status = await answerTo(request.index);
          // No response was captured: as the decoder's own default.
          if (status === undefined) return request.method === "CONNECT";
          return status === 101 || (request.method === "CONNECT" && status >= 200 && status < 300);
        },
      }),
    ).getReader();
    const reader = requestReader;
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const { body, trailers: _t, tunnel, inputOffsetOf: _i, ...head } = value;
          body.cancel().catch(() => {});
          tunnel.then((bytes) => {
            if (bytes !== undefined && !(takeRequestTunnel?.(head, bytes) ?? false)) return bytes.cancel();
          }).catch(() => {});
          requests.set(value.index, head);
          received = value.index + 1;
          wakeAll();
        }
      } catch (error) {
        clientFailure = { reason: inClientBytes(error) };
      }
      clientDone = true;
      wakeAll();
    })();
  }

  return new ReadableStream<Http1Exchange>({
    async pull(controller) {
      let next: ReadableStreamReadResult<Http1Response>;
      try {
        next = await responses.read();
      } catch (error) {
        serverDone = true;
        wakeAll();
        throw error;
      }
      if (next.done) {
        serverDone = true;
        wakeAll();
        // A client fault still counts once every response has been handed on.
        if (clientToServer !== undefined) await requestAt(Infinity);
        controller.close();
        return;
      }
      const response = next.value;
      const request = clientToServer === undefined ? undefined : await requestAt(response.requestIndex);
      if (!isInterim(response.status)) {
        requests.delete(response.requestIndex);
        // The client side waits for this answer only after a request that may switch protocols.
        if (request !== undefined && mayUpgrade(request)) {
          answers.set(response.requestIndex, response.status);
          wakeAll();
        }
      }
      controller.enqueue(request === undefined ? { response } : { request, response });
    },
    async cancel(reason) {
      serverDone = true;
      wakeAll();
      await Promise.all([responses.cancel(reason), requestReader?.cancel(reason)]);
    },
  }, { highWaterMark: 0 });
}

/** A fault in the client's bytes, marked as such (its offset counts those bytes). */
function inClientBytes(error: unknown): unknown {
  if (!(error instanceof DecodeError)) return error;
  return new DecodeError(error.code, error.offset, error.detail, {
    cause: error.cause,
    context: error.context === undefined ? "client-to-server bytes" : `client-to-server bytes: ${error.context}`,
  });
}
