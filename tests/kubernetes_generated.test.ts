/**
 * The generated Kubernetes decoders on bad and unusual input, built from real objects (the refgen fixtures' ADDED
 * Pod, written by the Kubernetes protobuf serializer): unknown fields in nested messages are skipped exactly, a known
 * field with the wrong wire type, a nested length past its message and truncation are `DecodeError`s at the byte
 * that is wrong; and the generated code has no `eval`/`Function` and runs where code generation is forbidden.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DecodeError } from "../mod.ts";
import { ProtobufReader } from "../wire.ts";
import { builtinDecoders } from "../kubernetes.ts";
import { currentRuntime, runWithoutCodegen } from "./_util.ts";
import { varint } from "./_protobuf.ts";
import { isLiteralLine, literalLines } from "./_literals.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const streams = join(root, "fixtures/kubernetes/streams");

/** The object message of the first event of a protobuf watch fixture (WatchEvent.object.raw -> k8s\0 -> Unknown.raw). */
function firstObject(file: string): Uint8Array {
  const pb = new Uint8Array(readFileSync(join(streams, file)));
  const frame = pb.subarray(4, 4 + new DataView(pb.buffer, pb.byteOffset).getUint32(0));
  const field = (bytes: Uint8Array, n: number): Uint8Array => {
    const r = new ProtobufReader(bytes);
    while (!r.done) {
      const tag = r.tag();
      if (tag === ((n << 3) | 2)) return r.bytes();
      r.skip(tag);
    }
    throw new Error(`no field ${n}`);
  };
  return field(field(field(frame, 2), 1).subarray(4), 2).slice();
}

/** The top-level fields of a message: [number, wire type, start of tag, start of value, end]. */
function fields(bytes: Uint8Array): [number, number, number, number, number][] {
  const r = new ProtobufReader(bytes);
  const out: [number, number, number, number, number][] = [];
  while (!r.done) {
    const at = r.pos;
    const tag = r.tag();
    if ((tag & 7) === 2) {
      const v = r.bytes();
      out.push([tag >>> 3, 2, at, v.byteOffset - bytes.byteOffset, r.pos]);
    } else {
      const start = r.pos;
      r.skip(tag);
      out.push([tag >>> 3, tag & 7, at, start, r.pos]);
    }
  }
  return out;
}

const concat = (...parts: ArrayLike<number>[]) => Uint8Array.from(parts.flatMap((p) => Array.from(p)));

const pod = firstObject("v1.Pod.pb");
const decodePod = builtinDecoders.decoder("v1", "Pod")!;
const decode = (bytes: Uint8Array, base = 0) =>
  decodePod(bytes, 0, bytes.length, { kind: "Pod", apiVersion: "v1" }, base);
const reference = decode(pod);

/** `message` with `extra` bytes appended inside field `n` (a nested message), lengths fixed up. */
function withInsideField(message: Uint8Array, n: number, extra: number[]): Uint8Array {
  const f = fields(message).find(([num, wire]) => num === n && wire === 2)!;
  const [, , at, valueStart, end] = f;
  const value = message.subarray(valueStart, end);
  return concat(
    message.subarray(0, at),
    varint((n << 3) | 2),
    varint(value.length + extra.length),
    value,
    extra,
    message.subarray(end),
  );
}

test("generated decoders: unknown fields of every wire type, at the top and nested, are skipped exactly", () => {
  // Field numbers no Kubernetes message uses here (999, 1000, ...): varint, fixed64, length-delimited, fixed32.
  const unknown = [
    ...varint((999 << 3) | 0),
    ...varint(300),
    ...varint((1000 << 3) | 1),
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    ...varint((1001 << 3) | 2),
    3,
    0x0a,
    0x01,
    0x41,
    ...varint((1002 << 3) | 5),
    9,
    9,
    9,
    9,
  ];
  assert.deepEqual(decode(concat(pod, unknown)), reference);
  assert.deepEqual(decode(concat(unknown, pod)), reference);
  // Inside metadata (1), spec (2) and status (3).
  for (const n of [1, 2, 3]) assert.deepEqual(decode(withInsideField(pod, n, unknown)), reference, `inside field ${n}`);
});

test("generated decoders: a known field with the wrong wire type is an error at its tag", () => {
  // metadata (field 1) sent as a varint.
  const bad = concat([...varint((1 << 3) | 0), 5], pod);
  assert.throws(
    () => decode(bad, 100),
    (e) => e instanceof DecodeError && e.code === "MESSAGE_INVALID" && e.offset === 100,
  );
  // Inside spec: nodeName (PodSpec field 10, a string) sent as a varint, appended at the end of spec.
  const specStart = fields(pod).find(([n]) => n === 2)!;
  const nested = withInsideField(pod, 2, [...varint((10 << 3) | 0), 1]);
  const tagAt = specStart[2] + 1 + varint(specStart[4] - specStart[3] + 2).length + (specStart[4] - specStart[3]);
  assert.throws(
    () => decode(nested),
    (e) => e instanceof DecodeError && e.code === "MESSAGE_INVALID" && e.offset === tagAt && /PodSpec/.test(e.message),
  );
  // A two-byte tag: subdomain (PodSpec field 17, a string) sent as a varint; the offset is still the tag's first byte.
  const nested17 = withInsideField(pod, 2, [...varint((17 << 3) | 0), 1]);
  const tag17At = specStart[2] + 1 + varint(specStart[4] - specStart[3] + 3).length + (specStart[4] - specStart[3]);
  assert.throws(
    () => decode(nested17),
    (e) =>
      e instanceof DecodeError && e.code === "MESSAGE_INVALID" && e.offset === tag17At && /field 17/.test(e.message),
  );
});

test("generated decoders: a nested length past its message, and truncation anywhere, are errors, never a hang", () => {
  // spec's length one byte too long: runs into status; the fault is found inside, or at the outer end.
  const [, , at, valueStart, end] = fields(pod).find(([n]) => n === 2)!;
  const lengthBytes = valueStart - at - 1;
  const longer = pod.slice();
  const newLength = varint(end - valueStart + 10_000);
  assert.equal(newLength.length, lengthBytes, "same varint size");
  longer.set(newLength, at + 1);
  assert.throws(
    () => decode(longer),
    (e) => e instanceof DecodeError && e.code === "MESSAGE_INVALID" && e.offset === at + 1,
  );
  // Every truncation of the message either decodes (a cut between top-level fields: a valid, smaller Pod) or throws
  // a DecodeError inside the message.
  const boundaries = new Set(fields(pod).map(([, , start]) => start));
  let errors = 0;
  for (let cut = 0; cut < pod.length; cut++) {
    const bytes = pod.subarray(0, cut);
    if (boundaries.has(cut)) {
      decode(bytes);
      continue;
    }
    assert.throws(
      () => decode(bytes),
      (e) => e instanceof DecodeError && e.offset >= 0 && e.offset <= cut,
      `cut ${cut}`,
    );
    errors++;
  }
  assert.ok(errors > pod.length * 0.9);
});

test("generated decoders: a repeated embedded message merges, as Go's Unmarshal does", () => {
  // metadata sent twice: first with the real metadata, then one that only sets a new name (field 1).
  const name = new TextEncoder().encode("renamed");
  const second = concat(varint((1 << 3) | 2), varint(name.length + 2), [0x0a, name.length], name);
  const merged = decode(concat(pod, second)) as { metadata: Record<string, unknown> };
  assert.deepEqual(merged.metadata, { ...(reference as { metadata: object }).metadata, name: "renamed" });
});

test("generated decoders: no eval or Function in the generated code or its runtime", () => {
  const dirs = ["src/codec/kubernetes/generated", "src/codec/kubernetes/runtime", "src/codec/kubernetes"];
  let files = 0;
  for (const dir of dirs) {
    for (const name of readdirSync(join(root, dir)).filter((n) => n.endsWith(".ts"))) {
      const text = readFileSync(join(root, dir, name), "utf8");
      assert.doesNotMatch(text, /\beval\s*\(|new\s+Function\b|\bFunction\s*\(/, `${dir}/${name}`);
      files++;
    }
  }
  assert.ok(files > 60);
});

test("generated decoders: no array or object literal in a decoder (no V8 allocation site to pretenure)", () => {
  // They use listOf, emptyList and `{}` (src/codec/value_constructors.ts) instead: see tests/_literals.ts.
  // Keeps that mechanism honest (bench/RESULTS.md §11, "What each optimisation mechanism buys").
  const dir = join(root, "src/codec/kubernetes/generated");
  const found: string[] = [];
  let lists = 0;
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".ts"))) {
    const text = readFileSync(join(dir, name), "utf8");
    found.push(...literalLines(name, text));
    lists += text.match(/^\s.*\blistOf\(v\)/gm)?.length ?? 0;
  }
  assert.deepEqual(found, []);
  // The patterns do find what the generator wrote before: `[v]` for the first item of every repeated field.
  assert.ok(isLiteralLine("          else o.items = [v];") && isLiteralLine("  return { type, object };"));
  assert.ok(lists > 400, `${lists} repeated fields`);
});

test("generated decoders: every fixture decodes in a fresh process where code generation from strings is forbidden", () => {
  const runtime = currentRuntime();
  const dir = mkdtempSync(join(tmpdir(), "watchwire-nocodegen-"));
  const child = join(dir, "child.mjs");
  writeFileSync(
    child,
    `import { readdirSync, readFileSync } from "node:fs";
let codegen = "allowed";
try { Function("return 1")(); } catch { codegen = "blocked"; }
// The runtime's own modules, loaded first: Bun builds its internal modules with the global Function on first use.
await import("node:stream");
await import("node:module");
await new Blob([new Uint8Array(1)]).stream().pipeThrough(new TransformStream()).getReader().read();
let attempts = 0;
const forbid = () => { attempts++; throw new EvalError("code generation from strings is forbidden here"); };
globalThis.Function = forbid;
globalThis.eval = forbid;
const { builtinDecoders, KubernetesProtobufWatchBodyDecoderStream } = await import(${
      JSON.stringify(pathToFileURL(join(root, "kubernetes.ts")).href)
    });
const dir = ${JSON.stringify(streams)};
let events = 0;
for (const name of readdirSync(dir).filter((n) => n.endsWith(".pb"))) {
  const body = new Blob([readFileSync(dir + "/" + name)]).stream();
  try {
    for await (const _ of body.pipeThrough(new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders }))) events++;
  } catch (e) {
    if (!String(e).includes("BOOKMARK")) throw e;
  }
}
console.log(JSON.stringify({ codegen, attempts, events }));
`,
  );
  try {
    const report = runWithoutCodegen(child, root) as { attempts: number; events: number; codegen: string };
    assert.equal(report.attempts, 0);
    assert.ok(report.events >= 4 * 328, `${report.events} events`);
    // Node and Deno run the child with V8's code generation from strings off, as in a Worker; Bun has no such flag.
    assert.equal(report.codegen, runtime === "bun" ? "allowed" : "blocked");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
