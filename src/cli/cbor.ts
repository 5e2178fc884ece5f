/**
 * The CLI's Kubernetes CBOR part: telling a bare CBOR watch body by its first bytes, and a CBOR body that is one
 * object (a List) rather than a watch. Internal.
 *
 * @module
 */
import { KUBERNETES_CBOR_SPLIT_DEPTH } from "../codec/kubernetes/decode_kubernetes_cbor_object.ts";
import { readKubernetesCborValue } from "../codec/kubernetes/read_kubernetes_cbor_value.ts";
import { toWatchEvent } from "../codec/watch_event_decoder_stream.ts";
import { watchEventOf } from "../codec/value_constructors.ts";
import { DecodeError } from "../errors.ts";
import type { WatchEvent } from "../events.ts";
import { CborSequenceDecoder } from "../framing/cbor_sequence_decoder.ts";
import { DecoderStream } from "../streams/decoder_stream.ts";
import type { WatchBodyCodec } from "../watch/decode_watch_response.ts";
import type { ListNote } from "./protobuf.ts";

/** The media type the CLI gives a bare body that starts as a Kubernetes CBOR watch. */
export const CBOR_WATCH_MEDIA_TYPE = "application/cbor-seq";

/**
 * Whether `head` (the first bytes of a body) starts a Kubernetes CBOR watch (or object): the self-described CBOR tag
 * (`d9 d9 f7`) then a map. JSON starts with `{` or white space, a protobuf watch with a 4-byte length (its first byte
 * 0 for any event under 16 MiB), HTTP/1.1 with `HTTP/`, HTTP/2 with its preface or a frame header: no overlap.
 */
export function isCborWatch(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0xd9 && head[1] === 0xd9 && head[2] === 0xf7 &&
    ((head[3] >= 0xa0 && head[3] <= 0xbb) || head[3] === 0xbf);
}

function isList(value: unknown): value is { kind?: string; items: unknown[] } {
  return typeof value === "object" && value !== null && Array.isArray((value as { items?: unknown }).items) &&
    !("type" in value);
}

/**
 * Kubernetes CBOR bodies for the CLI (`application/cbor-seq` and `application/cbor`): each data item a watch event,
 * as the library decodes them, except that an item that is a List (the "list" of list-watch) becomes a
 * {@linkcode ListNote} rather than a fault, as for JSON and protobuf.
 */
export function cliCborCodec(maxEventBytes: number | undefined): WatchBodyCodec {
  return (body) => {
    const items = new CborSequenceDecoder({ maxEventBytes, maxDepth: KUBERNETES_CBOR_SPLIT_DEPTH });
    const events = new DecoderStream<Uint8Array, WatchEvent<unknown> | ListNote>({
      push(chunk, emit) {
        items.push(chunk, (item, offset) => {
          const value = readKubernetesCborValue(item, 0, item.length, offset, "CBOR watch event");
          if (isList(value)) {
            emit({ type: "LIST", kind: value.kind ?? "List", count: value.items.length });
            return;
          }
          try {
            const event = toWatchEvent(value);
            emit(watchEventOf(event.type, event.object));
          } catch (error) {
            if (!(error instanceof DecodeError)) throw error;
            throw new DecodeError(error.code, offset, error.detail);
          }
        });
      },
      finish() {
        items.finish();
      },
    });
    return body.pipeThrough(events) as ReadableStream<WatchEvent<unknown>>;
  };
}
