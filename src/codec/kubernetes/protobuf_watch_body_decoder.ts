/**
 * {@linkcode KubernetesProtobufWatchBodyDecoder}: the decoding of a Kubernetes protobuf watch body (bytes to typed watch
 * events) without a stream.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import { FrameSplitter } from "../../framing/frame_splitter.ts";
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import type { KubernetesProtobufOptions } from "./protobuf_options.ts";
import { hasKubernetesProtobufMagic } from "./envelope.ts";
import { KubernetesObjectReader } from "./object_reader.ts";
import { decodeWatchEventFrame } from "./watch_event_frame.ts";

/**
 * Options of {@linkcode KubernetesProtobufWatchBodyDecoderStream} and {@linkcode KubernetesProtobufWatchBodyDecoder}.
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import { KubernetesProtobufWatchBodyDecoderStream, type KubernetesProtobufWatchOptions } from "watchwire/kubernetes";
 *
 * const options: KubernetesProtobufWatchOptions = { mode: "metadata", maxEventBytes: 1024 };
 * const body = new Blob([Uint8Array.of(0, 0, 0x10, 0)]).stream(); // a frame announcing 4096 bytes
 * try {
 *   for await (const _ of body.pipeThrough(new KubernetesProtobufWatchBodyDecoderStream(options)));
 * } catch (e) {
 *   if (e instanceof DecodeError) console.log(e.code, e.offset); // MESSAGE_TOO_LARGE 0
 * }
 * ```
 */
export interface KubernetesProtobufWatchOptions extends KubernetesProtobufOptions {
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes: here a
   * frame without its 4-byte prefix, checked before it is buffered. Default `DEFAULT_MAX_EVENT_BYTES` (16 MiB).
   */
  maxEventBytes?: number;
}

/**
 * What {@linkcode KubernetesProtobufWatchBodyDecoderStream} does, as a {@linkcode StreamDecoder}: body bytes in, typed
 * {@linkcode WatchEvent}s out, with the same options and rules (see the stream). For a stream of event batches
 * (`BatchDecoderStream`), or to decode inside another stage without a stream of its own.
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "watchwire";
 * import { KubernetesProtobufWatchBodyDecoder } from "watchwire/kubernetes";
 *
 * const envelope = [0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73, 0x12, 3, 0x30, 0x9a, 0x03];
 * const frame = [0x0a, 5, 0x45, 0x52, 0x52, 0x4f, 0x52, 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope];
 * const body = Uint8Array.of(0, 0, 0, frame.length, ...frame);
 * const decoder = new KubernetesProtobufWatchBodyDecoder();
 * const events: WatchEvent[] = [];
 * decoder.push(body.subarray(0, 10), (event) => events.push(event)); // a frame's first bytes: nothing yet
 * decoder.push(body.subarray(10), (event) => events.push(event));
 * decoder.finish();
 * console.log(events.length, events[0].type); // 1 ERROR
 * ```
 */
export class KubernetesProtobufWatchBodyDecoder<T = KubernetesObject>
  implements StreamDecoder<Uint8Array, WatchEvent<T>> {
  readonly #objects: KubernetesObjectReader;
  readonly #splitter: FrameSplitter;
  /** The first bytes of the input, to tell a single object (k8s\0...) from a watch when its "length" is refused. */
  readonly #head = new Uint8Array(4);
  #headHave = 0;

  constructor(options: KubernetesProtobufWatchOptions = {}) {
    this.#objects = new KubernetesObjectReader(options);
    this.#splitter = new FrameSplitter({ flagged: false, maxEventBytes: options.maxEventBytes });
  }

  /** Decodes the frames `chunk` completes, keeping the unfinished one. Throws a `DecodeError` on a fault. */
  push(chunk: Uint8Array, emit: (event: WatchEvent<T>) => void): void {
    if (this.#headHave < 4) {
      const take = chunk.subarray(0, 4 - this.#headHave);
      this.#head.set(take, this.#headHave);
      this.#headHave += take.length;
    }
    const objects = this.#objects;
    try {
      // A view of this chunk (handed over to us), or the framing's own copy of a frame that spanned reads.
      this.#splitter.push(chunk, (frame, _flag, offset) => {
        emit(decodeWatchEventFrame(objects, frame, offset + 4, "handed-over") as WatchEvent<T>);
      });
    } catch (error) {
      if (error instanceof DecodeError && error.offset === 0 && hasKubernetesProtobufMagic(this.#head)) {
        throw new DecodeError(
          "MESSAGE_INVALID",
          0,
          "kubernetes protobuf watch: the body is a single object (k8s\\0 envelope; a list's answer?), not a stream " +
            "of watch events: was watch=true left out of the URL?",
        );
      }
      throw error;
    }
  }

  /** Ends the input: `TRUNCATED` if it stopped inside a frame. */
  finish(): void {
    this.#splitter.finish();
  }
}
