/**
 * The JSON text the capture viewer shows for an event: a Kubernetes event's object (a protobuf object kept as bytes in
 * metadata mode is decoded in full here, on click), an etcd event as `etcdctl watch -w json` prints it with its key as
 * text and its value's Kubernetes object decoded, another gRPC call's message.
 *
 * @module
 */
import { KubernetesProtobufObject, type KubernetesProtobufOptions } from "watchwire";
import { decodeKubernetesProtobufObject } from "watchwire/kubernetes";
import { etcdEventToJson, type EtcdKeyValue, kubernetesValue } from "watchwire/wire";
import { describeError, type TimelineItem } from "./capture_view.ts";

const text = new TextDecoder();

/** What the viewer shows for `item`, as a value `JSON.stringify` takes. */
export function objectJsonValue(item: TimelineItem, protobuf: KubernetesProtobufOptions): unknown {
  switch (item.kind) {
    case "event": {
      const object = item.event.object;
      if (!(object instanceof KubernetesProtobufObject)) return object;
      // Metadata mode: the rest of the object is still its protobuf bytes.
      try {
        return object.decode() ?? object;
      } catch (error) {
        return { ...object, "(not decoded)": describeError(error) };
      }
    }
    case "etcd": {
      const { event } = item;
      return {
        ...etcdEventToJson(event),
        "(key)": text.decode(event.kv.key),
        "(object)": storedObject(event.kv, protobuf),
        ...(event.prevKv === undefined ? {} : { "(previous object)": storedObject(event.prevKv, protobuf) }),
      };
    }
    case "grpc":
      return item.message;
  }
}

/** {@linkcode objectJsonValue} as indented JSON text (byte arrays as base64, 64-bit integers as text). */
export function objectJsonText(item: TimelineItem, protobuf: KubernetesProtobufOptions): string {
  return JSON.stringify(objectJsonValue(item, protobuf), jsonSafe, 2) ?? "undefined";
}

/** The Kubernetes object an etcd value holds (JSON, CBOR or protobuf), if it holds one. */
function storedObject(kv: EtcdKeyValue, protobuf: KubernetesProtobufOptions): unknown {
  const value = kubernetesValue(kv);
  if (value === undefined) return undefined;
  if (value.format !== "protobuf") return value.object;
  try {
    return decodeKubernetesProtobufObject(value.bytes, { ...protobuf, mode: "full" });
  } catch (error) {
    return `(protobuf, not decoded: ${describeError(error)})`;
  }
}

function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Uint8Array) {
    let binary = "";
    for (let i = 0; i < value.length; i += 0x8000) binary += String.fromCharCode(...value.subarray(i, i + 0x8000));
    return btoa(binary);
  }
  return value;
}
