/**
 * {@linkcode KubernetesProtobufWatchFrameDecoder}: one frame of a Kubernetes protobuf watch (a `meta.v1.WatchEvent`
 * message) to a typed watch event, without streams.
 *
 * @module
 */
import type { WatchEvent } from "../../events.ts";
import { KubernetesObjectReader } from "./object_reader.ts";
import type { FrameOwnership, KubernetesProtobufOptions } from "./protobuf_options.ts";
import { decodeWatchEventFrame } from "./watch_event_frame.ts";

/**
 * Decodes the frames of a Kubernetes protobuf watch (`application/vnd.kubernetes.protobuf;stream=watch`), each a raw
 * `meta.v1.WatchEvent` message: `type` = 1 (ADDED, MODIFIED, DELETED, BOOKMARK or ERROR), `object` = 2, a
 * `RawExtension` whose `raw` (1) is the object's `k8s\0` + `runtime.Unknown` envelope. The object is decoded as
 * {@linkcode decodeKubernetesProtobufObject} says (the kinds of `options.decoders`, none but `Status` by default), in
 * the `mode` of the options (`ERROR` events always in full).
 *
 * Errors are {@linkcode DecodeError}s whose offset is `baseOffset` + the position in the frame: malformed protobuf,
 * a known field with the wrong wire type, bad magic and a missing object are `MESSAGE_INVALID`, a missing `type`
 * `EVENT_INVALID`, an unknown one `EVENT_TYPE_UNKNOWN`, a BOOKMARK whose object has no `metadata.resourceVersion`
 * `EVENT_INVALID` (at the frame's first byte, as the JSON pipeline refuses it). Unknown fields are skipped.
 *
 * @example
 * ```ts
 * import { KubernetesProtobufWatchFrameDecoder } from "watchwire/kubernetes";
 *
 * const envelope = [0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03];
 * const frame = Uint8Array.of(0x0a, 5, 0x45, 0x52, 0x52, 0x4f, 0x52, 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope);
 * const event = new KubernetesProtobufWatchFrameDecoder().decode(frame, 4);
 * if (event.type === "ERROR") console.log(event.object.kind, event.object.code); // Status 410
 * ```
 */
export class KubernetesProtobufWatchFrameDecoder {
  readonly #objects: KubernetesObjectReader;

  constructor(options: KubernetesProtobufOptions = {}) {
    this.#objects = new KubernetesObjectReader(options);
  }

  /**
   * The event of one frame (the message without its length prefix). `baseOffset` locates `frame[0]` in the input,
   * for the offsets of errors. `ownership`: who else may use the frame's bytes, which decides whether objects kept as
   * bytes (metadata mode, unknown kinds) keep a view of them or a copy: `"handed-over"`, nothing writes them again (a
   * view when their buffer is at most four times the object's size plus 32 KiB, or always with `inputViews:
   * "always"`); `"borrowed"` (the default), the caller may reuse them: always a copy.
   */
  decode(frame: Uint8Array, baseOffset = 0, ownership: FrameOwnership = "borrowed"): WatchEvent<unknown> {
    return decodeWatchEventFrame(this.#objects, frame, baseOffset, ownership);
  }
}
