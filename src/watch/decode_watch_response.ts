/**
 * {@linkcode decodeWatchResponse}: a `fetch` `Response` of a Kubernetes watch to a stream of typed events.
 *
 * @module
 */
import { JsonWatchEventDecoderStream } from "../codec/json_watch_event_decoder_stream.ts";
import { type MediaType, parseMediaType } from "../codec/media_type.ts";
import { DEFAULT_MAX_LINE_BYTES } from "../codec/ndjson_decoder_stream.ts";
import { DecodeError } from "../errors.ts";
import type { ErrorWatchEvent, KubernetesObject, Status, WatchEvent } from "../events.ts";

/** Options of {@linkcode decodeWatchResponse}, passed on to the body codec. */
export interface DecodeWatchOptions {
  /** Largest single event accepted, in bytes. Default 16 MiB. */
  maxEventBytes?: number;
  /**
   * Body codecs by media type essence (`type/subtype`, lower case), tried before the built-in ones: how a new wire
   * format plugs in without touching the rest of the pipeline.
   */
  codecs?: Record<string, WatchBodyCodec>;
}

/** Turns a watch response body into events; `mediaType` is the response's parsed Content-Type. */
export type WatchBodyCodec = (
  body: ReadableStream<Uint8Array>,
  mediaType: MediaType,
  options: DecodeWatchOptions,
) => ReadableStream<WatchEvent<unknown>>;

const jsonCodec: WatchBodyCodec = (body, _mediaType, options) =>
  body.pipeThrough(new JsonWatchEventDecoderStream<unknown>({ maxLineBytes: options.maxEventBytes }));

/** The codecs watchwire has built in, by media type essence. An absent Content-Type is read as JSON. */
export const BUILTIN_WATCH_CODECS: Readonly<Record<string, WatchBodyCodec>> = {
  "application/json": jsonCodec,
  "": jsonCodec,
};

/**
 * Decodes the body of a watch response into typed events, choosing the pipeline from its `Content-Type`
 * (`application/json`, with or without `;stream=watch`; more formats through `options.codecs`). A response that is
 * not 2xx becomes a single `ERROR` event carrying its `Status` (as the API server sends it, or one made from the HTTP
 * status when the body is not a Status), so a watcher handles a 410 the same way whether it came as an event or as
 * the HTTP status. A Content-Type no codec handles makes the stream fail with a `CONTENT_TYPE_UNSUPPORTED`
 * {@linkcode DecodeError}.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse } from "watchwire";
 *
 * const response = new Response(
 *   '{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}}\n',
 *   { headers: { "content-type": "application/json" } },
 * );
 * for await (const event of decodeWatchResponse(response)) {
 *   if (event.type === "BOOKMARK") console.log(event.object.metadata.resourceVersion); // 9
 * }
 * // Live: decodeWatchResponse(await fetch(`${server}/api/v1/pods?watch=1&allowWatchBookmarks=true`, { headers }))
 * ```
 */
export function decodeWatchResponse<T = KubernetesObject>(
  response: Response,
  options: DecodeWatchOptions = {},
): ReadableStream<WatchEvent<T>> {
  const body = response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  if (response.status < 200 || response.status > 299) {
    return errorStatusEvent(response, body, options.maxEventBytes ?? DEFAULT_MAX_LINE_BYTES);
  }
  const mediaType = parseMediaType(response.headers.get("content-type"));
  const codec = options.codecs?.[mediaType.essence] ?? BUILTIN_WATCH_CODECS[mediaType.essence];
  if (codec === undefined) {
    body.cancel().catch(() => {});
    return new ReadableStream({
      start(controller) {
        controller.error(
          new DecodeError(
            "CONTENT_TYPE_UNSUPPORTED",
            0,
            `no watch decoder for Content-Type ${JSON.stringify(response.headers.get("content-type"))}`,
          ),
        );
      },
    });
  }
  return codec(body, mediaType, options) as ReadableStream<WatchEvent<T>>;
}

// metav1.StatusReason for the HTTP statuses a watch request meets.
const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Gone",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

function errorStatusEvent<T>(
  response: Response,
  body: ReadableStream<Uint8Array>,
  limit: number,
): ReadableStream<WatchEvent<T>> {
  return new ReadableStream<WatchEvent<T>>({
    async start(controller) {
      const text = await readText(body, limit);
      let status: Status | undefined;
      try {
        const parsed = JSON.parse(text);
        if (parsed !== null && typeof parsed === "object" && parsed.kind === "Status") status = parsed;
      } catch {
        // Not JSON: described from the HTTP status below.
      }
      status ??= {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: text.trim().slice(0, 1024) || `${response.status} ${response.statusText}`.trim(),
        reason: REASONS[response.status] ?? (response.status >= 500 ? "InternalError" : "Unknown"),
        code: response.status,
      };
      const event: ErrorWatchEvent = { type: "ERROR", object: status };
      controller.enqueue(event);
      controller.close();
    },
  });
}

/** Up to `limit` bytes of `body` as text; the rest is cancelled. */
async function readText(body: ReadableStream<Uint8Array>, limit: number): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  // A body that fails (e.g. a truncated capture) fails the stream: a half Status is not passed off as a whole one.
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    text += decoder.decode(value, { stream: true });
    if (size >= limit) {
      await reader.cancel();
      break;
    }
  }
  return text + decoder.decode();
}
