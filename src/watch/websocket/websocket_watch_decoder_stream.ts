/**
 * {@linkcode WebSocketWatchDecoderStream}: the bytes a kube-apiserver sends after the `101` of a watch over WebSocket
 * to typed watch events, in one stage.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import { DecoderStream, type DecoderStreamOptions } from "../../streams/decoder_stream.ts";
import { WebSocketWatchDecoder, type WebSocketWatchDecoderOptions } from "./websocket_watch_decoder.ts";

/**
 * Options of {@linkcode WebSocketWatchDecoderStream}: the decoder's and the stream's.
 *
 * @example
 * ```ts
 * import type { WebSocketWatchDecoderStreamOptions } from "watchwire/wire";
 *
 * const options: WebSocketWatchDecoderStreamOptions = { maxEventBytes: 1 << 20, readableHighWaterMark: 16 };
 * console.log(options.readableHighWaterMark); // 16
 * ```
 */
export interface WebSocketWatchDecoderStreamOptions extends WebSocketWatchDecoderOptions, DecoderStreamOptions {}

/**
 * The bytes of a Kubernetes watch over WebSocket after its `101 Switching Protocols` (the server's side) to typed
 * {@linkcode WatchEvent}s: {@linkcode WebSocketWatchDecoder} as a stream stage (`WebSocketFrameDecoderStream` and
 * `WebSocketWatchEventDecoderStream` fused, one enqueue per event). Faults are `DecodeError`s at their byte in the
 * input, after every event before them.
 *
 * @example
 * ```ts
 * import { WebSocketWatchDecoderStream } from "watchwire/wire";
 *
 * const json = new TextEncoder().encode('{"type":"DELETED","object":{"kind":"ConfigMap","metadata":{"name":"a"}}}\n');
 * const afterThe101 = Uint8Array.of(0x81, json.length, ...json, 0x88, 2, 0x03, 0xe8);
 * for await (const event of new Blob([afterThe101]).stream().pipeThrough(new WebSocketWatchDecoderStream())) {
 *   if (event.type === "DELETED") console.log(event.type, event.object.metadata?.name); // DELETED a
 * }
 * ```
 */
export class WebSocketWatchDecoderStream<T = KubernetesObject> extends DecoderStream<Uint8Array, WatchEvent<T>> {
  constructor(options: WebSocketWatchDecoderStreamOptions = {}) {
    const { readableHighWaterMark, placeFault, ...decoderOptions } = options;
    super(new WebSocketWatchDecoder<T>(decoderOptions), {
      ...(readableHighWaterMark === undefined ? {} : { readableHighWaterMark }),
      ...(placeFault === undefined ? {} : { placeFault }),
    });
  }
}
