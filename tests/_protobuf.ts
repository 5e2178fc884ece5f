/**
 * Protobuf written by hand for the tests, from the wire format's rules alone (independently of any encoder under
 * test): fields, the Kubernetes `k8s\0` envelope, watch event messages and their 4-byte length framing.
 */

export type Bytes = number[];
const encoder = new TextEncoder();

/** A base-128 varint. */
export function varint(n: number): Bytes {
  const out: Bytes = [];
  for (; n >= 0x80; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  out.push(n);
  return out;
}

/** A length-delimited field (wire type 2); a string payload is written as UTF-8. */
export const len = (field: number, payload: ArrayLike<number> | string): Bytes => {
  const p = typeof payload === "string" ? Array.from(encoder.encode(payload)) : Array.from(payload);
  return [...varint((field << 3) | 2), ...varint(p.length), ...p];
};

/** A varint field (wire type 0). */
export const int = (field: number, n: number): Bytes => [...varint(field << 3), ...varint(n)];

/** The magic that starts a Kubernetes protobuf object: `k8s\0`. */
export const MAGIC: Bytes = [0x6b, 0x38, 0x73, 0];

/** `k8s\0` + runtime.Unknown {typeMeta {apiVersion = 1, kind = 2} = 1, raw = 2, ...extra}. */
export function envelope(apiVersion: string, kind: string, raw: Bytes, extra: Bytes = []): Bytes {
  return [...MAGIC, ...len(1, [...len(1, apiVersion), ...len(2, kind)]), ...len(2, raw), ...extra];
}

/** meta.v1.WatchEvent {type = 1, object = 2 RawExtension {raw = 1}}. */
export function watchEvent(type: string, object: Bytes): Bytes {
  return [...len(1, type), ...len(2, len(1, object))];
}

/** Each message behind its 4-byte big-endian length. */
export function framed(...messages: Bytes[]): Uint8Array {
  const out: Bytes = [];
  for (const m of messages) {
    out.push(m.length >>> 24, (m.length >>> 16) & 255, (m.length >>> 8) & 255, m.length & 255, ...m);
  }
  return Uint8Array.from(out);
}

/** The frames of a 4-byte length-prefixed stream, read by hand, each a view with its prefix (`framed`'s inverse). */
export function framesOf(stream: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < stream.length;) {
    const end = at + 4 + new DataView(stream.buffer, stream.byteOffset + at, 4).getUint32(0);
    out.push(stream.subarray(at, end));
    at = end;
  }
  return out;
}
