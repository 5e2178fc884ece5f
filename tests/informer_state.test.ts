/**
 * The informer state codec, the state stores and runInformerWithin, without a cluster (tests/servers/ has them against
 * a real kube-apiserver, and the examples): round trips of every JSON value and of metadata-only protobuf objects,
 * damaged bytes refused, the stores (memory, chunked with a save cut short, files, Deno KV in a Deno child with
 * --unstable-kv), and a budgeted run's deadline, checkpoints and saved resourceVersion with a source under the test's
 * control. Also the `watch` command's usage errors and ages.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import process from "node:process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DecodeError } from "../src/errors.ts";
import type { KubernetesObject, WatchEvent } from "../src/events.ts";
import { KubernetesProtobufObject } from "../mod.ts";
import { builtinDecoders, KubernetesProtobufWatchBodyDecoderStream } from "../kubernetes.ts";
import { runCli } from "../cli.ts";
import { fileStateStore } from "../src/cluster/state_stores.ts";
import { Informer } from "../src/watch/informer.ts";
import { decodeInformerState, encodeInformerState } from "../src/watch/informer_state.ts";
import type { ListWatchSource } from "../src/watch/list_watch_source.ts";
import { runInformerWithin } from "../src/watch/run_informer.ts";
import {
  chunkedStateStore,
  type ChunkStorage,
  loadInformerState,
  memoryStateStore,
  saveInformerState,
} from "../src/watch/state_store.ts";
import { humanAge } from "../src/cli/watch.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("informer state: JSON's hard values survive (-0, lone surrogates, __proto__ and __keys__ keys, big integers)", async () => {
  const odd = JSON.parse('{"__proto__":{"x":1},"__keys__":[1],"k\\ud800":"\\udc00","z":-0,"big":12345678901234567890}');
  const state = {
    resourceVersion: "99",
    objects: [{ kind: "ConfigMap", metadata: { name: "odd", resourceVersion: "98" }, data: odd }],
  };
  const back = await decodeInformerState(await encodeInformerState(state));
  assert.equal(back.resourceVersion, "99");
  const data = (back.objects[0] as unknown as { data: Record<string, unknown> }).data;
  assert.ok(Object.hasOwn(data, "__proto__"), "an own __proto__ property, as JSON.parse makes");
  assert.deepEqual(Object.getOwnPropertyDescriptor(data, "__proto__")?.value, { x: 1 });
  assert.deepEqual(data["__keys__"], [1]);
  assert.equal(data["k\ud800"], "\udc00");
  assert.ok(Object.is(data.z, -0));
  assert.equal(data.big, 12345678901234567890);
});

test("informer state: metadata-only protobuf objects are kept as their JSON (kind, apiVersion, metadata), compactly", async () => {
  const objects: KubernetesObject[] = [];
  for (const kind of ["v1.Pod", "v1.Node", "v1.ConfigMap", "apps_v1.Deployment"]) {
    const pb = new Uint8Array(readFileSync(join(root, `fixtures/kubernetes/streams/${kind}.pb`)));
    const stream = new Blob([pb]).stream().pipeThrough(
      new KubernetesProtobufWatchBodyDecoderStream({ decoders: builtinDecoders, mode: "metadata" }),
    );
    for await (const event of stream as ReadableStream<WatchEvent>) {
      if (event.type !== "ERROR") objects.push(event.object);
    }
  }
  assert.ok(objects.length >= 16 && objects.every((o) => o instanceof KubernetesProtobufObject), `${objects.length}`);
  const bytes = await encodeInformerState({ resourceVersion: "7", objects });
  const back = await decodeInformerState(bytes);
  assert.deepEqual(back.objects, JSON.parse(JSON.stringify(objects)));
  assert.ok(back.objects.every((o) => Object.getPrototypeOf(o) === Object.prototype));
  assert.ok(bytes.length < JSON.stringify(objects).length * 0.7, `${bytes.length} bytes`);
});

test("informer state: bytes that are not a state are a DecodeError", async () => {
  const good = await encodeInformerState({ resourceVersion: "5", objects: [{ metadata: { name: "a" } }] });
  assert.deepEqual([...good.subarray(0, 5)], [0x57, 0x57, 0x49, 0x53, 1], "WWIS and version 1");
  const cases: [Uint8Array, string, RegExp][] = [
    [new Uint8Array(0), "TRUNCATED", /header/],
    [good.subarray(0, 3), "TRUNCATED", /header/],
    [Uint8Array.of(0x57, 0x57, 0x49, 0x53, 2, ...good.subarray(5)), "MESSAGE_INVALID", /version 2 is not supported/],
    [new TextEncoder().encode('{"resourceVersion":"5"}'), "MESSAGE_INVALID", /not an informer state/],
    [good.subarray(0, good.length - 3), "TRUNCATED", /msgpack/],
  ];
  for (const [bytes, code, detail] of cases) {
    await assert.rejects(decodeInformerState(bytes), (e: unknown) => {
      assert.ok(e instanceof DecodeError, String(e));
      assert.equal(e.code, code, e.message);
      assert.match(e.detail, detail);
      return true;
    });
  }
  // A msgpack value of another shape.
  const other = await encodeInformerState({ resourceVersion: "5", objects: [] });
  other[5] ^= 0x0f;
  await assert.rejects(decodeInformerState(other), DecodeError);
  await assert.rejects(
    encodeInformerState({ resourceVersion: "1", objects: [{ metadata: {}, n: 1n } as unknown as KubernetesObject] }),
    TypeError,
  );
});

test("state stores: memory keeps copies; a chunked save cut short leaves the previous state loadable", async () => {
  const memory = memoryStateStore();
  assert.equal(await memory.load("x"), undefined);
  await saveInformerState(memory, "x", { resourceVersion: "3", objects: [{ metadata: { name: "a" } }] });
  assert.equal((await loadInformerState(memory, "x"))?.resourceVersion, "3");

  const map = new Map<string, unknown>();
  let failAfter = Infinity;
  const storage: ChunkStorage = {
    get: (key) => Promise.resolve(map.get(key.join("/"))),
    set: (key, value) => {
      if (failAfter-- <= 0) return Promise.reject(new Error("the platform ended the request"));
      map.set(key.join("/"), value);
      return Promise.resolve();
    },
    delete: (key) => Promise.resolve(void map.delete(key.join("/"))),
  };
  const store = chunkedStateStore(storage, 1000);
  const first = Uint8Array.from({ length: 4500 }, (_, i) => i % 251);
  await store.save("s", first);
  assert.equal(map.size, 6, "five chunks and the manifest");
  assert.deepEqual(await store.load("s"), first);
  const second = Uint8Array.from({ length: 2500 }, (_, i) => (i * 7) % 253);
  failAfter = 2; // two chunks of three written, then the failure: no manifest, old chunks kept
  await assert.rejects(store.save("s", second), /ended the request/);
  assert.deepEqual(await store.load("s"), first);
  failAfter = Infinity;
  await store.save("s", second);
  assert.deepEqual(await store.load("s"), second);
  // The first generation's chunks are gone; the cut save's two remain (garbage, never read).
  assert.equal(map.size, 1 + 3 + 2);
  const { generation } = map.get("s") as { generation: string };
  map.delete(`s/${generation}/1`);
  await assert.rejects(store.load("s"), /chunk 1 of "s" is missing or damaged/);
});

test("fileStateStore: whole files by key, missing is undefined, no temporary file left", async () => {
  const dir = mkdtempSync(join(tmpdir(), "watchwire-state-"));
  try {
    const store = fileStateStore(join(dir, "nested"));
    assert.equal(await store.load("pods/default"), undefined);
    await store.save("pods/default", Uint8Array.of(1, 2, 3));
    await store.save("pods/default", Uint8Array.of(4, 5));
    assert.deepEqual(await store.load("pods/default"), Uint8Array.of(4, 5));
    assert.deepEqual(readdirSync(join(dir, "nested")), ["pods%2Fdefault.state"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("denoKvStateStore: a state over 64 KiB in Deno KV (--unstable-kv), and a clear error without the flag", () => {
  const dir = mkdtempSync(join(tmpdir(), "watchwire-kv-"));
  try {
    const script = join(dir, "kv.ts");
    writeFileSync(
      script,
      `import { denoKvStateStore } from ${JSON.stringify(join(root, "mod.ts"))};
const store = denoKvStateStore({ path: ${JSON.stringify(join(dir, "state.kv"))}, prefix: ["t"] });
try {
  const big = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 31) % 256);
  console.log(await store.load("x") === undefined);
  await store.save("x", big);
  await store.save("x", big.subarray(0, 200_000));
  const back = await store.load("x");
  console.log(back?.length, back?.every((b, i) => b === (i * 31) % 256));
} catch (e) {
  console.log(String(e));
} finally {
  store.close();
}
`,
    );
    const deno = join(root, "node_modules", ".bin", "deno");
    // FORCE_COLOR (even "0", as scripts/test-all.mjs sets it) makes Deno colour what it prints: left out.
    const { FORCE_COLOR: _, ...parentEnv } = process.env;
    const env = { ...parentEnv, NO_COLOR: "1" };
    const withKv = spawnSync(deno, ["run", "-A", "--unstable-kv", script], { encoding: "utf8", env });
    assert.equal(withKv.status, 0, withKv.stderr);
    // Deno run by Deno's node:child_process keeps the parent's FORCE_COLOR whatever `env` says: escapes left out.
    // deno-lint-ignore no-control-regex
    const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, "");
    assert.equal(plain(withKv.stdout), "true\n200000 true\n");
    const without = spawnSync(deno, ["run", "-A", script], { encoding: "utf8", env });
    assert.equal(without.status, 0, without.stderr);
    assert.match(plain(without.stdout), /TypeError: Deno KV is not available: Deno.openKv needs --unstable-kv/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A source the test drives: `list` gives `objects` at `listed`; each watch yields what `push` sends until aborted.
 * Events sent while no watch is open wait for the next one (they were "on the server").
 */
function drivenSource(objects: KubernetesObject[], listed: string) {
  const queue: WatchEvent[] = [];
  let wake: (() => void) | undefined;
  const watches: (string | undefined)[] = [];
  let lists = 0;
  const source: ListWatchSource = {
    list: () => {
      lists++;
      return Promise.resolve({ items: objects, resourceVersion: listed });
    },
    watch: ({ resourceVersion, signal }) => {
      watches.push(resourceVersion);
      return Promise.resolve(
        new ReadableStream<WatchEvent>({
          async pull(controller) {
            while (queue.length === 0 && !signal.aborted) await new Promise<void>((r) => (wake = r));
            if (signal.aborted) return controller.close();
            controller.enqueue(queue.shift()!);
          },
          cancel: () => wake?.(),
        }, { highWaterMark: 0 }),
      );
    },
  };
  return {
    source,
    watches,
    lists: () => lists,
    push(event: WatchEvent) {
      queue.push(event);
      wake?.();
    },
  };
}

const cm = (name: string, rv: string): KubernetesObject => ({
  kind: "ConfigMap",
  metadata: { name, resourceVersion: rv },
});

test("runInformerWithin: stops at its deadline, saves at bookmarks, and the saved resourceVersion is that of the last change handled", async () => {
  const driven = drivenSource([cm("a", "10")], "10");
  const store = memoryStateStore();
  const informer = new Informer(driven.source, { initialSync: "list" });
  const handled: string[] = [];
  informer.addHandlers({
    update: async (_old, o) => {
      // A slow handler: the budget runs out while it runs; its change still counts as handled and saved.
      await sleep(150);
      handled.push(`${o.metadata?.name} ${o.metadata?.resourceVersion}`);
    },
  });
  const started = Date.now();
  setTimeout(() => {
    driven.push({ type: "BOOKMARK", object: { metadata: { resourceVersion: "11" } } });
    driven.push({ type: "MODIFIED", object: cm("a", "12") });
  }, 100);
  const result = await runInformerWithin(informer, { budgetMs: 300, reserveMs: 50, store, key: "k" });
  const took = Date.now() - started;
  // Stopped at 250 ms (the deadline less its reserve), the change under way then finished: about 300 ms (slack for a
  // loaded machine; without the stop the run would never end).
  assert.ok(took >= 250 && took < 1500, `took ${took} ms`);
  assert.deepEqual(handled, ["a 12"]);
  assert.equal(result.ended, "budget");
  assert.equal(result.checkpoints, 2, "the initial sync's end and the bookmark");
  assert.equal(result.state?.resourceVersion, "12");
  assert.equal((await loadInformerState(store, "k"))?.resourceVersion, "12");
  assert.equal(result.bytes, (await store.load("k"))?.length);

  // The next run resumes there: a watch from 12, no list; a change it has not seen comes once.
  const again = new Informer(driven.source, { resume: await loadInformerState(store, "k") });
  const seen: string[] = [];
  again.addHandlers({ update: (_old, o) => void seen.push(o.metadata!.resourceVersion!) }, { replay: false });
  const stop = new AbortController();
  setTimeout(() => driven.push({ type: "MODIFIED", object: cm("a", "13") }), 50);
  setTimeout(() => stop.abort(), 200);
  const second = await runInformerWithin(again, { budgetMs: 5000, signal: stop.signal, store, key: "k" });
  assert.equal(second.ended, "signal");
  assert.deepEqual(seen, ["13"]);
  assert.equal(driven.lists(), 1);
  assert.deepEqual(driven.watches, ["10", "12"]);
  assert.equal(second.state?.resourceVersion, "13");

  // Never synced (the list fails): nothing to save.
  const failing = new Informer({ ...driven.source, list: () => Promise.reject(new Error("down")) }, {
    initialSync: "list",
    onError: () => {},
  });
  const empty = memoryStateStore();
  const none = await runInformerWithin(failing, { budgetMs: 100, store: empty });
  assert.equal(none.state, undefined);
  assert.equal(await empty.load("informer"), undefined);
  await assert.rejects(runInformerWithin(failing, {}), TypeError);
});

test("cli watch: usage errors are one line and a hint; ages read as kubectl's", async () => {
  let err = "";
  const host = {
    open: () => Promise.reject(new Error("no files")),
    stdout: () => {},
    stderr: (t: string) => void (err += t),
    stdoutIsTerminal: false,
    version: "0",
  };
  const hint = "Usage: watchwire watch [OPTION]... RESOURCE  (watchwire --help for the options)\n";
  for (
    const [args, message] of [
      [["watch"], "no RESOURCE given (e.g. pods, deployments.apps)"],
      [["watch", "pods", "configmaps"], "one RESOURCE only, not pods configmaps"],
      [["watch", "-o", "yaml", "pods"], '--output must be ndjson, table or state FILE, not "yaml"'],
      [["watch", "--format", "xml", "pods"], '--format must be json, protobuf or cbor, not "xml"'],
      [["watch", "--format=json", "--metadata-only", "pods"], "--metadata-only needs --format protobuf (the default)"],
      [["watch", "--bogus", "pods"], 'unknown option "--bogus"'],
      [["watch", "pods", "-n"], "-n needs a value"],
    ] as const
  ) {
    err = "";
    assert.equal(await runCli([...args], host), 2, args.join(" "));
    assert.equal(err, `watchwire: ${message}\n${hint}`);
  }
  err = "";
  assert.equal(await runCli(["watch", "--state", "s", "pods"], host), 2);
  assert.equal(err, "watchwire: --state needs a host that reads and writes files\n");
  const s = 1000;
  const cases: [number, string][] = [
    [-5 * s, "<invalid>"],
    [-500, "0s"],
    [45 * s, "45s"],
    [119 * s, "119s"],
    [200 * s, "3m20s"],
    [300 * s, "5m"],
    [15 * 60 * s, "15m"],
    [(5 * 60 + 10) * 60 * s, "5h10m"],
    [20 * 3600 * s, "20h"],
    [(3 * 24 + 4) * 3600 * s, "3d4h"],
    [120 * 24 * 3600 * s, "120d"],
    [(2 * 365 + 10) * 24 * 3600 * s, "2y10d"],
    [9 * 365 * 24 * 3600 * s, "9y"],
  ];
  for (const [ms, age] of cases) assert.equal(humanAge(ms), age, String(ms));
});
