/**
 * {@linkcode MsgpackEventEncoderStream}: watch events to a compact msgpack byte stream, for recording and forwarding.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import { DecoderStream } from "../../streams/decoder_stream.ts";
import { MsgpackEventWriter } from "./msgpack_event_writer.ts";

/**
 * Options of {@linkcode MsgpackEventEncoderStream}.
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "watchwire";
 * import { MsgpackEventEncoderStream, type MsgpackEventEncoderOptions } from "watchwire/wire";
 *
 * const options: MsgpackEventEncoderOptions = { maxEventBytes: 1024 };
 * const events: WatchEvent[] = [
 *   { type: "ADDED", object: { kind: "Pod", metadata: { name: "web" } } },
 *   { type: "ADDED", object: { kind: "Pod", metadata: { name: "x".repeat(2000) } } },
 * ];
 * const encoded = ReadableStream.from(events).pipeThrough(new MsgpackEventEncoderStream(options));
 * const chunks: Uint8Array[] = [];
 * try {
 *   for await (const chunk of encoded) chunks.push(chunk);
 * } catch (e) {
 *   // The header and the first event came out before the second failed the stream.
 *   console.log(e instanceof RangeError, chunks.length); // true 2
 * }
 * ```
 */
export interface MsgpackEventEncoderOptions {
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes: here an
   * encoded event, a longer one failing the stream (a `RangeError`), so that the encoder never writes what a
   * {@linkcode MsgpackEventDecoderStream} with the same `maxEventBytes` refuses. Default `DEFAULT_MAX_EVENT_BYTES`
   * (16 MiB).
   */
  maxEventBytes?: number;
}

/**
 * Encodes {@linkcode WatchEvent}s as a watchwire msgpack event stream, which {@linkcode MsgpackEventDecoderStream}
 * turns back into the same events: a 9-byte header, then one length-prefixed msgpack value per event (one output
 * chunk each), written by msgpackr with records, so each shape of object (its set of keys) is spelled out once per
 * stream and later objects of that shape carry only their values: a Pod watch comes out far smaller than its JSON
 * (bench/RESULTS.md §9).
 *
 * Lossless for everything `JSON.parse` produces, including what msgpack or msgpackr alone would lose: `-0`, strings
 * with lone surrogates, `"__proto__"` keys (as own properties), integers beyond 2^53 (as the same doubles). A value
 * JSON does not have (`undefined`, `NaN`, a `Date`...) is encoded as `JSON.parse(JSON.stringify(event))` would give
 * it. An input that is not a watch event (see `toWatchEvent`) fails the stream with a `TypeError`; the chunks of the
 * events before it are delivered first.
 *
 * The record definitions travel in the stream, so a decoder in another process reads it from the start without
 * sharing anything with the encoder. Each stream has its own record table: use one encoder per output.
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "watchwire";
 * import { MsgpackEventDecoderStream, MsgpackEventEncoderStream } from "watchwire/wire";
 *
 * const events: WatchEvent[] = [
 *   { type: "ADDED", object: { kind: "Pod", metadata: { name: "web", resourceVersion: "7" } } },
 *   { type: "DELETED", object: { kind: "Pod", metadata: { name: "web", resourceVersion: "9" } } },
 * ];
 * const bytes = ReadableStream.from(events).pipeThrough(new MsgpackEventEncoderStream());
 * const recording = new Uint8Array(await new Response(bytes).arrayBuffer());
 * console.log(recording.length); // 113 (the NDJSON of the same events is 180 bytes)
 *
 * const decoded = new Blob([recording]).stream().pipeThrough(new MsgpackEventDecoderStream());
 * for await (const event of decoded) {
 *   if (event.type !== "ERROR") console.log(event.type, event.object.metadata?.name); // ADDED web, DELETED web
 * }
 * ```
 */
export class MsgpackEventEncoderStream<T = KubernetesObject> extends DecoderStream<WatchEvent<T>, Uint8Array> {
  // A DecoderStream though it encodes: when an event cannot be encoded, the chunks of the events before it still
  // reach the reader (a plain TransformStream would drop those still queued), so a recording keeps them.
  constructor(options: MsgpackEventEncoderOptions = {}) {
    super(new MsgpackEventWriter<T>(options));
  }
}
