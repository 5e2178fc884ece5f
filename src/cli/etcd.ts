/**
 * The CLI's etcd part: which HTTP/2 streams are etcd watches, their decoding pipeline, and how their events print.
 *
 * @module
 */
import { etcdEventToJson, EtcdWatchDecoderStream } from "../codec/etcd/etcd_watch_decoder_stream.ts";
import type { EtcdEvent, EtcdWatchResponse } from "../codec/etcd/watch_response.ts";
import { DecodeError } from "../errors.ts";
import { GrpcMessageDecoderStream } from "../framing/grpc_message_decoder_stream.ts";
import { parseGrpcStatus } from "../framing/grpc_status.ts";
import type { FieldList } from "../transport/field_line.ts";
import type { Http2Exchange } from "../transport/http2/exchanges.ts";

/** The request `:path` of etcd's Watch call. */
export const ETCD_WATCH_PATH = "/etcdserverpb.Watch/Watch";

/** What the payload of a stream is taken to be (`--payload`). */
export type Payload = "kubernetes" | "etcd";

const field = (fields: FieldList | undefined, name: string) => fields?.find(([n]) => n === name)?.[1];

/** A gRPC response (`content-type: application/grpc`, `application/grpc+proto`, ...). */
export function isGrpc(headers: FieldList | undefined): boolean {
  const type = field(headers, "content-type")?.toLowerCase();
  return type !== undefined && /^application\/grpc(?:[+;]|$)/.test(type);
}

/**
 * Whether a stream is read as an etcd watch: its request `:path` is the Watch call, or `--payload etcd` is given and
 * the response is gRPC (or its headers were not captured, so that it cannot be told).
 */
export function isEtcdWatch(exchange: Http2Exchange, payload: Payload): boolean {
  if (exchange.request?.path === ETCD_WATCH_PATH) return true;
  if (payload !== "etcd") return false;
  return exchange.response.headers === undefined || isGrpc(exchange.response.headers);
}

/**
 * The etcd watch responses in a gRPC body, decompressed as its `grpc-encoding` says; a message over `maxEventBytes`
 * (`--max-event-bytes`) is `MESSAGE_TOO_LARGE`.
 */
export function etcdWatchResponses(
  body: ReadableStream<Uint8Array>,
  encoding: string | undefined,
  maxEventBytes: number | undefined,
): ReadableStream<EtcdWatchResponse> {
  const name = (encoding ?? "identity").trim().toLowerCase();
  if (name !== "identity" && name !== "gzip") {
    body.cancel().catch(() => {});
    throw new DecodeError("ENCODING_UNSUPPORTED", 0, `grpc-encoding ${JSON.stringify(encoding)} is not supported`);
  }
  return body.pipeThrough(new GrpcMessageDecoderStream({ encoding: name, maxEventBytes }))
    .pipeThrough(new EtcdWatchDecoderStream());
}

/** The `grpc-encoding` of a response's headers. */
export function grpcEncoding(headers: FieldList | undefined): string | undefined {
  return field(headers, "grpc-encoding");
}

/** Notes worth a line on stderr for one watch response: a cancelled watch, a compacted start revision. */
export function etcdResponseNotes(response: EtcdWatchResponse): string[] {
  const notes: string[] = [];
  if (response.compactRevision !== 0) {
    notes.push(`watch ${response.watchId}: compacted (compact_revision ${response.compactRevision})`);
  }
  if (response.canceled) {
    notes.push(`watch ${response.watchId} canceled${response.cancelReason ? `: ${response.cancelReason}` : ""}`);
  }
  return notes;
}

/**
 * The gRPC status of a stream when it is not OK, as a note: from the trailers, or from the headers of a
 * trailers-only response. `undefined` for OK or no status at all (a capture that ends while the watch is open).
 */
export function grpcStatusNote(headers: FieldList | undefined, trailers: FieldList): string | undefined {
  const status = parseGrpcStatus(trailers.length > 0 ? trailers : headers ?? []);
  if (status === undefined || status.code === 0) return undefined;
  return `gRPC status ${status.code} ${status.name}${status.message ? `: ${status.message}` : ""}`;
}

/** One etcd event on one line: `etcdEventToJson`, the `etcdctl -w json` event shape with an explicit `type`. */
export function formatEtcdNdjson(event: EtcdEvent): string {
  return JSON.stringify(etcdEventToJson(event));
}

const WIDTHS = [7, 40, 13, 8] as const;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The etcd table's heading row. */
export function etcdTableHeader(): string {
  return row(["TYPE", "KEY", "MOD_REVISION", "VERSION", "VALUE_BYTES"]);
}

/**
 * A key for the table: as text when it is valid UTF-8 without control characters or spaces, else `base64:` and its
 * standard base64 (as in `-o ndjson`).
 */
export function tableKey(event: EtcdEvent): string {
  try {
    const text = strictUtf8.decode(event.kv.key);
    // deno-lint-ignore no-control-regex
    if (!/[\u0000-\u0020\u007f-\u009f]/.test(text) && !text.startsWith("base64:")) return text;
  } catch {
    // not UTF-8
  }
  return `base64:${etcdEventToJson(event).kv.key ?? ""}`;
}

/** One etcd event as a table row: type, key, mod_revision, version, value size in bytes. */
export function formatEtcdTableRow(event: EtcdEvent): string {
  return row([
    event.type,
    tableKey(event),
    String(event.kv.modRevision),
    String(event.kv.version),
    String(event.kv.value.length),
  ]);
}

function row(cells: string[]): string {
  let line = "";
  for (let i = 0; i < cells.length; i++) line += i < WIDTHS.length ? cells[i].padEnd(WIDTHS[i]) + " " : cells[i];
  return line.trimEnd();
}
