/**
 * Protobuf's merge rules in the generated Kubernetes decoders, against Go: fixtures/kubernetes/merge/vectors.json
 * (written by tools/refgen/cmd/mergevectors) holds objects of every kind whose bytes repeat fields (a whole second
 * object after the first, or fields that reach down a path of embedded messages to an empty message or a copy of a
 * field) and carry unknown fields encoded as proto2 groups, each with the JSON Go's `encoding/json` writes for what
 * the kind's generated `Unmarshal` makes of them. Full decoding must give exactly that object, and metadata mode that
 * metadata (and that object on `decode()`).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DecodeError, KubernetesProtobufObject } from "../mod.ts";
import { builtinDecoders, decodeKubernetesProtobufObject } from "../kubernetes.ts";
import { envelope, len, varint } from "./_protobuf.ts";
import { fromHex } from "./_util.ts";
import { asJson, collectFailure, decodeLikeGo, deepEquals, fixtureStreamObjects } from "./_kubernetes_streams.ts";

const fixtures = fileURLToPath(new URL("../fixtures/kubernetes/", import.meta.url));

interface MergeVector {
  apiVersion: string;
  kind: string;
  /** "ADDED" / "MODIFIED" (that event's object in the kind's fixture stream), or "hex:" + bytes. */
  parts: string[];
  json?: Record<string, unknown>;
  error?: string;
}

const file = JSON.parse(readFileSync(fixtures + "merge/vectors.json", "utf8")) as {
  header: { count: number };
  vectors: MergeVector[];
};

const hexOf = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, "0")).join("");

const objectsOf = new Map<string, Map<string, Uint8Array>>();
function bytesOf(v: MergeVector): number[] {
  const key = `${v.apiVersion} ${v.kind}`;
  if (!objectsOf.has(key)) objectsOf.set(key, fixtureStreamObjects(fixtures, v.apiVersion, v.kind));
  return v.parts.flatMap((part) =>
    part.startsWith("hex:") ? Array.from(fromHex(part.slice(4))) : Array.from(objectsOf.get(key)!.get(part)!)
  );
}

test("merge vectors: the file is Go's, with every kind", () => {
  assert.equal(file.vectors.length, file.header.count);
  const kinds = new Set(file.vectors.map((v) => `${v.apiVersion} ${v.kind}`));
  const index = JSON.parse(readFileSync(fixtures + "index.json", "utf8")) as { apiVersion: string; kind: string }[];
  assert.deepEqual(
    [...kinds].sort(),
    index.map((e) => `${e.apiVersion} ${e.kind}`).sort(),
    "the kinds of the fixtures",
  );
  assert.ok(kinds.has("v1 Status") && kinds.has("v1 Pod") && kinds.size > 300);
  // What the vectors exercise (counted from their parts, so that the test cannot pass on vectors that do nothing):
  // unknown groups (the start tag of field 9000-9049, wire type 3) ...
  const suffixes = file.vectors.flatMap((v) => v.parts.filter((p) => p.startsWith("hex:")));
  const groupTags = Array.from({ length: 50 }, (_, i) => hexOf(varint(((9000 + i) << 3) | 3)));
  assert.ok(suffixes.filter((s) => groupTags.some((t) => s.includes(t))).length > 100, "unknown groups");
  assert.ok(file.vectors.filter((v) => v.parts.join() === "ADDED,MODIFIED").length > 200, "whole objects merged");
  assert.ok(suffixes.length > 450, "fields repeated along paths");
});

test("merge vectors: full decoding gives exactly Go's object (repeated fields merged, unknown groups skipped)", () => {
  const failures: string[] = [];
  let decoded = 0;
  for (const v of file.vectors) {
    const bytes = Uint8Array.from(bytesOf(v));
    const decode = builtinDecoders.decoder(v.apiVersion, v.kind)!;
    const got = decodeLikeGo(
      failures,
      v.error !== undefined,
      `${v.kind} ${v.parts}`,
      () => decode(bytes, 0, bytes.length, { apiVersion: v.apiVersion, kind: v.kind }, 0),
    );
    if (got === undefined) continue;
    collectFailure(
      failures,
      deepEquals(got.value, v.json),
      () => `${v.kind} ${v.parts}: differs from Go's ${JSON.stringify(v.json).slice(0, 300)}`,
    );
    decoded++;
  }
  assert.deepEqual(failures, []);
  assert.ok(decoded > 700, `only ${decoded} vectors decoded`);
});

test("merge vectors: metadata mode gives Go's metadata, and Go's object on decode()", () => {
  const failures: string[] = [];
  let lazy = 0;
  for (const v of file.vectors) {
    // Kinds without metadata (PodLogOptions, ...) are no watch objects: metadata mode has nothing to say of them.
    if (v.json?.metadata === undefined) continue;
    const bytes = Uint8Array.from(envelope(v.apiVersion, v.kind, bytesOf(v)));
    const object = decodeKubernetesProtobufObject(bytes, { decoders: builtinDecoders, mode: "metadata" });
    collectFailure(
      failures,
      deepEquals(asJson(object.metadata), v.json.metadata),
      () => `${v.kind} ${v.parts}: metadata differs`,
    );
    if (object instanceof KubernetesProtobufObject) {
      lazy++;
      collectFailure(failures, deepEquals(object.decode(), v.json), () => `${v.kind} ${v.parts}: decode() differs`);
    }
  }
  assert.deepEqual(failures, []);
  assert.ok(lazy > 600, `only ${lazy} objects decoded lazily`);
});

test("a field met again merges: IntOrString, Quantity, RawExtension keep what a later occurrence leaves out", () => {
  // Hand-made counterparts of cases the vectors hold, named so that a failure says which rule broke. The expected
  // values follow Go's generated Unmarshal (IntOrString, RawExtension: field by field) and Quantity's own (only
  // field 1 sets it), as the vectors show them.
  const decode = (apiVersion: string, kind: string, bytes: number[]) =>
    builtinDecoders.decoder(apiVersion, kind)!(Uint8Array.from(bytes), 0, bytes.length, {}, 0);
  // PodDisruptionBudget spec (2) { minAvailable (1): IntOrString { type 1, strVal "10%" } }, then spec { minAvailable { } }.
  const pdb = (minAvailable: number[]) => len(2, len(1, minAvailable));
  const first = [8, 1, 16, 0, ...len(3, "10%")];
  assert.equal(
    (decode("policy/v1", "PodDisruptionBudget", [...pdb(first), ...pdb([])]).spec as never)["minAvailable"],
    "10%",
  );
  // Only intVal the second time: still a string (type 1 stays) ...
  assert.equal(
    (decode("policy/v1", "PodDisruptionBudget", [...pdb(first), ...pdb([16, 5])]).spec as never)["minAvailable"],
    "10%",
  );
  // ... and type 0 alone a third time shows that intVal (the half the JSON did not show).
  assert.equal(
    (decode("policy/v1", "PodDisruptionBudget", [...pdb(first), ...pdb([16, 5]), ...pdb([8, 0])]).spec as never)[
      "minAvailable"
    ],
    5,
  );
  // ... while type 1 alone after an int shows the strVal given with it.
  assert.equal(
    (decode("policy/v1", "PodDisruptionBudget", [...pdb([8, 0, 16, 7, ...len(3, "x")]), ...pdb([8, 1])]).spec as never)[
      "minAvailable"
    ],
    "x",
  );
  // ControllerRevision data (2): RawExtension { raw (1) }, then an empty data: the first raw stays.
  const revision = decode("apps/v1", "ControllerRevision", [...len(2, len(1, '{"a":1}')), ...len(2, [])]);
  assert.deepEqual(revision.data, { a: 1 });
  // A singular Quantity: Pod spec (2) { volumes (1) { name (1), volumeSource (2, inline) { emptyDir (2) { sizeLimit (2)
  // } } } }, the volume source met again with an empty sizeLimit: the Quantity stays.
  const source = (sizeLimit: number[]) => len(2, len(2, len(2, sizeLimit)));
  const pod = decode("v1", "Pod", len(2, len(1, [...len(1, "v"), ...source(len(1, "1Gi")), ...source([])])));
  assert.deepEqual((pod.spec as { volumes: unknown[] }).volumes, [{ name: "v", emptyDir: { sizeLimit: "1Gi" } }]);
});

test("FieldsV1 with empty bytes is null, as its MarshalJSON prints it; an empty RawExtension is an error", () => {
  // metadata (1) { managedFields (17) { fieldsV1 (7) { Raw (1): "" } } }
  const pod = builtinDecoders.decoder("v1", "Pod")!(
    Uint8Array.from(len(1, len(17, len(7, len(1, []))))),
    0,
    9,
    {},
    0,
  );
  assert.deepEqual((pod.metadata as { managedFields: unknown[] }).managedFields, [{ fieldsV1: null }]);
  const bytes = Uint8Array.from(len(2, len(1, [])));
  assert.throws(
    () => builtinDecoders.decoder("apps/v1", "ControllerRevision")!(bytes, 0, bytes.length, {}, 0),
    (e: unknown) => e instanceof DecodeError && e.code === "MESSAGE_INVALID" && /RawExtension/.test(e.message),
  );
});
