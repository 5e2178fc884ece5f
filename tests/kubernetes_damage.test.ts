/**
 * The generated Kubernetes decoders on damaged bytes, against Go: fixtures/kubernetes/damage/vectors.json (written by
 * tools/refgen/cmd/damagevectors) holds damaged copies of the objects of every kind, each with what Go made of it:
 * the JSON `encoding/json` writes for what the kind's generated `Unmarshal` (gogo-protobuf's, as client-go calls it)
 * makes of the bytes, given as its differences from the undamaged object's JSON, or Go's error. Full decoding must
 * give exactly that object or a `DecodeError`, and metadata mode that metadata and that object on `decode()` (or a
 * `DecodeError`, now or from `decode()`).
 *
 * The damage: bytes replaced, flipped, stepped, deleted or inserted, objects cut short, wire types changed; and bytes
 * that Go's generated code accepts though protobuf-go would not, or that are valid but unusual: varints, tags and
 * lengths in more bytes than they need, 10-byte varints whose last byte carries bits past the 64th, tags with bits
 * past the 35th, unknown groups whose end does not match their start, that hold a tag of field 0, or that nest more
 * than 10 000 deep.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { KubernetesProtobufObject } from "../mod.ts";
import { builtinDecoders, decodeKubernetesProtobufObject } from "../kubernetes.ts";
import { parseKubernetesEnvelope } from "../kubernetes.ts";
import { envelope } from "./_protobuf.ts";
import {
  asJson,
  collectFailure,
  decodeLikeGo,
  deepEquals,
  fixtureStreamEnvelopes,
  objectsOfEnvelopes,
} from "./_kubernetes_streams.ts";
import { fromHex } from "./_util.ts";

const fixtures = fileURLToPath(new URL("../fixtures/kubernetes/", import.meta.url));

type Path = (string | number)[];
type PatchOp = { p: Path; v: unknown } | { p: Path; d: true };

interface DamageVector {
  apiVersion: string;
  kind: string;
  /** "ADDED" / "MODIFIED": that event's object in the kind's fixture streams. */
  base: string;
  damage: string;
  /** [at, delete, insert (hex), repeat?], applied in order, each at a position of the bytes as left by the ones before. */
  edits: [number, number, string, number?][];
  patch?: PatchOp[];
  error?: string;
}

const file = JSON.parse(readFileSync(fixtures + "damage/vectors.json", "utf8")) as {
  header: { count: number };
  vectors: DamageVector[];
};

function applyEdits(bytes: Uint8Array, edits: DamageVector["edits"]): Uint8Array {
  let out = bytes;
  for (const [at, del, hex, repeat = 1] of edits) {
    const unit = fromHex(hex);
    const next = new Uint8Array(out.length - del + unit.length * repeat);
    next.set(out.subarray(0, at));
    for (let i = 0; i < repeat; i++) next.set(unit, at + i * unit.length);
    next.set(out.subarray(at + del), at + unit.length * repeat);
    out = next;
  }
  return out;
}

function applyPatch(value: unknown, patch: PatchOp[]): unknown {
  let root = structuredClone(value);
  for (const op of patch) {
    if (op.p.length === 0) {
      root = "d" in op ? undefined : op.v;
      continue;
    }
    let at = root as Record<string | number, unknown>;
    for (const step of op.p.slice(0, -1)) at = at[step] as Record<string | number, unknown>;
    const last = op.p[op.p.length - 1];
    if ("d" in op) delete at[last];
    else at[last] = op.v;
  }
  return root;
}

interface KindFixtures {
  envelopes: Map<string, Uint8Array>;
  objects: Map<string, Uint8Array>;
  json: Map<string, unknown>;
}
const kinds = new Map<string, KindFixtures>();
/** A kind's fixture streams, read once: the events' envelopes and objects (protobuf), and their JSON objects. */
function fixturesOf(v: { apiVersion: string; kind: string }): KindFixtures {
  const key = `${v.apiVersion} ${v.kind}`;
  let s = kinds.get(key);
  if (s === undefined) {
    const name = `${fixtures}streams/${v.apiVersion.replaceAll("/", "_")}.${v.kind}.json`;
    const json = new Map<string, unknown>();
    for (const line of readFileSync(name, "utf8").split("\n")) {
      if (line === "") continue;
      const event = JSON.parse(line) as { type: string; object: unknown };
      json.set(event.type, event.object);
    }
    const envelopes = fixtureStreamEnvelopes(fixtures, v.apiVersion, v.kind);
    s = { envelopes, objects: objectsOfEnvelopes(envelopes), json };
    kinds.set(key, s);
  }
  return s;
}

/** The damaged bytes and Go's object (`undefined` where Go failed). */
function vectorCase(v: DamageVector): { bytes: Uint8Array; expected: Record<string, unknown> | undefined } {
  const s = fixturesOf(v);
  const bytes = applyEdits(s.objects.get(v.base)!, v.edits);
  const expected = v.error === undefined
    ? applyPatch(s.json.get(v.base), v.patch ?? []) as Record<string, unknown>
    : undefined;
  return { bytes, expected };
}

const describe = (v: DamageVector) => `${v.apiVersion} ${v.kind} ${v.base} ${v.damage} ${JSON.stringify(v.edits)}`;

test("damage vectors: the file is Go's, with every kind and every sort of damage, accepted and refused", () => {
  assert.equal(file.vectors.length, file.header.count);
  const index = JSON.parse(readFileSync(fixtures + "index.json", "utf8")) as { apiVersion: string; kind: string }[];
  assert.deepEqual(
    [...new Set(file.vectors.map((v) => `${v.apiVersion} ${v.kind}`))].sort(),
    index.map((e) => `${e.apiVersion} ${e.kind}`).sort(),
  );
  // Counted from the vectors themselves, so that the test cannot pass on vectors that do nothing.
  const count = (damage: string, accepted: boolean) =>
    file.vectors.filter((v) => v.damage === damage && (v.error === undefined) === accepted).length;
  for (const damage of ["byte", "bit", "step", "delete", "insert", "truncate", "wiretype"]) {
    assert.ok(count(damage, false) >= 50, `${damage}: refused ${count(damage, false)}`);
  }
  for (const damage of ["byte", "bit", "step"]) assert.ok(count(damage, true) >= 50, `${damage}: accepted`);
  for (
    const damage of [
      "varint-long",
      "varint-10",
      "tag-long",
      "tag-high",
      "len-long",
      "group-mismatch",
      "group-field0",
      "group-junk",
      "group-deep",
    ]
  ) {
    assert.ok(count(damage, true) >= 100, `${damage}: accepted ${count(damage, true)}`);
  }
  assert.ok(count("group-open", false) >= 100, "open groups refused");
  // Accepted damage that changes the object, not only its bytes.
  assert.ok(file.vectors.filter((v) => (v.patch ?? []).length > 0).length >= 250, "objects changed");
});

test("damage vectors: full decoding gives exactly Go's object, or a DecodeError where Go fails", () => {
  const failures: string[] = [];
  for (const v of file.vectors) {
    const { bytes, expected } = vectorCase(v);
    const decode = builtinDecoders.decoder(v.apiVersion, v.kind)!;
    const got = decodeLikeGo(
      failures,
      expected === undefined,
      describe(v),
      () => decode(bytes, 0, bytes.length, { apiVersion: v.apiVersion, kind: v.kind }, 0),
    );
    if (got === undefined) continue;
    collectFailure(
      failures,
      deepEquals(got.value, expected),
      () => `${describe(v)}: differs from Go's object (patch ${JSON.stringify(v.patch).slice(0, 300)})`,
    );
  }
  assert.deepEqual(failures, []);
});

test("damage vectors: metadata mode gives Go's metadata and, on decode(), Go's object, or a DecodeError", () => {
  const failures: string[] = [];
  let lazy = 0;
  for (const v of file.vectors) {
    const { bytes, expected } = vectorCase(v);
    const undamaged = fixturesOf(v).json.get(v.base) as Record<string, unknown>;
    // Kinds without metadata (PodLogOptions, ...) are no watch objects: metadata mode has nothing to say of them.
    if (undamaged.metadata === undefined) continue;
    const input = Uint8Array.from(envelope(v.apiVersion, v.kind, Array.from(bytes)));
    // The metadata with every collection read (lazy ones included), then the whole object.
    const got = decodeLikeGo(failures, expected === undefined, describe(v), () => {
      const object = decodeKubernetesProtobufObject(input, { decoders: builtinDecoders, mode: "metadata" });
      const metadata = asJson(object.metadata);
      return { metadata, object, whole: object instanceof KubernetesProtobufObject ? object.decode() : undefined };
    });
    if (got === undefined || expected === undefined) continue;
    const { metadata, object, whole } = got.value;
    collectFailure(failures, deepEquals(metadata, expected.metadata), () => `${describe(v)}: metadata differs`);
    if (object instanceof KubernetesProtobufObject) {
      lazy++;
      collectFailure(failures, deepEquals(whole, expected), () => `${describe(v)}: decode() differs`);
    }
  }
  assert.deepEqual(failures, []);
  assert.ok(lazy > 1000, `only ${lazy} objects decoded lazily`);
});

interface EnvelopeVector {
  apiVersion: string;
  kind: string;
  damage: string;
  edits: DamageVector["edits"];
  /** What runtime.Unknown's Unmarshal made of the damaged envelope. */
  unknown?: {
    apiVersion: string;
    kind: string;
    contentEncoding: string;
    contentType: string;
    rawLength: number;
    rawSha256: string;
  };
  error?: string;
}

const envelopeFile = JSON.parse(readFileSync(fixtures + "damage/envelopes.json", "utf8")) as {
  header: { count: number };
  vectors: EnvelopeVector[];
};

test("damage vectors: envelopes (k8s\\0, runtime.Unknown) read as Go reads them, or fail with a DecodeError", () => {
  assert.equal(envelopeFile.vectors.length, envelopeFile.header.count);
  const count = (damage: string, accepted: boolean) =>
    envelopeFile.vectors.filter((v) => v.damage === damage && (v.error === undefined) === accepted).length;
  assert.ok(count("magic", false) >= 100, "damaged prefixes");
  for (const damage of ["varint-10", "tag-high", "group-mismatch", "group-field0"]) {
    assert.ok(count(damage, true) >= 50, `${damage}: accepted ${count(damage, true)}`);
  }
  const failures: string[] = [];
  let read = 0;
  for (const v of envelopeFile.vectors) {
    const bytes = applyEdits(fixturesOf(v).envelopes.get("ADDED")!, v.edits);
    const u = v.unknown;
    // Stricter than Unmarshal, as documented: an object needs a kind and an apiVersion (so do the Kubernetes
    // serializers, to find its type), and a contentEncoding (which Go would ignore, misreading raw) is refused.
    const refused = u === undefined || u.kind === "" || u.apiVersion === "" || u.contentEncoding !== "";
    const what = `${v.apiVersion} ${v.kind} ${v.damage} ${JSON.stringify(v.edits)}`;
    const got = decodeLikeGo(failures, refused, what, () => parseKubernetesEnvelope(bytes));
    if (got === undefined || u === undefined) continue;
    const e = got.value;
    const raw = bytes.subarray(e.rawStart, e.rawEnd);
    collectFailure(
      failures,
      deepEquals(
        [e.apiVersion, e.kind, e.contentType, raw.length, createHash("sha256").update(raw).digest("hex")],
        [u.apiVersion, u.kind, u.contentType, u.rawLength, u.rawSha256],
      ),
      () => `${what}: differs from Go's ${JSON.stringify(u)}`,
    );
    read++;
  }
  assert.deepEqual(failures, []);
  assert.ok(read > 1000, `only ${read} envelopes read`);
});
