/**
 * The refgen fixtures (fixtures/kubernetes/, written by tools/refgen with the Kubernetes serializers): for every
 * built-in kind, the protobuf watch stream must decode to exactly the events of the JSON watch stream of the same
 * objects (decode(pb) deep-equals JSON.parse of Go's encoding/json output), whole and split at random points; in
 * metadata mode, every object's metadata equals the full decode's and `decode()` gives the full object.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { KubernetesProtobufObject } from "../mod.ts";
import { builtinDecoders, KubernetesProtobufWatchBodyDecoderStream } from "../kubernetes.ts";
import { cutsFor, drain, splitAt, streamOf } from "./_util.ts";
import { checkFullMode, checkMetadataMode, type StreamPair } from "./_kubernetes_streams.ts";

const dir = new URL("../fixtures/kubernetes/", import.meta.url);
const index: StreamPair[] = JSON.parse(readFileSync(new URL("index.json", dir), "utf8"));
const read = (name: string) => new Uint8Array(readFileSync(new URL(name, dir)));

async function decodePb(bytes: Uint8Array, chunks?: Uint8Array[], mode?: "full" | "metadata") {
  const { values, error } = await drain(
    streamOf(chunks ?? [bytes]).pipeThrough(
      new KubernetesProtobufWatchBodyDecoderStream<unknown>({ decoders: builtinDecoders, mode }),
    ),
  );
  if (error) throw error;
  return values;
}

test("refgen fixtures: the index names every built-in kind", () => {
  assert.ok(index.length >= 300, `${index.length} kinds`);
  const kinds = new Set(index.map((e) => `${e.apiVersion} ${e.kind}`));
  for (const k of ["v1 Pod", "v1 ConfigMap", "v1 Node", "apps/v1 Deployment", "v1 Status", "batch/v1 Job"]) {
    assert.ok(kinds.has(k), k);
  }
});

test("refgen fixtures: every protobuf watch stream decodes to exactly the events of its JSON stream", async () => {
  const failures: string[] = [];
  let events = 0;
  let notObjects = 0;
  for (const entry of index) {
    try {
      const result = await checkFullMode(read(entry.pb), read(entry.json));
      events += result.events;
      if (result.notObject) notObjects++;
    } catch (error) {
      failures.push(`${entry.apiVersion} ${entry.kind}: ${String(error).slice(0, 2000)}`);
    }
  }
  assert.deepEqual(failures, [], `${failures.length} of ${index.length} kinds differ`);
  assert.ok(notObjects <= 12, `${notObjects} kinds whose BOOKMARK is refused`);
  assert.ok(events >= 4 * index.length);
});

test("refgen fixtures: split anywhere, the protobuf streams decode the same (Pod, Node, ConfigMap, Deployment)", async () => {
  const some = index.filter((e) =>
    ["v1 Pod", "v1 Node", "v1 ConfigMap", "apps/v1 Deployment"].includes(`${e.apiVersion} ${e.kind}`)
  );
  assert.equal(some.length, 4);
  for (const entry of some) {
    const pb = read(entry.pb);
    const whole = await decodePb(pb);
    await fc.assert(
      fc.asyncProperty(cutsFor(pb.length), async (cuts) => {
        assert.deepEqual(await decodePb(pb, splitAt(pb, cuts)), whole);
      }),
      { numRuns: 15 },
    );
  }
});

test("refgen fixtures: metadata mode, split anywhere: the same objects, each keeping alive at most 4x its bytes + 32 KiB", async () => {
  const some = index.filter((e) =>
    ["v1 Pod", "v1 Node", "v1 ConfigMap", "apps/v1 Deployment"].includes(`${e.apiVersion} ${e.kind}`)
  );
  assert.equal(some.length, 4);
  for (const entry of some) {
    const pb = read(entry.pb);
    const full = await decodePb(pb);
    const check = async (chunks: Uint8Array[]) => {
      const lazy = await decodePb(pb, chunks, "metadata");
      assert.equal(lazy.length, full.length);
      for (let i = 0; i < full.length; i++) {
        const [f, l] = [
          full[i] as { type: string; object: Record<string, unknown> },
          lazy[i] as { type: string; object: unknown },
        ];
        assert.equal(l.type, f.type);
        if (!(l.object instanceof KubernetesProtobufObject)) {
          assert.deepEqual(l.object, f.object); // the ERROR event's Status
          continue;
        }
        const kept = l.object.raw;
        assert.ok(
          kept.buffer.byteLength <= 4 * kept.length + 32 * 1024,
          `${entry.kind} event ${i}: ${kept.length} B keeps ${kept.buffer.byteLength} B alive`,
        );
        assert.deepEqual(l.object.metadata, f.object.metadata);
        assert.deepEqual(l.object.decode(), f.object);
      }
    };
    // Reads of 64 KiB, as a socket gives them, and arbitrary cuts.
    const reads: Uint8Array[] = [];
    for (let at = 0; at < pb.length; at += 65536) reads.push(pb.slice(at, at + 65536));
    await check(reads);
    await fc.assert(
      fc.asyncProperty(cutsFor(pb.length), async (cuts) => {
        // Each chunk a buffer of its own (as a socket's reads are), so that views and copies can be told apart.
        await check(splitAt(pb, cuts).map((c) => c.slice()));
      }),
      { numRuns: 15 },
    );
  }
});

test("refgen fixtures: metadata mode gives each object's metadata, and decode() the full object", async () => {
  let partial = 0;
  for (const entry of index) {
    try {
      partial += await checkMetadataMode(read(entry.pb));
    } catch (error) {
      assert.fail(`${entry.apiVersion} ${entry.kind}: ${String(error).slice(0, 2000)}`);
    }
  }
  assert.ok(partial >= 4 * 300, `${partial} objects decoded partially`);
});
