/**
 * {@linkcode WebSocketMessage}: what the WebSocket frame decoder makes of one direction of a connection (RFC 6455):
 * whole messages (fragments joined) and control frames, each with where it starts in the input.
 *
 * @module
 */

/**
 * Which end of a WebSocket connection sent the bytes a decoder reads: a client masks every frame it sends, a server
 * masks none (RFC 6455 §5.1).
 *
 * @example
 * ```ts
 * import type { WebSocketSender } from "watchwire/wire";
 *
 * // The bytes a kube-apiserver sends after its `101 Switching Protocols`.
 * const sender: WebSocketSender = "server";
 * console.log(sender === "server" ? "unmasked frames" : "masked frames"); // unmasked frames
 * ```
 */
export type WebSocketSender = "client" | "server";

/**
 * A text message: its payload (all its fragments, unmasked) and that payload decoded from UTF-8, which it must be.
 *
 * @example
 * ```ts
 * import type { WebSocketTextMessage } from "watchwire/wire";
 *
 * const message: WebSocketTextMessage = { kind: "text", text: "hi", bytes: Uint8Array.of(0x68, 0x69), offset: 0 };
 * console.log(message.text, message.bytes.length); // hi 2
 * ```
 */
export interface WebSocketTextMessage {
  kind: "text";
  /** The payload as text. */
  text: string;
  /** The payload's bytes (UTF-8). */
  bytes: Uint8Array;
  /** The input offset of the message's first frame (its header's first byte). */
  offset: number;
}

/**
 * A binary message (all its fragments joined), or a ping or a pong (a control frame, at most 125 bytes).
 *
 * @example
 * ```ts
 * import type { WebSocketBytesMessage } from "watchwire/wire";
 *
 * const ping: WebSocketBytesMessage = { kind: "ping", bytes: new Uint8Array(0), offset: 120 };
 * console.log(ping.kind, ping.offset); // ping 120
 * ```
 */
export interface WebSocketBytesMessage {
  kind: "binary" | "ping" | "pong";
  /** The payload, unmasked. */
  bytes: Uint8Array;
  /** The input offset of the message's first frame (its header's first byte). */
  offset: number;
}

/**
 * A close frame: its status code and reason, if it has them (RFC 6455 §5.5.1, §7.4). Nothing may follow it in the
 * same direction.
 *
 * @example
 * ```ts
 * import type { WebSocketCloseMessage } from "watchwire/wire";
 *
 * // What kube-apiserver sends when a watch ends (its timeoutSeconds): 1000, normal closure, no reason.
 * const close: WebSocketCloseMessage = { kind: "close", code: 1000, reason: "", bytes: Uint8Array.of(3, 0xe8), offset: 1141 };
 * console.log(close.code); // 1000
 * ```
 */
export interface WebSocketCloseMessage {
  kind: "close";
  /** The status code; `undefined` when the frame has no payload (what an API reports as 1005, "no status"). */
  code: number | undefined;
  /** The reason (UTF-8), `""` when there is none. */
  reason: string;
  /** The payload, unmasked: the code (2 bytes, big-endian) and the reason. */
  bytes: Uint8Array;
  /** The input offset of the frame (its header's first byte). */
  offset: number;
}

/**
 * One message of a WebSocket connection's direction, as {@linkcode WebSocketFrameDecoder} hands it on: `text`,
 * `binary`, `ping`, `pong` or `close`.
 *
 * @example
 * ```ts
 * import type { WebSocketMessage } from "watchwire/wire";
 *
 * function describe(message: WebSocketMessage): string {
 *   switch (message.kind) {
 *     case "text":
 *       return `text ${JSON.stringify(message.text)}`;
 *     case "close":
 *       return `close ${message.code ?? "(no code)"} ${message.reason}`.trim();
 *     default:
 *       return `${message.kind} of ${message.bytes.length} bytes`;
 *   }
 * }
 * console.log(describe({ kind: "binary", bytes: new Uint8Array(3), offset: 0 })); // binary of 3 bytes
 * ```
 */
export type WebSocketMessage = WebSocketTextMessage | WebSocketBytesMessage | WebSocketCloseMessage;

/**
 * Whether `code` may stand in a close frame (RFC 6455 §7.4): 1000 to 1003, 1007 to 1014 (the codes defined since, in
 * IANA's registry), and 3000 to 4999 (registered names and private use). Never 1004 (reserved), 1005, 1006 or 1015
 * (which only an API reports: no status, no close frame, a TLS failure), nor any other below 3000.
 *
 * @example
 * ```ts
 * import { isWebSocketCloseCodeAllowed } from "watchwire/wire";
 *
 * console.log([1000, 1005, 1011, 2999, 4000].map(isWebSocketCloseCodeAllowed)); // [ true, false, true, false, true ]
 * ```
 */
export function isWebSocketCloseCodeAllowed(code: number): boolean {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}
