/**
 * {@linkcode KubernetesProtobufWatchFrameDecoderStream}: the frames of a Kubernetes protobuf watch to typed watch
 * events.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import { DecoderStream } from "../../streams/decoder_stream.ts";
import type { KubernetesProtobufOptions } from "./protobuf_options.ts";
import { KubernetesObjectReader } from "./object_reader.ts";
import { decodeWatchEventFrame } from "./watch_event_frame.ts";

/**
 * Decodes the frames of a Kubernetes protobuf watch, as `LengthPrefixedDecoderStream` hands them on (each a
 * `meta.v1.WatchEvent` message without its 4-byte length prefix), into typed {@linkcode WatchEvent}s (see
 * {@linkcode KubernetesProtobufWatchFrameDecoder}; options as {@linkcode KubernetesProtobufWatchBodyDecoderStream}'s
 * but `maxEventBytes`, which is the framing stage's).
 *
 * Error offsets count bytes of the framed input: frame k's bytes are taken to start at the sum of 4 + the length of
 * each frame before it, plus 4 (as they do when the frames come straight from the framing stage). For bytes,
 * {@linkcode KubernetesProtobufWatchBodyDecoderStream} does both stages in one and is faster.
 *
 * @example
 * ```ts
 * import { LengthPrefixedDecoderStream } from "watchwire/wire";
 * import { KubernetesProtobufWatchFrameDecoderStream } from "watchwire/kubernetes";
 *
 * const envelope = [0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03];
 * const frame = [0x0a, 5, 0x45, 0x52, 0x52, 0x4f, 0x52, 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope];
 * const events = new Blob([Uint8Array.of(0, 0, 0, frame.length, ...frame)]).stream()
 *   .pipeThrough(new LengthPrefixedDecoderStream())
 *   .pipeThrough(new KubernetesProtobufWatchFrameDecoderStream());
 * for await (const event of events) console.log(event.type, event.object.kind); // ERROR Status
 * ```
 */
export class KubernetesProtobufWatchFrameDecoderStream<T = KubernetesObject>
  extends DecoderStream<Uint8Array, WatchEvent<T>> {
  constructor(options: KubernetesProtobufOptions = {}) {
    const objects = new KubernetesObjectReader(options);
    let consumed = 0;
    super({
      push(frame, emit) {
        const offset = consumed + 4;
        consumed = offset + frame.length;
        // A stream chunk: handed over, never written again.
        emit(decodeWatchEventFrame(objects, frame, offset, "handed-over") as WatchEvent<T>);
      },
      finish() {},
    });
  }
}
