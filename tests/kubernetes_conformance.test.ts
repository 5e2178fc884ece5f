/**
 * ../shared/conformance/k8s-api-testdata/: Kubernetes' own round-trip fixtures (k8s.io/api testdata, written by the
 * Kubernetes serializers from fuzzer-filled objects). Every `.pb` (`k8s\0` + `runtime.Unknown`, one object) must decode
 * with the generated decoders to the object of its `.json`.
 *
 * The envelope is parsed here with the general `ProtobufReader`, independently of watchwire's envelope decoder.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { ProtobufReader } from "../wire.ts";
import { builtinDecoders } from "../kubernetes.ts";

const envRoot = process.env.WATCHWIRE_CONFORMANCE;
const conformance = envRoot !== undefined && envRoot !== ""
  ? new URL(`file://${envRoot.replace(/\/?$/, "/")}`)
  : new URL("../../shared/conformance/", import.meta.url);
const corpus = new URL("k8s-api-testdata/", conformance);

/** `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind}, raw}: the parts, raw as offsets into `bytes`. */
function envelope(bytes: Uint8Array): { apiVersion: string; kind: string; start: number; end: number } {
  assert.deepEqual(Array.from(bytes.subarray(0, 4)), [0x6b, 0x38, 0x73, 0x00], "k8s\\0 magic");
  const r = new ProtobufReader(bytes, 0, 4);
  let apiVersion = "";
  let kind = "";
  let start = 0;
  let end = 0;
  while (!r.done) {
    const tag = r.tag();
    if (tag === 10) {
      const tm = r.message();
      while (!tm.done) {
        const t = tm.tag();
        if (t === 10) apiVersion = tm.string();
        else if (t === 18) kind = tm.string();
        else tm.skip(t);
      }
    } else if (tag === 18) {
      const raw = r.bytes();
      start = raw.byteOffset - bytes.byteOffset;
      end = start + raw.length;
    } else r.skip(tag);
  }
  return { apiVersion, kind, start, end };
}

test("k8s-api-testdata: every .pb decodes to the object of its .json", () => {
  if (!existsSync(corpus)) {
    assert.fail(
      `the Kubernetes conformance corpus is missing: no ${corpus.pathname} (expected ../shared/conformance/k8s-api-testdata/ ` +
        `next to the repository, or set WATCHWIRE_CONFORMANCE to the conformance folder)`,
    );
  }
  const files = readdirSync(corpus).filter((f) => f.endsWith(".pb")).sort();
  assert.ok(files.length >= 20, `only ${files.length} .pb files in ${corpus.pathname}`);
  let decoded = 0;
  let notWatchObjects = 0;
  for (const file of files) {
    const bytes = new Uint8Array(readFileSync(new URL(file, corpus)));
    const expected = JSON.parse(readFileSync(new URL(file.replace(/\.pb$/, ".json"), corpus), "utf8"));
    const env = envelope(bytes);
    // meta/v1 kinds are registered in every group/version with an empty TypeMeta in these files: take the name.
    const [apiVersion, kind] = env.kind !== ""
      ? [env.apiVersion, env.kind]
      : [expected.apiVersion ?? "v1", file.split(".").at(-2)!];
    const decode = builtinDecoders.decoder(apiVersion, kind);
    if (decode === undefined) {
      // WatchEvent, DeleteOptions, ListOptions: meta/v1 types that are not watch objects (not generated).
      assert.ok(
        ["WatchEvent", "DeleteOptions", "ListOptions"].includes(kind),
        `${file}: no decoder for ${apiVersion} ${kind}`,
      );
      notWatchObjects++;
      continue;
    }
    const target: Record<string, unknown> = {};
    if (env.apiVersion !== "") target.apiVersion = env.apiVersion;
    if (env.kind !== "") target.kind = env.kind;
    const got = decode(bytes, env.start, env.end, target, 0);
    assert.deepEqual(got, expected, file);
    decoded++;
  }
  assert.equal(decoded + notWatchObjects, files.length);
  assert.ok(decoded >= 16, `decoded ${decoded} of ${files.length}`);
});
