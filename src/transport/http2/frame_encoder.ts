/**
 * {@linkcode encodeHttp2Frame}: an HTTP/2 frame (RFC 9113 §4, §6) to its bytes.
 *
 * @module
 */
import { concatBytes } from "../../bytes.ts";
import {
  HTTP2_CLIENT_PREFACE,
  HTTP2_FRAME_HEADER_LENGTH,
  HTTP2_MAX_FRAME_SIZE_LIMIT,
  Http2Flag,
  type Http2FrameInit,
  Http2FrameType,
  type Http2Priority,
} from "./frames.ts";

function check(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

function put32(out: Uint8Array, at: number, value: number): void {
  out[at] = value >>> 24;
  out[at + 1] = value >>> 16;
  out[at + 2] = value >>> 8;
  out[at + 3] = value;
}

function putPriority(out: Uint8Array, at: number, priority: Http2Priority): void {
  const dependency = check("streamDependency", priority.streamDependency, 0, 0x7fffffff);
  put32(out, at, (priority.exclusive ? 0x80000000 : 0) + dependency);
  out[at + 4] = check("weight", priority.weight, 1, 256) - 1;
}

/**
 * Encodes one frame: its 9-byte header and payload, padding (zeros) included. The flags a type defines are set from
 * the frame's booleans (`endStream`, `endHeaders`, `ack`, `padded`, or `priority` being present); `flags` adds other
 * bits. A decoded {@linkcode Http2Frame} re-encodes to the same bytes, padding contents aside.
 *
 * Field ranges are checked (a `RangeError` for a stream id beyond 31 bits, a payload over 16777215 bytes, a pad length
 * over 255, a PING without exactly 8 bytes, an UNKNOWN frame with a defined type code, ...); rules that need
 * connection state, or the receiver's SETTINGS_MAX_FRAME_SIZE, are the caller's to keep.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frame } from "watchwire/wire";
 *
 * const bytes = encodeHttp2Frame({ type: "DATA", streamId: 1, endStream: true, data: new TextEncoder().encode("hi") });
 * console.log(bytes); // Uint8Array(11) [ 0, 0, 2, 0, 1, 0, 0, 0, 1, 104, 105 ]
 * ```
 */
export function encodeHttp2Frame(frame: Http2FrameInit): Uint8Array {
  const streamId = check("streamId", frame.streamId, 0, 0x7fffffff);
  const extra = check("flags", frame.flags ?? 0, 0, 255);
  let type: number;
  let flags = 0;
  let defined = 0; // flag bits the type defines, taken from the booleans only
  let padLength = 0;
  let padded = false;
  let fixed = 0; // bytes between the pad length byte (if any) and the content
  let content: Uint8Array | undefined;
  let length: number;

  switch (frame.type) {
    case "DATA":
    case "HEADERS":
    case "PUSH_PROMISE": {
      padLength = check("padLength", frame.padLength ?? 0, 0, 255);
      padded = frame.padded ?? padLength > 0;
      if (!padded && padLength > 0) throw new RangeError("padLength is set on a frame that is not padded");
      defined = Http2Flag.PADDED | Http2Flag.END_STREAM | Http2Flag.END_HEADERS;
      if (padded) flags |= Http2Flag.PADDED;
      if (frame.type === "DATA") {
        type = Http2FrameType.DATA;
        defined = Http2Flag.PADDED | Http2Flag.END_STREAM;
        if (frame.endStream) flags |= Http2Flag.END_STREAM;
        content = frame.data;
      } else if (frame.type === "HEADERS") {
        type = Http2FrameType.HEADERS;
        defined |= Http2Flag.PRIORITY;
        if (frame.endStream) flags |= Http2Flag.END_STREAM;
        if (frame.endHeaders) flags |= Http2Flag.END_HEADERS;
        if (frame.priority !== undefined) {
          flags |= Http2Flag.PRIORITY;
          fixed = 5;
        }
        content = frame.fragment;
      } else {
        type = Http2FrameType.PUSH_PROMISE;
        defined = Http2Flag.PADDED | Http2Flag.END_HEADERS;
        if (frame.endHeaders) flags |= Http2Flag.END_HEADERS;
        check("promisedStreamId", frame.promisedStreamId, 0, 0x7fffffff);
        fixed = 4;
        content = frame.fragment;
      }
      length = (padded ? 1 : 0) + fixed + content.length + padLength;
      break;
    }
    case "PRIORITY":
      type = Http2FrameType.PRIORITY;
      length = 5;
      break;
    case "RST_STREAM":
      type = Http2FrameType.RST_STREAM;
      check("errorCode", frame.errorCode, 0, 0xffffffff);
      length = 4;
      break;
    case "SETTINGS":
      type = Http2FrameType.SETTINGS;
      defined = Http2Flag.ACK;
      if (frame.ack) flags |= Http2Flag.ACK;
      for (const [id, value] of frame.parameters) {
        check("setting identifier", id, 0, 0xffff);
        check("setting value", value, 0, 0xffffffff);
      }
      length = frame.parameters.length * 6;
      break;
    case "PING":
      type = Http2FrameType.PING;
      defined = Http2Flag.ACK;
      if (frame.ack) flags |= Http2Flag.ACK;
      check("PING opaqueData length", frame.opaqueData.length, 8, 8);
      length = 8;
      break;
    case "GOAWAY":
      type = Http2FrameType.GOAWAY;
      check("lastStreamId", frame.lastStreamId, 0, 0x7fffffff);
      check("errorCode", frame.errorCode, 0, 0xffffffff);
      length = 8 + frame.debugData.length;
      break;
    case "WINDOW_UPDATE":
      type = Http2FrameType.WINDOW_UPDATE;
      check("increment", frame.increment, 0, 0x7fffffff);
      length = 4;
      break;
    case "CONTINUATION":
      type = Http2FrameType.CONTINUATION;
      defined = Http2Flag.END_HEADERS;
      if (frame.endHeaders) flags |= Http2Flag.END_HEADERS;
      length = frame.fragment.length;
      break;
    case "UNKNOWN":
      type = check("frameType of an UNKNOWN frame", frame.frameType, 0x0a, 0xff);
      length = frame.payload.length;
      break;
  }
  check("payload length", length, 0, HTTP2_MAX_FRAME_SIZE_LIMIT);
  flags |= extra & ~defined;

  const out = new Uint8Array(HTTP2_FRAME_HEADER_LENGTH + length);
  out[0] = length >>> 16;
  out[1] = length >>> 8;
  out[2] = length;
  out[3] = type;
  out[4] = flags;
  put32(out, 5, streamId);
  const p = HTTP2_FRAME_HEADER_LENGTH;
  switch (frame.type) {
    case "DATA":
    case "HEADERS":
    case "PUSH_PROMISE": {
      let at = p;
      if (padded) out[at++] = padLength;
      if (frame.type === "HEADERS" && frame.priority !== undefined) putPriority(out, at, frame.priority);
      if (frame.type === "PUSH_PROMISE") put32(out, at, frame.promisedStreamId);
      out.set(content!, at + fixed); // padding stays zero
      break;
    }
    case "PRIORITY":
      putPriority(out, p, frame.priority);
      break;
    case "RST_STREAM":
      put32(out, p, frame.errorCode);
      break;
    case "SETTINGS":
      frame.parameters.forEach(([id, value], k) => {
        out[p + 6 * k] = id >>> 8;
        out[p + 6 * k + 1] = id;
        put32(out, p + 6 * k + 2, value);
      });
      break;
    case "PING":
      out.set(frame.opaqueData, p);
      break;
    case "GOAWAY":
      put32(out, p, frame.lastStreamId);
      put32(out, p + 4, frame.errorCode);
      out.set(frame.debugData, p + 8);
      break;
    case "WINDOW_UPDATE":
      put32(out, p, frame.increment);
      break;
    case "CONTINUATION":
      out.set(frame.fragment, p);
      break;
    case "UNKNOWN":
      out.set(frame.payload, p);
      break;
  }
  return out;
}

/**
 * Encodes frames one after another into one byte array, optionally after the client preface.
 *
 * @example
 * ```ts
 * import { encodeHttp2Frames } from "watchwire/wire";
 *
 * const bytes = encodeHttp2Frames([{ type: "SETTINGS", streamId: 0, parameters: [] }], { preface: true });
 * console.log(bytes.length); // 33: the 24-byte preface and an empty SETTINGS frame
 * ```
 */
export function encodeHttp2Frames(frames: Iterable<Http2FrameInit>, options: { preface?: boolean } = {}): Uint8Array {
  const parts = [...frames].map(encodeHttp2Frame);
  if (options.preface) parts.unshift(new TextEncoder().encode(HTTP2_CLIENT_PREFACE));
  return concatBytes(parts);
}
