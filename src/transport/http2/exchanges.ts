/**
 * {@linkcode decodeHttp2Exchanges}: both directions of an HTTP/2 connection to request/response pairs.
 *
 * @module
 */
import type { FieldList } from "../field_line.ts";
import {
  type Http2ConnectionDecoderOptions,
  Http2ConnectionDecoderStream,
  type Http2Message,
} from "./connection_decoder_stream.ts";
import { SettingsQueue } from "./settings_queue.ts";

/**
 * A request as its header block tells it.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames } from "watchwire/wire";
 * import { decodeHttp2Exchanges } from "watchwire/capture";
 * import type { Http2Request } from "watchwire/capture";
 *
 * // GET / over http (HPACK static entries 2, 6, 4), then ":authority: example.com" (a literal, indexed name 1).
 * const block = Uint8Array.of(0x82, 0x86, 0x84, 0x01, 11, ...new TextEncoder().encode("example.com"));
 * const c2s = encodeHttp2Frames([
 *   { type: "HEADERS", streamId: 1, endHeaders: true, endStream: true, fragment: block },
 * ]);
 * const s2c = encodeHttp2Frames([
 *   { type: "HEADERS", streamId: 1, endHeaders: true, endStream: true, fragment: Uint8Array.of(0x88) }, // :status 200
 * ]);
 * for await (const exchange of decodeHttp2Exchanges(ReadableStream.from([s2c]), ReadableStream.from([c2s]))) {
 *   const request: Http2Request | undefined = exchange.request;
 *   console.log(request?.method, request?.authority, request?.path, request?.headers.length); // GET example.com / 4
 * }
 * ```
 */
export interface Http2Request {
  /** `:method`. */
  method: string | undefined;
  /** `:path`. */
  path: string | undefined;
  /** `:authority`. */
  authority: string | undefined;
  /** Every field of the request's header block, pseudo-header fields included. */
  headers: FieldList;
}

/**
 * One stream of a connection: the response and, when the client's bytes were given and held it, the request.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames } from "watchwire/wire";
 * import { decodeHttp2Exchanges } from "watchwire/capture";
 * import type { Http2Exchange } from "watchwire/capture";
 *
 * // Only the server-to-client bytes: the exchanges have no request.
 * const s2c = encodeHttp2Frames([
 *   { type: "SETTINGS", streamId: 0, parameters: [] },
 *   { type: "HEADERS", streamId: 1, endHeaders: true, endStream: true, fragment: Uint8Array.of(0x88) }, // :status 200
 * ]);
 * const exchanges: ReadableStream<Http2Exchange> = decodeHttp2Exchanges(ReadableStream.from([s2c]));
 * for await (const { streamId, request, response } of exchanges) {
 *   console.log(streamId, request === undefined, response.toResponse().status); // 1 true 200
 * }
 * ```
 */
export interface Http2Exchange {
  /** The stream id. */
  streamId: number;
  /** The request, if the client-to-server bytes were given and its header block was decoded. */
  request?: Http2Request;
  /** The response (server-to-client message). */
  response: Http2Message;
}

/**
 * Options of {@linkcode decodeHttp2Exchanges}.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames } from "watchwire/wire";
 * import { decodeHttp2Exchanges } from "watchwire/capture";
 * import type { Http2ExchangeOptions } from "watchwire/capture";
 *
 * // A server-to-client capture saved with a client preface in front (say, a file whose direction was not recorded).
 * const options: Http2ExchangeOptions = { serverPreface: "detect", maxHeaderListSize: 16384 };
 * const s2c = encodeHttp2Frames([
 *   { type: "SETTINGS", streamId: 0, parameters: [] },
 *   { type: "HEADERS", streamId: 1, endHeaders: true, endStream: true, fragment: Uint8Array.of(0x88) }, // :status 200
 * ], { preface: true });
 * for await (const exchange of decodeHttp2Exchanges(ReadableStream.from([s2c]), undefined, options)) {
 *   console.log(exchange.streamId, exchange.response.toResponse().status); // 1 200
 * }
 * ```
 */
export interface Http2ExchangeOptions
  extends Omit<Http2ConnectionDecoderOptions, "preface" | "peerSettings" | "settingsSink"> {
  /** The client preface in the client-to-server bytes: `"expect"` it, or `"detect"` it (the default). */
  clientPreface?: "expect" | "detect";
  /**
   * The client preface in the server-to-client bytes: `"none"` (the default: a server sends none) or `"detect"`
   * (accept one, e.g. for a file whose direction is not known).
   */
  serverPreface?: "none" | "detect";
  /**
   * Offered each request's body as soon as its header block is decoded (before its response): return `true` to take
   * it, and then read it as it comes (or cancel it), beside the exchanges: an unread body holds up the client's
   * direction. Bodies not taken are discarded.
   */
  takeRequestBody?: (streamId: number, request: Http2Request, body: ReadableStream<Uint8Array>) => boolean;
}

/**
 * Decodes both directions of an HTTP/2 connection: the server-to-client bytes to responses and, if given, the
 * client-to-server bytes to requests, paired by stream id. Each response is handed on once its request is known (or
 * the client bytes have ended without it). Request bodies are discarded unless `takeRequestBody` takes them. A fault
 * in either direction fails the result (after the exchanges before it).
 *
 * With both directions, each peer's SETTINGS apply to what the other sends from the SETTINGS ACK on (RFC 9113 §6.5.3):
 * SETTINGS_MAX_FRAME_SIZE, SETTINGS_HEADER_TABLE_SIZE and SETTINGS_MAX_HEADER_LIST_SIZE, within the configurable
 * ceilings (which alone apply with one direction, or when a direction starts mid-connection). Until the first ACK,
 * the larger of the RFC initial value and the first announced one is accepted (lenient with captures).
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames } from "watchwire/wire";
 * import { decodeHttp2Exchanges } from "watchwire/capture";
 *
 * // Client: GET / over http (static entries 2, 4, 6); server: 200 (entry 8), an empty body.
 * const c2s = encodeHttp2Frames([
 *   { type: "SETTINGS", streamId: 0, parameters: [] },
 *   { type: "HEADERS", streamId: 1, endHeaders: true, endStream: true, fragment: Uint8Array.of(0x82, 0x84, 0x86) },
 * ], { preface: true });
 * const s2c = encodeHttp2Frames([
 *   { type: "SETTINGS", streamId: 0, parameters: [] },
 *   { type: "HEADERS", streamId: 1, endHeaders: true, endStream: true, fragment: Uint8Array.of(0x88) },
 * ]);
 * for await (const { streamId, request, response } of decodeHttp2Exchanges(ReadableStream.from([s2c]), ReadableStream.from([c2s]))) {
 *   console.log(streamId, request?.method, request?.path, response.toResponse().status); // 1 GET / 200
 * }
 * ```
 */
export function decodeHttp2Exchanges(
  serverToClient: ReadableStream<Uint8Array>,
  clientToServer?: ReadableStream<Uint8Array>,
  options: Http2ExchangeOptions = {},
): ReadableStream<Http2Exchange> {
  // peerSettings and settingsSink (set below, even to undefined) are wired here.
  const { clientPreface, serverPreface, takeRequestBody, ...limits } = options;
  // Each direction's SETTINGS, for the other direction's decoder (which applies them at its SETTINGS ACKs).
  const clientSettings = clientToServer === undefined ? undefined : new SettingsQueue();
  const serverSettings = clientToServer === undefined ? undefined : new SettingsQueue();
  const responses = serverToClient.pipeThrough(
    new Http2ConnectionDecoderStream({
      ...limits,
      preface: serverPreface ?? "none",
      peerSettings: clientSettings,
      settingsSink: serverSettings,
    }),
  )
    .getReader();
  const requests = new Map<number, Http2Request>();
  const waiting = new Map<number, () => void>();
  let clientDone = clientToServer === undefined;
  let clientFailure: { reason: unknown } | undefined;

  if (clientToServer !== undefined) {
    const messages = clientToServer.pipeThrough(
      new Http2ConnectionDecoderStream({
        ...limits,
        preface: clientPreface ?? "detect",
        peerSettings: serverSettings,
        settingsSink: clientSettings,
      }),
    );
    void (async () => {
      try {
        for await (const message of messages) {
          const headers = message.headers ?? [];
          const field = (name: string) => headers.find(([n]) => n === name)?.[1];
          let taken = false;
          if (message.headers !== undefined) {
            const request: Http2Request = {
              method: field(":method"),
              path: field(":path"),
              authority: field(":authority"),
              headers,
            };
            requests.set(message.streamId, request);
            taken = takeRequestBody?.(message.streamId, request, message.body) ?? false;
          }
          if (!taken) message.body.cancel().catch(() => {});
          waiting.get(message.streamId)?.();
        }
      } catch (error) {
        clientFailure = { reason: error };
      }
      clientDone = true;
      for (const wake of waiting.values()) wake();
      waiting.clear();
    })();
  }

  const requestFor = async (id: number): Promise<Http2Request | undefined> => {
    while (!requests.has(id) && !clientDone) {
      await new Promise<void>((resolve) => waiting.set(id, resolve));
      waiting.delete(id);
    }
    if (clientFailure !== undefined) throw clientFailure.reason;
    const request = requests.get(id);
    requests.delete(id);
    return request;
  };

  return new ReadableStream<Http2Exchange>({
    async pull(controller) {
      const { done, value } = await responses.read();
      if (done) {
        // A client fault still counts once every response has been handed on.
        if (clientToServer !== undefined) await requestFor(-1);
        controller.close();
        return;
      }
      const request = await requestFor(value.streamId);
      controller.enqueue(
        request === undefined
          ? { streamId: value.streamId, response: value }
          : { streamId: value.streamId, request, response: value },
      );
    },
    cancel(reason) {
      return responses.cancel(reason);
    },
  }, { highWaterMark: 0 });
}
