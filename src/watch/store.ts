/**
 * {@linkcode Store}: the objects of an informer by `namespace/name`, with indexes.
 *
 * @module
 */
import type { KubernetesObject } from "../events.ts";

/**
 * An object's key: `namespace/name`, or `name` for a cluster-scoped one (client-go's `MetaNamespaceKeyFunc`).
 *
 * @example
 * ```ts
 * import { objectKey } from "watchwire";
 *
 * console.log(objectKey({ metadata: { namespace: "web", name: "api" } }), objectKey({ metadata: { name: "node-1" } })); // web/api node-1
 * ```
 */
export function objectKey(object: KubernetesObject): string {
  const metadata = object.metadata;
  const name = metadata?.name ?? "";
  return metadata?.namespace ? `${metadata.namespace}/${name}` : name;
}

/**
 * An index function: the values under which an object is found (e.g. its namespace, a label's value).
 *
 * @example
 * ```ts
 * import type { IndexFunction } from "watchwire";
 *
 * const byApp: IndexFunction = (o) => (o.metadata?.labels?.app ? [o.metadata.labels.app] : []);
 * console.log(byApp({ metadata: { labels: { app: "web" } } })); // [ "web" ]
 * ```
 */
export type IndexFunction<T = KubernetesObject> = (object: T) => readonly string[];

/**
 * The objects of an informer, by key, with named indexes (`namespace` is always there). Reads only: the informer
 * writes it, and replaces it whole at the end of an initial sync.
 *
 * @example
 * ```ts
 * import { Store } from "watchwire";
 *
 * const store = new Store({ byApp: (o) => [o.metadata?.labels?.app ?? ""] });
 * store.set({ metadata: { namespace: "a", name: "x", labels: { app: "web" } } });
 * store.set({ metadata: { namespace: "b", name: "y", labels: { app: "web" } } });
 * console.log(store.byIndex("byApp", "web").length, store.byIndex("namespace", "a").length, store.get("b/y")?.metadata?.name); // 2 1 y
 * ```
 */
export class Store<T extends KubernetesObject = KubernetesObject> {
  readonly #objects = new Map<string, T>();
  readonly #indexers: Record<string, IndexFunction<T>>;
  readonly #indexes = new Map<string, Map<string, Set<string>>>();
  /** Each index function with its index: index value to keys. */
  readonly #indexing: [IndexFunction<T>, Map<string, Set<string>>][] = [];

  constructor(indexers: Record<string, IndexFunction<T>> = {}) {
    this.#indexers = { namespace: (o) => [o.metadata?.namespace ?? ""], ...indexers };
    for (const [name, fn] of Object.entries(this.#indexers)) {
      const values = new Map<string, Set<string>>();
      this.#indexes.set(name, values);
      this.#indexing.push([fn, values]);
    }
  }

  /** How many objects it holds. */
  get size(): number {
    return this.#objects.size;
  }

  /** The object of `key` (`namespace/name`, or `name`). */
  get(key: string): T | undefined {
    return this.#objects.get(key);
  }

  /** Whether it holds `key`. */
  has(key: string): boolean {
    return this.#objects.has(key);
  }

  /** Every object. */
  list(): T[] {
    return [...this.#objects.values()];
  }

  /** Every key. */
  keys(): string[] {
    return [...this.#objects.keys()];
  }

  /** The objects that index function `index` files under `value`. */
  byIndex(index: string, value: string): T[] {
    const values = this.#indexes.get(index);
    if (values === undefined) throw new RangeError(`no index named ${JSON.stringify(index)}`);
    return [...(values.get(value) ?? [])].map((key) => this.#objects.get(key)!);
  }

  /** The index names. */
  indexNames(): string[] {
    return Object.keys(this.#indexers);
  }

  /** Stores `object` (replacing the one of its key); returns the one it replaced. */
  set(object: T): T | undefined {
    const key = objectKey(object);
    const old = this.#objects.get(key);
    this.#objects.set(key, object);
    if (old === undefined) this.#index(key, object);
    else this.#reindex(key, old, object);
    return old;
  }

  /** Removes the object of `key`; returns it. */
  delete(key: string): T | undefined {
    const old = this.#objects.get(key);
    if (old === undefined) return undefined;
    this.#unindex(key, old);
    this.#objects.delete(key);
    return old;
  }

  /** Empties it. */
  clear(): void {
    this.#objects.clear();
    for (const values of this.#indexes.values()) values.clear();
  }

  #index(key: string, object: T): void {
    for (const [fn, values] of this.#indexing) {
      for (const value of fn(object)) {
        let keys = values.get(value);
        if (keys === undefined) values.set(value, keys = new Set());
        keys.add(key);
      }
    }
  }

  #unindex(key: string, object: T): void {
    for (const [fn, values] of this.#indexing) {
      for (const value of fn(object)) {
        const keys = values.get(value);
        keys?.delete(key);
        if (keys?.size === 0) values.delete(value);
      }
    }
  }

  /** An object replaced by a new version: only the index values that changed move (most updates change none). */
  #reindex(key: string, old: T, object: T): void {
    for (const [fn, values] of this.#indexing) {
      const before = fn(old);
      const after = fn(object);
      if (before.length === after.length && before.every((value, i) => value === after[i])) continue;
      for (const value of before) {
        const keys = values.get(value);
        keys?.delete(key);
        if (keys?.size === 0) values.delete(value);
      }
      for (const value of after) {
        let keys = values.get(value);
        if (keys === undefined) values.set(value, keys = new Set());
        keys.add(key);
      }
    }
  }
}
