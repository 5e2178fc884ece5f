/**
 * {@linkcode WebSocketWatchEventDecoderStream}: the messages of a Kubernetes watch served over WebSocket to typed
 * watch events.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import { DecoderStream } from "../../streams/decoder_stream.ts";
import { WebSocketWatchEventDecoder, type WebSocketWatchEventOptions } from "./websocket_watch_event_decoder.ts";
import type { WebSocketMessage } from "../../transport/websocket/websocket_message.ts";

/**
 * The messages of a Kubernetes watch over WebSocket (as `WebSocketFrameDecoderStream` hands them on) to typed
 * {@linkcode WatchEvent}s: text messages as JSON events, binary ones as protobuf events, control frames skipped (see
 * {@linkcode WebSocketWatchEventDecoder}). Faults are placed at the offending message's offset. For bytes,
 * `WebSocketWatchDecoderStream` does both stages in one.
 *
 * @example
 * ```ts
 * import { WebSocketFrameDecoderStream, WebSocketWatchEventDecoderStream } from "watchwire/wire";
 *
 * const json = new TextEncoder().encode('{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a"}}}\n');
 * const wire = Uint8Array.of(0x81, json.length, ...json, 0x88, 2, 0x03, 0xe8); // a text frame, then close 1000
 * const events = new Blob([wire]).stream()
 *   .pipeThrough(new WebSocketFrameDecoderStream({ sender: "server" }))
 *   .pipeThrough(new WebSocketWatchEventDecoderStream());
 * for await (const event of events) if (event.type === "ADDED") console.log(event.type, event.object.metadata?.name); // ADDED a
 * ```
 */
export class WebSocketWatchEventDecoderStream<T = KubernetesObject>
  extends DecoderStream<WebSocketMessage, WatchEvent<T>> {
  constructor(options: WebSocketWatchEventOptions = {}) {
    super(new WebSocketWatchEventDecoder<T>(options));
  }
}
