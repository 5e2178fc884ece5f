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
  type CapturedConnection,
} from "../capture/capture_connections.ts";
import { CaptureGap, type CaptureResumption } from "../capture/capture_gap.ts";
import type { CaptureTime, TcpDirection } from "../capture/records.ts";
import { BodyContinuation } from "../capture/resync/body_continuation.ts";
import { chunkedBodyAfterGap } from "../capture/resync/chunked_body_resync.ts";
import { readHttp2CaptureExchanges } from "../capture/resync/http2_capture_exchanges.ts";
import { JsonWatchResync } from "../capture/resync/json_watch_resync.ts";
import { ProtobufWatchResync } from "../capture/resync/protobuf_watch_resync.ts";
import type { TlsHandshakeEvent } from "../capture/tls/tls_events.ts";
import { EtcdWatchDecoderStream } from "../codec/etcd/etcd_watch_decoder_stream.ts";
import { GrpcMessageDecoderStream } from "../framing/grpc_message_decoder_stream.ts";
import { DecodeError } from "../errors.ts";
import type { WatchEvent } from "../events.ts";
import { DEFAULT_MAX_CHUNK_LINE_BYTES } from "../transport/chunked_decoder.ts";
import { fieldValues } from "../transport/field_line.ts";
import { decodeHttp1Exchanges, type Http1ExchangeRequest } from "../transport/http1_exchanges.ts";
import { WebSocketFrameDecoderStream } from "../transport/websocket/websocket_frame_decoder_stream.ts";
import { WebSocketWatchEventDecoder } from "./websocket/websocket_watch_event_decoder.ts";
import { isInterim } from "../transport/http1_head.ts";
import type { Http2Exchange, Http2Request } from "../transport/http2/exchanges.ts";
import type { Http2Message } from "../transport/http2/connection_decoder_stream.ts";
import { parseMediaType } from "../codec/media_type.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../limits.ts";
import { decodeWatchResponse, KUBERNETES_PROTOBUF_MEDIA_TYPE } from "./decode_watch_response.ts";
import { DecoderStream, type StreamDecoder } from "../streams/decoder_stream.ts";
import type { CaptureItem, CaptureOrigin, DecodeCaptureOptions } from "./capture_item.ts";

const HTTP2_PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const ETCD_WATCH_PATH = "/etcdserverpb.Watch/Watch";
const GRPC_CONTENT_TYPE = /^application\/grpc(?:[+;]|$)/i;
/** What is said of a gRPC stream a gap cut. */
const GRPC_NOT_RESUMED = "a gap cut its gRPC messages: the rest of this stream is not decoded (gRPC messages are not " +
  "resumed after a gap)";
/** Items queued for the reader before the capture is read further. */
const QUEUED_ITEMS = 64;

/**
 * Whether the bytes after a gap that are not read hold any (a TLS close_notify, say, leaves none): read up to the first,
 * then cancelled.
 */
async function anyBytes(resumption: CaptureResumption | undefined): Promise<boolean> {
  if (resumption === undefined) return false;
  const reader = resumption.stream.getReader();
  const first = await reader.read().catch((error) => {
    // Another gap: what follows it is not read either.
    if (error instanceof CaptureGap) void error.resumed.then((next) => next?.stream.cancel()).catch(() => {});
    return { done: true };
  });
  reader.cancel().catch(() => {});
  return !first.done;
}

/** The first value of header `name`, if any. */
const header = (fields: [string, string][] | undefined, name: string) =>
  fields === undefined ? undefined : fieldValues(fields, name)[0];

/** Whether a response is read as a watch: a request with `watch=1|true`, a `;stream=watch` type, or no request. */
function isWatch(path: string | undefined, contentType: string | undefined): boolean {
  if (contentType !== undefined && /;\s*stream=watch/i.test(contentType)) return true;
  if (path === undefined) return contentType !== undefined && /json|protobuf|cbor-seq/i.test(contentType);
  const query = path.indexOf("?");
  if (query < 0) return false;
  const watch = new URLSearchParams(path.slice(query + 1)).get("watch");
  return watch === "1" || watch === "true";
}

/** Whether a protocol switch (`status` 101) is to WebSocket, as its request asked. */
function isWebSocket(request: Http1ExchangeRequest | undefined, status: number): boolean {
  if (status !== 101 || request === undefined) return false;
  return /(^|,)\s*websocket\s*(,|$)/i.test(header(request.headers, "upgrade") ?? "");
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
 * - Each connection is decoded on its own: a fault in one (a TLS key missing, malformed HTTP) is a `problem` naming
 *   it, and the others go on. A malformed capture file fails the stream with a `DecodeError` at its file offset, after
 *   everything before it.
 * - Bytes lost from the capture (a `gap`): decoding goes on after them where it can (a `resumed` item; else a
 *   `problem`): TLS at the next record that decrypts (`maxResyncRecords`); HTTP/2 at the next plausible frame, the
 *   streams open before the gap going on (a header block that needs HPACK entries lost in the gap is a `problem` of
 *   its stream); HTTP/1.1 inside a chunked (at the next chunk) or close-delimited watch body; a watch's events at its
 *   next whole event (JSON and Kubernetes protobuf). Events cut by the gap are lost, never decoded from the bytes on
 *   both sides of it; gRPC (etcd) streams, other watch formats and HTTP/1.1 requests do not go on after a gap.
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
  let resumedCount = 0;
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

  // Gaps: each is said once, where its direction's decoding reached it (or, if none did, after the connection's items).
  // (By connection, until its close has been said: then, `${direction} ${streamOffset}`.)
  const gapsSaid = new Map<number, Set<string>>();
  /** Whether the gap is said already; if not, it is taken as said now. */
  const saidBefore = (connection: number, direction: TcpDirection, streamOffset: number) => {
    let said = gapsSaid.get(connection);
    if (said === undefined) gapsSaid.set(connection, said = new Set());
    const key = `${direction} ${streamOffset}`;
    if (said.has(key)) return true;
    said.add(key);
    return false;
  };
  const sayGaps = (gap: CaptureGap) => {
    for (const lost of gap.gaps) {
      if (saidBefore(gap.connection, gap.direction, lost.streamOffset)) continue;
      emit({ kind: "gap", connection: gap.connection, direction: gap.direction, ...lost });
    }
  };
  /** A gap not followed: the bytes after it are not read. */
  const leave = (gap: CaptureGap) => {
    sayGaps(gap);
    void gap.resumed.then((resumption) => {
      sayGaps(gap);
      return resumption?.stream.cancel();
    }).catch(() => {});
  };
  /**
   * The decoding of a direction reached `gap`: once the readers of what came before it (`readers`) are done, the gap
   * is said (and again, with any gap that joined it, once it resumes or will not).
   */
  const reached = async (gap: CaptureGap, readers: Set<Promise<unknown>>) => {
    await Promise.allSettled([...readers]);
    readers.clear();
    sayGaps(gap);
    void gap.resumed.then(() => sayGaps(gap), () => {});
  };
  /** `task` among `readers` (the readers of one direction's current bytes) until it is done. */
  const among = <T>(readers: Set<Promise<unknown>>, task: Promise<T>): Promise<T> => {
    readers.add(task);
    void task.finally(() => readers.delete(task)).catch(() => {});
    return task;
  };
  const resumed = (
    c: CapturedConnection,
    direction: TcpDirection,
    skippedBytes: number,
    stream?: CaptureOrigin,
  ) => {
    resumedCount++;
    emit({
      kind: "resumed",
      connection: c.info.id,
      direction,
      stream: stream?.stream,
      path: stream?.path,
      skippedBytes,
      time: c.timeOf(direction),
    });
  };

  /** A watch body's events, up to its end or to a gap: resolves with the gap that cut it, if one did. */
  const readWatch = async (
    c: CapturedConnection,
    origin: CaptureOrigin,
    response: Response,
  ): Promise<CaptureGap | undefined> => {
    try {
      for await (const event of decodeWatchResponse(response, options)) {
        events++;
        emit({ ...origin, kind: "event", event, time: c.timeOf("server") });
      }
    } catch (error) {
      if (error instanceof CaptureGap) return error;
      if (!(error instanceof CaptureAbandoned)) {
        problem(c.info.id, `${where(origin)}: ${describe(error)}`);
      }
    }
    return undefined;
  };

  /**
   * How a watch body resumes after a gap: at its next line (JSON), at its next frame (Kubernetes protobuf); or why it
   * does not.
   */
  const resumableBody = (
    status: number,
    contentType: string | undefined,
    contentEncoding: string | undefined,
  ): "json" | "protobuf" | string => {
    const essence = parseMediaType(contentType ?? null).essence;
    if (status < 200 || status > 299) return "it is not a 2xx response";
    if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== "identity") {
      return `its body has the content coding ${JSON.stringify(contentEncoding)}`;
    }
    if (options.codecs?.[essence] === undefined) {
      if (essence === "application/json" || essence === "") return "json";
      if (essence === KUBERNETES_PROTOBUF_MEDIA_TYPE) return "protobuf";
    }
    return `its events (${essence || "no content type"}) are not resumed`;
  };

  /** A watch's body after a gap, cut to its next whole event, as a response its decoding reads. */
  const resumedWatch = (
    c: CapturedConnection,
    origin: CaptureOrigin,
    kind: "json" | "protobuf",
    contentType: string | undefined,
    body: ReadableStream<Uint8Array>,
  ): Response => {
    const found = (skipped: number) => resumed(c, "server", skipped, origin);
    const maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    const cut = kind === "json"
      ? new JsonWatchResync(maxEventBytes, found)
      : new ProtobufWatchResync(maxEventBytes, found);
    const headers = contentType === undefined ? undefined : { "content-type": contentType };
    return new Response(body.pipeThrough(new DecoderStream(cut)), { headers });
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
      if (error instanceof CaptureGap) problem(c.info.id, `${where(origin)}: ${GRPC_NOT_RESUMED}`);
      else if (!(error instanceof CaptureAbandoned)) problem(c.info.id, `${where(origin)}: ${describe(error)}`);
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
      if (error instanceof CaptureGap) problem(c.info.id, `${where(origin)}: ${direction}: ${GRPC_NOT_RESUMED}`);
      else if (!(error instanceof CaptureAbandoned)) {
        problem(c.info.id, `${where(origin)}: ${direction}: ${describe(error)}`);
      }
    }
  };

  const where = (o: CaptureOrigin) =>
    `connection ${o.connection}, stream ${o.stream}${o.path === undefined ? "" : ` (${o.method ?? "?"} ${o.path})`}`;

  /**
   * The client's bytes of an HTTP/1.1 connection up to their first gap, where they end: requests after it are not
   * decoded (the responses after it come without theirs).
   */
  const requestsUntilGap = (c: CapturedConnection, c2s: ReadableStream<Uint8Array>) => {
    const reader = c2s.getReader();
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          if (!(error instanceof CaptureGap)) throw error;
          controller.close();
          sayGaps(error);
          const resumption = await error.resumed;
          sayGaps(error);
          if (await anyBytes(resumption)) {
            problem(
              c.info.id,
              `connection ${c.info.id}: the client's requests after the gap are not decoded (HTTP/1.1 requests are ` +
                "not resumed): the responses after it come without theirs",
            );
          }
        }
      },
      cancel: (reason) => reader.cancel(reason),
    }, { highWaterMark: 0 });
  };

  /**
   * One direction of a WebSocket connection after its `101`: the server's messages as watch events (protobuf when the
   * request asked for it, else JSON: the 101 has no content type), the rest as `websocket` items. Not resumed after a
   * gap (a problem says so).
   */
  const readWebSocket = async (
    c: CapturedConnection,
    origin: CaptureOrigin,
    direction: "client" | "server",
    request: Http1ExchangeRequest | undefined,
    bytes: ReadableStream<Uint8Array>,
  ) => {
    // Messages are handled in order: a server's close frame comes after the events before it.
    const accept = header(request?.headers, "accept") ?? "";
    const protobuf = /protobuf/i.test(accept) ? options.protobuf ?? {} : undefined;
    const watch = new WebSocketWatchEventDecoder<unknown>(protobuf === undefined ? {} : { protobuf });
    const emitEvent = (event: WatchEvent<unknown>) => {
      events++;
      emit({ ...origin, kind: "event", event, time: c.timeOf("server") });
    };
    try {
      const messages = bytes.pipeThrough(
        new WebSocketFrameDecoderStream({ sender: direction, maxEventBytes: options.maxEventBytes }),
      );
      for await (const message of messages) {
        if (direction === "server" && (message.kind === "text" || message.kind === "binary")) {
          watch.push(message, emitEvent);
          continue;
        }
        emit({
          ...origin,
          kind: "websocket",
          direction,
          message: message.kind,
          bytes: message.bytes.length,
          ...(message.kind === "close" ? { code: message.code, reason: message.reason } : {}),
          time: c.timeOf(direction),
        });
      }
    } catch (error) {
      if (error instanceof CaptureGap) {
        await error.resumed.then((r) => r?.stream.cancel()).catch(() => {});
        problem(
          c.info.id,
          `${where(origin)}: a gap cut its WebSocket frames: the rest of the ${direction}'s are not decoded`,
        );
      } else if (!(error instanceof CaptureAbandoned)) {
        problem(c.info.id, `${where(origin)}: WebSocket (${direction}): ${describe(error)}`);
      }
    }
  };

  const http1 = async (c: CapturedConnection, s2c: ReadableStream<Uint8Array>, c2s: ReadableStream<Uint8Array>) => {
    const readers = new Set<Promise<unknown>>();
    let requests: ReadableStream<Uint8Array> | undefined = requestsUntilGap(c, c2s);
    let input = s2c;
    let indexBase = 0;
    /** The server's bytes skipped at the last gap, before the chunk found after it. */
    let bodySkipped = 0;
    /** The watch a gap cut, and how its body goes on. */
    let cut:
      | { origin: CaptureOrigin; kind: "json" | "protobuf"; contentType: string | undefined; framing: string }
      | undefined;
    /** Whether `input` is the rest of the body `cut` (not responses). */
    let inBody = false;
    /** Whether a problem said already that the server's bytes do not resume. */
    let notResumed = false;
    for (;;) {
      let gap: CaptureGap | undefined;
      if (!inBody) {
        cut = undefined;
        try {
          // The client's WebSocket frames after a 101, read beside the server's.
          const takeRequestTunnel = (request: Http1ExchangeRequest, tunnel: ReadableStream<Uint8Array>) => {
            if (!isWebSocket(request, 101)) return false;
            const origin = {
              connection: c.info.id,
              stream: indexBase + request.index,
              method: request.method,
              path: request.target,
            };
            readers.add(readWebSocket(c, origin, "client", request, tunnel));
            return true;
          };
          for await (const { request, response } of decodeHttp1Exchanges(input, requests, { takeRequestTunnel })) {
            const contentType = header(response.headers, "content-type");
            const origin: CaptureOrigin = {
              connection: c.info.id,
              stream: indexBase + response.index,
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
            if (response.framing === "upgrade" && isWebSocket(request, response.status)) {
              await readWebSocket(c, origin, "server", request, response.body);
              continue;
            }
            if (response.framing === "upgrade" || isInterim(response.status)) {
              if (response.framing === "upgrade") {
                problem(c.info.id, `${where(origin)}: switched protocols; the rest of the connection is not HTTP/1.1`);
              }
              await response.body.cancel();
              continue;
            }
            if (!watch) {
              await response.body.cancel();
              continue;
            }
            const cutBy = await among(readers, readWatch(c, origin, response.toResponse()));
            if (cutBy === undefined) continue;
            const kind = response.transferCodings.length > 0
              ? `its body has the transfer codings ${response.transferCodings.join(", ")}`
              : response.framing !== "chunked" && response.framing !== "close"
              ? `its body is framed by ${response.framing}`
              : resumableBody(response.status, contentType, header(response.headers, "content-encoding"));
            if (kind === "json" || kind === "protobuf") {
              cut = { origin, kind, contentType, framing: response.framing };
            } else {
              problem(c.info.id, `${where(origin)}: the watch does not resume after the gap: ${kind}`);
              notResumed = true;
            }
          }
          return;
        } catch (error) {
          if (!(error instanceof CaptureGap)) throw error;
          gap = error;
        }
      } else {
        const watch = cut!;
        if (watch.framing === "close") {
          gap = await among(
            readers,
            readWatch(c, watch.origin, resumedWatch(c, watch.origin, watch.kind, watch.contentType, input)),
          );
          if (gap === undefined) return;
        } else {
          const body = chunkedBodyAfterGap(input, {
            // The HTTP/1.1 decoder before the gap read this body with its default chunk-size line limit.
            maxChunkLineBytes: DEFAULT_MAX_CHUNK_LINE_BYTES,
            // A bound derived from the event limit: a chunk to resume at is held whole, as an event would be.
            maxChunkBytes: options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES,
            found: (skipped) => resumed(c, "server", bodySkipped + skipped),
          });
          gap = await among(
            readers,
            readWatch(c, watch.origin, resumedWatch(c, watch.origin, watch.kind, watch.contentType, body.body)),
          );
          if (gap === undefined) {
            if (!body.found() && body.received() > 0) {
              problem(
                c.info.id,
                `connection ${c.info.id}: no HTTP/1.1 chunk found in the server's bytes after the gap`,
              );
            }
            const rest = await body.rest;
            if (rest === undefined) return;
            // The connection's next responses: their requests were read with the ones before the gap.
            input = rest;
            requests = undefined;
            indexBase = watch.origin.stream + 1;
            inBody = false;
            continue;
          }
        }
      }
      await reached(gap, readers);
      const resumption = await gap.resumed;
      if (resumption === undefined) return;
      if (cut === undefined) {
        if (!(await anyBytes(resumption)) || notResumed) return;
        problem(
          c.info.id,
          `connection ${c.info.id}: the server's bytes after the gap are not decoded (HTTP/1.1 resumes only inside a ` +
            "chunked or close-delimited watch body)",
        );
        return;
      }
      input = resumption.stream;
      inBody = true;
      bodySkipped = resumption.skippedBytes;
      if (cut.framing === "close") resumed(c, "server", bodySkipped);
    }
  };

  const http2 = async (c: CapturedConnection, s2c: ReadableStream<Uint8Array>, c2s: ReadableStream<Uint8Array>) => {
    const streams: Promise<void>[] = [];
    // The readers of each direction's current bytes (a gap is said once they are done with what came before it).
    const readers = { client: new Set<Promise<unknown>>(), server: new Set<Promise<unknown>>() };
    // The watches a gap in the server's bytes may cut, by stream: their bodies after it.
    const continuations = new Map<number, BodyContinuation>();
    const takeRequestBody = (streamId: number, request: Http2Request, body: ReadableStream<Uint8Array>) => {
      const decode = request.path === undefined ? undefined : options.grpc?.(request.path)?.request;
      const contentType = header(request.headers, "content-type");
      if (decode === undefined || contentType === undefined || !GRPC_CONTENT_TYPE.test(contentType)) return false;
      const origin = { connection: c.info.id, stream: streamId, method: request.method, path: request.path };
      streams.push(among(readers.client, readGrpc(c, origin, "request", request.headers, body, decode)));
      return true;
    };
    /** A watch's events across the gaps of the server's bytes, as long as its stream goes on. */
    const watchAcrossGaps = async (origin: CaptureOrigin, response: Http2Message, source: Response) => {
      const contentType = header(response.headers, "content-type");
      const kind = resumableBody(
        Number(header(response.headers, ":status")),
        contentType,
        header(response.headers, "content-encoding"),
      );
      const next = kind === "json" || kind === "protobuf" ? new BodyContinuation() : undefined;
      if (next !== undefined) continuations.set(origin.stream, next);
      try {
        for (;;) {
          const gap = await among(readers.server, readWatch(c, origin, source));
          if (gap === undefined) return;
          if (next === undefined) {
            problem(c.info.id, `${where(origin)}: the watch does not resume after the gap: ${kind}`);
            return;
          }
          const body = await next.next();
          if (body === undefined) return;
          source = resumedWatch(c, origin, kind as "json" | "protobuf", contentType, body);
        }
      } finally {
        next?.close();
      }
    };
    await readHttp2CaptureExchanges(s2c, c2s, {
      takeRequestBody,
      reached: (gap) => reached(gap, readers[gap.direction]),
      resumed: (direction, _resumption, skippedBytes) => resumed(c, direction, skippedBytes),
      notResumed: (direction, why) => problem(c.info.id, `connection ${c.info.id}: the ${direction}'s bytes: ${why}`),
      continued(message) {
        const next = continuations.get(message.streamId);
        if (next === undefined) message.body.cancel().catch(() => {});
        else next.give(message.body);
      },
      exchange(exchange) {
        const { streamId, request, response } = exchange;
        const contentType = header(response.headers, "content-type");
        const statusText = header(response.headers, ":status");
        const origin: CaptureOrigin = {
          connection: c.info.id,
          stream: streamId,
          method: request?.method,
          path: request?.path,
        };
        if (response.headers === undefined && response.headersMissing) {
          problem(
            c.info.id,
            `${
              where(origin)
            }: the capture does not hold its response's header block (lost in a gap, or sent before the ` +
              "capture started): its body is not decoded",
          );
        } else if (response.headerError !== undefined) {
          problem(
            c.info.id,
            `${where(origin)}: its header block could not be decoded (it refers to HPACK table entries the capture ` +
              `does not hold): ${describe(response.headerError)}`,
          );
        }
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
        if (etcd) streams.push(among(readers.server, readEtcd(c, origin, exchange)));
        else if (grpc !== undefined) {
          streams.push(among(readers.server, readGrpc(c, origin, "response", response.headers, response.body, grpc)));
        } else if (watch) {
          let source: Response;
          try {
            source = response.toResponse();
          } catch (error) {
            problem(c.info.id, `${where(origin)}: ${describe(error)}`);
            streams.push(response.body.cancel());
            return;
          }
          streams.push(watchAcrossGaps(origin, response, source));
        } else streams.push(response.body.cancel());
      },
    }).finally(() => {
      for (const next of continuations.values()) next.end();
    });
    await Promise.all(streams);
  };

  /** One connection: HTTP/1.1 or HTTP/2 by its first bytes (or TLS's ALPN), then its exchanges. */
  const readConnection = async (c: CapturedConnection) => {
    const c2sReader = c.clientToServer.getReader();
    const s2cReader = c.serverToClient.getReader();
    try {
      // Whichever side speaks first says which protocol it is. Both first reads stay: each stream starts with its own.
      // A first read that meets a gap says nothing (the stream fails with it where it is read).
      const c2sFirstRead = c2sReader.read();
      const s2cFirstRead = s2cReader.read();
      const settled = (read: Promise<ReadableStreamReadResult<Uint8Array>>) =>
        read.then(
          (r) => r.value,
          (error) => {
            if (error instanceof CaptureGap) return undefined;
            throw error;
          },
        );
      const c2sFirst = settled(c2sFirstRead);
      const s2cFirst = settled(s2cFirstRead);
      const first = await Promise.race([
        c2sFirst.then((value) => ({ side: "client" as const, value })),
        s2cFirst.then((value) => ({ side: "server" as const, value })),
      ]);
      // The handshake (known before any decrypted byte) comes before the connection's first response.
      if (c.tls !== undefined) tlsItem(c.info.id, c.tls, c.timeOf(first.side));
      let protocol: "1.1" | "2" | undefined;
      const fromClient = (bytes: Uint8Array) => startsWith(bytes, HTTP2_PREFACE.subarray(0, 16)) ? "2" : "1.1";
      if (first.side === "client" && first.value !== undefined) protocol = fromClient(first.value);
      let server: Uint8Array | undefined;
      let client: Uint8Array | undefined = first.side === "client" ? first.value : undefined;
      if (protocol === undefined) {
        server = await s2cFirst;
        if (c.tls?.alpn === "h2") protocol = "2";
        else if (server !== undefined && startsWith(server, new TextEncoder().encode("HTTP/1."))) protocol = "1.1";
        else if (server !== undefined && server.length >= 9 && server[3] === 4) protocol = "2";
        else if (server === undefined && first.side === "server") {
          // The server's first bytes met a gap: the client's may tell.
          client = await c2sFirst;
          if (client !== undefined) protocol = fromClient(client);
        }
      }
      const s2c = prepended(s2cFirstRead, s2cReader);
      const c2s = prepended(c2sFirstRead, c2sReader);
      if (protocol === undefined) {
        if (server !== undefined || client !== undefined) emit({ kind: "unknown-protocol", connection: c.info.id });
        for (const read of [c2sFirstRead, s2cFirstRead]) {
          read.catch((error) => error instanceof CaptureGap && leave(error));
        }
        await Promise.all([s2c.cancel(), c2s.cancel()]);
        return;
      }
      if (protocol === "2") await http2(c, s2c, c2s);
      else await http1(c, s2c, c2s);
    } catch (error) {
      if (error instanceof CaptureGap) leave(error);
      else if (!(error instanceof CaptureAbandoned)) problem(c.info.id, `connection ${c.info.id}: ${describe(error)}`);
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
      case "gap": {
        // Said by the connection's decoding where it reached the gap, or else after the connection's items.
        const item: CaptureItem = { ...event };
        const task = reading.get(event.connection);
        const say = () => {
          if (!saidBefore(event.connection, event.direction, event.streamOffset)) emit(item);
        };
        if (task === undefined) say();
        else spawn(task.then(say));
        return;
      }
      case "problem":
        after(event.connection, {
          kind: "problem",
          connection: event.connection,
          message: event.connection === undefined ? event.message : `connection ${event.connection}: ${event.message}`,
        });
        return;
      case "close": {
        const task = reading.get(event.connection);
        const close = () => {
          emit({ ...event });
          gapsSaid.delete(event.connection);
        };
        if (task === undefined) close();
        else spawn(task.then(close));
        reading.delete(event.connection);
        return;
      }
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
        emit({ kind: "summary", packets, skipped, connections, gaps, resumed: resumedCount, responses, events });
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
