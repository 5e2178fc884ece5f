/**
 * HTTP/2 frames (RFC 9113 §4 and §6) as typed values, and the protocol's constants: frame types, flags, error codes
 * and settings identifiers. {@linkcode Http2FrameDecoder} produces these frames, {@linkcode encodeHttp2Frame} writes
 * them.
 *
 * @module
 */

/**
 * The 24-byte client connection preface (RFC 9113 §3.4) that opens the client-to-server direction.
 *
 * @example
 * ```ts
 * import { HTTP2_CLIENT_PREFACE } from "watchwire/wire";
 *
 * const capture = new TextEncoder().encode(HTTP2_CLIENT_PREFACE + "...");
 * console.log(new TextDecoder().decode(capture.subarray(0, 24)) === HTTP2_CLIENT_PREFACE); // true
 * ```
 */
export const HTTP2_CLIENT_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/**
 * Length of an HTTP/2 frame header: 24-bit length, 8-bit type, 8-bit flags, 1 reserved bit and a 31-bit stream id.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, HTTP2_FRAME_HEADER_LENGTH } from "watchwire/wire";
 *
 * const frame = encodeHttp2Frame({ type: "PING", streamId: 0, opaqueData: new Uint8Array(8) });
 * console.log(frame.length - HTTP2_FRAME_HEADER_LENGTH); // 8
 * ```
 */
export const HTTP2_FRAME_HEADER_LENGTH = 9;

/**
 * The initial SETTINGS_MAX_FRAME_SIZE (RFC 9113 §6.5.2): the largest payload a peer may send until told otherwise.
 *
 * @example
 * ```ts
 * import { HTTP2_DEFAULT_MAX_FRAME_SIZE } from "watchwire/wire";
 *
 * console.log(HTTP2_DEFAULT_MAX_FRAME_SIZE); // 16384
 * ```
 */
export const HTTP2_DEFAULT_MAX_FRAME_SIZE = 16384;

/**
 * The largest SETTINGS_MAX_FRAME_SIZE a peer may announce (2^24 - 1, the frame header's length field maximum).
 *
 * @example
 * ```ts
 * import { HTTP2_MAX_FRAME_SIZE_LIMIT } from "watchwire/wire";
 *
 * console.log(HTTP2_MAX_FRAME_SIZE_LIMIT === 2 ** 24 - 1); // true
 * ```
 */
export const HTTP2_MAX_FRAME_SIZE_LIMIT = 16777215;

/**
 * The frame type codes defined by RFC 9113 §6. Any other code is an extension frame ({@linkcode Http2UnknownFrame}).
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2FrameType } from "watchwire/wire";
 *
 * const frame = encodeHttp2Frame({ type: "SETTINGS", streamId: 0, parameters: [] });
 * console.log(frame[3] === Http2FrameType.SETTINGS); // true
 * ```
 */
export const Http2FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

/**
 * A frame type name of RFC 9113 §6.
 *
 * @example
 * ```ts
 * import { Http2FrameType } from "watchwire/wire";
 * import type { Http2FrameTypeName } from "watchwire/wire";
 *
 * const name: Http2FrameTypeName = "WINDOW_UPDATE";
 * console.log(name, Http2FrameType[name]); // WINDOW_UPDATE 8
 * ```
 */
export type Http2FrameTypeName = keyof typeof Http2FrameType;

/**
 * Frame flag bits (RFC 9113 §6). A bit means something only for the frame types that define it: `ACK` (SETTINGS,
 * PING) shares its bit with `END_STREAM` (DATA, HEADERS).
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2Flag } from "watchwire/wire";
 *
 * const data = encodeHttp2Frame({ type: "DATA", streamId: 1, endStream: true, data: new Uint8Array(0) });
 * console.log((data[4] & Http2Flag.END_STREAM) !== 0); // true
 * ```
 */
export const Http2Flag = {
  /** DATA, HEADERS: the last frame the sender sends on the stream. */
  END_STREAM: 0x1,
  /** SETTINGS, PING: an acknowledgement. */
  ACK: 0x1,
  /** HEADERS, PUSH_PROMISE, CONTINUATION: the field block ends with this frame. */
  END_HEADERS: 0x4,
  /** DATA, HEADERS, PUSH_PROMISE: a pad length byte and padding are present. */
  PADDED: 0x8,
  /** HEADERS: the (deprecated) priority fields are present. */
  PRIORITY: 0x20,
} as const;

/**
 * Error codes of RST_STREAM and GOAWAY frames (RFC 9113 §7). Unknown codes may occur and carry no special meaning.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2ErrorCode } from "watchwire/wire";
 *
 * const reset = encodeHttp2Frame({ type: "RST_STREAM", streamId: 1, errorCode: Http2ErrorCode.CANCEL });
 * console.log(reset.at(-1)); // 8
 * ```
 */
export const Http2ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const;

/**
 * SETTINGS parameter identifiers: RFC 9113 §6.5.2, ENABLE_CONNECT_PROTOCOL (RFC 8441) and NO_RFC7540_PRIORITIES
 * (RFC 9218). Unknown identifiers must be ignored; they stay in {@linkcode Http2SettingsFrame.parameters}.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2SettingId } from "watchwire/wire";
 *
 * const settings = encodeHttp2Frame({
 *   type: "SETTINGS",
 *   streamId: 0,
 *   parameters: [[Http2SettingId.MAX_FRAME_SIZE, 65536]],
 * });
 * console.log(settings.length); // 15: a 9-byte header and one 6-byte parameter
 * ```
 */
export const Http2SettingId = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
  ENABLE_CONNECT_PROTOCOL: 0x8,
  NO_RFC7540_PRIORITIES: 0x9,
} as const;

/**
 * What every frame carries.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2FrameBase } from "watchwire/wire";
 *
 * const wire = encodeHttp2Frames([
 *   { type: "SETTINGS", streamId: 0, parameters: [] },
 *   { type: "DATA", streamId: 1, endStream: true, data: new TextEncoder().encode("hi") },
 * ]);
 * const show = ({ streamId, flags, length, offset }: Http2FrameBase) => console.log(streamId, flags, length, offset);
 * new Http2FrameDecoder({ preface: "none" }).push(wire, show); // 0 0 0 0, then 1 1 2 9
 * ```
 */
export interface Http2FrameBase {
  /** The stream the frame belongs to; 0 for the connection. The reserved high bit is dropped. */
  streamId: number;
  /** The raw flags byte, including bits with no meaning for the type (which receivers ignore). */
  flags: number;
  /** The payload length from the frame header (padding included). */
  length: number;
  /** Byte offset of the frame's 9-byte header in the decoded input (the client preface counts). */
  offset: number;
}

/**
 * Stream priority fields of HEADERS (with the PRIORITY flag) and PRIORITY frames; deprecated by RFC 9113 §5.3.2.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2Priority } from "watchwire/wire";
 *
 * const priority: Http2Priority = { exclusive: true, streamDependency: 1, weight: 256 };
 * const bytes = encodeHttp2Frame({ type: "PRIORITY", streamId: 3, priority });
 * new Http2FrameDecoder({ preface: "none" }).push(bytes, (frame) => {
 *   if (frame.type !== "PRIORITY") return;
 *   const { exclusive, streamDependency, weight }: Http2Priority = frame.priority;
 *   console.log(exclusive, streamDependency, weight); // true 1 256
 * });
 * ```
 */
export interface Http2Priority {
  /** The E bit: the dependency is exclusive. */
  exclusive: boolean;
  /** The stream this one depends on (31 bits). */
  streamDependency: number;
  /** The weight, 1 to 256 (the wire carries weight - 1). */
  weight: number;
}

/**
 * A DATA frame (type 0x0, RFC 9113 §6.1): a run of a stream's content.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2DataFrame } from "watchwire/wire";
 *
 * const data = new TextEncoder().encode("hi");
 * const bytes = encodeHttp2Frame({ type: "DATA", streamId: 1, endStream: true, padLength: 3, data });
 * const onData = (frame: Http2DataFrame) =>
 *   console.log(frame.endStream, frame.padLength, frame.length, new TextDecoder().decode(frame.data)); // true 3 6 hi
 * new Http2FrameDecoder({ preface: "none" }).push(bytes, (frame) => {
 *   if (frame.type === "DATA") onData(frame);
 * });
 * ```
 */
export interface Http2DataFrame extends Http2FrameBase {
  /** Discriminant. */
  type: "DATA";
  /** END_STREAM flag. */
  endStream: boolean;
  /** PADDED flag. */
  padded: boolean;
  /** Bytes of padding (0 unless padded). */
  padLength: number;
  /** The content, padding removed: a `subarray` view, not a copy. */
  data: Uint8Array;
  /**
   * Only with the decoder's `dataInPieces` option: `true` when this is a piece of a frame that spans input chunks and
   * more pieces of it follow (`data` is then this piece's part of the content, `endStream` false); the last piece has
   * `more: false` and the frame's `endStream`. Absent otherwise.
   */
  more?: boolean;
}

/**
 * A HEADERS frame (type 0x1, RFC 9113 §6.2): opens a stream and carries the first fragment of a field block.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2HeadersFrame } from "watchwire/wire";
 *
 * // ":status: 200" as an HPACK indexed field (static table entry 8).
 * const bytes = encodeHttp2Frame({ type: "HEADERS", streamId: 1, endHeaders: true, fragment: Uint8Array.of(0x88) });
 * const onHeaders = (frame: Http2HeadersFrame) =>
 *   console.log(frame.endHeaders, frame.endStream, frame.priority, frame.fragment[0]); // true false undefined 136
 * new Http2FrameDecoder({ preface: "none" }).push(bytes, (frame) => {
 *   if (frame.type === "HEADERS") onHeaders(frame);
 * });
 * ```
 */
export interface Http2HeadersFrame extends Http2FrameBase {
  /** Discriminant. */
  type: "HEADERS";
  /** END_STREAM flag. */
  endStream: boolean;
  /** END_HEADERS flag: no CONTINUATION follows. */
  endHeaders: boolean;
  /** PADDED flag. */
  padded: boolean;
  /** Bytes of padding (0 unless padded). */
  padLength: number;
  /** The priority fields if the PRIORITY flag is set, else `undefined`. */
  priority: Http2Priority | undefined;
  /** The field block fragment (HPACK), padding and priority fields removed: a `subarray` view. */
  fragment: Uint8Array;
}

/**
 * A PRIORITY frame (type 0x2, RFC 9113 §6.3; deprecated, still allowed).
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2PriorityFrame } from "watchwire/wire";
 *
 * const bytes = encodeHttp2Frame({
 *   type: "PRIORITY",
 *   streamId: 5,
 *   priority: { exclusive: false, streamDependency: 3, weight: 16 },
 * });
 * const onPriority = (frame: Http2PriorityFrame) =>
 *   console.log(frame.streamId, frame.priority.streamDependency, frame.priority.weight); // 5 3 16
 * new Http2FrameDecoder({ preface: "none" }).push(bytes, (frame) => {
 *   if (frame.type === "PRIORITY") onPriority(frame);
 * });
 * ```
 */
export interface Http2PriorityFrame extends Http2FrameBase {
  /** Discriminant. */
  type: "PRIORITY";
  /** The priority fields. */
  priority: Http2Priority;
}

/**
 * An RST_STREAM frame (type 0x3, RFC 9113 §6.4): ends a stream abnormally.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2ErrorCode, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2RstStreamFrame } from "watchwire/wire";
 *
 * const bytes = encodeHttp2Frame({ type: "RST_STREAM", streamId: 1, errorCode: Http2ErrorCode.CANCEL });
 * const onReset = (frame: Http2RstStreamFrame) =>
 *   console.log(frame.streamId, frame.errorCode === Http2ErrorCode.CANCEL); // 1 true
 * new Http2FrameDecoder({ preface: "none" }).push(bytes, (frame) => {
 *   if (frame.type === "RST_STREAM") onReset(frame);
 * });
 * ```
 */
export interface Http2RstStreamFrame extends Http2FrameBase {
  /** Discriminant. */
  type: "RST_STREAM";
  /** Why, one of {@linkcode Http2ErrorCode} or an unknown code. */
  errorCode: number;
}

/**
 * The SETTINGS parameters watchwire knows by name, as their last value in a frame (RFC 9113 §6.5.3).
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2FrameDecoder, Http2SettingId } from "watchwire/wire";
 * import type { Http2Settings } from "watchwire/wire";
 *
 * const bytes = encodeHttp2Frame({
 *   type: "SETTINGS",
 *   streamId: 0,
 *   parameters: [[Http2SettingId.ENABLE_PUSH, 0], [Http2SettingId.MAX_FRAME_SIZE, 65536]],
 * });
 * new Http2FrameDecoder({ preface: "none" }).push(bytes, (frame) => {
 *   if (frame.type !== "SETTINGS") return;
 *   const settings: Http2Settings = frame.settings;
 *   console.log(settings.enablePush, settings.maxFrameSize, settings.headerTableSize); // false 65536 undefined
 * });
 * ```
 */
export interface Http2Settings {
  /** SETTINGS_HEADER_TABLE_SIZE (0x1). */
  headerTableSize?: number;
  /** SETTINGS_ENABLE_PUSH (0x2). */
  enablePush?: boolean;
  /** SETTINGS_MAX_CONCURRENT_STREAMS (0x3). */
  maxConcurrentStreams?: number;
  /** SETTINGS_INITIAL_WINDOW_SIZE (0x4). */
  initialWindowSize?: number;
  /** SETTINGS_MAX_FRAME_SIZE (0x5). */
  maxFrameSize?: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE (0x6). */
  maxHeaderListSize?: number;
  /** SETTINGS_ENABLE_CONNECT_PROTOCOL (0x8, RFC 8441). */
  enableConnectProtocol?: boolean;
  /** SETTINGS_NO_RFC7540_PRIORITIES (0x9, RFC 9218). */
  noRfc7540Priorities?: boolean;
}

/**
 * A SETTINGS frame (type 0x4, RFC 9113 §6.5).
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames, Http2FrameDecoder, Http2SettingId } from "watchwire/wire";
 * import type { Http2SettingsFrame } from "watchwire/wire";
 *
 * const { MAX_CONCURRENT_STREAMS } = Http2SettingId;
 * const wire = encodeHttp2Frames([
 *   // MAX_CONCURRENT_STREAMS twice (the last value counts), then an identifier watchwire does not know.
 *   {
 *     type: "SETTINGS",
 *     streamId: 0,
 *     parameters: [[MAX_CONCURRENT_STREAMS, 10], [MAX_CONCURRENT_STREAMS, 100], [0xf0, 1]],
 *   },
 *   { type: "SETTINGS", streamId: 0, ack: true, parameters: [] },
 * ]);
 * new Http2FrameDecoder({ preface: "none" }).push(wire, (frame) => {
 *   if (frame.type !== "SETTINGS") return;
 *   const { ack, parameters, settings }: Http2SettingsFrame = frame;
 *   console.log(ack, parameters.length, settings.maxConcurrentStreams); // false 3 100, then true 0 undefined
 * });
 * ```
 */
export interface Http2SettingsFrame extends Http2FrameBase {
  /** Discriminant. */
  type: "SETTINGS";
  /** ACK flag: acknowledges the peer's SETTINGS; then there are no parameters. */
  ack: boolean;
  /** Every parameter as `[identifier, value]`, in order, unknown identifiers included. */
  parameters: Array<[id: number, value: number]>;
  /** The known parameters by name (the last value where one repeats). */
  settings: Http2Settings;
}

/**
 * A PUSH_PROMISE frame (type 0x5, RFC 9113 §6.6): a server announces a stream it will push.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2PushPromiseFrame } from "watchwire/wire";
 *
 * // The promised request's field block: ":method: GET", ":path: /" (HPACK static entries 2 and 4).
 * const bytes = encodeHttp2Frame({
 *   type: "PUSH_PROMISE",
 *   streamId: 1,
 *   endHeaders: true,
 *   promisedStreamId: 2,
 *   fragment: Uint8Array.of(0x82, 0x84),
 * });
 * const onPush = (frame: Http2PushPromiseFrame) =>
 *   console.log(frame.streamId, frame.promisedStreamId, frame.endHeaders, frame.fragment.length); // 1 2 true 2
 * new Http2FrameDecoder({ preface: "none" }).push(bytes, (frame) => {
 *   if (frame.type === "PUSH_PROMISE") onPush(frame);
 * });
 * ```
 */
export interface Http2PushPromiseFrame extends Http2FrameBase {
  /** Discriminant. */
  type: "PUSH_PROMISE";
  /** END_HEADERS flag. */
  endHeaders: boolean;
  /** PADDED flag. */
  padded: boolean;
  /** Bytes of padding (0 unless padded). */
  padLength: number;
  /** The stream the server reserves (31 bits). */
  promisedStreamId: number;
  /** The field block fragment of the promised request: a `subarray` view. */
  fragment: Uint8Array;
}

/**
 * A PING frame (type 0x6, RFC 9113 §6.7).
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2PingFrame } from "watchwire/wire";
 *
 * const opaqueData = Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8);
 * const bytes = encodeHttp2Frame({ type: "PING", streamId: 0, ack: true, opaqueData });
 * const onPing = (frame: Http2PingFrame) => console.log(frame.ack, frame.opaqueData.join("")); // true 12345678
 * new Http2FrameDecoder({ preface: "none" }).push(bytes, (frame) => {
 *   if (frame.type === "PING") onPing(frame);
 * });
 * ```
 */
export interface Http2PingFrame extends Http2FrameBase {
  /** Discriminant. */
  type: "PING";
  /** ACK flag: a reply to a PING. */
  ack: boolean;
  /** The 8 opaque bytes: a `subarray` view. */
  opaqueData: Uint8Array;
}

/**
 * A GOAWAY frame (type 0x7, RFC 9113 §6.8): the connection is shutting down.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2ErrorCode, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2GoawayFrame } from "watchwire/wire";
 *
 * const bytes = encodeHttp2Frame({
 *   type: "GOAWAY",
 *   streamId: 0,
 *   lastStreamId: 7,
 *   errorCode: Http2ErrorCode.ENHANCE_YOUR_CALM,
 *   debugData: new TextEncoder().encode("too many streams"),
 * });
 * const onGoaway = ({ lastStreamId, errorCode, debugData }: Http2GoawayFrame) =>
 *   console.log(lastStreamId, errorCode, new TextDecoder().decode(debugData)); // 7 11 too many streams
 * new Http2FrameDecoder({ preface: "none" }).push(bytes, (frame) => {
 *   if (frame.type === "GOAWAY") onGoaway(frame);
 * });
 * ```
 */
export interface Http2GoawayFrame extends Http2FrameBase {
  /** Discriminant. */
  type: "GOAWAY";
  /** The highest stream id the sender may have processed (31 bits). */
  lastStreamId: number;
  /** Why, one of {@linkcode Http2ErrorCode} or an unknown code. */
  errorCode: number;
  /** Additional debug data (opaque, often text): a `subarray` view, possibly empty. */
  debugData: Uint8Array;
}

/**
 * A WINDOW_UPDATE frame (type 0x8, RFC 9113 §6.9): flow-control credit for a stream or (stream 0) the connection.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2WindowUpdateFrame } from "watchwire/wire";
 *
 * const wire = encodeHttp2Frames([
 *   { type: "WINDOW_UPDATE", streamId: 0, increment: 1048576 },
 *   { type: "WINDOW_UPDATE", streamId: 3, increment: 65535 },
 * ]);
 * const onWindowUpdate = ({ streamId, increment }: Http2WindowUpdateFrame) => {
 *   const target = streamId === 0 ? "connection" : `stream ${streamId}`;
 *   console.log(target, increment); // connection 1048576, then stream 3 65535
 * };
 * new Http2FrameDecoder({ preface: "none" }).push(wire, (frame) => {
 *   if (frame.type === "WINDOW_UPDATE") onWindowUpdate(frame);
 * });
 * ```
 */
export interface Http2WindowUpdateFrame extends Http2FrameBase {
  /** Discriminant. */
  type: "WINDOW_UPDATE";
  /** The window size increment, 1 to 2^31 - 1. */
  increment: number;
}

/**
 * A CONTINUATION frame (type 0x9, RFC 9113 §6.10): the next fragment of a field block.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2ContinuationFrame } from "watchwire/wire";
 *
 * // A field block in two fragments: HEADERS without END_HEADERS, then a CONTINUATION that ends it.
 * const wire = encodeHttp2Frames([
 *   { type: "HEADERS", streamId: 1, fragment: Uint8Array.of(0x82, 0x84) },
 *   { type: "CONTINUATION", streamId: 1, endHeaders: true, fragment: Uint8Array.of(0x86) },
 * ]);
 * const onContinuation = (frame: Http2ContinuationFrame) =>
 *   console.log(frame.streamId, frame.endHeaders, frame.fragment.length, frame.offset); // 1 true 1 11
 * new Http2FrameDecoder({ preface: "none" }).push(wire, (frame) => {
 *   if (frame.type === "CONTINUATION") onContinuation(frame);
 * });
 * ```
 */
export interface Http2ContinuationFrame extends Http2FrameBase {
  /** Discriminant. */
  type: "CONTINUATION";
  /** END_HEADERS flag. */
  endHeaders: boolean;
  /** The field block fragment: a `subarray` view. */
  fragment: Uint8Array;
}

/**
 * A frame of a type RFC 9113 does not define (an extension frame, §5.5). Receivers must ignore it; it is passed on
 * raw so a caller can skip it, or decode an extension it knows.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2UnknownFrame } from "watchwire/wire";
 *
 * // An extension frame: ORIGIN (type 0xc, RFC 8336), with no origins.
 * const bytes = encodeHttp2Frame({ type: "UNKNOWN", streamId: 0, frameType: 0xc, payload: new Uint8Array(0) });
 * const onUnknown = (frame: Http2UnknownFrame) => console.log(frame.frameType, frame.payload.length); // 12 0
 * new Http2FrameDecoder({ preface: "none" }).push(bytes, (frame) => {
 *   if (frame.type === "UNKNOWN") onUnknown(frame);
 * });
 * ```
 */
export interface Http2UnknownFrame extends Http2FrameBase {
  /** Discriminant. */
  type: "UNKNOWN";
  /** The frame type code (0x0a to 0xff). */
  frameType: number;
  /** The raw payload: a `subarray` view. */
  payload: Uint8Array;
}

/**
 * Any HTTP/2 frame, discriminated on `type`.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames, Http2FrameDecoderStream } from "watchwire/wire";
 * import type { Http2Frame } from "watchwire/wire";
 *
 * function describe(frame: Http2Frame): string {
 *   switch (frame.type) {
 *     case "DATA":
 *       return `DATA ${frame.data.length} bytes`;
 *     case "PING":
 *       return `PING ack=${frame.ack}`;
 *     default:
 *       return frame.type;
 *   }
 * }
 * const wire = encodeHttp2Frames([
 *   { type: "PING", streamId: 0, opaqueData: new Uint8Array(8) },
 *   { type: "DATA", streamId: 1, data: new TextEncoder().encode("hello") },
 *   { type: "WINDOW_UPDATE", streamId: 0, increment: 5 },
 * ]);
 * const frames = ReadableStream.from([wire]).pipeThrough(new Http2FrameDecoderStream({ preface: "none" }));
 * for await (const frame of frames) {
 *   console.log(describe(frame)); // PING ack=false, then DATA 5 bytes, then WINDOW_UPDATE
 * }
 * ```
 */
export type Http2Frame =
  | Http2DataFrame
  | Http2HeadersFrame
  | Http2PriorityFrame
  | Http2RstStreamFrame
  | Http2SettingsFrame
  | Http2PushPromiseFrame
  | Http2PingFrame
  | Http2GoawayFrame
  | Http2WindowUpdateFrame
  | Http2ContinuationFrame
  | Http2UnknownFrame;

/**
 * One frame type's shape for {@linkcode encodeHttp2Frame}: `F` without `offset`, `length` and (for SETTINGS) the
 * derived `settings`; the flag booleans, `padLength` and (except on a PRIORITY frame, whose payload it is) `priority`
 * optional, absent meaning unset or no padding; `flags` optional, adding flag bits the type does not define (for an
 * {@linkcode Http2UnknownFrame}, the whole flags byte).
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame } from "watchwire/wire";
 * import type { Http2DataFrame, Http2FrameInitOf } from "watchwire/wire";
 *
 * // No offset, length or flags to give; endStream, padded and padLength may be left out.
 * const init: Http2FrameInitOf<Http2DataFrame> = { type: "DATA", streamId: 1, data: new TextEncoder().encode("ok") };
 * console.log(encodeHttp2Frame(init).length); // 11
 * ```
 */
export type Http2FrameInitOf<F extends Http2Frame> =
  & Omit<
    F,
    | "offset"
    | "length"
    | "flags"
    | "settings"
    | (F extends Http2PriorityFrame ? never
      : Extract<keyof F, "endStream" | "endHeaders" | "padded" | "padLength" | "ack" | "priority">)
  >
  & Partial<
    Pick<
      F,
      F extends Http2PriorityFrame ? never
        : Extract<keyof F, "endStream" | "endHeaders" | "padded" | "padLength" | "ack" | "priority">
    >
  >
  & { flags?: number };

/**
 * A frame to encode: the shape of a decoded {@linkcode Http2Frame} without `offset`, `length` and (for SETTINGS)
 * `settings`, with the flag booleans, `padLength` and `priority` optional (see {@linkcode Http2FrameInitOf}). A
 * decoded frame is a valid input.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames, Http2FrameDecoder } from "watchwire/wire";
 * import type { Http2FrameInit } from "watchwire/wire";
 *
 * const frames: Http2FrameInit[] = [
 *   { type: "SETTINGS", streamId: 0, parameters: [] },
 *   { type: "WINDOW_UPDATE", streamId: 0, increment: 65535 },
 * ];
 * const wire = encodeHttp2Frames(frames);
 * // A decoded frame is an Http2FrameInit too, and re-encodes to the same bytes.
 * const decoded: Http2FrameInit[] = [];
 * new Http2FrameDecoder({ preface: "none" }).push(wire, (frame) => decoded.push(frame));
 * console.log(wire.length, encodeHttp2Frames(decoded).join() === wire.join()); // 22 true
 * ```
 */
export type Http2FrameInit = { [T in Http2Frame["type"]]: Http2FrameInitOf<Extract<Http2Frame, { type: T }>> }[
  Http2Frame["type"]
];
