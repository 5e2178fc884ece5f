/**
 * {@linkcode MsgpackEventDecoderStream}: a watchwire msgpack event stream (bytes) back to typed watch events.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import { DecoderStream } from "../../streams/decoder_stream.ts";
import { MsgpackEventDecoder } from "./msgpack_event_decoder.ts";

/**
 * Options of {@linkcode MsgpackEventDecoderStream}.
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import {
 *   MsgpackEventDecoderStream,
 *   type MsgpackEventDecoderOptions,
 *   MsgpackEventEncoderStream,
 * } from "watchwire/wire";
 *
 * const options: MsgpackEventDecoderOptions = { maxEventBytes: 1024 };
 * const event = { type: "ADDED", object: { kind: "Pod", metadata: { name: "x".repeat(2000) } } } as const;
 * const recording = ReadableStream.from([event]).pipeThrough(new MsgpackEventEncoderStream());
 * try {
 *   for await (const _ of recording.pipeThrough(new MsgpackEventDecoderStream(options)));
 * } catch (e) {
 *   if (e instanceof DecodeError) console.log(e.code, e.offset); // MESSAGE_TOO_LARGE 9
 * }
 * ```
 */
export interface MsgpackEventDecoderOptions {
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes: here an
   * event's frame, checked on its length prefix before it is buffered. Default `DEFAULT_MAX_EVENT_BYTES` (16 MiB).
   */
  maxEventBytes?: number;
}

/**
 * Decodes the bytes written by {@linkcode MsgpackEventEncoderStream} (in any chunks, down to single bytes) to the
 * same {@linkcode WatchEvent}s, deep-equal to those encoded ({@linkcode MsgpackEventDecoder} without a stream, or in
 * batches). It needs nothing from the encoder: the record definitions
 * are in the stream. A stream that carries several recordings one after another (each with its header) decodes to
 * all their events.
 *
 * Each event is decoded once its whole frame has arrived; a frame within one input chunk is read where it lies, one
 * that spans chunks is copied once. Errors are {@linkcode DecodeError}s, and every event before the fault is delivered
 * first:
 *
 * - `MESSAGE_INVALID` at the first wrong byte if the input does not start with the header (another format, another
 *   version), or at an event's frame if it is not one msgpack value of JSON types (binary data, `undefined`, `NaN`,
 *   extension types, bytes left over);
 * - `MESSAGE_TOO_LARGE` at an event's frame when its length is over `maxEventBytes`, before it is buffered;
 * - `TRUNCATED` when the input ends inside the header or an event (or is empty);
 * - `EVENT_INVALID` or `EVENT_TYPE_UNKNOWN` at an event's frame when the value is not a watch event.
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import { MsgpackEventDecoderStream, MsgpackEventEncoderStream } from "watchwire/wire";
 *
 * const event = { type: "ADDED", object: { kind: "ConfigMap", metadata: { name: "a" }, data: { k: "v" } } } as const;
 * const bytes = new Uint8Array(
 *   await new Response(ReadableStream.from([event]).pipeThrough(new MsgpackEventEncoderStream())).arrayBuffer(),
 * );
 * // Cut short: the event is lost, and the error says where it began.
 * const cut = new Blob([bytes.subarray(0, bytes.length - 3)]).stream();
 * try {
 *   for await (const _ of cut.pipeThrough(new MsgpackEventDecoderStream()));
 * } catch (e) {
 *   if (e instanceof DecodeError) console.log(e.code, e.offset); // TRUNCATED 9
 * }
 * ```
 */
export class MsgpackEventDecoderStream<T = KubernetesObject> extends DecoderStream<Uint8Array, WatchEvent<T>> {
  constructor(options: MsgpackEventDecoderOptions = {}) {
    super(new MsgpackEventDecoder<T>(options));
  }
}
