/**
 * The checks a refgen stream pair must pass (tools/refgen/cmd/fixtures writes one per built-in kind: the protobuf
 * and the JSON watch stream of the same objects), shared by tests/kubernetes_fixtures.test.ts (the committed
 * fixtures) and scripts/soak-kubernetes-fixtures.ts (fresh fuzzed sets from `tools/refgen/soak.sh`).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { DecodeError, KubernetesProtobufObject } from "../mod.ts";
import { JsonWatchEventDecoderStream, ProtobufReader } from "../wire.ts";
import { builtinDecoders, KubernetesProtobufWatchBodyDecoderStream } from "../kubernetes.ts";
import { drain, streamOf } from "./_util.ts";

/** One line of a refgen `index.json`. */
export interface StreamPair {
  apiVersion: string;
  kind: string;
  pb: string;
  json: string;
}

/** What {@linkcode checkFullMode} found: events compared, and whether the kind is not an object (no metadata). */
export interface FullModeResult {
  events: number;
  notObject: boolean;
}

/**
 * The protobuf stream decodes to exactly the events of the JSON stream, delivered whole and then as each cutting in
 * `cuttings` (the JSON stream is decoded once for all); for kinds that are not objects both pipelines refuse the
 * BOOKMARK event, after the same events. Throws on a difference.
 */
export async function checkFullMode(
  pb: Uint8Array,
  json: Uint8Array,
  cuttings: Uint8Array[][] = [],
): Promise<FullModeResult> {
  const expected = await drain(streamOf([json]).pipeThrough(new JsonWatchEventDecoderStream<unknown>()));
  let result: FullModeResult | undefined;
  for (const chunks of [[pb], ...cuttings]) {
    const got = await drain(
      streamOf(chunks).pipeThrough(
        new KubernetesProtobufWatchBodyDecoderStream<unknown>({ decoders: builtinDecoders }),
      ),
    );
    assert.deepEqual(got.values, expected.values);
    if (expected.error === undefined) {
      assert.equal(got.error, undefined);
      assert.ok(expected.values.length >= 5, `${expected.values.length} events`);
    } else {
      // Kinds that are not objects (PodLogOptions, DeploymentRollback, ...) have no metadata, so their BOOKMARK event
      // is refused: both pipelines must refuse it, after the same events.
      assert.ok(got.error instanceof DecodeError, String(got.error));
      assert.equal((got.error as DecodeError).code, (expected.error as DecodeError).code);
      assert.match(String(got.error), /BOOKMARK/);
    }
    result ??= { events: got.values.length, notObject: expected.error !== undefined };
  }
  return result!;
}

/**
 * In metadata mode the stream gives every object's apiVersion, kind and metadata as the full decode does, and
 * `decode()` the full object; kinds without metadata fail as in full mode. Returns the objects decoded partially.
 */
export async function checkMetadataMode(pb: Uint8Array): Promise<number> {
  const fullRun = await drain(
    streamOf([pb]).pipeThrough(new KubernetesProtobufWatchBodyDecoderStream<unknown>({ decoders: builtinDecoders })),
  );
  const lazyRun = await drain(
    streamOf([pb]).pipeThrough(
      new KubernetesProtobufWatchBodyDecoderStream<unknown>({ decoders: builtinDecoders, mode: "metadata" }),
    ),
  );
  assert.equal(String(lazyRun.error), String(fullRun.error));
  const [full, lazy] = [fullRun.values, lazyRun.values];
  assert.equal(lazy.length, full.length);
  if (fullRun.error !== undefined) {
    assert.deepEqual(lazy, full);
    return 0;
  }
  let partial = 0;
  for (let i = 0; i < full.length; i++) {
    const [f, l] = [full[i], lazy[i]];
    assert.equal(l.type, f.type);
    if (f.type === "ERROR") {
      assert.deepEqual(l, f);
      continue;
    }
    const object = (l as { object: unknown }).object;
    assert.ok(object instanceof KubernetesProtobufObject, `event ${i}`);
    const fo = (f as { object: Record<string, unknown> }).object;
    assert.equal(object.apiVersion, fo.apiVersion);
    assert.equal(object.kind, fo.kind);
    assert.deepEqual(object.metadata, fo.metadata, `event ${i} metadata`);
    assert.deepEqual(object.decode(), fo, `event ${i} decode()`);
    assert.deepEqual(JSON.parse(JSON.stringify(object.metadata)), fo.metadata);
    partial++;
  }
  return partial;
}

/**
 * The objects of a refgen fixture stream (`<fixtures>streams/<apiVersion>.<Kind>.pb`) as its events hold them
 * (`k8s\0` and the runtime.Unknown envelope), by event type; read with the public reader.
 */
export function fixtureStreamEnvelopes(fixtures: string, apiVersion: string, kind: string): Map<string, Uint8Array> {
  const data = new Uint8Array(readFileSync(`${fixtures}streams/${apiVersion.replaceAll("/", "_")}.${kind}.pb`));
  const envelopes = new Map<string, Uint8Array>();
  for (let p = 0; p < data.length;) {
    const n = new DataView(data.buffer, data.byteOffset + p).getUint32(0);
    const frame = new ProtobufReader(data, 0, p + 4, p + 4 + n);
    p += 4 + n;
    let type = "";
    let raw: Uint8Array | undefined;
    while (!frame.done) {
      const tag = frame.tag();
      if (tag === 10) type = frame.string();
      else if (tag === 18) {
        const extension = frame.message();
        while (!extension.done) {
          const t = extension.tag();
          if (t === 10) raw = extension.bytes();
          else extension.skip(t);
        }
      } else frame.skip(tag);
    }
    envelopes.set(type, raw!);
  }
  return envelopes;
}

/** The objects (runtime.Unknown raw) of a refgen fixture stream, by event type; read with the public reader. */
export function fixtureStreamObjects(fixtures: string, apiVersion: string, kind: string): Map<string, Uint8Array> {
  return objectsOfEnvelopes(fixtureStreamEnvelopes(fixtures, apiVersion, kind));
}

/** The objects (runtime.Unknown raw) in envelopes (`k8s\0` and runtime.Unknown), by the same keys. */
export function objectsOfEnvelopes(envelopes: Map<string, Uint8Array>): Map<string, Uint8Array> {
  const objects = new Map<string, Uint8Array>();
  for (const [type, envelope] of envelopes) {
    const unknown = new ProtobufReader(envelope, 0, 4);
    while (!unknown.done) {
      const t = unknown.tag();
      if (t === 18) objects.set(type, unknown.bytes());
      else unknown.skip(t);
    }
  }
  return objects;
}

/** Whether `a` deep-equals `b` (strictly: `assert.deepEqual` of node:assert/strict). */
export function deepEquals(a: unknown, b: unknown): boolean {
  try {
    assert.deepEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

/** A lazy metadata object as plain JSON: every collection read, through `JSON.stringify`. */
export const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** Collects up to `limit` failures instead of stopping at the first, so that a regression shows its extent. */
export function collectFailure(failures: string[], ok: boolean, describe: () => string, limit = 10): void {
  if (!ok && failures.length < limit) failures.push(describe());
}

/**
 * Runs `decode` on bytes that Go decoded (`goFailed` false) or refused (`goFailed` true) and collects a failure unless
 * it does as Go did: a `DecodeError` only where Go failed, a value only where Go gave one. Returns that value, else
 * `undefined`.
 */
export function decodeLikeGo<T>(
  failures: string[],
  goFailed: boolean,
  what: string,
  decode: () => T,
): { value: T } | undefined {
  let value: T;
  try {
    value = decode();
  } catch (error) {
    collectFailure(failures, goFailed && error instanceof DecodeError, () => `${what}: ${error}`);
    return undefined;
  }
  collectFailure(failures, !goFailed, () => `${what}: decoded, but Go failed`);
  return goFailed ? undefined : { value };
}
