/**
 * The CLI's Kubernetes protobuf part: telling a bare protobuf watch body by its first bytes, and a protobuf body that
 * is one object (a List) rather than a watch.
 *
 * @module
 */
import { decodeKubernetesProtobufObject } from "../codec/kubernetes/decode_kubernetes_protobuf_object.ts";
import { builtinDecoders } from "../codec/kubernetes/generated/all.ts";
import { hasKubernetesProtobufMagic, parseKubernetesEnvelope } from "../codec/kubernetes/envelope.ts";
import { ProtobufReader } from "../codec/protobuf/reader.ts";
import { concatBytes } from "../bytes.ts";
import { DecodeError } from "../errors.ts";
import { WATCH_EVENT_TYPES } from "../events.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../limits.ts";
import {
  BUILTIN_WATCH_CODECS,
  KUBERNETES_PROTOBUF_MEDIA_TYPE,
  type WatchBodyCodec,
} from "../watch/decode_watch_response.ts";
import { peek } from "./peek.ts";

/** What the CLI's codecs yield for a response that is a list, not a watch. */
export interface ListNote {
  type: "LIST";
  kind: string;
  count: number;
}

const EVENT_TYPES: ReadonlySet<string> = new Set(WATCH_EVENT_TYPES);

/** Bytes needed by {@linkcode isProtobufWatch}. */
export const PROTOBUF_WATCH_HEAD_BYTES = 14;

/**
 * Whether `head` (the first bytes of a body) starts a Kubernetes protobuf watch as the API server writes one: a
 * 4-byte length, then the event's `type` field first (`0x0a`, a length of 5 to 8, one of the five type names), all
 * within the announced length. JSON starts with `{` or white space, HTTP/1.1 with `HTTP/`, HTTP/2 with its preface
 * or a SETTINGS frame header (whose stream id, bytes 5-8, is zero where this needs a type name): no overlap.
 */
export function isProtobufWatch(head: Uint8Array): boolean {
  if (head.length < 6 || head[4] !== 0x0a) return false;
  const n = head[5];
  if (n < 5 || n > 8 || head.length < 6 + n) return false;
  const length = head[0] * 0x100_0000 + ((head[1] << 16) | (head[2] << 8) | head[3]);
  if (length < 2 + n) return false;
  return EVENT_TYPES.has(new TextDecoder().decode(head.subarray(6, 6 + n)));
}

/** The number of `items` (field 2, as in every built-in List) at the top level of a list object's message. */
function countItems(bytes: Uint8Array, start: number, end: number): number {
  const r = new ProtobufReader(bytes, 0, start, end);
  let count = 0;
  while (!r.done) {
    const tag = r.tag();
    if (tag === ((2 << 3) | 2)) count++;
    r.skip(tag);
  }
  return count;
}

/** All of `body`, up to `maxEventBytes` bytes (`MESSAGE_TOO_LARGE` beyond). */
async function readAll(body: ReadableStream<Uint8Array>, maxEventBytes: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxEventBytes) {
      throw new DecodeError("MESSAGE_TOO_LARGE", 0, `a protobuf object over maxEventBytes (${maxEventBytes} bytes)`);
    }
    parts.push(chunk);
  }
  return concatBytes(parts, size);
}

/**
 * Kubernetes protobuf bodies for the CLI: a watch (its first bytes are not the `k8s\0` magic) goes to the library's
 * pipeline; a single object (the "list" of list-watch, `Content-Type: application/vnd.kubernetes.protobuf` without
 * `;stream=watch`) becomes a {@linkcode ListNote} if it is a List, else a fault, as for JSON.
 */
export function cliProtobufCodec(maxEventBytes: number | undefined): WatchBodyCodec {
  const watch = BUILTIN_WATCH_CODECS[KUBERNETES_PROTOBUF_MEDIA_TYPE];
  return (body, mediaType, options) => {
    let source: ReadableStreamDefaultReader<unknown> | undefined;
    const open = async (): Promise<ReadableStreamDefaultReader<unknown>> => {
      const { head, stream } = await peek(body, 4);
      if (!hasKubernetesProtobufMagic(head)) return watch(stream, mediaType, options).getReader();
      const bytes = await readAll(stream, maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES);
      const envelope = parseKubernetesEnvelope(bytes);
      if (!envelope.kind.endsWith("List")) {
        decodeKubernetesProtobufObject(bytes, { decoders: builtinDecoders }); // its faults first; a whole object is still not a watch event
        throw new DecodeError("EVENT_INVALID", 0, `the body is a single ${envelope.kind}, not a watch`);
      }
      const note: ListNote = {
        type: "LIST",
        kind: envelope.kind,
        count: countItems(bytes, envelope.rawStart, envelope.rawEnd),
      };
      return new ReadableStream<unknown>({
        start(controller) {
          controller.enqueue(note);
          controller.close();
        },
      }).getReader();
    };
    // Pulled one value at a time, so that every event before a fault is read before the fault.
    return new ReadableStream<never>({
      async pull(controller) {
        source ??= await open();
        const { done, value } = await source.read();
        if (done) controller.close();
        else controller.enqueue(value as never);
      },
      cancel(reason) {
        return source !== undefined ? source.cancel(reason) : body.cancel(reason);
      },
    }, { highWaterMark: 0 });
  };
}
