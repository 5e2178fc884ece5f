/**
 * {@linkcode WebSocketWatchEventDecoder}: the messages of a Kubernetes watch served over WebSocket to typed watch
 * events, without a stream.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import type { KubernetesProtobufOptions } from "../../codec/kubernetes/protobuf_options.ts";
import { KubernetesProtobufWatchFrameDecoder } from "../../codec/kubernetes/protobuf_watch_frame_decoder.ts";
import { toWatchEvent } from "../../codec/watch_event_decoder_stream.ts";
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import type { WebSocketMessage } from "../../transport/websocket/websocket_message.ts";

/**
 * Options of {@linkcode WebSocketWatchEventDecoder} and `WebSocketWatchEventDecoderStream`.
 *
 * @example
 * ```ts
 * import type { WebSocketWatchEventOptions } from "watchwire/wire";
 * import { coreV1, createKubernetesDecoders } from "watchwire/kubernetes";
 *
 * // Binary (protobuf) messages of core/v1 kinds decoded in full.
 * const options: WebSocketWatchEventOptions = { protobuf: { decoders: createKubernetesDecoders([coreV1]) } };
 * console.log(options.protobuf?.mode ?? "full"); // full
 * ```
 */
export interface WebSocketWatchEventOptions {
  /**
   * Options of the protobuf decoding of binary messages: `decoders` (the kinds decoded in full; by default none but
   * `Status`, other kinds decoding as `KubernetesProtobufObject`s), `mode`, `inputViews`. See
   * {@linkcode KubernetesProtobufOptions}.
   */
  protobuf?: KubernetesProtobufOptions;
}

/**
 * Decodes the messages of a Kubernetes watch served over WebSocket (a watch URL asked with a WebSocket upgrade: one
 * event per message) into typed {@linkcode WatchEvent}s, the same the HTTP watch of the same resource gives: a text
 * message is one JSON event (`{"type": ..., "object": ...}`, checked as `toWatchEvent` checks it); a binary message is
 * one protobuf `meta.v1.WatchEvent` without the 4-byte length the HTTP body puts before it (decoded as
 * `KubernetesProtobufWatchFrameDecoder` does, with `options.protobuf`); one in CBOR (a watch asked for
 * `application/cbor`) is refused with a `MESSAGE_INVALID` that says so. Pings, pongs and the close frame give no event.
 *
 * A fault in a message is a {@linkcode DecodeError} at the message's offset (its first frame), its detail naming the
 * byte of the payload where one is known: `JSON_INVALID`, `EVENT_INVALID`, `EVENT_TYPE_UNKNOWN`, `MESSAGE_INVALID`.
 * Payload bytes are taken as handed over (objects kept as bytes may keep views of them: see `inputViews`).
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "watchwire";
 * import { WebSocketWatchEventDecoder } from "watchwire/wire";
 *
 * const decoder = new WebSocketWatchEventDecoder();
 * const events: WatchEvent[] = [];
 * const json = '{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"5"}}}\n';
 * decoder.push({ kind: "text", text: json, bytes: new TextEncoder().encode(json), offset: 0 }, (e) => events.push(e));
 * decoder.push({ kind: "ping", bytes: new Uint8Array(0), offset: 120 }, (e) => events.push(e)); // no event
 * console.log(events.map((e) => (e.type === "ADDED" ? `ADDED ${e.object.metadata?.name}` : e.type))); // [ "ADDED a" ]
 * // Live: events of a runtime's WebSocket, one message at a time, without offsets.
 * console.log(decoder.decodeText('{"type":"DELETED","object":{"metadata":{"name":"a"}}}').type); // DELETED
 * ```
 */
export class WebSocketWatchEventDecoder<T = KubernetesObject>
  implements StreamDecoder<WebSocketMessage, WatchEvent<T>> {
  readonly #frames: KubernetesProtobufWatchFrameDecoder;

  constructor(options: WebSocketWatchEventOptions = {}) {
    this.#frames = new KubernetesProtobufWatchFrameDecoder(options.protobuf);
  }

  /**
   * The event of one text message. Throws a {@linkcode DecodeError} at offset 0 (`JSON_INVALID`, or what
   * `toWatchEvent` finds).
   */
  decodeText(text: string): WatchEvent<T> {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (cause) {
      throw new DecodeError("JSON_INVALID", 0, "websocket watch: a text message that is not valid JSON", { cause });
    }
    return toWatchEvent<T>(value);
  }

  /**
   * The event of one binary message: a protobuf `meta.v1.WatchEvent`, handed over (never written again). Throws a
   * {@linkcode DecodeError} at the byte of the message where the fault is.
   */
  decodeBinary(bytes: Uint8Array): WatchEvent<T> {
    if (bytes.length >= 3 && bytes[0] === 0xd9 && bytes[1] === 0xd9 && bytes[2] === 0xf7) {
      // CBOR's self-described tag (55799): a watch asked with Accept: application/cbor.
      throw new DecodeError(
        "MESSAGE_INVALID",
        0,
        "websocket watch: a binary message in CBOR (a watch asked for application/cbor), which is not decoded here: " +
          "ask for JSON or protobuf",
      );
    }
    return this.#frames.decode(bytes, 0, "handed-over") as WatchEvent<T>;
  }

  /** Decodes one message (a text or binary one gives an event); faults placed at `message.offset`. */
  push(message: WebSocketMessage, emit: (event: WatchEvent<T>) => void): void {
    if (message.kind !== "text" && message.kind !== "binary") return;
    let event: WatchEvent<T>;
    try {
      event = message.kind === "text" ? this.decodeText(message.text) : this.decodeBinary(message.bytes);
    } catch (error) {
      if (!(error instanceof DecodeError)) throw error;
      const where = error.offset > 0 ? ` (at byte ${error.offset} of the ${message.kind} message's payload)` : "";
      throw new DecodeError(error.code, message.offset, `${error.detail}${where}`, {
        ...(error.cause === undefined ? {} : { cause: error.cause }),
      });
    }
    emit(event);
  }

  /** Nothing is held between messages. */
  finish(): void {}
}
