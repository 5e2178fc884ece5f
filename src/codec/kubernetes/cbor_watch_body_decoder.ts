/**
 * {@linkcode KubernetesCborWatchBodyDecoder}: the decoding of a Kubernetes CBOR watch body (bytes to typed watch
 * events) without a stream.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import { CborSequenceDecoder } from "../../framing/cbor_sequence_decoder.ts";
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import { toWatchEvent } from "../watch_event_decoder_stream.ts";
import { watchEventOf } from "../value_constructors.ts";
import { KUBERNETES_CBOR_SPLIT_DEPTH } from "./decode_kubernetes_cbor_object.ts";
import { readKubernetesCborValue } from "./read_kubernetes_cbor_value.ts";

/**
 * Options of {@linkcode KubernetesCborWatchBodyDecoder} and `KubernetesCborWatchBodyDecoderStream`.
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import { KubernetesCborWatchBodyDecoderStream, type KubernetesCborWatchOptions } from "watchwire/kubernetes";
 *
 * const options: KubernetesCborWatchOptions = { maxEventBytes: 1024 };
 * const body = new Blob([Uint8Array.of(0xd9, 0xd9, 0xf7, 0x5a, 0, 1, 0, 0)]).stream(); // a byte string of 65536 bytes
 * try {
 *   for await (const _ of body.pipeThrough(new KubernetesCborWatchBodyDecoderStream(options)));
 * } catch (e) {
 *   if (e instanceof DecodeError) console.log(e.code, e.offset); // MESSAGE_TOO_LARGE 0
 * }
 * ```
 */
export interface KubernetesCborWatchOptions {
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes: here one
   * CBOR data item, refused as soon as a head announces more. Default `DEFAULT_MAX_EVENT_BYTES` (16 MiB).
   */
  maxEventBytes?: number;
}

/**
 * What `KubernetesCborWatchBodyDecoderStream` does, as a {@linkcode StreamDecoder}: body bytes in, typed
 * {@linkcode WatchEvent}s out, with the same rules (see the stream). For a stream of event batches
 * (`BatchDecoderStream`), or to decode inside another stage without a stream of its own.
 *
 * @example
 * ```ts
 * import type { KubernetesObject, WatchEvent } from "watchwire";
 * import { KubernetesCborWatchBodyDecoder } from "watchwire/kubernetes";
 *
 * // {"type": "ADDED", "object": {"metadata": {"name": "a"}}}, self-described, keys and strings as byte strings.
 * const hex = "d9d9f7a24474797065454144444544466f626a656374a1486d65746164617461a1446e616d654161";
 * const body = Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16));
 * const decoder = new KubernetesCborWatchBodyDecoder<KubernetesObject>();
 * const events: WatchEvent<KubernetesObject>[] = [];
 * decoder.push(body.subarray(0, 20), (event) => events.push(event)); // the event's first bytes: nothing yet
 * decoder.push(body.subarray(20), (event) => events.push(event));
 * decoder.finish();
 * const first = events[0];
 * console.log(first.type, first.type === "ADDED" ? first.object.metadata?.name : undefined); // ADDED a
 * ```
 */
export class KubernetesCborWatchBodyDecoder<T = KubernetesObject> implements StreamDecoder<Uint8Array, WatchEvent<T>> {
  readonly #items: CborSequenceDecoder;

  constructor(options: KubernetesCborWatchOptions = {}) {
    this.#items = new CborSequenceDecoder({
      maxEventBytes: options.maxEventBytes,
      maxDepth: KUBERNETES_CBOR_SPLIT_DEPTH,
    });
  }

  /** Decodes the events `chunk` completes, keeping the unfinished one. Throws a `DecodeError` on a fault. */
  push(chunk: Uint8Array, emit: (event: WatchEvent<T>) => void): void {
    this.#items.push(chunk, (item, offset) => emit(decodeEvent<T>(item, offset)));
  }

  /** The body has ended: throws `TRUNCATED` if it ended inside an event. */
  finish(): void {
    this.#items.finish();
  }
}

/** One data item of a CBOR watch, at input offset `offset`, as a typed event. */
function decodeEvent<T>(item: Uint8Array, offset: number): WatchEvent<T> {
  const value = readKubernetesCborValue(item, 0, item.length, offset, "CBOR watch event");
  try {
    const event = toWatchEvent<T>(value);
    // `type` first, as in the JSON (the reader sorts keys).
    return watchEventOf(event.type, event.object) as WatchEvent<T>;
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    throw new DecodeError(error.code, offset, error.detail);
  }
}
