/**
 * {@linkcode WebSocketWatchDecoder}: the bytes a kube-apiserver sends after the `101 Switching Protocols` of a watch
 * over WebSocket, to typed watch events, without a stream.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import { WebSocketFrameDecoder } from "../../transport/websocket/websocket_frame_decoder.ts";
import type {
  WebSocketCloseMessage,
  WebSocketMessage,
  WebSocketSender,
} from "../../transport/websocket/websocket_message.ts";
import { WebSocketWatchEventDecoder, type WebSocketWatchEventOptions } from "./websocket_watch_event_decoder.ts";

/**
 * Options of {@linkcode WebSocketWatchDecoder} and `WebSocketWatchDecoderStream`.
 *
 * @example
 * ```ts
 * import type { WebSocketWatchDecoderOptions } from "watchwire/wire";
 *
 * // Events of at most 1 MiB; protobuf objects decoded as metadata only.
 * const options: WebSocketWatchDecoderOptions = { maxEventBytes: 1 << 20, protobuf: { mode: "metadata" } };
 * console.log(options.sender ?? "server"); // server
 * ```
 */
export interface WebSocketWatchDecoderOptions extends WebSocketWatchEventOptions {
  /** Which end sent the bytes: `"server"` (the default: the watch's events) or `"client"` (masked frames). */
  sender?: WebSocketSender;
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes: here one
   * WebSocket message's payload. Default `DEFAULT_MAX_EVENT_BYTES` (16 MiB).
   */
  maxEventBytes?: number;
  /** Called with each message, events or not (pings, pongs, the close frame), before its event is handed on. */
  onMessage?: (message: WebSocketMessage) => void;
}

/**
 * The server's side of a Kubernetes watch over WebSocket, the bytes after the `101 Switching Protocols` of an HTTP/1.1
 * capture or recording, to typed {@linkcode WatchEvent}s, the same as the plain HTTP watch gives: the frames decoded by
 * {@linkcode WebSocketFrameDecoder} (RFC 6455: masking, fragments, control frames, `maxEventBytes`), each text or
 * binary message by {@linkcode WebSocketWatchEventDecoder} (JSON or protobuf, one event each). Faults are
 * {@linkcode DecodeError}s at their byte in this input (a message's content at the message's first frame), after
 * every event before them. The close frame, when it has come, is in `close`; input that ends without one is not a
 * fault (a capture that ends before the connection does).
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "watchwire";
 * import { WebSocketWatchDecoder } from "watchwire/wire";
 *
 * const json = new TextEncoder().encode('{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a"}}}\n');
 * const afterThe101 = Uint8Array.of(0x81, json.length, ...json, 0x88, 2, 0x03, 0xe8);
 * const decoder = new WebSocketWatchDecoder();
 * const events: WatchEvent[] = [];
 * decoder.push(afterThe101.subarray(0, 20), (e) => events.push(e));
 * decoder.push(afterThe101.subarray(20), (e) => events.push(e));
 * decoder.finish();
 * console.log(events.length, events[0].type, decoder.close?.code); // 1 ADDED 1000
 * ```
 */
export class WebSocketWatchDecoder<T = KubernetesObject> implements StreamDecoder<Uint8Array, WatchEvent<T>> {
  readonly #frames: WebSocketFrameDecoder;
  readonly #events: WebSocketWatchEventDecoder<T>;
  readonly #onMessage: ((message: WebSocketMessage) => void) | undefined;
  #close: WebSocketCloseMessage | undefined;

  constructor(options: WebSocketWatchDecoderOptions = {}) {
    this.#frames = new WebSocketFrameDecoder({
      sender: options.sender ?? "server",
      ...(options.maxEventBytes === undefined ? {} : { maxEventBytes: options.maxEventBytes }),
    });
    this.#events = new WebSocketWatchEventDecoder<T>(options.protobuf ? { protobuf: options.protobuf } : {});
    this.#onMessage = options.onMessage;
  }

  /** The close frame, once it has come. */
  get close(): WebSocketCloseMessage | undefined {
    return this.#close;
  }

  /** Bytes consumed so far. */
  get offset(): number {
    return this.#frames.offset;
  }

  /** Hands on the event of each message `chunk` completes. Throws a `DecodeError` on a fault. */
  push(chunk: Uint8Array, emit: (event: WatchEvent<T>) => void): void {
    this.#frames.push(chunk, (message) => {
      this.#onMessage?.(message);
      if (message.kind === "close") this.#close = message;
      else this.#events.push(message, emit);
    });
  }

  /** Ends the input: `TRUNCATED` if it stopped inside a frame or a fragmented message. */
  finish(): void {
    this.#frames.finish();
  }
}
