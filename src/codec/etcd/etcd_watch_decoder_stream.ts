/**
 * {@linkcode EtcdWatchDecoderStream}: the messages of etcd's gRPC `Watch` stream to typed, reassembled
 * {@linkcode EtcdWatchResponse}s; {@linkcode etcdEventToJson} and {@linkcode kubernetesValue} for what comes after.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import type { GrpcMessage } from "../../framing/grpc_message_decoder_stream.ts";
import { DecoderStream } from "../../streams/decoder_stream.ts";
import { hasKubernetesProtobufMagic } from "../kubernetes/envelope.ts";
import { kubernetesCborValue } from "../kubernetes/runtime/kubernetes_cbor.ts";
import {
  decodeEtcdWatchResponse,
  type EtcdEvent,
  type EtcdKeyValue,
  type EtcdWatchResponse,
} from "./watch_response.ts";

/**
 * Options of {@linkcode EtcdWatchDecoderStream}.
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import { type EtcdWatchDecoderOptions, EtcdWatchDecoderStream } from "watchwire/wire";
 *
 * const options: EtcdWatchDecoderOptions = { maxFragmentedBytes: 4 }; // tiny, to show the limit
 * const part = Uint8Array.of(0x10, 1, 0x38, 1); // watch_id 1, fragment: true (4 bytes)
 * try {
 *   for await (const _ of ReadableStream.from([part, part]).pipeThrough(new EtcdWatchDecoderStream(options)));
 * } catch (e) {
 *   if (e instanceof DecodeError) console.log(e.code, e.offset); // MESSAGE_TOO_LARGE 0
 * }
 * ```
 */
export interface EtcdWatchDecoderOptions {
  /**
   * Most message bytes one fragmented response may add up to before it is complete (`MESSAGE_TOO_LARGE` beyond).
   * Default 64 MiB.
   */
  maxFragmentedBytes?: number;
}

interface Pending {
  response: EtcdWatchResponse;
  bytes: number;
  offset: number;
}

/**
 * Decodes the messages of an etcd `Watch` gRPC stream (`/etcdserverpb.Watch/Watch`, server to client), as
 * {@linkcode GrpcMessage}s from `GrpcMessageDecoderStream` or as bare serialized messages, into
 * {@linkcode EtcdWatchResponse}s.
 *
 * A response with `fragment: true` (etcd splits a response larger than its request limit when the watch asked for
 * `fragment`) is held until the part with `fragment: false` of the same `watch_id` arrives; the parts' events are
 * concatenated, in order, into one response (header and flags of the first part, `fragment: false`), as etcd's Go
 * client does. The input ending inside a fragmented response is `TRUNCATED`.
 *
 * Errors: malformed protobuf is `MESSAGE_INVALID` at its offset in the gRPC stream (for a {@linkcode GrpcMessage}:
 * its `offset` + 5 + the position in the message; for bare messages: the bytes of the messages before it + the
 * position); a still compressed message is `MESSAGE_INVALID`.
 *
 * @example
 * ```ts
 * import { EtcdWatchDecoderStream } from "watchwire/wire";
 *
 * const kv = [0x0a, 1, 0x61, 0x18, 7, 0x2a, 1, 0x62]; // key "a", mod_revision 7, value "b"
 * const event = [0x12, kv.length, ...kv]; // PUT
 * const part = (fragment: boolean) => Uint8Array.of(0x10, 1, 0x38, fragment ? 1 : 0, 0x5a, event.length, ...event);
 * const responses = ReadableStream.from([part(true), part(false)]).pipeThrough(new EtcdWatchDecoderStream());
 * for await (const response of responses) console.log(response.events.length, response.fragment); // 2 false
 * ```
 */
export class EtcdWatchDecoderStream extends DecoderStream<GrpcMessage | Uint8Array, EtcdWatchResponse> {
  constructor(options: EtcdWatchDecoderOptions = {}) {
    const max = options.maxFragmentedBytes ?? 64 * 1024 * 1024;
    const pending = new Map<number, Pending>();
    let consumed = 0;
    super({
      push(chunk, emit) {
        let data: Uint8Array;
        let offset: number;
        if (chunk instanceof Uint8Array) {
          data = chunk;
          offset = consumed;
          consumed += chunk.length;
        } else {
          data = chunk.data;
          offset = chunk.offset + 5;
          if (chunk.compressed) {
            throw new DecodeError("MESSAGE_INVALID", chunk.offset, "etcd watch: message is still compressed");
          }
        }
        const response = decodeEtcdWatchResponse(data, offset);
        const held = pending.get(response.watchId);
        if (held === undefined) {
          if (!response.fragment) return emit(response);
          if (data.length > max) throw tooLarge(offset, max);
          pending.set(response.watchId, { response, bytes: data.length, offset });
          return;
        }
        held.bytes += data.length;
        if (held.bytes > max) throw tooLarge(held.offset, max);
        for (const event of response.events) held.response.events.push(event);
        if (response.fragment) return;
        pending.delete(response.watchId);
        held.response.fragment = false;
        emit(held.response);
      },
      finish() {
        for (const held of pending.values()) {
          throw new DecodeError(
            "TRUNCATED",
            held.offset,
            `etcd watch: input ended inside the fragmented response of watch ${held.response.watchId}`,
          );
        }
      },
    });
  }
}

function tooLarge(offset: number, max: number): DecodeError {
  return new DecodeError("MESSAGE_TOO_LARGE", offset, `etcd watch: fragmented response exceeds ${max} bytes`);
}

/**
 * A key-value as `etcdctl -w json` prints it: base64 bytes, snake_case names, zero values omitted.
 *
 * @example
 * ```ts
 * import { decodeEtcdWatchResponse, etcdEventToJson, type EtcdKeyValueJson } from "watchwire/wire";
 *
 * const kv = [0x0a, 1, 0x61, 0x18, 7, 0x2a, 1, 0x62]; // key "a", mod_revision 7, value "b"
 * const event = [0x12, kv.length, ...kv];
 * const [put] = decodeEtcdWatchResponse(Uint8Array.of(0x5a, event.length, ...event)).events;
 * const json: EtcdKeyValueJson = etcdEventToJson(put).kv;
 * console.log(json.key, json.mod_revision, json.value, json.version); // YQ== 7 Yg== undefined
 * console.log(atob(json.value ?? "")); // b
 * ```
 */
export interface EtcdKeyValueJson {
  /** The key, base64; absent if empty. */
  key?: string;
  /** Absent if 0. */
  create_revision?: number;
  /** Absent if 0. */
  mod_revision?: number;
  /** Absent if 0. */
  version?: number;
  /** The value, base64; absent if empty. */
  value?: string;
  /** Absent if 0. */
  lease?: number;
}

/**
 * An event as `etcdctl watch -w json` prints it in `Events`, except that `type` is always present, as a name.
 *
 * @example
 * ```ts
 * import { decodeEtcdWatchResponse, type EtcdEventJson, etcdEventToJson } from "watchwire/wire";
 *
 * const prev = [0x0a, 1, 0x61, 0x10, 7, 0x18, 7, 0x20, 1, 0x2a, 1, 0x62]; // "a" = "b" at revision 7
 * const kv = [0x0a, 1, 0x61, 0x18, 8]; // "a", deleted at revision 8
 * const event = [0x08, 1, 0x12, kv.length, ...kv, 0x1a, prev.length, ...prev]; // DELETE, with prev_kv
 * const [deleted] = decodeEtcdWatchResponse(Uint8Array.of(0x5a, event.length, ...event)).events;
 * const json: EtcdEventJson = etcdEventToJson(deleted);
 * if (json.type === "DELETE") console.log(json.kv.mod_revision, json.prev_kv?.value); // 8 Yg==
 * ```
 */
export interface EtcdEventJson {
  /** `"PUT"` or `"DELETE"` (etcdctl omits PUT, the zero value, and prints DELETE as `1`). */
  type: "PUT" | "DELETE";
  /** The key-value after the event. */
  kv: EtcdKeyValueJson;
  /** The key-value before it, when the event has one. */
  prev_kv?: EtcdKeyValueJson;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Standard base64 with padding (as Go's encoding/json writes `[]byte`). */
function base64(bytes: Uint8Array): string {
  const parts: string[] = [];
  let s = "";
  const n = bytes.length;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    s += B64[v >>> 18] + B64[(v >>> 12) & 63] + B64[(v >>> 6) & 63] + B64[v & 63];
    if (s.length >= 8192) {
      parts.push(s);
      s = "";
    }
  }
  if (n - i === 1) {
    const v = bytes[i] << 16;
    s += B64[v >>> 18] + B64[(v >>> 12) & 63] + "==";
  } else if (n - i === 2) {
    const v = (bytes[i] << 16) | (bytes[i + 1] << 8);
    s += B64[v >>> 18] + B64[(v >>> 12) & 63] + B64[(v >>> 6) & 63] + "=";
  }
  parts.push(s);
  return parts.join("");
}

function kvToJson(kv: EtcdKeyValue): EtcdKeyValueJson {
  const out: EtcdKeyValueJson = {};
  if (kv.key.length > 0) out.key = base64(kv.key);
  if (kv.createRevision !== 0) out.create_revision = kv.createRevision;
  if (kv.modRevision !== 0) out.mod_revision = kv.modRevision;
  if (kv.version !== 0) out.version = kv.version;
  if (kv.value.length > 0) out.value = base64(kv.value);
  if (kv.lease !== 0) out.lease = kv.lease;
  return out;
}

/**
 * An event in the shape `etcdctl watch -w json` prints it inside `Events` (Go's encoding/json of `mvccpb.Event`:
 * `kv` and `prev_kv` with base64 `key`/`value`, `create_revision`, `mod_revision`, `version`, `lease`, each omitted
 * when zero or empty, in that order), plus an explicit `"type": "PUT" | "DELETE"` first. `JSON.stringify` of it equals
 * etcdctl's text apart from `type` (and from 64-bit `lease` ids beyond 2^53, which a number rounds).
 *
 * @example
 * ```ts
 * import { decodeEtcdWatchResponse, etcdEventToJson } from "watchwire/wire";
 *
 * const kv = [0x0a, 1, 0x61, 0x10, 7, 0x18, 7, 0x20, 1, 0x2a, 1, 0x62]; // "a" = "b" at revision 7, version 1
 * const event = [0x12, kv.length, ...kv];
 * const [put] = decodeEtcdWatchResponse(Uint8Array.of(0x5a, event.length, ...event)).events;
 * console.log(JSON.stringify(etcdEventToJson(put)));
 * // {"type":"PUT","kv":{"key":"YQ==","create_revision":7,"mod_revision":7,"version":1,"value":"Yg=="}}
 * ```
 */
export function etcdEventToJson(event: EtcdEvent): EtcdEventJson {
  // `{}` filled in, not a literal: a caller may keep what this returns (see ../value_constructors.ts).
  const out = {} as EtcdEventJson;
  out.type = event.type;
  out.kv = kvToJson(event.kv);
  if (event.prevKv !== undefined) out.prev_kv = kvToJson(event.prevKv);
  return out;
}

/**
 * A Kubernetes object as the API server stores it in etcd, found by {@linkcode kubernetesValue}.
 *
 * @example
 * ```ts
 * import { type EtcdKeyValue, kubernetesValue, type KubernetesValue } from "watchwire/wire";
 *
 * const stored = (value: string): EtcdKeyValue => ({
 *   key: new TextEncoder().encode("/registry/configmaps/default/a"), value: new TextEncoder().encode(value),
 *   createRevision: 5, modRevision: 5, version: 1, lease: 0,
 * });
 * const describe = (value: KubernetesValue | undefined): string => {
 *   switch (value?.format) {
 *     case "json": return `JSON ${value.object.kind}`;
 *     case "cbor": return `CBOR ${value.object.kind}`;
 *     case "protobuf": return `protobuf, ${value.bytes.length} bytes`;
 *     default: return "not a Kubernetes object";
 *   }
 * };
 * console.log(describe(kubernetesValue(stored('{"kind":"ConfigMap"}')))); // JSON ConfigMap
 * console.log(describe(kubernetesValue(stored("k8s\0\x0a\x00")))); // protobuf, 6 bytes
 * console.log(describe(kubernetesValue(stored("[1, 2]")))); // not a Kubernetes object
 * // The self-described CBOR tag, then {"kind": "ConfigMap"} (keys and strings as byte strings, as Kubernetes writes them)
 * const cbor = Uint8Array.of(0xd9, 0xd9, 0xf7, 0xa1, 0x44, ...new TextEncoder().encode("kind"), 0x49, ...new TextEncoder().encode("ConfigMap"));
 * console.log(describe(kubernetesValue({ ...stored(""), value: cbor }))); // CBOR ConfigMap
 * ```
 */
export type KubernetesValue =
  /** The protobuf envelope (`k8s\0` magic, then a `runtime.Unknown`); `bytes` is the whole value, magic included. */
  | { format: "protobuf"; bytes: Uint8Array }
  /** A JSON object (the API server's JSON storage media type, and CRDs). */
  | { format: "json"; object: Record<string, unknown> }
  /**
   * An object stored as CBOR (the API server's CBOR storage media type: the self-described CBOR tag, then the object),
   * as the JSON of the `Unstructured` Kubernetes' CBOR serializer decodes it to.
   */
  | { format: "cbor"; object: Record<string, unknown> };

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * What a value stored by the Kubernetes API server is: `{ format: "protobuf", bytes }` if it starts with the `k8s\0`
 * magic of Kubernetes' protobuf serialization (`bytes` is the whole value: `decodeKubernetesProtobufObject` decodes it),
 * `{ format: "json", object }` if it is UTF-8 JSON whose top level is an object, `{ format: "cbor", object }` if it is
 * the self-described CBOR (tag 55799) of a map that Kubernetes' CBOR decoder takes (the object is the JSON Go prints for
 * it), else `undefined`.
 *
 * @example
 * ```ts
 * import { kubernetesValue } from "watchwire/wire";
 *
 * const kv = (value: string) => ({
 *   key: new Uint8Array(0), value: new TextEncoder().encode(value),
 *   createRevision: 1, modRevision: 1, version: 1, lease: 0,
 * });
 * console.log(kubernetesValue(kv('{"kind":"Pod"}'))); // { format: "json", object: { kind: "Pod" } }
 * console.log(kubernetesValue(kv("k8s\0...."))?.format); // protobuf
 * console.log(kubernetesValue(kv("plain"))); // undefined
 * ```
 */
export function kubernetesValue(kv: EtcdKeyValue): KubernetesValue | undefined {
  const v = kv.value;
  if (hasKubernetesProtobufMagic(v)) return protobufValue(v);
  if (v.length > 3 && v[0] === 0xd9 && v[1] === 0xd9 && v[2] === 0xf7) {
    let object: unknown;
    try {
      object = kubernetesCborValue(v, 0, v.length, 0, "etcd value: CBOR");
    } catch (e) {
      if (e instanceof DecodeError) return undefined;
      throw e;
    }
    return object === null ? undefined : objectValue("cbor", object as Record<string, unknown>);
  }
  // Cheap test first: JSON text of an object starts with "{" after optional whitespace.
  let i = 0;
  while (i < v.length && (v[i] === 0x20 || v[i] === 0x09 || v[i] === 0x0a || v[i] === 0x0d)) i++;
  if (v[i] !== 0x7b) return undefined;
  let object: unknown;
  try {
    object = JSON.parse(strictUtf8.decode(v));
  } catch {
    return undefined;
  }
  if (object === null || typeof object !== "object" || Array.isArray(object)) return undefined;
  return objectValue("json", object as Record<string, unknown>);
}

// The values are `{}` filled in, not literals: a caller may keep them (see ../value_constructors.ts).

function protobufValue(bytes: Uint8Array): KubernetesValue {
  const value = {} as Extract<KubernetesValue, { format: "protobuf" }>;
  value.format = "protobuf";
  value.bytes = bytes;
  return value;
}

function objectValue(format: "json" | "cbor", object: Record<string, unknown>): KubernetesValue {
  const value = {} as { format: "json" | "cbor"; object: Record<string, unknown> };
  value.format = format;
  value.object = object;
  return value as KubernetesValue;
}
