/**
 * The runtime {@linkcode StateStore}s: {@linkcode fileStateStore} (a directory of files; Node, Deno, Bun) and
 * {@linkcode denoKvStateStore} (Deno KV). Their runtime code (`node:fs/promises`, `Deno.*`) is in
 * `src/cluster/runtime/`, imported only where it runs, as the other runtime adapters are.
 *
 * @module
 */
import { chunkedStateStore, type StateStore } from "../watch/state_store.ts";
import { detectRuntime } from "./connection/runtime_name.ts";

/** What a state file adapter module (`runtime/state_file*.ts`) exports. */
interface StateFileModule {
  readStateFile(path: string): Promise<Uint8Array | undefined>;
  writeStateFile(path: string, bytes: Uint8Array): Promise<void>;
}

/** Imported by a variable specifier: TypeScript and bundlers do not follow it (see `connection/adapters.ts`). */
function importHidden(specifier: string): Promise<unknown> {
  return import(specifier);
}

let adapter: Promise<StateFileModule> | undefined;

function stateFiles(): Promise<StateFileModule> {
  adapter ??=
    (detectRuntime() === "deno"
      ? import("./runtime/state_file_deno.ts")
      : importHidden("./runtime/state_file_node.ts") as Promise<StateFileModule>).catch((error) => {
        adapter = undefined;
        throw error;
      });
  return adapter;
}

/**
 * A {@linkcode StateStore} of files in `directory` (made when first saved to), one per key: `KEY.state`, the key
 * percent-encoded (`encodeURIComponent`). A save writes a temporary file and renames it over the old one, so a load
 * sees a whole state, the old or the new. Node, Bun (`node:fs/promises`) and Deno (`Deno.*`: `--allow-read` and
 * `--allow-write` for the directory).
 *
 * @example
 * ```ts
 * import { fileStateStore } from "watchwire";
 *
 * const directory = await Deno.makeTempDir();
 * const store = fileStateStore(directory);
 * console.log(await store.load("pods")); // undefined
 * await store.save("pods", Uint8Array.of(1, 2, 3));
 * console.log(await store.load("pods"), (await Deno.stat(`${directory}/pods.state`)).size); // Uint8Array(3) [ 1, 2, 3 ] 3
 * await Deno.remove(directory, { recursive: true });
 * ```
 */
export function fileStateStore(directory: string): StateStore {
  const path = (key: string) => `${directory.replace(/\/+$/, "")}/${encodeURIComponent(key)}.state`;
  return {
    load: async (key) => (await stateFiles()).readStateFile(path(key)),
    save: async (key, bytes) => (await stateFiles()).writeStateFile(path(key), bytes),
  };
}

/** The part of Deno KV (`Deno.Kv`) that {@linkcode denoKvStateStore} uses. */
interface DenoKv {
  get(key: unknown[]): Promise<{ value: unknown }>;
  set(key: unknown[], value: unknown): Promise<unknown>;
  delete(key: unknown[]): Promise<void>;
  close(): void;
}

/**
 * Options of {@linkcode denoKvStateStore}.
 *
 * @example
 * ```ts
 * import type { DenoKvStateStoreOptions } from "watchwire";
 *
 * const options: DenoKvStateStoreOptions = { path: "./state.kv", prefix: ["my-controller"] };
 * console.log(options.prefix); // [ "my-controller" ]
 * ```
 */
export interface DenoKvStateStoreOptions {
  /** The database `Deno.openKv` opens (a local file); default: Deno's own for the script, or Deno Deploy's. */
  path?: string;
  /** A database already open (`await Deno.openKv()`), instead of `path`; the store does not close it. */
  kv?: unknown;
  /** The first parts of every key the store writes. Default `["watchwire-state"]`. */
  prefix?: string[];
}

/**
 * A {@linkcode StateStore} in Deno KV, in chunks of 64 KiB (a value's limit) with a manifest (see
 * `chunkedStateStore`), under `[...prefix, key]`. Deno KV is an unstable API: run with `--unstable-kv` (or
 * `"unstable": ["kv"]` in deno.json), else the first load or save throws a `TypeError` that says so. `close()` closes
 * the database it opened.
 *
 * @example
 * ```ts
 * import { denoKvStateStore } from "watchwire";
 *
 * const kvAvailable = typeof (Deno as { openKv?: unknown }).openKv === "function"; // --unstable-kv
 * if (kvAvailable) {
 *   const directory = await Deno.makeTempDir();
 *   const store = denoKvStateStore({ path: `${directory}/state.kv` });
 *   await store.save("pods", new Uint8Array(200_000).fill(7));
 *   console.log((await store.load("pods"))?.length); // 200000
 *   store.close();
 *   await Deno.remove(directory, { recursive: true });
 * }
 * ```
 */
export function denoKvStateStore(options: DenoKvStateStoreOptions = {}): StateStore & { close(): void } {
  const prefix = options.prefix ?? ["watchwire-state"];
  let opened: Promise<DenoKv> | undefined;
  const kv = (): Promise<DenoKv> => {
    if (options.kv !== undefined) return Promise.resolve(options.kv as DenoKv);
    opened ??= (async () => {
      const deno = (globalThis as { Deno?: { openKv?: (path?: string) => Promise<DenoKv> } }).Deno;
      if (typeof deno?.openKv !== "function") {
        throw new TypeError(
          'Deno KV is not available: Deno.openKv needs --unstable-kv (or "unstable": ["kv"] in deno.json)',
        );
      }
      return await deno.openKv(options.path);
    })();
    opened.catch(() => (opened = undefined));
    return opened;
  };
  const store = chunkedStateStore({
    get: async (key) => (await (await kv()).get([...prefix, ...key])).value ?? undefined,
    set: async (key, value) => void await (await kv()).set([...prefix, ...key], value),
    delete: async (key) => await (await kv()).delete([...prefix, ...key]),
  }, 65536);
  return {
    load: store.load,
    save: store.save,
    close: () => {
      void opened?.then((db) => db.close(), () => {});
      opened = undefined;
    },
  };
}
