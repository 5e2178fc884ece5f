// What a bundle of watchwire holds. The generated Kubernetes decoders are one module per group/version, exported by
// `watchwire/kubernetes` (kubernetes.ts); the `watchwire` entry point (mod.ts) never imports them (its protobuf
// decoders know no kind but Status unless given decoders), so a bundle takes only the group/versions its code names.
// Real bundlers (esbuild and Bun's, both devDependencies) bundle small entry points; the tests look for field names
// that only one group/version's generated decoders spell, then run the bundles.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { KubernetesProtobufObject } from "../mod.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const main = JSON.stringify(join(root, "mod.ts"));
const wire = JSON.stringify(join(root, "wire.ts"));
const kubernetes = JSON.stringify(join(root, "kubernetes.ts"));
// Spelled only by the generated decoders of core/v1 (PodSpec) and of apps/v1 and apps/v1beta1 (DeploymentSpec).
const CORE = "terminationGracePeriodSeconds";
const APPS = "progressDeadlineSeconds";

const ENTRIES: Record<string, string> = {
  // JSON watches (and protobuf without decoders) from the main entry point: no generated decoder.
  "main-json": `import { decodeWatchResponse } from ${main};
export const decode = (response: Response) => decodeWatchResponse(response);`,
  // The same with the types of the built-in kinds: types only, nothing more in the bundle.
  "main-typed": `import { decodeWatchResponse } from ${main};
import type { Pod } from ${kubernetes};
export const decode = (response: Response) => decodeWatchResponse<Pod>(response);`,
  // Cluster access and the informer from the main entry point: no generated decoder either.
  "main-cluster": `import { connectCluster, decodeWatchResponse, informer, loadKubeconfig } from ${main};
export { connectCluster, decodeWatchResponse, informer, loadKubeconfig };`,
  // The protobuf stream with core/v1's decoders.
  "kubernetes-corev1":
    `import { coreV1, createKubernetesDecoders, KubernetesProtobufWatchBodyDecoderStream } from ${kubernetes};
export const decoders = createKubernetesDecoders([coreV1]);
export const stream = () => new KubernetesProtobufWatchBodyDecoderStream({ decoders });`,
  // decodeWatchResponse with every built-in kind.
  "kubernetes-builtin": `import { decodeWatchResponse } from ${main};
import { builtinDecoders } from ${kubernetes};
export const decode = (response: Response) => decodeWatchResponse(response, { protobuf: { decoders: builtinDecoders } });`,
  // The NDJSON stream from watchwire/wire.
  "wire-ndjson": `import { JsonWatchEventDecoderStream } from ${wire};
export const stream = () => new JsonWatchEventDecoderStream();`,
};

type Bundler = "esbuild" | "bun";

/** Bundles one entry into one minified ESM file; returns its text and path. */
function bundle(bundler: Bundler, dir: string, name: string): { path: string; text: string } {
  const entry = join(dir, `${name}.ts`);
  const path = join(dir, `${name}.${bundler}.js`);
  const args = bundler === "esbuild"
    ? [entry, "--bundle", "--format=esm", "--platform=neutral", "--minify", `--outfile=${path}`]
    : ["build", entry, "--format=esm", "--target=browser", "--minify", `--outfile=${path}`];
  const r = spawnSync(join(root, "node_modules", ".bin", bundler), args, { cwd: root, encoding: "utf8" });
  assert.equal(r.status, 0, `${bundler} failed: ${r.stderr}`);
  return { path, text: readFileSync(path, "utf8") };
}

/** Writes each of `entries` (name to source) into `dir` and bundles it: its bundle's path and text by name. */
function bundleAll(
  bundler: Bundler,
  dir: string,
  entries: Record<string, string>,
): Record<string, { path: string; text: string }> {
  const out: Record<string, { path: string; text: string }> = {};
  for (const [name, text] of Object.entries(entries)) {
    writeFileSync(join(dir, `${name}.ts`), text);
    out[name] = bundle(bundler, dir, name);
  }
  return out;
}

/** The pod fixture stream (ADDED, MODIFIED, BOOKMARK, DELETED, ERROR) as a ReadableStream of one chunk. */
function podBody(): ReadableStream<Uint8Array> {
  const bytes = new Uint8Array(readFileSync(join(root, "fixtures/kubernetes/streams/v1.Pod.pb")));
  return new ReadableStream({
    start(c) {
      c.enqueue(bytes);
      c.close();
    },
  });
}

function protobufResponse(): Response {
  return new Response(podBody(), { headers: { "content-type": "application/vnd.kubernetes.protobuf;stream=watch" } });
}

type Event = { type: string; object: Record<string, unknown> };

async function collect(stream: ReadableStream<unknown>): Promise<Event[]> {
  const out: Event[] = [];
  for await (const e of stream) out.push(e as Event);
  return out;
}

for (const bundler of ["esbuild", "bun"] as const) {
  test(`bundle (${bundler}): watchwire holds no generated decoder; watchwire/kubernetes only those the code names`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "watchwire-bundle-"));
    try {
      const out = bundleAll(bundler, dir, ENTRIES);
      const holds = (name: string, marker: string) => out[name].text.includes(marker);
      for (const name of ["main-json", "main-typed", "main-cluster", "wire-ndjson"]) {
        assert.ok(!holds(name, CORE) && !holds(name, APPS), `${name}: no generated decoders`);
      }
      assert.ok(holds("kubernetes-corev1", CORE), "kubernetes-corev1: core/v1");
      assert.ok(!holds("kubernetes-corev1", APPS), "kubernetes-corev1: not apps/v1");
      assert.ok(holds("kubernetes-builtin", CORE) && holds("kubernetes-builtin", APPS), "kubernetes-builtin: all");
      const size = (name: string) => out[name].text.length;
      assert.equal(size("main-typed"), size("main-json"), "the kinds' types add nothing");
      // core/v1's generated decoders are most of a bundle that has them: more than twice the rest (decodeWatchResponse's
      // JSON and protobuf pipelines without any generated decoder: ~48 KB minified).
      assert.ok(
        size("kubernetes-corev1") - size("main-json") > 2 * size("main-json"),
        `main-json ${size("main-json")} B, kubernetes-corev1 ${size("kubernetes-corev1")} B`,
      );
      assert.ok(size("kubernetes-corev1") * 1.5 < size("kubernetes-builtin"), `core/v1 ${size("kubernetes-corev1")} B`);

      // The bundles run. core/v1's decodes Pods in full.
      const load = (name: string) => import(pathToFileURL(out[name].path).href);
      const corev1 = await load("kubernetes-corev1");
      const full = await collect(podBody().pipeThrough(corev1.stream()));
      assert.deepEqual(full.map((e) => `${e.type} ${e.object.kind}`), [
        "ADDED Pod",
        "MODIFIED Pod",
        "BOOKMARK Pod",
        "DELETED Pod",
        "ERROR Status",
      ]);
      assert.equal(typeof full[0].object.spec, "object", "decoded in full");
      // Every built-in kind decodes the same.
      const builtin = await load("kubernetes-builtin");
      assert.deepEqual(await collect(builtin.decode(protobufResponse())), full);
      // The default knows no kind but Status: Pods decode as unknown kinds (metadata now, the bytes kept).
      const mainJson = await load("main-json");
      const partial = await collect(mainJson.decode(protobufResponse()));
      assert.equal(partial.length, 5);
      for (let i = 0; i < 4; i++) {
        const o = partial[i].object as unknown as { kind: string; metadata: unknown; decodable: boolean };
        assert.equal(o.kind, "Pod");
        assert.equal(o.decodable, false);
        assert.deepEqual(o.metadata, full[i].object.metadata);
      }
      assert.deepEqual(partial[4], full[4], "the ERROR event's Status decodes in full");
      const cluster = await load("main-cluster");
      assert.equal(typeof cluster.informer, "function");
      const ndjson = await load("wire-ndjson");
      const line = '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"1"}}}\n';
      const events = await collect(new Response(line).body!.pipeThrough(ndjson.stream()));
      assert.equal(events[0].object.kind, "Pod");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("watchwire/kubernetes: without decoders a protobuf watch knows no kind but Status", async () => {
  const { KubernetesProtobufWatchBodyDecoderStream } = await import("../kubernetes.ts");
  const events = await collect(podBody().pipeThrough(new KubernetesProtobufWatchBodyDecoderStream()));
  assert.deepEqual(events.map((e) => e.type), ["ADDED", "MODIFIED", "BOOKMARK", "DELETED", "ERROR"]);
  for (const e of events.slice(0, 4)) {
    assert.ok(e.object instanceof KubernetesProtobufObject);
    assert.equal((e.object as unknown as KubernetesProtobufObject).decodable, false);
  }
  assert.equal(events[4].object.code, 410);
});

// The msgpack decoders: those of watchwire/wire use msgpackr's main build, which compiles a reader with
// `new Function` for a record shape it reads often; watchwire/msgpack-no-eval's use its build without it, and
// nothing of the main one. The bundles show which build they hold: only the main one spells `Function(`, a call of
// the global that minifying cannot rename.
const noEval = JSON.stringify(join(root, "msgpack_no_eval.ts"));
const MSGPACK_ENTRIES: Record<string, string> = {
  "msgpack-main": `import { MsgpackEventDecoderStream } from ${wire};
export const stream = () => new MsgpackEventDecoderStream();`,
  "msgpack-no-eval": `import { MsgpackEventDecoderStream } from ${noEval};
export const stream = () => new MsgpackEventDecoderStream();`,
};
const CALLS_FUNCTION = /(?<![\w$.])Function\s*\(/;

for (const bundler of ["esbuild", "bun"] as const) {
  test(`bundle (${bundler}): watchwire/msgpack-no-eval holds no new Function and decodes as the main entry's`, async () => {
    const { MsgpackEventEncoderStream } = await import("../wire.ts");
    const events = readFileSync(join(root, "fixtures/node-http-watch.events.ndjson"), "utf8").split("\n")
      .filter((l) => l !== "").map((l) => JSON.parse(l).event);
    // Three times over, so that every record shape is read often enough for the main build to compile a reader.
    const thrice = [...events, ...events, ...events];
    const source = new ReadableStream<unknown>({
      start(c) {
        for (const e of thrice) c.enqueue(e);
        c.close();
      },
    });
    const recording = new Uint8Array(
      await new Response(source.pipeThrough(new MsgpackEventEncoderStream())).arrayBuffer(),
    );
    const dir = mkdtempSync(join(tmpdir(), "watchwire-bundle-"));
    try {
      const out = bundleAll(bundler, dir, MSGPACK_ENTRIES);
      assert.ok(CALLS_FUNCTION.test(out["msgpack-main"].text), "the main build compiles readers");
      assert.ok(!CALLS_FUNCTION.test(out["msgpack-no-eval"].text), "no Function( in watchwire/msgpack-no-eval");
      for (const name of Object.keys(MSGPACK_ENTRIES)) {
        const { stream } = await import(pathToFileURL(out[name].path).href);
        const input = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(recording);
            c.close();
          },
        });
        assert.deepStrictEqual(await collect(input.pipeThrough(stream())), thrice, name);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
