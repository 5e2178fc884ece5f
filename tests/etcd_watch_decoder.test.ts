import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { DecodeError } from "../mod.ts";
import {
  decodeEtcdWatchResponse,
  encodeGrpcMessages,
  etcdEventToJson,
  EtcdWatchDecoderStream,
  type EtcdWatchResponse,
  GrpcMessageDecoderStream,
  kubernetesValue,
} from "../wire.ts";
import { bytewise, drain, streamOf, utf8 } from "./_util.ts";
import { isLiteralLine, literalLines } from "./_literals.ts";
import { encodeWatchResponse, type EventSpec, ProtoWriter, type ResponseSpec } from "./peers/etcd_proto_encode.ts";

const text = (b: Uint8Array) => new TextDecoder().decode(b);

test("etcd: a WatchResponse encoded by hand from the schema's field numbers", () => {
  // Bytes written field by field: header=1 {cluster_id=1, member_id=2, revision=3, raft_term=4}, watch_id=2,
  // created=3, canceled=4, compact_revision=5, cancel_reason=6, fragment=7, events=11 {type=1, kv=2, prev_kv=3},
  // KeyValue {key=1, create_revision=2, mod_revision=3, version=4, value=5, lease=6}.
  const kv = [0x0a, 2, 0x2f, 0x61, 0x10, 5, 0x18, 9, 0x20, 3, 0x2a, 1, 0x76, 0x30, 0x2a];
  const prev = [0x0a, 2, 0x2f, 0x61, 0x10, 5, 0x18, 8, 0x20, 2];
  const event = [0x08, 1, 0x12, kv.length, ...kv, 0x1a, prev.length, ...prev];
  const header = [0x08, 0x81, 0x01, 0x10, 2, 0x18, 9, 0x20, 4];
  const msg = Uint8Array.of(
    0x0a,
    header.length,
    ...header,
    0x10,
    7,
    0x18,
    1,
    0x20,
    1,
    0x28,
    3,
    0x32,
    2,
    0x6f,
    0x6b,
    0x38,
    0,
    0x5a,
    event.length,
    ...event,
  );
  const r = decodeEtcdWatchResponse(msg);
  assert.deepEqual(r.header, { clusterId: 129, memberId: 2, revision: 9, raftTerm: 4 });
  assert.equal(r.watchId, 7);
  assert.equal(r.created, true);
  assert.equal(r.canceled, true);
  assert.equal(r.compactRevision, 3);
  assert.equal(r.cancelReason, "ok");
  assert.equal(r.fragment, false);
  assert.equal(r.events.length, 1);
  const [e] = r.events;
  assert.equal(e.type, "DELETE");
  assert.equal(text(e.kv.key), "/a");
  assert.equal(text(e.kv.value), "v");
  assert.deepEqual([e.kv.createRevision, e.kv.modRevision, e.kv.version, e.kv.lease], [5, 9, 3, 42]);
  assert.ok(e.prevKv);
  assert.deepEqual([e.prevKv.modRevision, e.prevKv.version, e.prevKv.value.length], [8, 2, 0]);
  assert.equal(e.kv.key.buffer, msg.buffer, "keys are views of the message");
  assert.deepEqual(etcdEventToJson(e), {
    type: "DELETE",
    kv: { key: "L2E=", create_revision: 5, mod_revision: 9, version: 3, value: "dg==", lease: 42 },
    prev_kv: { key: "L2E=", create_revision: 5, mod_revision: 8, version: 2 },
  });
});

test("etcd: the decoder makes what it returns without array or object literals (no V8 allocation site to pretenure)", () => {
  // A cache of etcd's keys keeps the decoded responses; see tests/_literals.ts.
  // Keeps value_constructors.ts's mechanism honest (bench/RESULTS.md §11, "What each optimisation mechanism buys").
  const name = "src/codec/etcd/watch_response.ts";
  const text = readFileSync(new URL(`../${name}`, import.meta.url), "utf8");
  assert.deepEqual(literalLines(name, text), []);
  // What it wrote before is found: the response literal's nested header, and the event's.
  assert.ok(isLiteralLine("    header: { clusterId: 0, memberId: 0, revision: 0, raftTerm: 0 },"));
  assert.ok(
    isLiteralLine('  const event: EtcdEvent = { type: type === 0 ? "PUT" : "DELETE", kv: kv ?? emptyKeyValue() };'),
  );
  // Same shapes as before: keys in the order of the schema, as JSON.stringify prints them.
  const response = decodeEtcdWatchResponse(
    encodeWatchResponse({ watchId: 2, events: [{ type: "PUT", kv: { key: utf8("k") } }] }),
  );
  assert.deepEqual(Object.keys(response), [
    "header",
    "watchId",
    "created",
    "canceled",
    "compactRevision",
    "cancelReason",
    "fragment",
    "events",
  ]);
  assert.deepEqual(Object.keys(response.header), ["clusterId", "memberId", "revision", "raftTerm"]);
  assert.deepEqual(Object.keys(response.events[0]), ["type", "kv"]);
  assert.deepEqual(Object.keys(response.events[0].kv), [
    "key",
    "createRevision",
    "modRevision",
    "version",
    "value",
    "lease",
  ]);
});

test("etcd: proto3 rules: defaults, last scalar wins, messages merge, unknown and mismatched fields skipped", () => {
  const empty = decodeEtcdWatchResponse(new Uint8Array(0));
  assert.deepEqual(empty, {
    header: { clusterId: 0, memberId: 0, revision: 0, raftTerm: 0 },
    watchId: 0,
    created: false,
    canceled: false,
    compactRevision: 0,
    cancelReason: "",
    fragment: false,
    events: [],
  });
  const w = new ProtoWriter()
    .tag(2, 0).varint(1)
    .tag(2, 0).varint(2) // last wins
    .tag(1, 2).len(new ProtoWriter().tag(3, 0).varint(10).bytes())
    .tag(1, 2).len(new ProtoWriter().tag(4, 0).varint(5).bytes()) // merged
    .tag(99, 2).len([1, 2, 3]) // unknown
    .tag(12, 5).fixed(1, 4)
    .tag(3, 2).len([1]) // created with the wrong wire type: unknown
    .tag(5, 0).varint(-1); // int64 -1 as 10 bytes
  const r = decodeEtcdWatchResponse(w.bytes());
  assert.equal(r.watchId, 2);
  assert.deepEqual(r.header, { clusterId: 0, memberId: 0, revision: 10, raftTerm: 5 });
  assert.equal(r.created, false);
  assert.equal(r.compactRevision, -1);
  // A 64-bit cluster id beyond 2^53 is the nearest double, as JSON.parse gives for the same decimal.
  const big = 15118495548433857066n;
  const h = decodeEtcdWatchResponse(encodeWatchResponse({ header: { clusterId: big } }));
  assert.equal(h.header.clusterId, JSON.parse(big.toString()));
});

test("etcd: every field met with another wire type is skipped as unknown (protobuf-go), leaving its default", () => {
  // [field, its wire type] per message of the schema; each is written once with the other wire type (varint <-> LEN).
  const responseFields = [[1, 2], [2, 0], [3, 0], [4, 0], [5, 0], [6, 2], [7, 0], [11, 2]] as const;
  const headerFields = [[1, 0], [2, 0], [3, 0], [4, 0]] as const;
  const eventFields = [[1, 0], [2, 2], [3, 2]] as const;
  const kvFields = [[1, 2], [2, 0], [3, 0], [4, 0], [5, 2], [6, 0]] as const;
  const wrong = (w: ProtoWriter, field: number, wire: number) =>
    wire === 0 ? w.tag(field, 2).len([0x08, 1]) : w.tag(field, 0).varint(1);
  const empty = decodeEtcdWatchResponse(new Uint8Array(0));
  for (const [field, wire] of responseFields) {
    assert.deepEqual(
      decodeEtcdWatchResponse(wrong(new ProtoWriter(), field, wire).bytes()),
      empty,
      `response ${field}`,
    );
  }
  for (const [field, wire] of headerFields) {
    const header = wrong(new ProtoWriter(), field, wire).bytes();
    const r = decodeEtcdWatchResponse(new ProtoWriter().tag(1, 2).len(header).bytes());
    assert.deepEqual(r, empty, `header ${field}`);
  }
  const put = { type: "PUT", kv: { key: "", create_revision: 0, mod_revision: 0, version: 0, value: "", lease: 0 } };
  for (const [field, wire] of eventFields) {
    const event = wrong(new ProtoWriter(), field, wire).bytes();
    const r = decodeEtcdWatchResponse(new ProtoWriter().tag(11, 2).len(event).bytes());
    assert.equal(r.events.length, 1);
    assert.equal(r.events[0].type, "PUT", `event ${field}`);
    assert.equal(r.events[0].prevKv, undefined, `event ${field}`);
    assert.deepEqual(
      { ...r.events[0].kv, key: text(r.events[0].kv.key), value: text(r.events[0].kv.value) },
      { key: "", createRevision: 0, modRevision: 0, version: 0, value: "", lease: 0 },
      `event ${field}`,
    );
  }
  for (const [field, wire] of kvFields) {
    const kv = wrong(new ProtoWriter(), field, wire).bytes();
    const r = decodeEtcdWatchResponse(
      new ProtoWriter().tag(11, 2).len(new ProtoWriter().tag(2, 2).len(kv).bytes()).bytes(),
    );
    const e = r.events[0];
    assert.deepEqual(
      {
        type: e.type,
        kv: {
          key: text(e.kv.key),
          create_revision: e.kv.createRevision,
          mod_revision: e.kv.modRevision,
          version: e.kv.version,
          value: text(e.kv.value),
          lease: e.kv.lease,
        },
      },
      put,
      `kv ${field}`,
    );
  }
});

test("etcd: malformed messages are MESSAGE_INVALID with offsets in the gRPC stream", async () => {
  const good = encodeWatchResponse({ watchId: 1, events: [{ type: "PUT", kv: { key: utf8("k"), modRevision: 2 } }] });
  const badType = new ProtoWriter().tag(11, 2).len(new ProtoWriter().tag(1, 0).varint(2).bytes()).bytes();
  const truncated = Uint8Array.of(0x5a, 10, 0x08);
  const wire = await encodeGrpcMessages([good, badType, truncated]);
  const { values, error } = await drain(
    streamOf(bytewise(wire)).pipeThrough(new GrpcMessageDecoderStream()).pipeThrough(new EtcdWatchDecoderStream()),
  );
  assert.equal(values.length, 1);
  assert.ok(error instanceof DecodeError, String(error));
  assert.equal(error.code, "MESSAGE_INVALID");
  // Second message: prefix at 5 + good.length, its event at +2 inside, the type tag at +0 in the event.
  assert.equal(error.offset, 5 + good.length + 5 + 2);
  assert.match(error.message, /unknown mvccpb.Event type 2/);
  // Bare messages: offsets count the bytes of the messages before.
  const bare = await drain(streamOf([good, truncated]).pipeThrough(new EtcdWatchDecoderStream()));
  assert.ok(bare.error instanceof DecodeError);
  assert.equal(bare.error.offset, good.length + 1); // the length that runs past the end
  assert.equal(bare.values.length, 1);
});

const kvArb = fc.record({
  key: fc.uint8Array({ minLength: 1, maxLength: 20 }),
  createRevision: fc.nat(),
  modRevision: fc.nat(),
  version: fc.nat(),
  value: fc.uint8Array({ maxLength: 40 }),
  lease: fc.nat(),
});
const eventArb: fc.Arbitrary<EventSpec> = fc.record(
  { type: fc.constantFrom("PUT" as const, "DELETE" as const), kv: kvArb, prevKv: kvArb },
  { requiredKeys: ["type", "kv"] },
);

function plainEvents(r: EtcdWatchResponse) {
  return r.events.map(etcdEventToJson);
}
function specJson(events: EventSpec[]) {
  return events.map((e) =>
    etcdEventToJson({
      type: e.type,
      kv: { createRevision: 0, modRevision: 0, version: 0, lease: 0, value: new Uint8Array(0), ...e.kv },
      ...(e.prevKv
        ? { prevKv: { createRevision: 0, modRevision: 0, version: 0, lease: 0, value: new Uint8Array(0), ...e.prevKv } }
        : {}),
    })
  );
}

test("etcd: fragmented responses are joined, in order, per watch id (property)", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.array(eventArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }),
      fc.array(eventArb, { maxLength: 3 }),
      async (parts, after) => {
        const specs: ResponseSpec[] = parts.map((events, i) => ({
          header: { revision: 50 },
          watchId: 3,
          fragment: i < parts.length - 1,
          events,
        }));
        specs.push({ header: { revision: 51 }, watchId: 3, events: after });
        const wire = await encodeGrpcMessages(specs.map(encodeWatchResponse));
        const { values, error } = await drain(
          streamOf([wire]).pipeThrough(new GrpcMessageDecoderStream()).pipeThrough(new EtcdWatchDecoderStream()),
        );
        assert.equal(error, undefined);
        assert.equal(values.length, 2);
        assert.equal(values[0].fragment, false);
        assert.equal(values[0].header.revision, 50);
        assert.deepEqual(plainEvents(values[0]), specJson(parts.flat()));
        assert.deepEqual(plainEvents(values[1]), specJson(after));
      },
    ),
    { numRuns: 100 },
  );
});

test("etcd: an input ending inside a fragmented response is TRUNCATED; limits apply", async () => {
  const frag = encodeWatchResponse({ watchId: 1, fragment: true, events: [{ type: "PUT", kv: { key: utf8("a") } }] });
  const { values, error } = await drain(streamOf([frag]).pipeThrough(new EtcdWatchDecoderStream()));
  assert.equal(values.length, 0);
  assert.ok(error instanceof DecodeError && error.code === "TRUNCATED", String(error));
  const big = await drain(
    streamOf([frag, frag, frag]).pipeThrough(new EtcdWatchDecoderStream({ maxFragmentedBytes: frag.length * 2 })),
  );
  assert.ok(big.error instanceof DecodeError && big.error.code === "MESSAGE_TOO_LARGE", String(big.error));
  // Fragments of two watches interleaved.
  const other = encodeWatchResponse({ watchId: 2, events: [{ type: "DELETE", kv: { key: utf8("b") } }] });
  const last = encodeWatchResponse({ watchId: 1, events: [{ type: "PUT", kv: { key: utf8("c") } }] });
  const mixed = await drain(streamOf([frag, other, last]).pipeThrough(new EtcdWatchDecoderStream()));
  assert.equal(mixed.error, undefined);
  assert.deepEqual(mixed.values.map((r) => [r.watchId, r.events.map((e) => text(e.kv.key)).join("")]), [
    [2, "b"],
    [1, "ac"],
  ]);
});

test("etcd: etcdEventToJson omits zero values like etcdctl; base64 of every length", () => {
  const e = decodeEtcdWatchResponse(
    encodeWatchResponse({ events: [{ type: "PUT", kv: { key: utf8("k") } }] }),
  ).events[0];
  assert.equal(JSON.stringify(etcdEventToJson(e)), '{"type":"PUT","kv":{"key":"aw=="}}');
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 40000 }), (value) => {
      const [ev] = decodeEtcdWatchResponse(
        encodeWatchResponse({ events: [{ type: "PUT", kv: { key: utf8("k"), value } }] }),
      ).events;
      const expected = btoa(Array.from(value, (b) => String.fromCharCode(b)).join(""));
      assert.equal(etcdEventToJson(ev).kv.value ?? "", expected);
    }),
    { numRuns: 200 },
  );
});

test("etcd: kubernetesValue", () => {
  const kv = (value: Uint8Array) => ({
    key: utf8("/registry/pods/default/web"),
    value,
    createRevision: 1,
    modRevision: 1,
    version: 1,
    lease: 0,
  });
  const proto = Uint8Array.of(0x6b, 0x38, 0x73, 0, 0x0a, 0x02, 0x76, 0x31);
  assert.deepEqual(kubernetesValue(kv(proto)), { format: "protobuf", bytes: proto });
  assert.deepEqual(kubernetesValue(kv(utf8(' \n{"kind":"Pod","apiVersion":"v1"}'))), {
    format: "json",
    object: { kind: "Pod", apiVersion: "v1" },
  });
  for (const s of ["", "plain", "[1]", "null", "42", '{"a":', "k8s"]) {
    assert.equal(kubernetesValue(kv(utf8(s))), undefined, s);
  }
  assert.equal(kubernetesValue(kv(Uint8Array.of(0x7b, 0xff, 0x7d))), undefined);
});

test("etcd: kubernetesValue reads objects stored as CBOR as Go's CBOR decoder does (vectors from Kubernetes' serializer)", () => {
  // fixtures/kubernetes/vectors/cbor_objects.json (tools/refgen/cmd/vectors): the hand-written realistic objects through
  // Kubernetes' CBOR serializer, and damaged copies, each with the JSON of what direct.Unmarshal made of it, or its error.
  const file = JSON.parse(
    readFileSync(new URL("../fixtures/kubernetes/vectors/cbor_objects.json", import.meta.url), "utf8"),
  ) as { vectors: { hex: string; json?: Record<string, unknown>; error?: string }[] };
  const kv = (value: Uint8Array) => ({
    key: utf8("/registry/x"),
    value,
    createRevision: 1,
    modRevision: 1,
    version: 1,
    lease: 0,
  });
  let objects = 0;
  let refused = 0;
  for (const v of file.vectors) {
    const value = Uint8Array.from(v.hex.match(/../g)!.map((h) => parseInt(h, 16)));
    assert.deepEqual(Array.from(value.subarray(0, 3)), [0xd9, 0xd9, 0xf7], "the self-described CBOR tag first");
    const got = kubernetesValue(kv(value));
    if (v.error !== undefined) {
      assert.equal(got, undefined, `${v.hex.slice(0, 80)}: Go fails (${v.error})`);
      refused++;
    } else {
      assert.deepEqual(got, { format: "cbor", object: v.json }, v.hex.slice(0, 80));
      objects++;
    }
  }
  assert.ok(objects >= 16 && refused >= 10, `${objects} objects, ${refused} refused`);
  // CBOR that is not a map, or is not behind the self-described tag, is not a stored object.
  for (
    const bytes of [[0xd9, 0xd9, 0xf7, 0xf6], [0xd9, 0xd9, 0xf7, 0x80], [0xd9, 0xd9, 0xf7], [0xa0], [
      0xd9,
      0xd9,
      0xf7,
      0xa1,
      0x01,
      0x02,
    ]]
  ) {
    assert.equal(kubernetesValue(kv(Uint8Array.from(bytes))), undefined, JSON.stringify(bytes));
  }
  assert.deepEqual(kubernetesValue(kv(Uint8Array.of(0xd9, 0xd9, 0xf7, 0xa0))), { format: "cbor", object: {} });
});
