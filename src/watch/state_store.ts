/**
 * {@linkcode StateStore}: where a short-lived program keeps an informer's state between runs, behind one small
 * interface: `load(key)` and `save(key, bytes)`. Web-standard stores here: in memory ({@linkcode memoryStateStore}) and
 * a Cloudflare Durable Object's storage ({@linkcode durableObjectStateStore}); the runtime ones (a directory of files,
 * Deno KV) are in cluster access (`fileStateStore`, `denoKvStateStore`). {@linkcode loadInformerState} and
 * {@linkcode saveInformerState} put the state codec (`encodeInformerState`) in front of any of them.
 *
 * @module
 */
import type { KubernetesObject } from "../events.ts";
import type { InformerState } from "./informer.ts";
import { decodeInformerState, encodeInformerState } from "./informer_state.ts";

/**
 * Bytes by key, kept between runs. `load` gives what the last `save` of the key saved (a copy or the same bytes:
 * callers do not modify them), or `undefined` if nothing was saved. A `save` either completes or leaves the
 * previous bytes loadable.
 *
 * @example
 * ```ts
 * import type { StateStore } from "watchwire";
 *
 * // A store over any key-value API, here a Map.
 * const map = new Map<string, Uint8Array>();
 * const store: StateStore = {
 *   load: async (key) => map.get(key),
 *   save: async (key, bytes) => void map.set(key, bytes.slice()),
 * };
 * await store.save("pods", Uint8Array.of(1, 2, 3));
 * console.log(await store.load("pods"), await store.load("nodes")); // Uint8Array(3) [ 1, 2, 3 ] undefined
 * ```
 */
export interface StateStore {
  /** The bytes last saved under `key`, or `undefined`. */
  load(key: string): Promise<Uint8Array | undefined>;
  /** Saves `bytes` under `key`, replacing what was there. */
  save(key: string, bytes: Uint8Array): Promise<void>;
}

/**
 * A {@linkcode StateStore} in this process's memory (copies in, copies out): for tests, and for a long-lived process
 * that restarts its informers.
 *
 * @example
 * ```ts
 * import { memoryStateStore } from "watchwire";
 *
 * const store = memoryStateStore();
 * const bytes = Uint8Array.of(1, 2);
 * await store.save("pods", bytes);
 * bytes[0] = 9; // the store kept a copy
 * console.log(await store.load("pods")); // Uint8Array(2) [ 1, 2 ]
 * ```
 */
export function memoryStateStore(): StateStore {
  const saved = new Map<string, Uint8Array>();
  return {
    load: (key) => Promise.resolve(saved.get(key)?.slice()),
    save: (key, bytes) => {
      saved.set(key, bytes.slice());
      return Promise.resolve();
    },
  };
}

/**
 * What {@linkcode chunkedStateStore} needs of a key-value store: values up to a size limit, under keys made of parts.
 *
 * @example
 * ```ts
 * import type { ChunkStorage } from "watchwire";
 *
 * const map = new Map<string, unknown>();
 * const storage: ChunkStorage = {
 *   get: async (key) => map.get(key.join("/")),
 *   set: async (key, value) => void map.set(key.join("/"), value),
 *   delete: async (key) => void map.delete(key.join("/")),
 * };
 * await storage.set(["pods", "manifest"], { chunks: 0 });
 * console.log(await storage.get(["pods", "manifest"])); // { chunks: 0 }
 * ```
 */
export interface ChunkStorage {
  get(key: string[]): Promise<unknown>;
  set(key: string[], value: unknown): Promise<void>;
  delete(key: string[]): Promise<void>;
}

interface Manifest {
  generation: string;
  chunks: number;
  bytes: number;
}

function isManifest(value: unknown): value is Manifest {
  const m = value as Partial<Manifest> | undefined;
  return typeof m === "object" && m !== null && typeof m.generation === "string" && Number.isSafeInteger(m.chunks) &&
    Number.isSafeInteger(m.bytes);
}

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A {@linkcode StateStore} over a key-value store whose values are small (Deno KV: 64 KiB; a Durable Object's
 * storage: 128 KiB): the bytes go into chunks of at most `chunkBytes` under a new generation
 * (`[key, generation, index]`), then a manifest under `[key]` names that generation, then the previous generation's
 * chunks are deleted. So a save cut short (the process ends, the budget runs out) leaves the previous state loadable,
 * and a load never sees half of two saves.
 *
 * @example
 * ```ts
 * import { type ChunkStorage, chunkedStateStore } from "watchwire";
 *
 * const map = new Map<string, unknown>();
 * const storage: ChunkStorage = {
 *   get: async (key) => map.get(key.join("/")),
 *   set: async (key, value) => void map.set(key.join("/"), value),
 *   delete: async (key) => void map.delete(key.join("/")),
 * };
 * const store = chunkedStateStore(storage, 4);
 * await store.save("pods", Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
 * await store.save("pods", Uint8Array.of(1, 2, 3, 4, 5, 6));
 * console.log(map.size, await store.load("pods")); // 3 Uint8Array(6) [ 1, 2, 3, 4, 5, 6 ]
 * ```
 */
export function chunkedStateStore(storage: ChunkStorage, chunkBytes: number): StateStore {
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes <= 0) {
    throw new RangeError("chunkBytes must be a positive integer");
  }
  return {
    async load(key) {
      const manifest = await storage.get([key]);
      if (manifest === undefined || manifest === null) return undefined;
      if (!isManifest(manifest)) throw new Error(`the state store's manifest of ${JSON.stringify(key)} is damaged`);
      const bytes = new Uint8Array(manifest.bytes);
      let at = 0;
      for (let i = 0; i < manifest.chunks; i++) {
        const chunk = await storage.get([key, manifest.generation, String(i)]);
        if (!(chunk instanceof Uint8Array) || at + chunk.length > bytes.length) {
          throw new Error(`the state store's chunk ${i} of ${JSON.stringify(key)} is missing or damaged`);
        }
        bytes.set(chunk, at);
        at += chunk.length;
      }
      if (at !== bytes.length) throw new Error(`the state store's chunks of ${JSON.stringify(key)} are short`);
      return bytes;
    },
    async save(key, bytes) {
      const previous = await storage.get([key]);
      const generation = randomId();
      const chunks = Math.ceil(bytes.length / chunkBytes);
      for (let i = 0; i < chunks; i++) {
        await storage.set([key, generation, String(i)], bytes.slice(i * chunkBytes, (i + 1) * chunkBytes));
      }
      const manifest: Manifest = { generation, chunks, bytes: bytes.length };
      await storage.set([key], manifest);
      if (isManifest(previous)) {
        for (let i = 0; i < previous.chunks; i++) await storage.delete([key, previous.generation, String(i)]);
      }
    },
  };
}

/**
 * The part of a Cloudflare Durable Object's storage (`ctx.storage`) that {@linkcode durableObjectStateStore} uses.
 *
 * @example
 * ```ts
 * import type { DurableObjectStorageLike } from "watchwire";
 *
 * const map = new Map<string, unknown>();
 * const storage: DurableObjectStorageLike = {
 *   get: async (key) => map.get(key),
 *   put: async (key, value) => void map.set(key, value),
 *   delete: async (key) => map.delete(key),
 * };
 * console.log(typeof storage.put); // function
 * ```
 */
export interface DurableObjectStorageLike {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
}

/**
 * A {@linkcode StateStore} in a Cloudflare Durable Object's storage (`ctx.storage` in the object's constructor), in
 * chunks of 120 KiB (under a value's limit of 128 KiB): see {@linkcode chunkedStateStore}. Keys are
 * `watchwire-state:KEY`, `watchwire-state:KEY:GENERATION:INDEX`.
 *
 * @example
 * ```ts
 * import { durableObjectStateStore } from "watchwire";
 *
 * // In a Durable Object: `constructor(ctx, env) { this.store = durableObjectStateStore(ctx.storage); }`; a stand-in here.
 * const map = new Map<string, unknown>();
 * const store = durableObjectStateStore({
 *   get: async (key) => map.get(key),
 *   put: async (key, value) => void map.set(key, value),
 *   delete: async (key) => map.delete(key),
 * });
 * await store.save("pods", new Uint8Array(300_000));
 * console.log([...map.keys()].length, (await store.load("pods"))?.length); // 4 300000
 * ```
 */
export function durableObjectStateStore(storage: DurableObjectStorageLike): StateStore {
  const name = (key: string[]) => ["watchwire-state", ...key].join(":");
  return chunkedStateStore({
    get: (key) => storage.get(name(key)),
    set: (key, value) => storage.put(name(key), value),
    delete: async (key) => void await storage.delete(name(key)),
  }, 120 * 1024);
}

/**
 * The informer state saved under `key` (decoded with `decodeInformerState`), or `undefined` if there is none: what
 * `resume` takes.
 *
 * @example
 * ```ts
 * import { Informer, type ListWatchSource, loadInformerState, memoryStateStore, saveInformerState } from "watchwire";
 *
 * const store = memoryStateStore();
 * console.log(await loadInformerState(store, "pods")); // undefined
 * await saveInformerState(store, "pods", { resourceVersion: "42", objects: [{ metadata: { name: "a" } }] });
 * const source: ListWatchSource = {
 *   list: () => Promise.reject(new Error("not needed: resumed")),
 *   watch: async () => new ReadableStream({ start: (c) => c.close() }),
 * };
 * const informer = new Informer(source, { resume: await loadInformerState(store, "pods") });
 * console.log(informer.resourceVersion, informer.store.size); // 42 1
 * ```
 */
export async function loadInformerState<T = KubernetesObject>(
  store: StateStore,
  key: string,
): Promise<InformerState<T> | undefined> {
  const bytes = await store.load(key);
  return bytes === undefined ? undefined : await decodeInformerState<T>(bytes);
}

/**
 * Saves an informer's state under `key` (encoded with `encodeInformerState`); resolves to its size in bytes.
 *
 * @example
 * ```ts
 * import { memoryStateStore, saveInformerState } from "watchwire";
 *
 * const store = memoryStateStore();
 * const bytes = await saveInformerState(store, "pods", { resourceVersion: "42", objects: [] });
 * console.log(bytes > 0, (await store.load("pods"))?.length === bytes); // true true
 * ```
 */
export async function saveInformerState<T = KubernetesObject>(
  store: StateStore,
  key: string,
  state: InformerState<T>,
): Promise<number> {
  const bytes = await encodeInformerState(state);
  await store.save(key, bytes);
  return bytes.length;
}
