/**
 * `MsgpackEventDecoderStream` of `watchwire/msgpack-no-eval`: the same stream on msgpackr's build without code
 * generation.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../../../events.ts";
import { DecoderStream } from "../../../streams/decoder_stream.ts";
import type { MsgpackEventDecoderOptions } from "../msgpack_event_decoder_stream.ts";
import { MsgpackEventDecoder } from "./msgpack_event_decoder.ts";

/**
 * The `MsgpackEventDecoderStream` of the `watchwire` entry point (a watchwire msgpack event stream back to typed
 * watch events, with the same options, events and errors) that never calls `new Function`: for pages and Workers
 * whose Content-Security-Policy forbids `'unsafe-eval'`, where the one of `watchwire` decodes the same events but
 * makes the browser report one violation, for its try. See {@linkcode MsgpackEventDecoder}.
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "watchwire";
 * import { MsgpackEventEncoderStream } from "watchwire/wire";
 * import { MsgpackEventDecoderStream } from "watchwire/msgpack-no-eval";
 *
 * // The encoder never generates code: it comes from the main entry points.
 * const events: WatchEvent[] = [1, 2, 3, 4, 5].map((n) => ({ type: "MODIFIED", object: { metadata: { name: `p${n}` } } }));
 * const recording = ReadableStream.from(events).pipeThrough(new MsgpackEventEncoderStream());
 * const decoded = await Array.fromAsync(recording.pipeThrough(new MsgpackEventDecoderStream()));
 * console.log(decoded.length, decoded[4].type); // 5 MODIFIED
 * ```
 */
export class MsgpackEventDecoderStream<T = KubernetesObject> extends DecoderStream<Uint8Array, WatchEvent<T>> {
  constructor(options: MsgpackEventDecoderOptions = {}) {
    super(new MsgpackEventDecoder<T>(options));
  }
}
