/**
 * {@linkcode KubernetesProtobufWatchBodyDecoderStream}: the body of a Kubernetes protobuf watch (bytes) to typed watch
 * events in one stage.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import { DecoderStream } from "../../streams/decoder_stream.ts";
import {
  KubernetesProtobufWatchBodyDecoder,
  type KubernetesProtobufWatchOptions,
} from "./protobuf_watch_body_decoder.ts";

/**
 * Decodes the body of a Kubernetes protobuf watch (`Content-Type: application/vnd.kubernetes.protobuf;stream=watch`)
 * into typed {@linkcode WatchEvent}s: the length-prefixed framing (4-byte big-endian length, then a
 * `meta.v1.WatchEvent` message) and the event decoding ({@linkcode KubernetesProtobufWatchFrameDecoder}) fused into one
 * stage ({@linkcode KubernetesProtobufWatchBodyDecoder}, which `BatchDecoderStream` runs for events in batches), so each
 * event costs one enqueue. A frame within one input chunk is decoded in place; one that spans chunks is copied once,
 * after its length has been checked against `maxEventBytes` (`MESSAGE_TOO_LARGE` at its prefix otherwise), into a
 * buffer of its exact length.
 *
 * Objects are decoded by `options.decoders` (`createKubernetesDecoders([coreV1])`, `builtinDecoders`; by default
 * none but `Status`: see {@linkcode KubernetesProtobufOptions}) in `options.mode`: `"full"` (default),
 * or `"metadata"`, where each object but a `Status` is a {@linkcode KubernetesProtobufObject} with `kind`,
 * `apiVersion` and `metadata` decoded and the rest decoded on demand (`decode()`). An object kept as bytes (metadata
 * mode, or a kind the decoders do not know) holds a view of its frame when the frame was copied into a buffer of its
 * own; else a view of the input chunk that holds its frame, when that chunk's `ArrayBuffer` is at most four times its
 * size plus 32 KiB (chunks are not to be written once enqueued, as Web Streams have it); else a copy of its own bytes (up to 8 KiB in a
 * 32 KiB block shared with other small copies, as Node's `Buffer` pool does). So a kept object keeps alive at most
 * four times its size plus 32 KiB, and copies only when views would keep more: a copy costs fresh memory, which costs
 * more than decoding the metadata. With `options.inputViews: "always"` it keeps views of the chunks whatever their
 * size, and never copies them: faster, for a reader that keeps no object for long.
 *
 * Errors are {@linkcode DecodeError}s whose offset counts bytes of this stream's input (a fault inside a frame: the
 * frame's offset + 4 + its position in the frame); every event before the fault is delivered first. A body that is a
 * single object (`k8s\0`...: a response without `;stream=watch`) is `MESSAGE_INVALID` at 0.
 *
 * @example
 * ```ts
 * import { KubernetesProtobufWatchBodyDecoderStream } from "watchwire/kubernetes";
 *
 * const envelope = [0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03];
 * const frame = [0x0a, 5, 0x45, 0x52, 0x52, 0x4f, 0x52, 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope];
 * const body = new Blob([Uint8Array.of(0, 0, 0, frame.length, ...frame)]).stream();
 * for await (const event of body.pipeThrough(new KubernetesProtobufWatchBodyDecoderStream())) {
 *   if (event.type === "ERROR") console.log(event.object.code); // 410
 * }
 * ```
 */
export class KubernetesProtobufWatchBodyDecoderStream<T = KubernetesObject>
  extends DecoderStream<Uint8Array, WatchEvent<T>> {
  constructor(options: KubernetesProtobufWatchOptions = {}) {
    super(new KubernetesProtobufWatchBodyDecoder<T>(options));
  }
}
