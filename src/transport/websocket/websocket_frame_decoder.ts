/**
 * {@linkcode WebSocketFrameDecoder}: the bytes of one direction of a WebSocket connection (RFC 6455 §5, what follows a
 * `101 Switching Protocols`) to its messages, as an incremental state machine. {@linkcode WebSocketFrameDecoderStream}
 * wraps it as a stream.
 *
 * @module
 */
import { concatBytes } from "../../bytes.ts";
import { DecodeError } from "../../errors.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../../limits.ts";
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import { isWebSocketCloseCodeAllowed, type WebSocketMessage, type WebSocketSender } from "./websocket_message.ts";

/**
 * Options of {@linkcode WebSocketFrameDecoder} and {@linkcode WebSocketFrameDecoderStream}.
 *
 * @example
 * ```ts
 * import type { WebSocketFrameDecoderOptions } from "watchwire/wire";
 *
 * // The client's side of a connection: masked frames, messages of 64 KiB at most.
 * const options: WebSocketFrameDecoderOptions = { sender: "client", maxEventBytes: 64 * 1024 };
 * console.log(options.sender); // client
 * ```
 */
export interface WebSocketFrameDecoderOptions {
  /**
   * Which end sent the bytes: `"server"` (its frames must not be masked) or `"client"` (they must be). A frame with
   * the other mask bit is a fault.
   */
  sender: WebSocketSender;
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes: here a
   * message's payload, all its fragments together, checked as each frame's header arrives, before its payload is
   * buffered. Default `DEFAULT_MAX_EVENT_BYTES` (16 MiB).
   */
  maxEventBytes?: number;
}

const OP_CONTINUATION = 0x0;
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;

/** The largest payload of a control frame (RFC 6455 §5.5). */
const MAX_CONTROL_PAYLOAD = 125;

const OPCODE_NAMES: Record<number, string> = {
  [OP_CONTINUATION]: "continuation",
  [OP_TEXT]: "text",
  [OP_BINARY]: "binary",
  [OP_CLOSE]: "close",
  [OP_PING]: "ping",
  [OP_PONG]: "pong",
};

/**
 * Decodes one direction of a WebSocket connection, the bytes after the handshake, into {@linkcode WebSocketMessage}s:
 * text and binary messages (fragments joined; a text message's payload checked and decoded as UTF-8), and the control
 * frames, ping, pong and close (its code and reason read), in the order they come (control frames may stand between
 * the fragments of a message, and are handed on there).
 *
 * Faults are {@linkcode DecodeError}s at the input offset of the frame at fault (its header's first byte), found as
 * soon as the bytes that show them arrive, after every message before them has been handed on:
 * - `FRAME_INVALID`: a reserved bit set (no extension is negotiated: permessage-deflate is not supported), a reserved
 *   opcode, a server frame that is masked or a client frame that is not, a 64-bit length with its top bit set, a
 *   control frame that is fragmented or longer than 125 bytes, a continuation with no message to continue or a new
 *   message before the last one ended, a close frame of 1 byte or with a code that may not be sent (1005, 1006, 1015,
 *   below 1000, ...).
 * - `MESSAGE_TOO_LARGE`: a frame whose length takes its message over `maxEventBytes` (before anything is allocated).
 * - `MESSAGE_INVALID`: a text message or close reason that is not UTF-8 (at the message's first frame).
 * - `TRAILING_DATA`: a frame after the close frame.
 * - `TRUNCATED` (at `finish`): the input ended inside a frame (at that frame) or inside a fragmented message (at its
 *   first frame). Input that ends between messages is not a fault: whether a close frame came is for the caller to see.
 *
 * A message of one unmasked frame within one input chunk is handed on as a view of the chunk (no copy); a masked one,
 * one that spans chunks or one in fragments gets a buffer of its own. The input is never written to.
 *
 * @example
 * ```ts
 * import type { WebSocketMessage } from "watchwire/wire";
 * import { WebSocketFrameDecoder } from "watchwire/wire";
 *
 * // A server's text frame "hi", then a close frame with code 1000.
 * const bytes = Uint8Array.of(0x81, 2, 0x68, 0x69, 0x88, 2, 0x03, 0xe8);
 * const decoder = new WebSocketFrameDecoder({ sender: "server" });
 * const messages: WebSocketMessage[] = [];
 * decoder.push(bytes.subarray(0, 3), (m) => messages.push(m)); // half a frame: nothing yet
 * decoder.push(bytes.subarray(3), (m) => messages.push(m));
 * decoder.finish();
 * for (const m of messages) console.log(m.kind, m.offset, m.kind === "text" ? m.text : m.kind === "close" ? m.code : ""); // text 0 hi, then close 4 1000
 * ```
 */
export class WebSocketFrameDecoder implements StreamDecoder<Uint8Array, WebSocketMessage> {
  readonly #masked: boolean;
  readonly #maxEventBytes: number;
  readonly #utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  /** Bytes consumed before the current chunk. */
  #offset = 0;

  /** The header of the current frame while it spans chunks: the bytes so far and how many it takes. */
  readonly #head = new Uint8Array(14);
  #headHave = 0;
  #headNeed = 2;
  /** The current frame: where it starts, its FIN bit, opcode and masking key. */
  #frameStart = 0;
  #fin = false;
  #opcode = 0;
  readonly #maskKey = new Uint8Array(4);
  /** The payload of the current frame while it spans chunks, and how much of it is filled. */
  #payload: Uint8Array | undefined;
  #filled = 0;

  /** The fragmented message in progress: its opcode (0: none), first frame, pieces (own copies) and length so far. */
  #messageOpcode = 0;
  #messageStart = 0;
  #pieces: Uint8Array[] = [];
  #messageLength = 0;

  /** Where the close frame was, once one came (-1: none yet). */
  #closedAt = -1;

  constructor(options: WebSocketFrameDecoderOptions) {
    const maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    if (!Number.isSafeInteger(maxEventBytes) || maxEventBytes < 0) {
      throw new RangeError(`maxEventBytes must be a non-negative integer, not ${maxEventBytes}`);
    }
    if (options.sender !== "client" && options.sender !== "server") {
      throw new TypeError(`sender must be "client" or "server", not ${JSON.stringify(options.sender)}`);
    }
    this.#maxEventBytes = maxEventBytes;
    this.#masked = options.sender === "client";
  }

  /** Bytes consumed so far. */
  get offset(): number {
    return this.#offset;
  }

  /** Whether a close frame has come (nothing may follow it). */
  get closed(): boolean {
    return this.#closedAt !== -1;
  }

  /** Hands on each message `chunk` completes, keeping an unfinished frame. Throws a {@linkcode DecodeError}. */
  push(chunk: Uint8Array, emit: (message: WebSocketMessage) => void): void {
    const n = chunk.length;
    const base = this.#offset;
    let i = 0;
    while (i < n) {
      const payload = this.#payload;
      if (payload !== undefined) {
        // The payload of a frame that began in an earlier chunk.
        const take = Math.min(payload.length - this.#filled, n - i);
        payload.set(take === n && i === 0 ? chunk : chunk.subarray(i, i + take), this.#filled);
        this.#filled += take;
        i += take;
        if (this.#filled === payload.length) {
          this.#payload = undefined;
          this.#filled = 0;
          this.#frame(payload, true, emit);
        }
        continue;
      }
      let header: Uint8Array;
      let at: number;
      if (this.#headHave === 0 && n - i >= 2) {
        // The common case: the header's first two bytes are here; the whole header most often too.
        this.#frameStart = base + i;
        this.#checkFirstByte(chunk[i]);
        this.#checkSecondByte(chunk[i + 1]);
        const need = headerLength(chunk[i + 1]);
        if (n - i < need) {
          this.#head.set(chunk.subarray(i), 0);
          this.#headHave = n - i;
          this.#headNeed = need;
          i = n;
          break;
        }
        header = chunk;
        at = i;
        i += need;
      } else {
        if (this.#headHave === 0) this.#frameStart = base + i;
        while (this.#headHave < this.#headNeed && i < n) {
          const b = chunk[i++];
          this.#head[this.#headHave++] = b;
          if (this.#headHave === 1) {
            this.#checkFirstByte(b);
          } else if (this.#headHave === 2) {
            this.#checkSecondByte(b);
            this.#headNeed = headerLength(b);
          }
        }
        if (this.#headHave < this.#headNeed) break;
        this.#headHave = 0;
        this.#headNeed = 2;
        header = this.#head;
        at = 0;
      }
      const length = this.#readHeader(header, at);
      if (n - i >= length) {
        this.#frame(chunk.subarray(i, i + length), false, emit);
        i += length;
        continue;
      }
      // The payload spans chunks: one buffer of exactly its length (checked against maxEventBytes already).
      const buffer = new Uint8Array(length);
      buffer.set(chunk.subarray(i), 0);
      this.#payload = buffer;
      this.#filled = n - i;
      i = n;
    }
    this.#offset += n;
  }

  /** The input has ended: `TRUNCATED` if it ended inside a frame or a fragmented message. */
  finish(): void {
    if (this.#payload !== undefined) {
      throw new DecodeError(
        "TRUNCATED",
        this.#frameStart,
        `websocket: input ended inside a ${this.#opcodeName()} frame's payload (${this.#filled} of ${this.#payload.length} bytes)`,
      );
    }
    if (this.#headHave > 0) {
      throw new DecodeError(
        "TRUNCATED",
        this.#frameStart,
        `websocket: input ended inside a frame's header (${this.#headHave} of ${
          this.#headHave < 2 ? "at least 2" : this.#headNeed
        } bytes)`,
      );
    }
    if (this.#messageOpcode !== 0) {
      throw new DecodeError(
        "TRUNCATED",
        this.#messageStart,
        `websocket: input ended inside a fragmented ${
          OPCODE_NAMES[this.#messageOpcode]
        } message (${this.#messageLength} bytes so far, no final frame)`,
      );
    }
  }

  #opcodeName(): string {
    return OPCODE_NAMES[this.#opcode] ?? `0x${this.#opcode.toString(16)}`;
  }

  #fault(detail: string): DecodeError {
    return new DecodeError("FRAME_INVALID", this.#frameStart, `websocket: ${detail}`);
  }

  /** FIN, the reserved bits and the opcode, checked against the state as soon as the byte arrives. */
  #checkFirstByte(b: number): void {
    if (this.#closedAt !== -1) {
      throw new DecodeError(
        "TRAILING_DATA",
        this.#frameStart,
        `websocket: a frame after the close frame at byte ${this.#closedAt}`,
      );
    }
    this.#fin = (b & 0x80) !== 0;
    this.#opcode = b & 0x0f;
    if ((b & 0x70) !== 0) {
      const bits = [0x40, 0x20, 0x10].flatMap((bit, k) => (b & bit) !== 0 ? [`RSV${k + 1}`] : []).join(", ");
      throw this.#fault(`reserved bit ${bits} set, and no extension was negotiated (compression is not supported)`);
    }
    const opcode = this.#opcode;
    if (OPCODE_NAMES[opcode] === undefined) throw this.#fault(`reserved opcode 0x${opcode.toString(16)}`);
    if (opcode >= OP_CLOSE) {
      if (!this.#fin) {
        throw this.#fault(`a ${this.#opcodeName()} frame without FIN: control frames are never fragmented`);
      }
    } else if (opcode === OP_CONTINUATION) {
      if (this.#messageOpcode === 0) throw this.#fault("a continuation frame with no fragmented message to continue");
    } else if (this.#messageOpcode !== 0) {
      throw this.#fault(
        `a new ${this.#opcodeName()} message before the ${
          OPCODE_NAMES[this.#messageOpcode]
        } message begun at byte ${this.#messageStart} ended`,
      );
    }
  }

  /** The mask bit and a control frame's 7-bit length, checked as soon as the byte arrives. */
  #checkSecondByte(b: number): void {
    const masked = (b & 0x80) !== 0;
    if (masked !== this.#masked) {
      throw this.#fault(
        masked
          ? "a masked frame from the server (a server never masks)"
          : "an unmasked frame from the client (a client masks every frame)",
      );
    }
    const length7 = b & 0x7f;
    if (this.#opcode >= OP_CLOSE && length7 > MAX_CONTROL_PAYLOAD) {
      throw this.#fault(
        `a ${this.#opcodeName()} frame with a ${
          length7 === 126 ? "16" : "64"
        }-bit length: a control frame's payload is at most 125 bytes`,
      );
    }
  }

  /** The payload length and masking key of the whole header at `header[at]`, checked against `maxEventBytes`. */
  #readHeader(header: Uint8Array, at: number): number {
    const length7 = header[at + 1] & 0x7f;
    let length: number;
    let keyAt = at + 2;
    if (length7 === 126) {
      length = (header[at + 2] << 8) | header[at + 3];
      keyAt += 2;
    } else if (length7 === 127) {
      const high = header[at + 2] * 0x100_0000 + ((header[at + 3] << 16) | (header[at + 4] << 8) | header[at + 5]);
      if (high >= 0x8000_0000) throw this.#fault("a 64-bit payload length with its most significant bit set");
      const low = header[at + 6] * 0x100_0000 + ((header[at + 7] << 16) | (header[at + 8] << 8) | header[at + 9]);
      // Not exact above 2^53, but such a length is over any maxEventBytes all the same.
      length = high * 0x1_0000_0000 + low;
      keyAt += 8;
    } else {
      length = length7;
    }
    if (this.#opcode < OP_CLOSE) {
      const message = this.#opcode === OP_CONTINUATION ? this.#messageLength + length : length;
      if (message > this.#maxEventBytes) {
        throw new DecodeError(
          "MESSAGE_TOO_LARGE",
          this.#frameStart,
          this.#opcode === OP_CONTINUATION
            ? `websocket: a continuation frame of ${length} bytes takes the message begun at byte ${this.#messageStart} to ${message} bytes, over maxEventBytes (${this.#maxEventBytes} bytes)`
            : `websocket: a ${this.#opcodeName()} frame of ${length} bytes is over maxEventBytes (${this.#maxEventBytes} bytes)`,
        );
      }
    }
    if (this.#masked) {
      const key = this.#maskKey;
      key[0] = header[keyAt];
      key[1] = header[keyAt + 1];
      key[2] = header[keyAt + 2];
      key[3] = header[keyAt + 3];
    }
    return length;
  }

  /**
   * A frame whose payload is complete: `own` says whether `payload` is a buffer of this decoder's (which may be
   * unmasked in place and kept) or a view of the caller's chunk (which is neither written nor kept).
   */
  #frame(payload: Uint8Array, own: boolean, emit: (message: WebSocketMessage) => void): void {
    let bytes = payload;
    if (this.#masked) {
      bytes = own ? payload : new Uint8Array(payload.length);
      const key = this.#maskKey;
      for (let j = 0; j < payload.length; j++) bytes[j] = payload[j] ^ key[j & 3];
      own = true;
    }
    const opcode = this.#opcode;
    const offset = this.#frameStart;
    switch (opcode) {
      case OP_PING:
      case OP_PONG:
        emit({ kind: opcode === OP_PING ? "ping" : "pong", bytes, offset });
        return;
      case OP_CLOSE:
        emit(this.#close(bytes, offset));
        return;
      case OP_CONTINUATION: {
        // A view of the chunk may be kept only until this call returns: a piece kept longer is copied.
        this.#pieces.push(own || this.#fin ? bytes : bytes.slice());
        this.#messageLength += bytes.length;
        if (!this.#fin) return;
        const whole = concatBytes(this.#pieces, this.#messageLength);
        const first = this.#messageOpcode;
        const start = this.#messageStart;
        this.#pieces = [];
        this.#messageLength = 0;
        this.#messageOpcode = 0;
        emit(this.#message(first, whole, start));
        return;
      }
      default:
        if (this.#fin) {
          emit(this.#message(opcode, bytes, offset));
          return;
        }
        this.#messageOpcode = opcode;
        this.#messageStart = offset;
        this.#pieces = [own ? bytes : bytes.slice()];
        this.#messageLength = bytes.length;
    }
  }

  /** A whole text or binary message. */
  #message(opcode: number, bytes: Uint8Array, offset: number): WebSocketMessage {
    if (opcode === OP_BINARY) return { kind: "binary", bytes, offset };
    let text: string;
    try {
      text = this.#utf8.decode(bytes);
    } catch (cause) {
      throw new DecodeError("MESSAGE_INVALID", offset, "websocket: a text message that is not valid UTF-8", { cause });
    }
    return { kind: "text", text, bytes, offset };
  }

  /** A close frame's code and reason (RFC 6455 §5.5.1); nothing may follow it. */
  #close(bytes: Uint8Array, offset: number): WebSocketMessage {
    let code: number | undefined;
    let reason = "";
    if (bytes.length === 1) throw this.#fault("a close frame of 1 byte (its status code takes 2)");
    if (bytes.length >= 2) {
      code = (bytes[0] << 8) | bytes[1];
      if (!isWebSocketCloseCodeAllowed(code)) {
        throw this.#fault(`a close frame with status code ${code}, which may not be sent`);
      }
      try {
        reason = this.#utf8.decode(bytes.subarray(2));
      } catch (cause) {
        throw new DecodeError("MESSAGE_INVALID", offset, "websocket: a close frame's reason that is not valid UTF-8", {
          cause,
        });
      }
    }
    this.#closedAt = offset;
    return { kind: "close", code, reason, bytes, offset };
  }
}

/** The length of a frame's header from its second byte: 2, the extended length (2 or 8), the masking key (4). */
function headerLength(second: number): number {
  const length7 = second & 0x7f;
  return 2 + (length7 === 126 ? 2 : length7 === 127 ? 8 : 0) + ((second & 0x80) !== 0 ? 4 : 0);
}
