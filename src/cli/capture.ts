/**
 * `watchwire decode` of a capture file (pcap, pcapng): every watch in it, printed with its connection and time, as it
 * is read (so that `tcpdump -w - | watchwire decode -` prints events live), and a summary on stderr.
 *
 * @module
 */
import { decodeCapture } from "../watch/decode_capture.ts";
import type { CaptureTime } from "../capture/records.ts";
import { DecodeError } from "../errors.ts";
import { builtinDecoders } from "../codec/kubernetes/generated/all.ts";
import { etcdEventToJson } from "../codec/etcd/etcd_watch_decoder_stream.ts";
import { formatEtcdTableRow } from "./etcd.ts";
import { formatTableRow } from "./format.ts";
import type { GrpcDecoders } from "./proto_files.ts";

/** What a capture's decoding needs of the command's options. */
export interface CaptureCliOptions {
  output: "ndjson" | "table";
  maxEventBytes: number | undefined;
  /** The key log's text (`--keylog FILE`), if given. */
  keyLog: string | undefined;
  /** `--connection N`: only these connections' events. */
  connections: number[];
  /** `--path TEXT`: only events of requests whose path holds TEXT. */
  path: string | undefined;
  /** `--proto FILE`, `--proto-path DIR`: the decoders of other gRPC calls' responses, made from these. */
  grpc: GrpcDecoders | undefined;
}

/** Where lines go: stdout lines, stderr notes, and a flush (lines are written in blocks). */
export interface CaptureOutput {
  line(text: string): Promise<void> | undefined;
  note(text: string): Promise<void>;
  flush(): Promise<void>;
}

/** Whether `head` (a file's first bytes) is a pcap or pcapng file. */
export function isCaptureFile(head: Uint8Array): boolean {
  if (head.length < 4) return false;
  const magic = ((head[0] << 24) | (head[1] << 16) | (head[2] << 8) | head[3]) >>> 0;
  return [0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1, 0x0a0d0d0a].includes(magic);
}

/** A capture time as RFC 3339 UTC with nanoseconds. */
export function formatCaptureTime(time: CaptureTime): string {
  const iso = new Date(time.seconds * 1000).toISOString(); // ...:SS.000Z
  return `${iso.slice(0, 19)}.${String(time.nanoseconds).padStart(9, "0")}Z`;
}

/** Decodes one capture file; returns the exit status (1 if the file or a connection had a fault). */
export async function decodeCaptureFile(
  file: string,
  capture: ReadableStream<Uint8Array>,
  options: CaptureCliOptions,
  out: CaptureOutput,
): Promise<number> {
  let status = 0;
  const wanted = (connection: number, path: string | undefined) =>
    (options.connections.length === 0 || options.connections.includes(connection)) &&
    (options.path === undefined || (path ?? "").includes(options.path));
  // Lines reach stdout within a short while even when the capture is a live pipe that pauses.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const soon = () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      void out.flush();
    }, 100);
  };
  const print = async (text: string) => {
    const pending = out.line(text);
    if (pending !== undefined) await pending;
    soon();
  };
  try {
    const items = decodeCapture(capture, {
      keyLog: options.keyLog,
      maxEventBytes: options.maxEventBytes,
      protobuf: { decoders: builtinDecoders },
      grpc: options.grpc,
    });
    for await (const item of items) {
      switch (item.kind) {
        case "event":
          if (!wanted(item.connection, item.path)) break;
          await print(
            options.output === "table"
              ? `${formatCaptureTime(item.time)}  ${String(item.connection).padStart(4)}  ${formatTableRow(item.event)}`
              : JSON.stringify({
                time: formatCaptureTime(item.time),
                connection: item.connection,
                stream: item.stream,
                path: item.path,
                type: item.event.type,
                object: item.event.object,
              }),
          );
          break;
        case "etcd":
          if (!wanted(item.connection, item.path)) break;
          await print(
            options.output === "table"
              ? `${formatCaptureTime(item.time)}  ${String(item.connection).padStart(4)}  ${
                formatEtcdTableRow(item.event)
              }`
              : JSON.stringify({
                time: formatCaptureTime(item.time),
                connection: item.connection,
                stream: item.stream,
                path: item.path,
                ...etcdEventToJson(item.event),
              }),
          );
          break;
        case "grpc":
          if (!wanted(item.connection, item.path)) break;
          await print(
            options.output === "table"
              ? `${formatCaptureTime(item.time)}  ${String(item.connection).padStart(4)}  ${item.path} ${
                item.direction === "request" ? "request" : "response"
              } ${JSON.stringify(item.message)}`
              : JSON.stringify({
                time: formatCaptureTime(item.time),
                connection: item.connection,
                stream: item.stream,
                path: item.path,
                direction: item.direction,
                message: item.message,
              }),
          );
          break;
        case "websocket":
          // Pings and pongs are noise here; the client's messages and the close frames say something.
          if (!wanted(item.connection, item.path) || item.message === "ping" || item.message === "pong") break;
          await print(
            options.output === "table"
              ? `${formatCaptureTime(item.time)}  ${
                String(item.connection).padStart(4)
              }  WebSocket ${item.direction} ${item.message} (${item.bytes} bytes)${
                item.code === undefined ? "" : ` ${item.code} ${item.reason ?? ""}`
              }`
              : JSON.stringify({
                time: formatCaptureTime(item.time),
                connection: item.connection,
                stream: item.stream,
                path: item.path,
                websocket: item.message,
                direction: item.direction,
                bytes: item.bytes,
                ...(item.code === undefined ? {} : { code: item.code, reason: item.reason }),
              }),
          );
          break;
        case "response":
          if (options.output === "table" && wanted(item.connection, item.path)) {
            await print(
              `${formatCaptureTime(item.time)}  ${String(item.connection).padStart(4)}  ${item.method ?? "?"} ${
                item.path ?? "?"
              } (HTTP/${item.http}, ${item.http === "2" ? "stream" : "response"} ${item.stream}): ${
                item.status ?? "?"
              }${item.watch ? "" : ", not a watch"}`,
            );
          }
          break;
        case "problem":
          status = 1;
          await out.note(`watchwire: ${file}: ${item.message}`);
          break;
        case "unknown-protocol":
          await out.note(`watchwire: ${file}: connection ${item.connection}: neither HTTP/1.1 nor HTTP/2: skipped`);
          break;
        case "gap":
          await out.note(
            `watchwire: ${file}: connection ${item.connection}: ${item.length} bytes of the ${item.direction}'s ` +
              `missing from the capture at its byte ${item.streamOffset}`,
          );
          break;
        case "resumed":
          await out.note(
            item.stream === undefined
              ? `watchwire: ${file}: connection ${item.connection}: decoding of the ${item.direction}'s bytes resumed ` +
                `after the gap (${item.skippedBytes} bytes skipped)`
              : `watchwire: ${file}: connection ${item.connection}, stream ${item.stream}${
                item.path === undefined ? "" : ` (${item.path})`
              }: the watch resumed at its next whole event (${item.skippedBytes} bytes of its body skipped, the ` +
                "events in them lost)",
          );
          break;
        case "summary": {
          const skipped = Object.entries(item.skipped).filter(([, n]) => n > 0).map(([why, n]) => `${n} ${why}`);
          await out.note(
            `watchwire: ${file}: ${item.packets} packets${
              skipped.length ? ` (skipped: ${skipped.join(", ")})` : ""
            }, ` +
              `${item.connections} connections, ${item.responses} responses, ${item.events} events, ${item.gaps} gaps, ` +
              `${item.resumed} resumed`,
          );
          break;
        }
        default:
          break;
      }
    }
  } catch (error) {
    await out.note(
      `watchwire: ${file}: ${
        error instanceof DecodeError ? `byte ${error.offset}: ${error.detail} [${error.code}]` : String(error)
      }`,
    );
    status = 1;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
  await out.flush();
  return status;
}
