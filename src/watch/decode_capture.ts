/**
 * {@linkcode decodeCapture}: a capture file (pcap, pcapng; TLS decrypted with a key log) to every watch in it, as
 * events with the connection and the time of the packet that completed them.
 *
 * @module
 */
import {
  CaptureAbandoned,
  type CaptureConnectionEvent,
  captureConnections,
  type CaptureConnectionsOptions,
  type CapturedConnection,
} from "../capture/capture_connections.ts";
import type { CaptureTime } from "../capture/records.ts";
import type { TlsHandshakeEvent } from "../capture/tls/tls_events.ts";
import type { EtcdEvent } from "../codec/etcd/watch_response.ts";
import { EtcdWatchDecoderStream } from "../codec/etcd/etcd_watch_decoder_stream.ts";
import { GrpcMessageDecoderStream } from "../framing/grpc_message_stream.ts";
import { DecodeError } from "../errors.ts";
import type { WatchEvent } from "../events.ts";
import { fieldValues } from "../transport/field_line.ts";
import { decodeHttp1Exchanges } from "../transport/http1_exchanges.ts";
import { isInterim } from "../transport/http1_head.ts";
import { decodeHttp2Exchanges, type Http2Exchange, type Http2Request } from "../transport/http2/exchanges.ts";
import { type DecodeWatchOptions, decodeWatchResponse } from "./decode_watch_response.ts";
import { DecoderStream, type StreamDecoder } from "../streams/decoder_stream.ts";

/**
 * Options of {@linkcode decodeCapture}: the capture's (key log, limits) and the watch decoding's.
 *
 * @example
 * ```ts
 * import { builtinDecoders } from "watchwire/kubernetes";
 * import type { DecodeCaptureOptions } from "watchwire/capture";
 *
 * // A key log (SSLKEYLOGFILE's lines) for TLS, every built-in kind for protobuf watches, 1 MiB events at most.
 * const options: DecodeCaptureOptions = {
 *   keyLog: "CLIENT_RANDOM 00 00\n",
 *   protobuf: { decoders: builtinDecoders },
 *   maxEventBytes: 1 << 20,
 * };
 * console.log(Object.keys(options).length); // 3
 * ```
 */
export interface DecodeCaptureOptions extends CaptureConnectionsOptions, DecodeWatchOptions {
  /**
   * The decoders of a gRPC method's messages by its path (`/pkg.Service/Method`): its requests' and responses' messages
   * come as `grpc` items (etcd's Watch responses are decoded whatever this says, as `etcd` items).
   * `watchwire decode --proto FILE` makes it from the user's `.proto` files.
   */
  grpc?: (path: string) => GrpcMethodDecoders | undefined;
}

/**
 * The decoders of one gRPC method's messages (see {@linkcode DecodeCaptureOptions}`.grpc`): each takes a message's bytes
 * and the offset of its first byte in the body, and returns its value (e.g. its JSON mapping).
 *
 * @example
 * ```ts
 * import type { GrpcMethodDecoders } from "watchwire/capture";
 *
 * // Messages shown by size only.
 * const sizes: GrpcMethodDecoders = { request: (m) => m.length, response: (m) => m.length };
 * console.log(sizes.request?.(new Uint8Array(3), 5)); // 3
 * ```
 */
export interface GrpcMethodDecoders {
  readonly request?: (message: Uint8Array, offset: number) => unknown;
  readonly response?: (message: Uint8Array, offset: number) => unknown;
}

/**
 * Where an item of a capture comes from: a connection, and (for HTTP) its request.
 *
 * @example
 * ```ts
 * import type { CaptureOrigin } from "watchwire/capture";
 *
 * const origin: CaptureOrigin = { connection: 1, stream: 3, method: "GET", path: "/api/v1/pods?watch=1" };
 * console.log(`connection ${origin.connection}, stream ${origin.stream}: ${origin.method} ${origin.path}`); // connection 1, stream 3: GET /api/v1/pods?watch=1
 * ```
 */
export interface CaptureOrigin {
  /** The connection's number (from 1, in order of first sight). */
  readonly connection: number;
  /** HTTP/2: the stream id; HTTP/1.1: the response's index on its connection (from 0). */
  readonly stream: number;
  /** The request's method and path (target), when the capture holds them. */
  readonly method: string | undefined;
  readonly path: string | undefined;
}

/**
 * What {@linkcode decodeCapture} yields: for each connection, `connection` first, then (TLS) `tls`, its `response`s
 * each followed by its `event`s (or `etcd` events), then any `gap`, `problem` and its `close`; connections interleave
 * as the capture does. `summary` comes last.
 *
 * @example
 * ```ts
 * import type { CaptureItem } from "watchwire/capture";
 *
 * function describe(item: CaptureItem): string {
 *   switch (item.kind) {
 *     case "event":
 *       return `${item.time.seconds}: connection ${item.connection} ${item.event.type}`;
 *     case "problem":
 *       return `problem: ${item.message}`;
 *     default:
 *       return item.kind;
 *   }
 * }
 * console.log(describe({ kind: "problem", connection: 2, message: "connection 2: TLS: no key" })); // problem: connection 2: TLS: no key
 * ```
 */
export type CaptureItem =
  /** A connection whose first bytes have been seen. */
  | {
    readonly kind: "connection";
    readonly connection: number;
    readonly client: string;
    readonly clientPort: number;
    readonly server: string;
    readonly serverPort: number;
    readonly transport: "tls" | "plain";
    readonly time: CaptureTime;
  }
  /** A TLS connection's handshake. */
  | {
    readonly kind: "tls";
    readonly connection: number;
    readonly version: string;
    readonly cipherSuite: string;
    readonly alpn: string | undefined;
    readonly serverName: string | undefined;
    readonly time: CaptureTime;
  }
  /** A response (and its request): HTTP/1.1 or HTTP/2. `watch`: whether its body is read as a watch. */
  | (CaptureOrigin & {
    readonly kind: "response";
    readonly http: "1.1" | "2";
    readonly status: number | undefined;
    readonly contentType: string | undefined;
    readonly watch: boolean;
    readonly time: CaptureTime;
  })
  /** A Kubernetes watch event (JSON or protobuf). */
  | (CaptureOrigin & { readonly kind: "event"; readonly event: WatchEvent<unknown>; readonly time: CaptureTime })
  /** A message of a gRPC call (its request's or its response's), decoded by `options.grpc`. */
  | (CaptureOrigin & {
    readonly kind: "grpc";
    readonly direction: "request" | "response";
    readonly message: unknown;
    readonly time: CaptureTime;
  })
  /** An etcd watch event (gRPC `etcdserverpb.Watch/Watch`). */
  | (CaptureOrigin & { readonly kind: "etcd"; readonly event: EtcdEvent; readonly time: CaptureTime })
  /** Bytes lost from the capture. */
  | {
    readonly kind: "gap";
    readonly connection: number;
    readonly direction: "client" | "server";
    readonly streamOffset: number;
    readonly length: number;
    readonly time: CaptureTime;
  }
  /** A connection that is neither HTTP/1.1 nor HTTP/2 (nor TLS carrying them): its bytes are skipped. */
  | { readonly kind: "unknown-protocol"; readonly connection: number }
  /** Something that stopped the decoding of a connection (or of one of its streams), for a person. */
  | { readonly kind: "problem"; readonly connection: number | undefined; readonly message: string }
  /** A connection's end. */
  | { readonly kind: "close"; readonly connection: number; readonly reason: string; readonly time: CaptureTime }
  /** The end of the capture: what was in it. */
  | {
    readonly kind: "summary";
    readonly packets: number;
    readonly skipped: Readonly<Record<string, number>>;
    readonly connections: number;
    readonly gaps: number;
    readonly responses: number;
    readonly events: number;
  };

const HTTP2_PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const ETCD_WATCH_PATH = "/etcdserverpb.Watch/Watch";
const GRPC_CONTENT_TYPE = /^application\/grpc(?:[+;]|$)/i;
/** Items queued for the reader before the capture is read further. */
const QUEUED_ITEMS = 64;

/** The first value of header `name`, if any. */
const header = (fields: [string, string][] | undefined, name: string) =>
  fields === undefined ? undefined : fieldValues(fields, name)[0];

/** Whether a response is read as a watch: a request with `watch=1|true`, a `;stream=watch` type, or no request. */
function isWatch(path: string | undefined, contentType: string | undefined): boolean {
  if (contentType !== undefined && /;\s*stream=watch/i.test(contentType)) return true;
  if (path === undefined) return contentType !== undefined && /json|protobuf/i.test(contentType);
  const query = path.indexOf("?");
  if (query < 0) return false;
  const watch = new URLSearchParams(path.slice(query + 1)).get("watch");
  return watch === "1" || watch === "true";
}

/** A stream that yields what `first` (a read of `reader` already made) gave, then the rest of `reader`'s. */
function prepended(
  first: Promise<ReadableStreamReadResult<Uint8Array>>,
  reader: ReadableStreamDefaultReader<Uint8Array>,
) {
  let pending: typeof first | undefined = first;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const read = pending ?? reader.read();
      pending = undefined;
      const { done, value } = await read;
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}

/**
 * Decodes every watch in a capture file: Kubernetes watches (JSON and protobuf, over HTTP/1.1 or HTTP/2, in the clear
 * or TLS with `options.keyLog` or the file's own key logs) and etcd gRPC watches, with their connection's number, the
 * request, and the capture time of the packet that completed each (or of the next packet of that connection, when a
 * decoder had read on).
 *
 * - The capture is read as a stream (a file, stdin, a growing pipe: `tcpdump -w - | ...`), in bounded memory:
 *   events come as their packets are read.
 * - Each connection is decoded on its own: a fault in one (a TLS key missing, bytes lost, malformed HTTP) is a
 *   `problem` naming it, and the others go on. A malformed capture file fails the stream with a `DecodeError` at its
 *   file offset, after everything before it.
 * - Bodies that are not watches (a `GET` of a list, say) are skipped; each response is reported (`response`).
 *
 * @example
 * ```ts
 * import { decodeCapture } from "watchwire/capture";
 *
 * // A pcap file of one HTTP/1.1 watch on loopback would come from `tcpdump -i lo -w -`; here, an empty capture.
 * const pcap = Uint8Array.of(0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0);
 * for await (const item of decodeCapture(new Blob([pcap]).stream())) {
 *   if (item.kind === "summary") console.log(item.packets, item.connections, item.events); // 0 0 0
 * }
 * ```
 */
export function decodeCapture(
  capture: ReadableStream<Uint8Array>,
  options: DecodeCaptureOptions = {},
): ReadableStream<CaptureItem> {
  let responses = 0;
  let events = 0;
  const tasks = new Set<Promise<void>>();
  // The stage's emit (it drops items once the reader has cancelled: the connections' readers wind down on their own).
  let emit: (item: CaptureItem) => void = () => {};
  const problem = (connection: number | undefined, message: string) => emit({ kind: "problem", connection, message });
  const describe = (error: unknown) =>
    error instanceof DecodeError
      ? `${error.message} [${error.code}]`
      : error instanceof Error
      ? error.message
      : String(error);

  const spawn = (task: Promise<void>) => {
    tasks.add(task);
    void task.finally(() => tasks.delete(task));
  };

  /** A response body read as a Kubernetes watch: its events, then the body's end. */
  const readWatch = async (c: CapturedConnection, origin: CaptureOrigin, response: Response) => {
    try {
      for await (const event of decodeWatchResponse(response, options)) {
        events++;
        emit({ ...origin, kind: "event", event, time: c.timeOf("server") });
      }
    } catch (error) {
      if (!(error instanceof CaptureAbandoned)) {
        problem(c.info.id, `${where(origin)}: ${describe(error)}`);
      }
    }
  };

  const readEtcd = async (c: CapturedConnection, origin: CaptureOrigin, exchange: Http2Exchange) => {
    try {
      const encoding = (header(exchange.response.headers, "grpc-encoding") ?? "identity").trim().toLowerCase();
      if (encoding !== "identity" && encoding !== "gzip") {
        throw new DecodeError("ENCODING_UNSUPPORTED", 0, `grpc-encoding ${JSON.stringify(encoding)} is not supported`);
      }
      const watches = exchange.response.body
        .pipeThrough(new GrpcMessageDecoderStream({ encoding, maxEventBytes: options.maxEventBytes }))
        .pipeThrough(new EtcdWatchDecoderStream());
      for await (const watch of watches) {
        for (const event of watch.events) {
          events++;
          emit({ ...origin, kind: "etcd", event, time: c.timeOf("server") });
        }
      }
    } catch (error) {
      if (!(error instanceof CaptureAbandoned)) problem(c.info.id, `${where(origin)}: ${describe(error)}`);
    }
  };

  /** A gRPC call's messages in one direction (`body`, with the `grpc-encoding` of `headers`), each decoded by `decode`. */
  const readGrpc = async (
    c: CapturedConnection,
    origin: CaptureOrigin,
    direction: "request" | "response",
    headers: [string, string][] | undefined,
    body: ReadableStream<Uint8Array>,
    decode: (message: Uint8Array, offset: number) => unknown,
  ) => {
    try {
      const encoding = (header(headers, "grpc-encoding") ?? "identity").trim().toLowerCase();
      if (encoding !== "identity" && encoding !== "gzip") {
        throw new DecodeError("ENCODING_UNSUPPORTED", 0, `grpc-encoding ${JSON.stringify(encoding)} is not supported`);
      }
      const messages = body.pipeThrough(
        new GrpcMessageDecoderStream({ encoding, maxEventBytes: options.maxEventBytes }),
      );
      const side = direction === "request" ? "client" : "server";
      for await (const message of messages) {
        const value = decode(message.data, message.offset + 5);
        emit({ ...origin, kind: "grpc", direction, message: value, time: c.timeOf(side) });
      }
    } catch (error) {
      await body.cancel().catch(() => {});
      if (!(error instanceof CaptureAbandoned)) {
        problem(c.info.id, `${where(origin)}: ${direction}: ${describe(error)}`);
      }
    }
  };

  const where = (o: CaptureOrigin) =>
    `connection ${o.connection}, stream ${o.stream}${o.path === undefined ? "" : ` (${o.method ?? "?"} ${o.path})`}`;

  const http1 = async (c: CapturedConnection, s2c: ReadableStream<Uint8Array>, c2s: ReadableStream<Uint8Array>) => {
    for await (const { request, response } of decodeHttp1Exchanges(s2c, c2s)) {
      const contentType = header(response.headers, "content-type");
      const origin: CaptureOrigin = {
        connection: c.info.id,
        stream: response.index,
        method: request?.method,
        path: request?.target,
      };
      const watch = response.status >= 200 && response.framing !== "upgrade" &&
        isWatch(request?.target, contentType);
      responses++;
      emit({
        ...origin,
        kind: "response",
        http: "1.1",
        status: response.status,
        contentType,
        watch,
        time: c.timeOf("server"),
      });
      if (response.framing === "upgrade" || isInterim(response.status)) {
        if (response.framing === "upgrade") {
          problem(c.info.id, `${where(origin)}: switched protocols; the rest of the connection is not HTTP/1.1`);
        }
        await response.body.cancel();
        continue;
      }
      if (watch) await readWatch(c, origin, response.toResponse());
      else await response.body.cancel();
    }
  };

  const http2 = async (c: CapturedConnection, s2c: ReadableStream<Uint8Array>, c2s: ReadableStream<Uint8Array>) => {
    const streams: Promise<void>[] = [];
    // gRPC requests' messages, read as they come (before their responses).
    const takeRequestBody = (streamId: number, request: Http2Request, body: ReadableStream<Uint8Array>) => {
      const decode = request.path === undefined ? undefined : options.grpc?.(request.path)?.request;
      const contentType = header(request.headers, "content-type");
      if (decode === undefined || contentType === undefined || !GRPC_CONTENT_TYPE.test(contentType)) return false;
      const origin = { connection: c.info.id, stream: streamId, method: request.method, path: request.path };
      streams.push(readGrpc(c, origin, "request", request.headers, body, decode));
      return true;
    };
    for await (const exchange of decodeHttp2Exchanges(s2c, c2s, { serverPreface: "detect", takeRequestBody })) {
      const { streamId, request, response } = exchange;
      const contentType = header(response.headers, "content-type");
      const statusText = header(response.headers, ":status");
      const origin: CaptureOrigin = {
        connection: c.info.id,
        stream: streamId,
        method: request?.method,
        path: request?.path,
      };
      const etcd = request?.path === ETCD_WATCH_PATH;
      const grpc = !etcd && request?.path !== undefined && contentType !== undefined &&
          GRPC_CONTENT_TYPE.test(contentType)
        ? options.grpc?.(request.path)?.response
        : undefined;
      const watch = etcd || grpc !== undefined ||
        (response.headers !== undefined && isWatch(request?.path, contentType));
      responses++;
      emit({
        ...origin,
        kind: "response",
        http: "2",
        status: statusText === undefined ? undefined : Number(statusText),
        contentType,
        watch,
        time: c.timeOf("server"),
      });
      // Each stream's body is read as soon as the stream starts: one left unread would hold up the others.
      if (etcd) streams.push(readEtcd(c, origin, exchange));
      else if (grpc !== undefined) streams.push(readGrpc(c, origin, "response", response.headers, response.body, grpc));
      else if (watch) {
        let source: Response;
        try {
          source = response.toResponse();
        } catch (error) {
          problem(c.info.id, `${where(origin)}: ${describe(error)}`);
          await response.body.cancel();
          continue;
        }
        streams.push(readWatch(c, origin, source));
      } else streams.push(response.body.cancel());
    }
    await Promise.all(streams);
  };

  /** One connection: HTTP/1.1 or HTTP/2 by its first bytes (or TLS's ALPN), then its exchanges. */
  const readConnection = async (c: CapturedConnection) => {
    const c2sReader = c.clientToServer.getReader();
    const s2cReader = c.serverToClient.getReader();
    try {
      // Whichever side speaks first says which protocol it is. Both first reads stay: each stream starts with its own.
      const c2sFirstRead = c2sReader.read();
      const s2cFirstRead = s2cReader.read();
      const first = await Promise.race([
        c2sFirstRead.then((r) => ({ side: "client" as const, r })),
        s2cFirstRead.then((r) => ({ side: "server" as const, r })),
      ]);
      // The handshake (known before any decrypted byte) comes before the connection's first response.
      if (c.tls !== undefined) tlsItem(c.info.id, c.tls, c.timeOf(first.side));
      let protocol: "1.1" | "2" | undefined;
      if (first.side === "client" && first.r.value !== undefined) {
        protocol = startsWith(first.r.value, HTTP2_PREFACE.subarray(0, 16)) ? "2" : "1.1";
      }
      let s2cFirst: Uint8Array | undefined;
      if (protocol === undefined) {
        s2cFirst = (await s2cFirstRead).value;
        if (c.tls?.alpn === "h2") protocol = "2";
        else if (s2cFirst !== undefined && startsWith(s2cFirst, new TextEncoder().encode("HTTP/1."))) protocol = "1.1";
        else if (s2cFirst !== undefined && s2cFirst.length >= 9 && s2cFirst[3] === 4) protocol = "2";
      }
      const s2c = prepended(s2cFirstRead, s2cReader);
      const c2s = prepended(c2sFirstRead, c2sReader);
      if (protocol === undefined) {
        if (s2cFirst !== undefined || first.r.value !== undefined) {
          emit({ kind: "unknown-protocol", connection: c.info.id });
        }
        await Promise.all([s2c.cancel(), c2s.cancel()]);
        return;
      }
      if (protocol === "2") await http2(c, s2c, c2s);
      else await http1(c, s2c, c2s);
    } catch (error) {
      if (!(error instanceof CaptureAbandoned)) problem(c.info.id, `connection ${c.info.id}: ${describe(error)}`);
      await Promise.all([c2sReader.cancel().catch(() => {}), s2cReader.cancel().catch(() => {})]);
    }
  };

  const tlsSaid = new Set<number>();
  const tlsItem = (connection: number, h: TlsHandshakeEvent, time: CaptureTime) => {
    if (tlsSaid.has(connection)) return;
    tlsSaid.add(connection);
    emit({
      kind: "tls",
      connection,
      version: h.version,
      cipherSuite: h.cipherSuite,
      alpn: h.alpn,
      serverName: h.serverName,
      time,
    });
  };

  /** Each announced connection's decoding, until it ends: what the capture says of it later waits for it. */
  const reading = new Map<number, Promise<void>>();
  /**
   * Emits `item` of connection `id` once the connection's decoding has caught up with it: a gap, a problem or the
   * close come after the events decoded before them, however far the capture had been read by then.
   */
  const after = (id: number | undefined, item: CaptureItem) => {
    const task = id === undefined ? undefined : reading.get(id);
    if (task === undefined) emit(item);
    else spawn(task.then(() => emit(item)));
  };

  const onConnectionEvent = (event: CaptureConnectionEvent) => {
    switch (event.kind) {
      case "connection": {
        const c = event.connection;
        const { id, client, clientPort, server, serverPort } = c.info;
        emit({
          kind: "connection",
          connection: id,
          client,
          clientPort,
          server,
          serverPort,
          transport: c.transport,
          time: { seconds: c.info.seconds, nanoseconds: c.info.nanoseconds },
        });
        const task = readConnection(c);
        reading.set(id, task);
        spawn(task);
        return;
      }
      case "tls": {
        // The connection's decoding says it first, before its first response; this is for one that never gets one.
        const task = reading.get(event.connection);
        const say = () => tlsItem(event.connection, event.handshake, event.time);
        if (task === undefined) say();
        else spawn(task.then(say));
        return;
      }
      case "gap":
        after(event.connection, { ...event });
        return;
      case "problem":
        after(event.connection, {
          kind: "problem",
          connection: event.connection,
          message: event.connection === undefined ? event.message : `connection ${event.connection}: ${event.message}`,
        });
        return;
      case "close":
        after(event.connection, { ...event });
        reading.delete(event.connection);
        return;
      case "summary":
        return;
    }
  };

  let summary: CaptureConnectionEvent | undefined;
  const settled = async () => {
    while (tasks.size > 0) await Promise.allSettled([...tasks]);
  };
  const items: StreamDecoder<CaptureConnectionEvent, CaptureItem> = {
    push(event, emitItem) {
      emit = emitItem;
      if (event.kind === "summary") summary = event;
      else onConnectionEvent(event);
    },
    async finish(emitItem) {
      emit = emitItem;
      await settled();
      if (summary?.kind === "summary") {
        const { packets, skipped, connections, gaps } = summary;
        emit({ kind: "summary", packets, skipped, connections, gaps, responses, events });
      }
    },
    // The capture failed (a fault in the file): the connections' decoding, which ends where the capture stopped,
    // delivers its items before the fault.
    salvage: settled,
    failed() {
      emit = () => {};
    },
  };
  return captureConnections(capture, options).pipeThrough(
    new DecoderStream(items, { readableHighWaterMark: QUEUED_ITEMS }),
  );
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}
