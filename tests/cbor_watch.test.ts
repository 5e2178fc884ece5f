/**
 * Kubernetes CBOR watches and objects (src/codec/kubernetes/cbor_*.ts, read_kubernetes_cbor_value.ts,
 * decode_kubernetes_cbor_object.ts) through decodeWatchResponse, the CLI and the cluster layer's list():
 *
 * - The bodies kube-apiserver v1.37.2 sent (fixtures/kubernetes/cbor/: CBOR watches of ConfigMaps, Secrets, Pods,
 *   Nodes and a CRD's objects, and lists, each with its JSON twin: the same request with `Accept: application/json`)
 *   decode to exactly the JSON twin's events and objects, over any split.
 * - The fast path and the complete reader of Kubernetes' CBOR rules agree on every item, and on random items this
 *   test builds itself (the small encoder below) in the forms the API server writes and in rarer ones.
 * - Damage (a bad tag, a duplicate key, a value that is no event, a cut event) is a typed error at its offset.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { DecodeError } from "../src/errors.ts";
import { decodeWatchResponse, decodeWatchResponseBatches } from "../src/watch/decode_watch_response.ts";
import { KubernetesCborWatchBodyDecoderStream } from "../src/codec/kubernetes/cbor_watch_body_decoder_stream.ts";
import { decodeKubernetesCborObject } from "../src/codec/kubernetes/decode_kubernetes_cbor_object.ts";
import { FAST_DEPTH, readKubernetesCborValue } from "../src/codec/kubernetes/read_kubernetes_cbor_value.ts";
import { kubernetesCborValue } from "../src/codec/kubernetes/runtime/kubernetes_cbor.ts";
import { CborSequenceDecoder } from "../src/framing/cbor_sequence_decoder.ts";
import { runCli } from "../src/cli/main.ts";
import { parseWatchArgs, WatchUsageError } from "../src/cli/watch.ts";
import { list } from "../src/cluster/list.ts";
import { watch } from "../src/cluster/watch.ts";
import { ClusterAccessError } from "../src/cluster/errors.ts";
import type { ClusterConnection } from "../src/cluster/cluster_config.ts";
import { assertSplitInvariant, bytewise, concat, drain, streamOf, utf8 } from "./_util.ts";

const dir = new URL("../fixtures/kubernetes/cbor/", import.meta.url);
const fixture = (name: string) => new Uint8Array(readFileSync(new URL(name, dir)));
const jsonLines = (name: string) =>
  readFileSync(new URL(name, dir), "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));

const WATCHES = ["configmaps", "secrets", "pods", "nodes", "widgets"];

const cborResponse = (body: BodyInit | null, contentType = "application/cbor-seq", status = 200) =>
  new Response(body, { status, headers: { "content-type": contentType } });

const decode = (source: ReadableStream<Uint8Array>) =>
  decodeWatchResponse<unknown>(new Response(source, { headers: { "content-type": "application/cbor-seq" } }));

/** The data items of a CBOR sequence. */
function itemsOf(bytes: Uint8Array): { item: Uint8Array; offset: number }[] {
  const out: { item: Uint8Array; offset: number }[] = [];
  const decoder = new CborSequenceDecoder();
  decoder.push(bytes, (item, offset) => out.push({ item, offset }));
  decoder.finish();
  return out;
}

test("cbor watch: kube-apiserver's CBOR watches decode to exactly their JSON twins' events", async () => {
  for (const name of WATCHES) {
    const expected = jsonLines(`${name}.json`);
    const { values, error } = await drain(decodeWatchResponse<unknown>(cborResponse(fixture(`${name}.cbor`))));
    assert.equal(error, undefined, name);
    assert.ok(expected.length >= 1, name);
    assert.deepStrictEqual(values, expected, name);
  }
  // Secrets: data as base64 (tag 22), a DELETED event; widgets: floats, an integer beyond 2^53, unicode, null.
  const [secret] = jsonLines("secrets.json");
  assert.equal(secret.object.data.binary, "/wCAgf7/");
  const [widget] = jsonLines("widgets.json");
  assert.equal(widget.object.spec.big, 9007199254740992);
});

test("cbor watch: split invariance over a recorded body, down to single bytes", async () => {
  for (const name of ["secrets", "widgets", "nodes"]) {
    const { values, error } = await assertSplitInvariant(fixture(`${name}.cbor`), decode, { runs: 15 });
    assert.equal(error, undefined);
    assert.deepStrictEqual(values, jsonLines(`${name}.json`));
  }
});

test("cbor watch: batches, application/cbor;stream=watch, and a body with no Content-Type parameters", async () => {
  const body = fixture("configmaps.cbor");
  const batches = await drain(decodeWatchResponseBatches<unknown>(cborResponse(body)));
  assert.deepStrictEqual(batches.values.flat(), jsonLines("configmaps.json"));
  for (const type of ["application/cbor;stream=watch", "application/cbor", "Application/CBOR-Seq; charset=x"]) {
    const { values, error } = await drain(decodeWatchResponse<unknown>(cborResponse(body, type)));
    assert.equal(error, undefined, type);
    assert.deepStrictEqual(values, jsonLines("configmaps.json"), type);
  }
});

test("cbor objects: kube-apiserver's CBOR lists decode to exactly their JSON twins", () => {
  for (const name of ["configmaps-list", "pods-list"]) {
    const expected = JSON.parse(readFileSync(new URL(`${name}.json`, dir), "utf8"));
    assert.deepStrictEqual(decodeKubernetesCborObject(fixture(`${name}.cbor`)), expected, name);
  }
});

test("cbor: the fast path and the complete reader agree on every recorded item", () => {
  for (const name of [...WATCHES.map((n) => `${n}.cbor`), "configmaps-list.cbor", "pods-list.cbor"]) {
    for (const { item } of itemsOf(fixture(name))) {
      assert.deepStrictEqual(
        readKubernetesCborValue(item, 0, item.length, 0, "x"),
        kubernetesCborValue(item, 0, item.length, 0, "x"),
        name,
      );
    }
  }
});

// A small encoder of Kubernetes CBOR, for the items this test builds itself.

function head(major: number, argument: number, size?: 0 | 1 | 2 | 4 | 8): number[] {
  const m = major << 5;
  const n = size ?? (argument < 24 ? 0 : argument < 0x100 ? 1 : argument < 0x10000 ? 2 : argument < 2 ** 32 ? 4 : 8);
  if (n === 0) return [m | argument];
  const out = [m | (24 + Math.log2(n))];
  for (let i = n - 1; i >= 0; i--) out.push(Math.floor(argument / 2 ** (8 * i)) % 256);
  return out;
}

/** How to write each value: the API server's forms, or rarer ones (each a choice the encoder draws). */
interface Style {
  /** Strings as text strings rather than byte strings. */
  text: boolean;
  /** Arrays, maps and strings with indefinite lengths. */
  indefinite: boolean;
  /** Integers in 8 bytes rather than the shortest form. */
  wide: boolean;
  /** Floats as float64 rather than the shortest exact width. */
  float64: boolean;
}

const SERVER: Style = { text: false, indefinite: false, wide: false, float64: false };

function stringBytes(s: string, style: Style): number[] {
  const bytes = [...utf8(s)];
  const major = style.text ? 3 : 2;
  if (!style.indefinite || bytes.length < 2) return [...head(major, bytes.length), ...bytes];
  // Two chunks, cut between code points.
  const chars = [...s];
  const first = [...utf8(chars.slice(0, chars.length >> 1).join(""))];
  const second = bytes.slice(first.length);
  return [(major << 5) | 31, ...head(major, first.length), ...first, ...head(major, second.length), ...second, 0xff];
}

function float(v: number, style: Style): number[] {
  const view = new DataView(new ArrayBuffer(8));
  if (!style.float64 && Math.fround(v) === v) {
    view.setFloat32(0, v);
    return [0xfa, ...new Uint8Array(view.buffer, 0, 4)];
  }
  view.setFloat64(0, v);
  return [0xfb, ...new Uint8Array(view.buffer)];
}

/** Kubernetes CBOR of a JSON value; `{ $base64: bytes }` is a Go []byte (tag 22). */
function kcbor(v: unknown, style: Style = SERVER): number[] {
  if (v === null) return [0xf6];
  if (v === true) return [0xf5];
  if (v === false) return [0xf4];
  if (typeof v === "number") {
    if (Number.isSafeInteger(v)) {
      return v >= 0 ? head(0, v, style.wide ? 8 : undefined) : head(1, -1 - v, style.wide ? 8 : undefined);
    }
    return float(v, style);
  }
  if (typeof v === "string") return stringBytes(v, style);
  if (Array.isArray(v)) {
    const items = v.flatMap((x) => kcbor(x, style));
    return style.indefinite ? [0x9f, ...items, 0xff] : [...head(4, v.length), ...items];
  }
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length === 1 && entries[0][0] === "$base64") {
    const bytes = [...(entries[0][1] as Uint8Array)];
    return [0xd6, ...head(2, bytes.length), ...bytes];
  }
  const pairs = entries.flatMap(([k, x]) => [...stringBytes(k, style), ...kcbor(x, style)]);
  return style.indefinite ? [0xbf, ...pairs, 0xff] : [...head(5, entries.length), ...pairs];
}

const SELF_DESCRIBED = [0xd9, 0xd9, 0xf7];
const event = (value: unknown, style: Style = SERVER) => Uint8Array.from([...SELF_DESCRIBED, ...kcbor(value, style)]);

/** JSON values as JSON.parse gives them back (no -0, no undefined, no `__proto__` key). */
const jsonValue = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.parse(JSON.stringify(v)));
const jsonObject = fc.dictionary(fc.string({ maxLength: 8 }), jsonValue, { maxKeys: 6 })
  .map((v) => JSON.parse(JSON.stringify(v)));

test("cbor: random objects decode to themselves, in the server's forms and in rarer ones (fast path = complete reader)", () => {
  fc.assert(
    fc.property(
      jsonObject,
      fc.record({ text: fc.boolean(), indefinite: fc.boolean(), wide: fc.boolean(), float64: fc.boolean() }),
      (object, style) => {
        const bytes = event(object, style);
        const fast = readKubernetesCborValue(bytes, 0, bytes.length, 0, "x");
        assert.deepStrictEqual(fast, object);
        assert.deepStrictEqual(fast, kubernetesCborValue(bytes, 0, bytes.length, 0, "x"));
      },
    ),
    { numRuns: 300 },
  );
});

test("cbor: random damage gives the complete reader's own error, or its value", () => {
  fc.assert(
    fc.property(jsonObject, fc.nat(), fc.integer({ min: 0, max: 255 }), (object, at, byte) => {
      const bytes = event(object);
      bytes[at % bytes.length] = byte;
      let expected: unknown;
      let fault: DecodeError | undefined;
      try {
        expected = kubernetesCborValue(bytes, 0, bytes.length, 7, "x");
      } catch (e) {
        fault = e as DecodeError;
      }
      try {
        assert.deepStrictEqual(readKubernetesCborValue(bytes, 0, bytes.length, 7, "x"), expected);
        assert.equal(fault, undefined);
      } catch (e) {
        assert.ok(fault !== undefined && e instanceof DecodeError, String(e));
        assert.equal(e.message, fault.message);
      }
    }),
    { numRuns: 500 },
  );
});

test("cbor: keys come sorted as Go's JSON sorts a map's (its bytes' order), whichever order the server wrote them in", () => {
  // The recorded Pod's labels and annotations (Go maps) in the JSON twin's order; every object's keys sorted.
  const [, pod] = itemsOf(fixture("pods.cbor"));
  const decoded = readKubernetesCborValue(pod.item, 0, pod.item.length, 0, "x") as {
    object: { metadata: { labels: object; annotations: object } };
  };
  const [, twin] = jsonLines("pods.json");
  assert.deepEqual(Object.keys(decoded.object.metadata.labels), Object.keys(twin.object.metadata.labels));
  assert.deepEqual(Object.keys(decoded.object.metadata.annotations), Object.keys(twin.object.metadata.annotations));
  const sortedEverywhere = (v: unknown): boolean => {
    if (typeof v !== "object" || v === null) return true;
    if (Array.isArray(v)) return v.every(sortedEverywhere);
    const keys = Object.keys(v);
    return keys.every((k, i) => i === 0 || keys[i - 1] < k) && Object.values(v).every(sortedEverywhere);
  };
  assert.ok(sortedEverywhere(decoded));
  // Code point order (Go's), not UTF-16's: U+10000 (a surrogate pair in UTF-16) after U+E000; ASCII first.
  const keys = ["\u{10000}", "\uE000", "b", "a", "\u00e9"];
  for (const style of [SERVER, { ...SERVER, indefinite: true }]) {
    const bytes = event(Object.fromEntries(keys.map((k) => [k, 1])), style);
    const value = readKubernetesCborValue(bytes, 0, bytes.length, 0, "x") as object;
    assert.deepEqual(Object.keys(value), ["a", "b", "\u00e9", "\uE000", "\u{10000}"], JSON.stringify(style));
  }
  // More than 16 keys, in a rotated order and in a shuffled one.
  const many = Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(2, "0")}`);
  for (const order of [[...many.slice(13), ...many.slice(0, 13)], [...many].sort(() => Math.random() - 0.5)]) {
    const bytes = event(Object.fromEntries(order.map((k) => [k, k])));
    assert.deepEqual(Object.keys(readKubernetesCborValue(bytes, 0, bytes.length, 0, "x") as object), many);
  }
});

test("cbor: Go's []byte (tag 22) is base64; invalid UTF-8 in a byte string is U+FFFD, as Go's JSON prints it", () => {
  const bytes = event({ data: { $base64: Uint8Array.of(0xff, 0x00, 0x80) }, name: "ok" });
  // A byte string holding invalid UTF-8 (a Go string of any bytes).
  const raw = Uint8Array.from([...SELF_DESCRIBED, 0xa1, 0x41, 0x6b, 0x43, 0x61, 0xff, 0x62]);
  assert.deepStrictEqual(readKubernetesCborValue(bytes, 0, bytes.length, 0, "x"), { data: "/wCA", name: "ok" });
  assert.deepStrictEqual(readKubernetesCborValue(raw, 0, raw.length, 0, "x"), { k: "a\uFFFDb" });
});

test("cbor: nesting past the fast path's depth goes to the complete reader; past Kubernetes' limit fails", async () => {
  let value: unknown = "leaf";
  for (let i = 0; i < FAST_DEPTH + 50; i++) value = [value];
  const deep = event({ type: "ADDED", object: { deep: value } });
  const { values, error } = await drain(decode(streamOf([deep])));
  assert.equal(error, undefined);
  assert.deepStrictEqual(values[0], { type: "ADDED", object: { deep: value } });
  // 10 001 levels: over Kubernetes' 10 000.
  const tooDeep = Uint8Array.from([...SELF_DESCRIBED, 0xa1, 0x41, 0x64, ...new Array(10_000).fill(0x81), 0x00]);
  const over = await drain(decode(streamOf([tooDeep])));
  assert.ok(over.error instanceof DecodeError);
  assert.equal(over.error.code, "MESSAGE_INVALID");
  assert.match(over.error.message, /nested deeper than 10000 levels/);
});

/** An event whose object holds `bad` as a value: the event and the offset of `bad` in it. */
function withValue(bad: number[]): { bytes: Uint8Array; at: number } {
  const before = [
    ...SELF_DESCRIBED,
    0xa2,
    ...kcbor("type"),
    ...kcbor("ADDED"),
    ...kcbor("object"),
    0xa1,
    ...kcbor("v"),
  ];
  return { bytes: Uint8Array.from([...before, ...bad]), at: before.length };
}

const shifted = (damage: { bytes: Uint8Array; at: number }, by: number) => ({ ...damage, at: damage.at + by });

test("cbor watch: damage is a typed error at its offset, after every event before it, in any split", async () => {
  const good = event({ type: "ADDED", object: { kind: "ConfigMap", metadata: { name: "a", resourceVersion: "1" } } });
  const cases: { name: string; bytes: Uint8Array; at: number; code: string }[] = [
    { name: "a bad tag: a bignum (tag 2)", ...withValue([0xc2, 0x41, 0x01]), code: "MESSAGE_INVALID" },
    { name: "a bad tag: a time (tag 1) of a string", ...withValue([0xc1, 0x41, 0x01]), code: "MESSAGE_INVALID" },
    // The framing finds it: at the break, not the tag.
    {
      name: "a bad tag: an unknown tag over a break",
      ...shifted(withValue([0xd8, 0x80, 0xff]), 2),
      code: "MESSAGE_INVALID",
    },
    { name: "NaN", ...withValue([0xf9, 0x7e, 0x00]), code: "MESSAGE_INVALID" },
    { name: "an integer beyond int64", ...withValue([0x1b, 0x80, 0, 0, 0, 0, 0, 0, 0]), code: "MESSAGE_INVALID" },
    { name: "undefined", ...withValue([0xf7]), code: "MESSAGE_INVALID" },
    // At the string's first byte of content.
    { name: "invalid UTF-8 in a text string", ...shifted(withValue([0x62, 0xc3, 0x28]), 1), code: "MESSAGE_INVALID" },
  ];
  // A duplicate key: its second occurrence.
  const dup = [...SELF_DESCRIBED, 0xa3, ...kcbor("type"), ...kcbor("ADDED"), ...kcbor("object"), 0xa0];
  cases.push({
    name: "a duplicate key",
    bytes: Uint8Array.from([...dup, ...kcbor("type"), 0xf6]),
    at: dup.length,
    code: "MESSAGE_INVALID",
  });
  cases.push({ name: "not an event", bytes: event({ kind: "Pod" }), at: 0, code: "EVENT_INVALID" });
  cases.push({
    name: "an unknown type",
    bytes: event({ type: "GONE", object: {} }),
    at: 0,
    code: "EVENT_TYPE_UNKNOWN",
  });
  cases.push({
    name: "a list, not a watch",
    bytes: event({ kind: "PodList", items: [] }),
    at: 0,
    code: "EVENT_INVALID",
  });
  cases.push({ name: "an event cut short", bytes: good.subarray(0, good.length - 3), at: 0, code: "TRUNCATED" });
  cases.push({
    name: "a string at the top",
    bytes: Uint8Array.from([...SELF_DESCRIBED, ...kcbor("ADDED")]),
    at: 3,
    code: "MESSAGE_INVALID",
  });
  for (const c of cases) {
    const input = concat([good, good, c.bytes]);
    const { values, error } = await assertSplitInvariant(input, decode, { runs: 10 });
    assert.ok(error instanceof DecodeError, c.name);
    assert.equal(error.code, c.code, `${c.name}: ${error.message}`);
    assert.equal(error.offset, 2 * good.length + c.at, `${c.name}: ${error.message}`);
    assert.equal(values.length, 2, c.name);
  }
});

test("cbor watch: an event over maxEventBytes fails at its first byte", async () => {
  const big = event({ type: "ADDED", object: { data: "x".repeat(5000) } });
  const stream = streamOf(bytewise(concat([event({ type: "ADDED", object: {} }), big])));
  const { values, error } = await drain(
    stream.pipeThrough(new KubernetesCborWatchBodyDecoderStream({ maxEventBytes: 1000 })),
  );
  assert.equal(values.length, 1);
  assert.ok(error instanceof DecodeError);
  assert.equal(error.code, "MESSAGE_TOO_LARGE");
  assert.equal(error.offset, event({ type: "ADDED", object: {} }).length);
});

test("cbor: a non-2xx answer in CBOR is one ERROR event with the server's Status", async () => {
  const status = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: 'widgets.watchwire.example is forbidden: User "nobody" cannot watch',
    reason: "Forbidden",
    details: { group: "watchwire.example", kind: "widgets" },
    code: 403,
  };
  const { values } = await drain(decodeWatchResponse<unknown>(cborResponse(event(status), "application/cbor", 403)));
  assert.deepStrictEqual(values, [{ type: "ERROR", object: status }]);
});

test("cbor objects: a cut body is TRUNCATED, a body with more after the object MESSAGE_INVALID", () => {
  const list = fixture("configmaps-list.cbor");
  for (const cut of [1, 2, 3, 100, list.length - 1]) {
    assert.throws(() => decodeKubernetesCborObject(list.subarray(0, cut)), (e: unknown) => {
      return e instanceof DecodeError && e.code === "TRUNCATED" && e.offset === 0;
    });
  }
  assert.throws(() => decodeKubernetesCborObject(concat([list, Uint8Array.of(0)])), (e: unknown) => {
    return e instanceof DecodeError && e.code === "MESSAGE_INVALID" && e.offset === list.length;
  });
});

/** Runs the CLI in memory; each file arrives in 7-byte pieces. */
async function run(args: string[], files: Record<string, Uint8Array>) {
  let stdout = "";
  let stderr = "";
  const status = await runCli(args, {
    open: (path) => {
      if (!(path in files)) return Promise.reject(new Error("no such file"));
      const bytes = files[path];
      const pieces: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += 7) pieces.push(bytes.subarray(i, i + 7));
      return Promise.resolve(streamOf(pieces));
    },
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    stdoutIsTerminal: false,
    version: "0",
  });
  return { status, stdout, stderr };
}

const parsedLines = (text: string) => text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));

test("cli: a bare CBOR watch body is told by its tag and prints its JSON twin's events", async () => {
  for (const name of WATCHES) {
    const r = await run(["decode", "-"], { "-": fixture(`${name}.cbor`) });
    assert.equal(r.status, 0, r.stderr);
    assert.deepStrictEqual(parsedLines(r.stdout), jsonLines(`${name}.json`), name);
  }
});

test("cli: an HTTP/1.1 connection with a CBOR watch and a CBOR list (bytes built here around recorded bodies)", async () => {
  const chunked = (body: Uint8Array) => {
    const parts: Uint8Array[] = [];
    for (let i = 0; i < body.length; i += 1000) {
      const piece = body.subarray(i, i + 1000);
      parts.push(utf8(`${piece.length.toString(16)}\r\n`), piece, utf8("\r\n"));
    }
    return concat([...parts, utf8("0\r\n\r\n")]);
  };
  const list = fixture("configmaps-list.cbor");
  const connection = concat([
    utf8("HTTP/1.1 200 OK\r\nContent-Type: application/cbor\r\nContent-Length: " + list.length + "\r\n\r\n"),
    list,
    utf8("HTTP/1.1 200 OK\r\nContent-Type: application/cbor-seq\r\nTransfer-Encoding: chunked\r\n\r\n"),
    chunked(fixture("pods.cbor")),
  ]);
  const r = await run(["decode", "-"], { "-": connection });
  assert.equal(r.status, 0, r.stderr);
  assert.deepStrictEqual(parsedLines(r.stdout), jsonLines("pods.json"));
  assert.match(r.stderr, /response 1 \(200\) is a ConfigMapList of 2 items, not a watch/);
  // A fault names its byte in the file.
  const cut = concat([
    utf8("HTTP/1.1 200 OK\r\nContent-Type: application/cbor-seq\r\nContent-Length: 20\r\n\r\n"),
    fixture("secrets.cbor").subarray(0, 20),
  ]);
  const bad = await run(["decode", "-"], { "-": cut });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /\[TRUNCATED\]/);
});

/** A connection whose fetch answers from `answer`, recording each request's Accept header. */
function fakeConnection(answer: (url: URL) => Response): { connection: ClusterConnection; accepts: string[] } {
  const accepts: string[] = [];
  const connection: ClusterConnection = {
    server: "https://127.0.0.1:6443",
    headers: () => Promise.resolve(new Headers()),
    fetch: (input, init) => {
      accepts.push(new Headers(init?.headers).get("accept") ?? "");
      return Promise.resolve(answer(new URL(String(input))));
    },
    close: async () => {},
  };
  return { connection, accepts };
}

test("cluster: list() and watch() with format cbor ask for CBOR (JSON as the fallback) and decode either", async () => {
  const cborList = fixture("configmaps-list.cbor");
  const jsonList = JSON.parse(readFileSync(new URL("configmaps-list.json", dir), "utf8"));
  const ref = { version: "v1", resource: "configmaps", namespace: "cbor-fixtures" };
  for (const answer of ["cbor", "json"]) {
    const { connection, accepts } = fakeConnection(() =>
      answer === "cbor" ? cborResponse(cborList, "application/cbor") : Response.json(jsonList)
    );
    const result = await list(connection, ref, { format: "cbor" });
    assert.deepEqual(accepts, ["application/cbor, application/json"]);
    assert.equal(result.resourceVersion, jsonList.metadata.resourceVersion);
    assert.equal(result.kind, "ConfigMapList");
    assert.deepStrictEqual(
      result.items,
      jsonList.items.map((o: object) => ({ ...o, apiVersion: "v1", kind: "ConfigMap" })),
      answer,
    );
  }
  const { connection, accepts } = fakeConnection(() => cborResponse(fixture("configmaps.cbor")));
  const events = await drain(await watch(connection, ref, { format: "cbor", resourceVersion: "1" }));
  assert.deepEqual(accepts, ["application/cbor, application/json"]);
  assert.deepStrictEqual(events.values, jsonLines("configmaps.json"));
});

test("cluster: a CBOR list cut short is CONNECTION_LOST; a CBOR Status is the error's message", async () => {
  const cborList = fixture("configmaps-list.cbor");
  const ref = { version: "v1", resource: "configmaps" };
  for (const cut of [0, 2, 500]) {
    const { connection } = fakeConnection(() => cborResponse(cborList.subarray(0, cut), "application/cbor"));
    await assert.rejects(list(connection, ref, { format: "cbor" }), (e: unknown) => {
      return e instanceof ClusterAccessError && e.code === "CONNECTION_LOST" && /ended after \d+ bytes/.test(e.message);
    });
  }
  const status = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: "nope",
    reason: "Forbidden",
    code: 403,
  };
  const { connection } = fakeConnection(() => cborResponse(event(status), "application/cbor", 403));
  await assert.rejects(list(connection, ref, { format: "cbor" }), (e: unknown) => {
    return e instanceof ClusterAccessError && e.code === "FORBIDDEN" && /403 \(Forbidden\) nope/.test(e.message);
  });
});

test("cli: watch --format cbor is taken; --metadata-only still needs protobuf", () => {
  const options = parseWatchArgs(["--format", "cbor", "configmaps"], false);
  assert.ok(options !== "help");
  assert.equal(options.format, "cbor");
  assert.throws(() => parseWatchArgs(["--format=cbor", "--metadata-only", "pods"], false), WatchUsageError);
});
