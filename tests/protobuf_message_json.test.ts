/**
 * messageToJson (protobuf to its JSON mapping by reflection) and loadProtoFiles (`watchwire decode --proto`): messages
 * built byte by byte in this file (independently of the decoder), and a `.proto` file of this test's own.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { messageToJson } from "../src/codec/protobuf/message_to_json.ts";
import type { FieldSchema, MessageSchema, ProtobufValueType } from "../src/codec/protobuf/message_schema.ts";
import { loadProtoFiles } from "../src/cli/proto_files.ts";
import { DecodeError } from "../src/errors.ts";

// The wire format, by hand.
const varint = (n: bigint): number[] => {
  let v = BigInt.asUintN(64, n);
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
};
const tag = (field: number, wire: number) => varint(BigInt((field << 3) | wire));
const len = (field: number, bytes: number[]) => [...tag(field, 2), ...varint(BigInt(bytes.length)), ...bytes];
const text = (s: string) => [...new TextEncoder().encode(s)];
const le = (n: bigint, bytes: number) => Array.from({ length: bytes }, (_, i) => Number((n >> BigInt(8 * i)) & 0xffn));

const scalar = (s: string): ProtobufValueType => ({ kind: "scalar", scalar: s as never });
const field = (number: number, jsonName: string, type: ProtobufValueType, extra: Partial<FieldSchema> = {}) =>
  [number, { number, jsonName, type, repeated: false, ...extra }] as const;
const message = (fullName: string, ...fields: (readonly [number, FieldSchema])[]): MessageSchema => ({
  fullName,
  fields: new Map(fields),
});

const timestamp = message(
  "google.protobuf.Timestamp",
  field(1, "seconds", scalar("int64")),
  field(2, "nanos", scalar("int32")),
);
const duration = message(
  "google.protobuf.Duration",
  field(1, "seconds", scalar("int64")),
  field(2, "nanos", scalar("int32")),
);
const int64Value = message("google.protobuf.Int64Value", field(1, "value", scalar("int64")));
const color: ProtobufValueType = { kind: "enum", fullName: "t.Color", values: new Map([[0, "RED"], [2, "BLUE"]]) };
const inner = message("t.Inner", field(1, "name", scalar("string")));
const types = new Map<string, MessageSchema>();
const all: MessageSchema = {
  fullName: "t.All",
  lookup: (name) => types.get(name),
  fields: new Map([
    field(1, "i64", scalar("int64")),
    field(2, "u64", scalar("uint64")),
    field(3, "s64", scalar("sint64")),
    field(4, "f64", scalar("fixed64")),
    field(5, "sf64", scalar("sfixed64")),
    field(6, "i32", scalar("int32")),
    field(7, "flag", scalar("bool")),
    field(8, "text", scalar("string")),
    field(9, "data", scalar("bytes")),
    field(10, "color", color),
    field(11, "colors", color, { repeated: true }),
    field(12, "nums", scalar("int32"), { repeated: true }),
    field(13, "inner", { kind: "message", schema: () => inner }),
    field(14, "labels", scalar("int32"), { mapKey: "string" }),
    field(15, "at", { kind: "message", schema: () => timestamp }),
    field(16, "took", { kind: "message", schema: () => duration }),
    field(17, "maybe", { kind: "message", schema: () => int64Value }),
    field(18, "ratio", scalar("double")),
    field(19, "any", {
      kind: "message",
      schema: () => ({
        ...message("google.protobuf.Any", field(1, "typeUrl", scalar("string")), field(2, "value", scalar("bytes"))),
        lookup: (name: string) => types.get(name),
      }),
    }),
  ]),
};
types.set("t.Inner", inner);

test("messageToJson: every scalar, enums, packed and unpacked repeats, maps, messages and well-known types", () => {
  const anyValue = len(1, text("in-any"));
  const bytes = Uint8Array.from([
    ...tag(1, 0),
    ...varint(-5n),
    ...tag(2, 0),
    ...varint(2n ** 64n - 1n),
    ...tag(3, 0),
    ...varint(3n), // zigzag: -2
    ...tag(4, 1),
    ...le(2n ** 63n + 7n, 8),
    ...tag(5, 1),
    ...le(BigInt.asUintN(64, -9n), 8),
    ...tag(6, 0),
    ...varint(-1n),
    ...tag(7, 0),
    1,
    ...len(8, text("héllo")),
    ...len(9, [0xff, 0x00, 0x10]),
    ...tag(10, 0),
    2,
    ...tag(11, 0),
    7, // an unknown enum number stays a number
    ...len(11, [0, 2]), // packed
    ...len(12, [...varint(1n), ...varint(300n)]), // packed
    ...tag(12, 0),
    ...varint(4n), // and unpacked, appended
    ...len(13, len(1, text("n"))),
    ...len(14, [...len(1, text("a")), ...tag(2, 0), 1]),
    ...len(14, len(1, text("b"))), // a value left out: its zero
    ...len(15, [...tag(1, 0), ...varint(1795891617n), ...tag(2, 0), ...varint(827000000n)]),
    ...len(16, [...tag(1, 0), ...varint(-3n), ...tag(2, 0), ...varint(-500000000n)]),
    ...len(17, [...tag(1, 0), ...varint(42n)]),
    ...tag(18, 1),
    ...le(0x7ff0000000000000n, 8), // +Infinity
    ...len(19, [...len(1, text("type.googleapis.com/t.Inner")), ...len(2, anyValue)]),
    ...len(99, text("unknown field: skipped")),
  ]);
  assert.deepEqual(messageToJson(bytes, all), {
    i64: "-5",
    u64: "18446744073709551615",
    s64: "-2",
    f64: "9223372036854775815",
    sf64: "-9",
    i32: -1,
    flag: true,
    text: "héllo",
    data: "/wAQ",
    color: "BLUE",
    colors: [7, "RED", "BLUE"],
    nums: [1, 300, 4],
    inner: { name: "n" },
    labels: { a: 1, b: 0 },
    at: "2026-11-28T18:46:57.827Z",
    took: "-3.500s",
    maybe: "42",
    ratio: "Infinity",
    any: { "@type": "type.googleapis.com/t.Inner", name: "in-any" },
  });
});

test("messageToJson: malformed bytes are MESSAGE_INVALID at their offset; a wrong wire type names the field", () => {
  const cut = Uint8Array.from(len(8, text("hello")).slice(0, 4));
  assert.throws(
    () => messageToJson(cut, all, 100),
    (e) => e instanceof DecodeError && e.code === "MESSAGE_INVALID" && e.offset >= 100,
  );
  const wrong = Uint8Array.from([...tag(8, 0), 1]);
  assert.throws(() => messageToJson(wrong, all), /wrong wire type 0 for field text/);
});

test("loadProtoFiles: a .proto file's service, its imports (well-known types too), to request and response decoders", async () => {
  const files: Record<string, string> = {
    "api/watch.proto": `syntax = "proto3";
package demo.v1;
import "api/types.proto";
import "google/protobuf/timestamp.proto";
import "google/api/annotations.proto"; // only options: not found, skipped
service Watcher { rpc Watch (WatchRequest) returns (stream WatchResponse); }
message WatchRequest { string key = 1; }
message WatchResponse {
  int64 revision = 1;
  repeated Event events = 2;
  google.protobuf.Timestamp at = 3;
  map<string, string> labels = 4;
  string owner_name = 5;
  string renamed = 6 [json_name = "theName"];
}`,
    "protos/api/types.proto": `syntax = "proto3";
package demo.v1;
enum Kind { PUT = 0; DELETE = 1; }
message Event { Kind kind = 1; bytes key = 2; Event prev = 3; }`,
  };
  const decoders = await loadProtoFiles(["api/watch.proto"], ["protos"], (path) => Promise.resolve(files[path]));
  assert.equal(decoders("/demo.v1.Watcher/Nope"), undefined);
  assert.equal(decoders("/demo.v1.Nope/Watch"), undefined);
  const decode = decoders("/demo.v1.Watcher/Watch")!.response!;
  assert.deepEqual(decoders("/demo.v1.Watcher/Watch")!.request!(Uint8Array.from(len(1, text("k8s"))), 0), {
    key: "k8s",
  });
  const event = [...tag(1, 0), 1, ...len(2, text("k")), ...len(3, [...tag(1, 0), 0])];
  const bytes = Uint8Array.from([
    ...tag(1, 0),
    ...varint(7n),
    ...len(2, event),
    ...len(3, [...tag(1, 0), ...varint(0n)]),
    ...len(4, [...len(1, text("app")), ...len(2, text("web"))]),
    ...len(5, text("me")),
    ...len(6, text("x")),
  ]);
  assert.deepEqual(decode(bytes, 0), {
    revision: "7",
    events: [{ kind: "DELETE", key: "aw==", prev: { kind: "PUT" } }],
    at: "1970-01-01T00:00:00Z",
    labels: { app: "web" },
    ownerName: "me",
    theName: "x",
  });
  // A file that cannot be found, or parsed: an error naming it.
  await assert.rejects(loadProtoFiles(["none.proto"], [], () => Promise.resolve(undefined)), /none\.proto: not found/);
  await assert.rejects(
    loadProtoFiles(["bad.proto"], [], () => Promise.resolve("syntax = proto3; message {")),
    /bad\.proto: /,
  );
});
