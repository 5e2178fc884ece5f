/**
 * A small protobuf writer for tests (bigint arithmetic, written independently of the reader under test) and encoders of
 * etcd's watch messages from the schema's field numbers (etcdserverpb/rpc.proto, mvccpb/kv.proto).
 */

/** Builds protobuf wire data. */
export class ProtoWriter {
  readonly parts: number[] = [];

  /** A varint of any 64-bit value (negative numbers as 64-bit two's complement, as int64 is sent). */
  varint(value: bigint | number): this {
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) {
      this.parts.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.parts.push(Number(v));
    return this;
  }
  tag(field: number, wire: number): this {
    return this.varint((BigInt(field) << 3n) | BigInt(wire));
  }
  raw(bytes: ArrayLike<number>): this {
    for (let i = 0; i < bytes.length; i++) this.parts.push(bytes[i]);
    return this;
  }
  /** Little-endian fixed width of `bytes` bytes. */
  fixed(value: bigint | number, bytes: 4 | 8): this {
    let v = BigInt.asUintN(bytes * 8, BigInt(value));
    for (let i = 0; i < bytes; i++) {
      this.parts.push(Number(v & 0xffn));
      v >>= 8n;
    }
    return this;
  }
  zigzag(value: bigint | number): this {
    const v = BigInt(value);
    return this.varint(v >= 0n ? v << 1n : ((-v) << 1n) - 1n);
  }
  len(bytes: ArrayLike<number>): this {
    return this.varint(bytes.length).raw(bytes);
  }
  /** field = varint, omitted when zero (proto3) unless `always`. */
  vfield(field: number, value: bigint | number | boolean, always = false): this {
    const v = typeof value === "boolean" ? (value ? 1 : 0) : value;
    if (!always && BigInt(v) === 0n) return this;
    return this.tag(field, 0).varint(v);
  }
  /** field = length-delimited, omitted when empty unless `always`. */
  lfield(field: number, bytes: ArrayLike<number>, always = false): this {
    if (!always && bytes.length === 0) return this;
    return this.tag(field, 2).len(bytes);
  }
  bytes(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

export interface KvSpec {
  key: Uint8Array;
  createRevision?: number;
  modRevision?: number;
  version?: number;
  value?: Uint8Array;
  lease?: number;
}
export interface EventSpec {
  type: "PUT" | "DELETE";
  kv: KvSpec;
  prevKv?: KvSpec;
}
export interface ResponseSpec {
  header?: { clusterId?: bigint | number; memberId?: bigint | number; revision?: number; raftTerm?: number };
  watchId?: number;
  created?: boolean;
  canceled?: boolean;
  compactRevision?: number;
  cancelReason?: string;
  fragment?: boolean;
  events?: EventSpec[];
}

export function encodeKv(kv: KvSpec): Uint8Array {
  return new ProtoWriter()
    .lfield(1, kv.key)
    .vfield(2, kv.createRevision ?? 0)
    .vfield(3, kv.modRevision ?? 0)
    .vfield(4, kv.version ?? 0)
    .lfield(5, kv.value ?? new Uint8Array(0))
    .vfield(6, kv.lease ?? 0)
    .bytes();
}

export function encodeEvent(e: EventSpec): Uint8Array {
  const w = new ProtoWriter().vfield(1, e.type === "PUT" ? 0 : 1).lfield(2, encodeKv(e.kv), true);
  if (e.prevKv) w.lfield(3, encodeKv(e.prevKv), true);
  return w.bytes();
}

export function encodeWatchResponse(r: ResponseSpec): Uint8Array {
  const w = new ProtoWriter();
  if (r.header) {
    const h = new ProtoWriter()
      .vfield(1, r.header.clusterId ?? 0)
      .vfield(2, r.header.memberId ?? 0)
      .vfield(3, r.header.revision ?? 0)
      .vfield(4, r.header.raftTerm ?? 0)
      .bytes();
    w.lfield(1, h, true);
  }
  w.vfield(2, r.watchId ?? 0)
    .vfield(3, r.created ?? false)
    .vfield(4, r.canceled ?? false)
    .vfield(5, r.compactRevision ?? 0)
    .lfield(6, new TextEncoder().encode(r.cancelReason ?? ""))
    .vfield(7, r.fragment ?? false);
  for (const e of r.events ?? []) w.lfield(11, encodeEvent(e), true);
  return w.bytes();
}
