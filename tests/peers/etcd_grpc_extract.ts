/**
 * Test helper: the gRPC calls of one recorded HTTP/2 connection (client-to-server and server-to-client bytes), by
 * stream, with Http2FrameDecoder and HpackDecoder used directly (no connection-level state machine): request headers
 * from the client's HEADERS (+ CONTINUATION) blocks, the server's header blocks, and each direction's DATA payloads
 * concatenated in order.
 */
import { DecodeError, type HeaderField, HpackDecoder, type Http2Frame, Http2FrameDecoder } from "../../mod.ts";

/** One HTTP/2 stream of a recorded connection. */
export interface RecordedStream {
  streamId: number;
  /** The client's header blocks (request headers, then any trailers). */
  requestHeaders: HeaderField[][];
  /** The server's header blocks (response headers, then trailers with grpc-status). */
  responseHeaders: HeaderField[][];
  /** The client's DATA payloads, concatenated. */
  requestData: Uint8Array;
  /** The server's DATA payloads, concatenated. */
  responseData: Uint8Array;
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

interface Side {
  headers: Map<number, HeaderField[][]>;
  data: Map<number, Uint8Array[]>;
}

/** Decodes one direction: header blocks (HPACK, in order) and DATA per stream. A connection cut mid-frame is tolerated. */
function decodeSide(bytes: Uint8Array, preface: "expect" | "none"): Side {
  const frames = new Http2FrameDecoder({ preface, maxFrameSize: 16777215 });
  const hpack = new HpackDecoder({ maxHeaderListSize: Infinity });
  const side: Side = { headers: new Map(), data: new Map() };
  let block: Uint8Array[] = [];
  let blockStream = 0;
  const endBlock = () => {
    const fields = hpack.decode(join(block));
    const list = side.headers.get(blockStream) ?? [];
    list.push(fields);
    side.headers.set(blockStream, list);
    block = [];
  };
  frames.push(bytes, (frame: Http2Frame) => {
    if (frame.type === "HEADERS" || frame.type === "CONTINUATION") {
      if (frame.type === "HEADERS") blockStream = frame.streamId;
      block.push(frame.fragment.slice());
      if (frame.endHeaders) endBlock();
    } else if (frame.type === "PUSH_PROMISE") {
      throw new Error("unexpected PUSH_PROMISE");
    } else if (frame.type === "DATA") {
      const list = side.data.get(frame.streamId) ?? [];
      list.push(frame.data.slice());
      side.data.set(frame.streamId, list);
    }
  });
  try {
    frames.finish();
  } catch (error) {
    // A recording stopped while a frame was in flight: what came before is complete.
    if (!(error instanceof DecodeError && error.code === "TRUNCATED")) throw error;
  }
  return side;
}

/** Every stream of a recorded connection, in stream id order. */
export function recordedStreams(clientToServer: Uint8Array, serverToClient: Uint8Array): RecordedStream[] {
  const c = decodeSide(clientToServer, "expect");
  const s = decodeSide(serverToClient, "none");
  const ids = new Set([...c.headers.keys(), ...c.data.keys(), ...s.headers.keys(), ...s.data.keys()]);
  ids.delete(0);
  return [...ids].sort((a, b) => a - b).map((streamId) => ({
    streamId,
    requestHeaders: c.headers.get(streamId) ?? [],
    responseHeaders: s.headers.get(streamId) ?? [],
    requestData: join(c.data.get(streamId) ?? []),
    responseData: join(s.data.get(streamId) ?? []),
  }));
}

/** The header `name`'s value in a header block. */
export function header(fields: HeaderField[] | undefined, name: string): string | undefined {
  return fields?.find(([n]) => n === name)?.[1];
}

/** The streams whose request `:path` is `path` (e.g. `/etcdserverpb.Watch/Watch`). */
export function grpcStreams(clientToServer: Uint8Array, serverToClient: Uint8Array, path: string): RecordedStream[] {
  return recordedStreams(clientToServer, serverToClient).filter((s) => header(s.requestHeaders[0], ":path") === path);
}

/** The server-to-client DATA bytes of the one etcd Watch stream of a connection (throws unless there is exactly one). */
export function etcdWatchBytes(clientToServer: Uint8Array, serverToClient: Uint8Array): Uint8Array {
  const streams = grpcStreams(clientToServer, serverToClient, "/etcdserverpb.Watch/Watch");
  if (streams.length !== 1) throw new Error(`expected one /etcdserverpb.Watch/Watch stream, found ${streams.length}`);
  const encoding = header(streams[0].responseHeaders[0], "grpc-encoding");
  if (encoding !== undefined && encoding !== "identity") throw new Error(`unexpected grpc-encoding ${encoding}`);
  return streams[0].responseData;
}
