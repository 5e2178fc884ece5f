/**
 * Decoders of etcd's watch messages (`etcdserverpb.WatchResponse`, `mvccpb.Event`, `mvccpb.KeyValue`), written ahead
 * of time from the field numbers of etcd's `api/v3` schema (`etcdserverpb/rpc.proto`, `mvccpb/kv.proto`).
 *
 * @module
 */
import { emptyList } from "../value_constructors.ts";
import { ProtobufReader } from "../protobuf/reader.ts";

/**
 * `etcdserverpb.ResponseHeader`. 64-bit values are numbers: see the precision note on {@linkcode ProtobufReader}.
 *
 * @example
 * ```ts
 * import { decodeEtcdWatchResponse, type EtcdResponseHeader } from "watchwire/wire";
 *
 * const fields = [0x18, 42, 0x20, 2]; // revision 42, raft_term 2
 * const header: EtcdResponseHeader = decodeEtcdWatchResponse(Uint8Array.of(0x0a, fields.length, ...fields)).header;
 * console.log(header.revision, header.raftTerm, header.clusterId); // 42 2 0
 * ```
 */
export interface EtcdResponseHeader {
  /** `cluster_id` (1, uint64): a random 64-bit id, so usually not exact as a number. */
  clusterId: number;
  /** `member_id` (2, uint64): a random 64-bit id, so usually not exact as a number. */
  memberId: number;
  /** `revision` (3, int64): the store revision when the response was made. */
  revision: number;
  /** `raft_term` (4, uint64). */
  raftTerm: number;
}

/**
 * `mvccpb.KeyValue`. `key` and `value` are `subarray` views of the message bytes (no copy).
 *
 * @example
 * ```ts
 * import { decodeEtcdWatchResponse, type EtcdKeyValue } from "watchwire/wire";
 *
 * // kv { key "/k", create_revision 5, mod_revision 9, version 3, value "v1" }
 * const fields = [0x0a, 2, 0x2f, 0x6b, 0x10, 5, 0x18, 9, 0x20, 3, 0x2a, 2, 0x76, 0x31];
 * const event = [0x12, fields.length, ...fields];
 * const kv: EtcdKeyValue = decodeEtcdWatchResponse(Uint8Array.of(0x5a, event.length, ...event)).events[0].kv;
 * const text = new TextDecoder();
 * console.log(text.decode(kv.key), text.decode(kv.value)); // /k v1
 * console.log(kv.createRevision, kv.modRevision, kv.version); // 5 9 3
 * ```
 */
export interface EtcdKeyValue {
  /** `key` (1, bytes). */
  key: Uint8Array;
  /** `create_revision` (2, int64): revision of the last creation of the key (0 in a DELETE event's `kv`). */
  createRevision: number;
  /** `mod_revision` (3, int64): revision of the last modification. */
  modRevision: number;
  /** `version` (4, int64): modifications since creation (0 in a DELETE event's `kv`). */
  version: number;
  /** `value` (5, bytes). */
  value: Uint8Array;
  /** `lease` (6, int64): the lease id, 0 for none (a random 64-bit id: not always exact as a number). */
  lease: number;
}

/**
 * `mvccpb.Event`.
 *
 * @example
 * ```ts
 * import { decodeEtcdWatchResponse, type EtcdEvent } from "watchwire/wire";
 *
 * const put = [0x12, 5, 0x0a, 1, 0x61, 0x18, 7]; // PUT, kv { key "a", mod_revision 7 }
 * const del = [0x08, 1, 0x12, 5, 0x0a, 1, 0x61, 0x18, 8]; // DELETE, kv { key "a", mod_revision 8 }
 * const response = decodeEtcdWatchResponse(Uint8Array.of(0x5a, put.length, ...put, 0x5a, del.length, ...del));
 * const events: EtcdEvent[] = response.events;
 * for (const event of events) {
 *   console.log(event.type, event.kv.modRevision, event.prevKv === undefined); // PUT 7 true, DELETE 8 true
 * }
 * ```
 */
export interface EtcdEvent {
  /** `type` (1, enum EventType: PUT = 0, DELETE = 1). */
  type: "PUT" | "DELETE";
  /** `kv` (2): the key-value after the event (for a DELETE: the key and the deleting revision). */
  kv: EtcdKeyValue;
  /** `prev_kv` (3): the key-value before the event, if the watch asked for it (`prev_kv`) and there was one. */
  prevKv?: EtcdKeyValue;
}

/**
 * `etcdserverpb.WatchResponse`.
 *
 * @example
 * ```ts
 * import { EtcdWatchDecoderStream, type EtcdWatchResponse } from "watchwire/wire";
 *
 * const onResponse = (response: EtcdWatchResponse) => {
 *   if (response.created) console.log("watch", response.watchId, "created");
 *   else if (response.canceled) console.log("compacted: restart at revision", response.compactRevision);
 *   else console.log(response.events.length, "events at revision", response.header.revision);
 * };
 * const created = Uint8Array.of(0x10, 3, 0x18, 1); // watch_id 3, created
 * const compacted = Uint8Array.of(0x10, 3, 0x20, 1, 0x28, 100); // watch_id 3, canceled, compact_revision 100
 * const responses = ReadableStream.from([created, compacted]).pipeThrough(new EtcdWatchDecoderStream());
 * for await (const r of responses) onResponse(r); // watch 3 created, compacted: restart at revision 100
 * ```
 */
export interface EtcdWatchResponse {
  /** `header` (1); all zero if absent. */
  header: EtcdResponseHeader;
  /** `watch_id` (2, int64). */
  watchId: number;
  /** `created` (3): the response to a create request. */
  created: boolean;
  /** `canceled` (4): the watcher is canceled; no more events follow for it. */
  canceled: boolean;
  /** `compact_revision` (5, int64): set when the watch start revision has been compacted. */
  compactRevision: number;
  /** `cancel_reason` (6, string). */
  cancelReason: string;
  /** `fragment` (7): more parts of this response follow (see `EtcdWatchDecoderStream`, which joins them). */
  fragment: boolean;
  /** `events` (11, repeated mvccpb.Event). */
  events: EtcdEvent[];
}

const EMPTY = new Uint8Array(0);
const VARINT = 0;
const LEN = 2;

// Field by field, as protobuf-go does: a later occurrence of a scalar replaces an earlier one, a later occurrence of
// an embedded message is merged into it, and a field whose wire type does not match the schema is skipped as unknown.

function readHeader(r: ProtobufReader, h: EtcdResponseHeader): EtcdResponseHeader {
  while (!r.done) {
    const tag = r.tag();
    if ((tag & 7) !== VARINT) {
      r.skip(tag);
      continue;
    }
    switch (tag >>> 3) {
      case 1:
        h.clusterId = r.uint64();
        break;
      case 2:
        h.memberId = r.uint64();
        break;
      case 3:
        h.revision = r.int64();
        break;
      case 4:
        h.raftTerm = r.uint64();
        break;
      default:
        r.skip(tag);
    }
  }
  return h;
}

// What this decoder returns is made with `{}` filled in and `emptyList()`, not literals: a cache of etcd's keys keeps
// them, and V8 would then pretenure the literals' allocation sites (see ../value_constructors.ts).

function emptyKeyValue(): EtcdKeyValue {
  const kv = {} as EtcdKeyValue;
  kv.key = EMPTY;
  kv.createRevision = 0;
  kv.modRevision = 0;
  kv.version = 0;
  kv.value = EMPTY;
  kv.lease = 0;
  return kv;
}

function readKeyValue(r: ProtobufReader, kv: EtcdKeyValue): EtcdKeyValue {
  while (!r.done) {
    const tag = r.tag();
    const wire = tag & 7;
    switch (tag >>> 3) {
      case 1:
        if (wire === LEN) kv.key = r.bytes();
        else r.skip(tag);
        break;
      case 2:
        if (wire === VARINT) kv.createRevision = r.int64();
        else r.skip(tag);
        break;
      case 3:
        if (wire === VARINT) kv.modRevision = r.int64();
        else r.skip(tag);
        break;
      case 4:
        if (wire === VARINT) kv.version = r.int64();
        else r.skip(tag);
        break;
      case 5:
        if (wire === LEN) kv.value = r.bytes();
        else r.skip(tag);
        break;
      case 6:
        if (wire === VARINT) kv.lease = r.int64();
        else r.skip(tag);
        break;
      default:
        r.skip(tag);
    }
  }
  return kv;
}

function readEvent(r: ProtobufReader): EtcdEvent {
  let type = 0;
  let typeAt = 0;
  let kv: EtcdKeyValue | undefined;
  let prevKv: EtcdKeyValue | undefined;
  while (!r.done) {
    const start = r.pos;
    const tag = r.tag();
    const wire = tag & 7;
    switch (tag >>> 3) {
      case 1:
        if (wire === VARINT) {
          typeAt = start;
          type = r.int32();
        } else r.skip(tag);
        break;
      case 2:
        if (wire === LEN) kv = readKeyValue(r.message(), kv ?? emptyKeyValue());
        else r.skip(tag);
        break;
      case 3:
        if (wire === LEN) prevKv = readKeyValue(r.message(), prevKv ?? emptyKeyValue());
        else r.skip(tag);
        break;
      default:
        r.skip(tag);
    }
  }
  if (type !== 0 && type !== 1) throw r.error(typeAt, `unknown mvccpb.Event type ${type} (PUT is 0, DELETE 1)`);
  const event = {} as EtcdEvent;
  event.type = type === 0 ? "PUT" : "DELETE";
  event.kv = kv ?? emptyKeyValue();
  if (prevKv !== undefined) event.prevKv = prevKv;
  return event;
}

/**
 * Decodes one serialized `etcdserverpb.WatchResponse` (a gRPC message of etcd's `Watch` stream). Unknown fields are
 * skipped; malformed protobuf throws {@linkcode DecodeError} `MESSAGE_INVALID` at `baseOffset` plus the position of
 * the fault in `bytes`. Keys and values are `subarray` views of `bytes`.
 *
 * @example
 * ```ts
 * import { decodeEtcdWatchResponse } from "watchwire/wire";
 *
 * // watch_id = 1, events = [{ type: PUT, kv: { key: "a", mod_revision: 7, value: "b" } }]
 * const kv = [0x0a, 1, 0x61, 0x18, 7, 0x2a, 1, 0x62];
 * const event = [0x12, kv.length, ...kv];
 * const response = decodeEtcdWatchResponse(Uint8Array.of(0x10, 1, 0x5a, event.length, ...event));
 * console.log(response.watchId, response.events[0].type, response.events[0].kv.modRevision); // 1 PUT 7
 * ```
 */
export function decodeEtcdWatchResponse(bytes: Uint8Array, baseOffset = 0): EtcdWatchResponse {
  const r = new ProtobufReader(bytes, baseOffset);
  const header = {} as EtcdResponseHeader;
  header.clusterId = 0;
  header.memberId = 0;
  header.revision = 0;
  header.raftTerm = 0;
  const response = {} as EtcdWatchResponse;
  response.header = header;
  response.watchId = 0;
  response.created = false;
  response.canceled = false;
  response.compactRevision = 0;
  response.cancelReason = "";
  response.fragment = false;
  response.events = emptyList<EtcdEvent>();
  while (!r.done) {
    const tag = r.tag();
    const wire = tag & 7;
    switch (tag >>> 3) {
      case 1:
        if (wire === LEN) readHeader(r.message(), response.header);
        else r.skip(tag);
        break;
      case 2:
        if (wire === VARINT) response.watchId = r.int64();
        else r.skip(tag);
        break;
      case 3:
        if (wire === VARINT) response.created = r.bool();
        else r.skip(tag);
        break;
      case 4:
        if (wire === VARINT) response.canceled = r.bool();
        else r.skip(tag);
        break;
      case 5:
        if (wire === VARINT) response.compactRevision = r.int64();
        else r.skip(tag);
        break;
      case 6:
        if (wire === LEN) response.cancelReason = r.string();
        else r.skip(tag);
        break;
      case 7:
        if (wire === VARINT) response.fragment = r.bool();
        else r.skip(tag);
        break;
      case 11:
        if (wire === LEN) response.events.push(readEvent(r.message()));
        else r.skip(tag);
        break;
      default:
        r.skip(tag);
    }
  }
  return response;
}
