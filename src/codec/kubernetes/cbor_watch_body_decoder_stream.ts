/**
 * {@linkcode KubernetesCborWatchBodyDecoderStream}: the body of a Kubernetes CBOR watch (bytes) to typed watch events
 * in one stage.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import { DecoderStream } from "../../streams/decoder_stream.ts";
import { KubernetesCborWatchBodyDecoder, type KubernetesCborWatchOptions } from "./cbor_watch_body_decoder.ts";

/**
 * Decodes the body of a Kubernetes CBOR watch (`Content-Type: application/cbor-seq`, what kube-apiserver answers a
 * watch asked with `Accept: application/cbor` when its `CBORServingAndStorage` feature gate is on) into typed
 * {@linkcode WatchEvent}s, each object the plain JSON value the same server's JSON gives (every object's keys sorted
 * as Go's JSON sorts a map's, whatever order the server wrote them in: it shuffles them). Each event is one self-delimiting CBOR data item (the self-described CBOR tag
 * 55799, then a map `{type, object}`): the items are found as `CborSequenceDecoderStream` finds them, and decoded by
 * Kubernetes' CBOR rules (those of k8s.io/apimachinery's CBOR decoder: byte strings as Go strings, tag 22 as base64,
 * integers within int64, no NaN or infinities, no duplicate keys, nesting within 10 000 levels).
 *
 * An item within one input chunk is decoded in place; one that spans chunks is copied once when it ends. Errors are
 * {@linkcode DecodeError}s whose offset counts bytes of this stream's input: `MESSAGE_TOO_LARGE` (an event over
 * `maxEventBytes`, at its first byte, as soon as a head announces more), `TRUNCATED` (the body ended inside an event,
 * at its first byte), `MESSAGE_INVALID` (bytes that are not Kubernetes CBOR, at the offending byte), `EVENT_INVALID`
 * or `EVENT_TYPE_UNKNOWN` (an item that is not a watch event, at its first byte). Every event before the fault is
 * delivered first.
 *
 * @example
 * ```ts
 * import { KubernetesCborWatchBodyDecoderStream } from "watchwire/kubernetes";
 *
 * // {"type": "DELETED", "object": {"kind": "Pod"}}, self-described, keys and strings as byte strings.
 * const hex = "d9d9f7a244747970654744454c45544544466f626a656374a1446b696e6443506f64";
 * const body = new Blob([Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16))]).stream();
 * for await (const event of body.pipeThrough(new KubernetesCborWatchBodyDecoderStream())) {
 *   console.log(event.type, event.object.kind); // DELETED Pod
 * }
 * ```
 */
export class KubernetesCborWatchBodyDecoderStream<T = KubernetesObject>
  extends DecoderStream<Uint8Array, WatchEvent<T>> {
  constructor(options: KubernetesCborWatchOptions = {}) {
    super(new KubernetesCborWatchBodyDecoder<T>(options));
  }
}
