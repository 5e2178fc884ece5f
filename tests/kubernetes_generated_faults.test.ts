/**
 * The generated decoders (builtinDecoders) on hand-made objects that the refgen fixtures cannot hold, since Go's
 * serializers never write them or since Go's own decoding fails on them: map keys that are `__proto__`, known fields
 * with the wrong wire type, unknown fields inside the special types, and values Go's `encoding/json` refuses to print
 * (a Quantity that does not parse, an IntOrString of an unknown type, FieldsV1 that is not JSON). The expected values
 * are written out from the protobuf and JSON rules, not taken from the decoders.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DecodeError, type KubernetesProtobufMode } from "../mod.ts";
import { builtinDecoders, decodeKubernetesProtobufObject } from "../kubernetes.ts";
import { type Bytes, envelope as unknownEnvelope, int, len, MAGIC } from "./_protobuf.ts";

const entry = (key: string, value: Bytes | string): Bytes => [...len(1, key), ...len(2, value)];

/** `k8s\0` + runtime.Unknown { typeMeta { apiVersion, kind }, raw }, as bytes. */
const envelope = (apiVersion: string, kind: string, raw: Bytes): Uint8Array =>
  Uint8Array.from(unknownEnvelope(apiVersion, kind, raw));

/** Where `needle` first stands in `hay` (the expected offset of a fault, found in the bytes built here). */
function indexOf(hay: Uint8Array, needle: Bytes): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  throw new Error("needle not found");
}

const MODES: KubernetesProtobufMode[] = ["full", "metadata"];

/** The whole object: decoded at once in full mode, through `decode()` in metadata mode. */
function decodeInFull(bytes: Uint8Array, mode: KubernetesProtobufMode): Record<string, unknown> {
  const object = decodeKubernetesProtobufObject(bytes, { decoders: builtinDecoders, mode });
  return mode === "metadata" ? (object as unknown as { decode(): Record<string, unknown> }).decode() : object;
}

function assertFault(run: () => unknown, code: string, offset: number, detail: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof DecodeError, `expected a DecodeError, got ${error}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.offset, offset, error.message);
    assert.match(error.detail, detail);
    return true;
  });
}

test("k8s generated decoders: a map key __proto__ is an own property, as JSON.parse makes it (no prototype change)", () => {
  const meta = [...len(1, "cm"), ...len(11, entry("__proto__", "label")), ...len(11, entry("app", "x"))];
  const bytes = envelope("v1", "ConfigMap", [
    ...len(1, meta),
    ...len(2, entry("__proto__", "data")),
    ...len(2, entry("toString", "y")),
  ]);
  for (const mode of MODES) {
    const object = decodeKubernetesProtobufObject(bytes, { decoders: builtinDecoders, mode });
    // Metadata mode decodes labels on first access: the same rule holds there.
    const labels = (object.metadata as { labels: Record<string, unknown> }).labels;
    assert.deepEqual(labels, JSON.parse('{"__proto__":"label","app":"x"}'), mode);
    assert.ok(Object.hasOwn(labels, "__proto__"), mode);
    assert.equal(Object.getPrototypeOf(labels), Object.prototype, mode);
    const data = decodeInFull(bytes, mode).data as Record<string, unknown>;
    assert.equal(JSON.stringify(data), '{"__proto__":"data","toString":"y"}', mode);
    assert.deepEqual(data, JSON.parse('{"__proto__":"data","toString":"y"}'), mode);
    assert.equal(Object.getPrototypeOf(data), Object.prototype, mode);
    assert.equal(({} as Record<string, unknown>).data, undefined);
  }
});

test("k8s generated decoders: a known field with the wrong wire type fails at its tag, as Go's Unmarshal does", () => {
  // ConfigMap.immutable (4) is a bool (varint); here it is length-delimited.
  const bad = len(4, "x");
  const bytes = envelope("v1", "ConfigMap", [...len(1, len(1, "cm")), ...bad]);
  for (const mode of MODES) {
    assertFault(
      () => decodeInFull(bytes, mode),
      "MESSAGE_INVALID",
      indexOf(bytes, bad),
      /ConfigMap: field 4 .*wire type 2/,
    );
  }
  // ObjectMeta.name (1) as a varint: found by metadata mode too, before anything is returned.
  const badName = int(1, 5);
  const meta = envelope("v1", "ConfigMap", len(1, badName));
  for (const mode of MODES) {
    assertFault(
      () => decodeKubernetesProtobufObject(meta, { decoders: builtinDecoders, mode }),
      "MESSAGE_INVALID",
      indexOf(meta, badName),
      /ObjectMeta: field 1 .*wire type 0/,
    );
  }
});

test("k8s generated decoders: unknown fields inside Time are skipped; Time's own fields with another wire type fail", () => {
  const seconds = 1_700_000_000;
  const expected = new Date(seconds * 1000).toISOString().replace(".000Z", "Z");
  const time = (extra: Bytes) => len(8, [...int(1, seconds), ...extra]);
  const ok = envelope("v1", "ConfigMap", len(1, [...len(1, "cm"), ...time([...int(3, 7), ...len(15, "zz")])]));
  for (const mode of MODES) {
    const object = decodeKubernetesProtobufObject(ok, { decoders: builtinDecoders, mode });
    assert.equal((object.metadata as { creationTimestamp: string }).creationTimestamp, expected, mode);
  }
  const badNanos = len(2, "1");
  const bad = envelope("v1", "ConfigMap", len(1, [...len(1, "cm"), ...time(badNanos)]));
  assertFault(
    () => decodeKubernetesProtobufObject(bad, { decoders: builtinDecoders }),
    "MESSAGE_INVALID",
    indexOf(bad, badNanos),
    /Timestamp: field 2/,
  );
});

test("k8s generated decoders: a Quantity that does not parse fails at its string, as Go's Unmarshal does", () => {
  const value = len(1, "12abc");
  const spec = len(1, entry("cpu", value));
  const bytes = envelope("v1", "ResourceQuota", [...len(1, len(1, "q")), ...len(2, spec)]);
  for (const mode of MODES) {
    assertFault(
      () => decodeInFull(bytes, mode),
      "MESSAGE_INVALID",
      indexOf(bytes, value) + 1,
      /"12abc" is not a quantity/,
    );
  }
  // And one that does parses to Go's canonical form.
  const good = envelope("v1", "ResourceQuota", [
    ...len(1, len(1, "q")),
    ...len(2, len(1, entry("cpu", len(1, "1.5")))),
  ]);
  assert.deepEqual(
    (decodeKubernetesProtobufObject(good, { decoders: builtinDecoders }).spec as { hard: unknown }).hard,
    { cpu: "1500m" },
  );
});

test("k8s generated decoders: an IntOrString of a type other than 0 or 1 fails (Go's MarshalJSON refuses it)", () => {
  const port = (targetPort: Bytes) => len(1, [...len(1, "http"), ...int(3, 80), ...len(4, targetPort)]);
  const service = (targetPort: Bytes) =>
    envelope("v1", "Service", [...len(1, len(1, "s")), ...len(2, port(targetPort))]);
  const ports = (bytes: Uint8Array) =>
    (decodeKubernetesProtobufObject(bytes, { decoders: builtinDecoders }).spec as { ports: { targetPort: unknown }[] })
      .ports.map((p) => p.targetPort);
  assert.deepEqual(ports(service([...int(1, 0), ...int(2, 8080)])), [8080]);
  assert.deepEqual(ports(service([...int(1, 1), ...len(3, "web")])), ["web"]);
  assert.deepEqual(ports(service([])), [0]);
  const intOrString = [...int(1, 2), ...int(2, 8080)];
  const bad = service(intOrString);
  for (const mode of MODES) {
    assertFault(() => decodeInFull(bad, mode), "MESSAGE_INVALID", indexOf(bad, intOrString), /IntOrString: type 2/);
  }
});

test("k8s generated decoders: FieldsV1 that is not JSON fails at its bytes; in metadata mode when first read", () => {
  const raw = len(1, "{not json");
  const managed = len(17, [...len(1, "kubectl"), ...len(6, "FieldsV1"), ...len(7, raw)]);
  const bytes = envelope("v1", "ConfigMap", len(1, [...len(1, "cm"), ...managed]));
  const at = indexOf(bytes, raw) + 2; // the JSON's first byte, past FieldsV1.raw's tag and length
  assertFault(
    () => decodeKubernetesProtobufObject(bytes, { decoders: builtinDecoders }),
    "MESSAGE_INVALID",
    at,
    /FieldsV1.*not JSON/,
  );
  const lazy = decodeKubernetesProtobufObject(bytes, { decoders: builtinDecoders, mode: "metadata" });
  const entries = (lazy.metadata as { managedFields: Record<string, unknown>[] }).managedFields;
  assert.equal(entries[0].manager, "kubectl");
  assertFault(() => entries[0].fieldsV1, "MESSAGE_INVALID", at, /FieldsV1.*not JSON/);
});

test("k8s generated decoders: metadata given twice merges as Go's Unmarshal merges it (maps too), in both modes", () => {
  const first = [...len(1, "cm"), ...len(11, entry("a", "1"))];
  const second = [...len(3, "ns"), ...len(11, entry("b", "2")), ...len(11, entry("a", "3"))];
  const bytes = envelope("v1", "ConfigMap", [...len(1, first), ...len(2, entry("k", "v")), ...len(1, second)]);
  for (const mode of MODES) {
    const metadata = decodeKubernetesProtobufObject(bytes, { decoders: builtinDecoders, mode }).metadata as Record<
      string,
      unknown
    >;
    assert.equal(metadata.name, "cm", mode);
    assert.equal(metadata.namespace, "ns", mode);
    assert.deepEqual(metadata.labels, { a: "3", b: "2" }, mode);
    assert.deepEqual(decodeInFull(bytes, mode).data, { k: "v" }, mode);
  }
});

test("k8s generated decoders: an envelope field with the wrong wire type, and JSON content that is not an object", () => {
  const typeMeta = [...len(1, "v1"), ...len(2, "ConfigMap")];
  const badRaw = int(2, 7); // Unknown.raw as a varint
  const bytes = Uint8Array.from([...MAGIC, ...len(1, typeMeta), ...badRaw]);
  assertFault(
    () => decodeKubernetesProtobufObject(bytes, { decoders: builtinDecoders }),
    "MESSAGE_INVALID",
    indexOf(bytes, badRaw),
    /raw/,
  );
  for (const json of ["[1]", "null", '"s"']) {
    const raw = len(2, json);
    const object = Uint8Array.from([...MAGIC, ...len(1, typeMeta), ...raw, ...len(4, "application/json")]);
    assertFault(
      () => decodeKubernetesProtobufObject(object, { decoders: builtinDecoders }),
      "JSON_INVALID",
      indexOf(object, raw) + 2,
      /not an object/,
    );
  }
});
