/**
 * Validation of decoded values as Kubernetes watch events, and {@linkcode WatchEventDecoderStream}.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import { DecoderStream } from "../streams/decoder_stream.ts";
import type { KubernetesObject, WatchEvent } from "../events.ts";

/**
 * Checks that `value` is a Kubernetes watch event (`{"type": ..., "object": {...}}` with a known type; a BOOKMARK's
 * object carrying `metadata.resourceVersion`) and returns it typed. The value is not copied.
 * Throws a {@linkcode DecodeError} (`EVENT_INVALID` or `EVENT_TYPE_UNKNOWN`, offset 0) otherwise.
 *
 * @example
 * ```ts
 * import { toWatchEvent } from "watchwire/wire";
 *
 * const event = toWatchEvent(JSON.parse('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12"}}}'));
 * if (event.type === "BOOKMARK") console.log(event.object.metadata.resourceVersion); // 12
 * ```
 */
export function toWatchEvent<T = KubernetesObject>(value: unknown): WatchEvent<T> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new DecodeError("EVENT_INVALID", 0, `a watch event must be a JSON object, not ${kindOf(value)}`);
  }
  const { type, object } = value as { type?: unknown; object?: unknown };
  if (typeof object !== "object" || object === null || Array.isArray(object)) {
    const { kind, items } = value as { kind?: unknown; items?: unknown };
    if ((Array.isArray(items) || items === null) && type === undefined) {
      const what = typeof kind === "string" ? `a ${kind.slice(0, 64)}` : "a list";
      throw new DecodeError(
        "EVENT_INVALID",
        0,
        `the body is ${what} (a list's answer), not a stream of watch events: was watch=true left out of the URL?`,
      );
    }
    throw new DecodeError("EVENT_INVALID", 0, `a watch event's "object" must be an object, not ${kindOf(object)}`);
  }
  switch (type) {
    case "ADDED":
    case "MODIFIED":
    case "DELETED":
    case "ERROR":
      return value as WatchEvent<T>;
    case "BOOKMARK": {
      const metadata = (object as { metadata?: { resourceVersion?: unknown } }).metadata;
      if (typeof metadata !== "object" || metadata === null || typeof metadata.resourceVersion !== "string") {
        throw new DecodeError("EVENT_INVALID", 0, "a BOOKMARK's object must carry metadata.resourceVersion");
      }
      return value as WatchEvent<T>;
    }
    default:
      if (typeof type === "string") {
        throw new DecodeError("EVENT_TYPE_UNKNOWN", 0, `unknown watch event type ${JSON.stringify(type.slice(0, 64))}`);
      }
      throw new DecodeError("EVENT_INVALID", 0, `a watch event's "type" must be a string, not ${kindOf(type)}`);
  }
}

function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * Parsed JSON values to typed watch events (see {@linkcode toWatchEvent}). Its input is values, not bytes, so the
 * `offset` of its errors counts values (0 for the first). For bytes, {@linkcode JsonWatchEventDecoderStream} does both
 * steps at once and reports byte offsets.
 *
 * @example
 * ```ts
 * import { NdjsonDecoderStream, WatchEventDecoderStream } from "watchwire/wire";
 *
 * const body = new Blob(['{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a"}}}\n']).stream();
 * for await (const event of body.pipeThrough(new NdjsonDecoderStream()).pipeThrough(new WatchEventDecoderStream())) {
 *   console.log(event.type, event.object.kind); // ADDED Pod
 * }
 * ```
 */
export class WatchEventDecoderStream<T = KubernetesObject> extends DecoderStream<unknown, WatchEvent<T>> {
  constructor() {
    let index = 0;
    super({
      push(value, emit) {
        let event: WatchEvent<T>;
        try {
          event = toWatchEvent<T>(value);
        } catch (error) {
          const e = error as DecodeError;
          throw new DecodeError(e.code, index, e.detail);
        }
        index++;
        emit(event);
      },
      finish() {},
    });
  }
}
