/**
 * {@linkcode DEFAULT_MAX_EVENT_BYTES}: the default of every decoder's `maxEventBytes`.
 *
 * @module
 */

/**
 * The default of `maxEventBytes`, the one size limit of every decoder, from `decodeWatchResponse`, `watch()` and
 * `informer()` down to the NDJSON, length-prefixed, gRPC and msgpack decoders: the largest event (one NDJSON line, one
 * length-prefixed frame, one gRPC message) accepted, in bytes, checked before it is buffered. 16 MiB, as client-go's
 * watch decoder. Over it: `LINE_TOO_LONG` (NDJSON) or `MESSAGE_TOO_LARGE` (a frame or message).
 *
 * @example
 * ```ts
 * import { DEFAULT_MAX_EVENT_BYTES, LengthPrefixedDecoderStream, NdjsonDecoderStream } from "watchwire/wire";
 *
 * console.log(DEFAULT_MAX_EVENT_BYTES); // 16777216
 * const lines = new NdjsonDecoderStream({ maxEventBytes: 4 * DEFAULT_MAX_EVENT_BYTES });
 * const frames = new LengthPrefixedDecoderStream({ maxEventBytes: DEFAULT_MAX_EVENT_BYTES / 4 });
 * ```
 */
export const DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024;
