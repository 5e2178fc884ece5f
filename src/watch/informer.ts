/**
 * {@linkcode Informer}: a live cache of one resource, kept by the watch loop ({@linkcode watcher}), that tells its
 * handlers every change once, in order, including what changed while it was away.
 *
 * @module
 */
import type { KubernetesObject } from "../events.ts";
import type { ListWatchSource } from "./list_watch_source.ts";
import { type IndexFunction, objectKey, Store } from "./store.ts";
import { watcher, type WatcherEvent, type WatcherOptions, type WatcherStateName } from "./watcher.ts";

/**
 * What a `delete` handler gets for an object that vanished while the informer was away (found missing by a relist):
 * its last known state, which may not be its final one (client-go's `DeletedFinalStateUnknown`).
 *
 * @example
 * ```ts
 * import type { DeletedFinalStateUnknown } from "watchwire";
 *
 * const gone: DeletedFinalStateUnknown = { finalStateUnknown: true, key: "web/api", object: { metadata: { name: "api" } } };
 * console.log(gone.key); // web/api
 * ```
 */
export interface DeletedFinalStateUnknown<T = KubernetesObject> {
  finalStateUnknown: true;
  key: string;
  object: T;
}

/**
 * An informer's handlers. Each is called once per change, in order; a handler that returns a promise is awaited
 * before the next change (so a saved resourceVersion is always that of a change every handler has seen). A handler
 * that throws is reported to `onError` and the informer goes on.
 *
 * @example
 * ```ts
 * import type { InformerHandlers } from "watchwire";
 *
 * const handlers: InformerHandlers = {
 *   add: (o) => console.log("add", o.metadata?.name),
 *   update: (old, o) => console.log("update", old.metadata?.resourceVersion, "->", o.metadata?.resourceVersion),
 *   delete: (o) => console.log("delete", "finalStateUnknown" in o ? o.key : o.metadata?.name),
 * };
 * handlers.add?.({ metadata: { name: "a" } }); // add a
 * ```
 */
export interface InformerHandlers<T = KubernetesObject> {
  /** Its result is awaited if it is a promise, and otherwise ignored (as for the others). */
  add?(object: T): unknown;
  update?(old: T, object: T): unknown;
  delete?(object: T | DeletedFinalStateUnknown<T>): unknown;
  /**
   * A point worth saving: after a bookmark, and after an initial sync's changes. `resourceVersion` and `snapshot()`
   * are then those of that point, every change before it handled (a state store saves here: `runInformerWithin`).
   * Not a change: not counted in `stats.changes`, not in `changes()`.
   */
  checkpoint?(resourceVersion: string): unknown;
}

/**
 * One change, as {@linkcode Informer.changes} yields them.
 *
 * @example
 * ```ts
 * import type { InformerChange } from "watchwire";
 *
 * const change: InformerChange = { type: "add", object: { metadata: { name: "a" } } };
 * console.log(change.type); // add
 * ```
 */
export type InformerChange<T = KubernetesObject> =
  | { type: "add"; object: T }
  | { type: "update"; old: T; object: T }
  | { type: "delete"; object: T | DeletedFinalStateUnknown<T> };

/**
 * What an informer can be resumed from: the resourceVersion of the last change applied and the objects as they were
 * there.
 *
 * @example
 * ```ts
 * import type { InformerState } from "watchwire";
 *
 * const state: InformerState = { resourceVersion: "1234", objects: [] };
 * console.log(state.resourceVersion); // 1234
 * ```
 */
export interface InformerState<T = KubernetesObject> {
  resourceVersion: string;
  objects: T[];
}

/**
 * Counts of what an informer did, for monitoring and tests.
 *
 * @example
 * ```ts
 * import type { InformerStats } from "watchwire";
 *
 * const stats: InformerStats = { initialSyncs: 1, expired: 0, errors: 0, handlerErrors: 0, changes: 3 };
 * console.log(stats.initialSyncs); // 1
 * ```
 */
export interface InformerStats {
  /** Initial syncs completed (the first, and one per relist). */
  initialSyncs: number;
  /** Times the server no longer had the resourceVersion (410). */
  expired: number;
  /** Failures reported (requests, cut watches, refused watches). */
  errors: number;
  /** Handlers that threw or rejected. */
  handlerErrors: number;
  /** Changes dispatched. */
  changes: number;
}

/**
 * Options of {@linkcode Informer}: the watch loop's, and the store's.
 *
 * @example
 * ```ts
 * import type { InformerOptions } from "watchwire";
 *
 * const options: InformerOptions = {
 *   indexers: { byNode: (pod) => [String((pod as { spec?: { nodeName?: string } }).spec?.nodeName ?? "")] },
 *   transform: (o) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } }),
 *   onError: (e) => console.error(e),
 * };
 * console.log(Object.keys(options.indexers ?? {})); // [ "byNode" ]
 * ```
 */
export interface InformerOptions<T = KubernetesObject> extends Omit<WatcherOptions, "resourceVersion"> {
  /** Indexes of the store, beside `namespace`. */
  indexers?: Record<string, IndexFunction<T>>;
  /** Applied to each object before it is stored and handed to handlers (e.g. to drop `managedFields`). */
  transform?: (object: T) => T;
  /** Every this many ms, each stored object is handed to `update(object, object)` (client-go's resync). Default: never. */
  resyncPeriodMs?: number;
  /** Failures (requests, watches, handlers): reported here, never thrown, and the informer goes on. */
  onError?: (error: unknown) => void;
  /** Start from a saved state: no initial sync while the server still has its resourceVersion. */
  resume?: InformerState<T>;
}

/**
 * A live cache of one resource: the watch loop's events applied to a {@linkcode Store}, and each change handed to
 * every handler once. An initial sync replaces the store whole at its end and tells handlers exactly what changed
 * since the store's last state: `add` for new objects, `update` for changed ones (by resourceVersion), `delete` with
 * {@linkcode DeletedFinalStateUnknown} for vanished ones, nothing for the unchanged. `start()` runs it until the
 * signal given in the options aborts (or `stop()`).
 *
 * @example
 * ```ts
 * import { Informer, type ListWatchSource } from "watchwire";
 *
 * const source: ListWatchSource = {
 *   list: async () => ({ items: [{ metadata: { namespace: "a", name: "x", resourceVersion: "3" } }], resourceVersion: "3" }),
 *   watch: async () => new ReadableStream({ start: (c) => c.close() }),
 * };
 * const informer = new Informer(source, { initialSync: "list" });
 * informer.addHandlers({ add: (o) => console.log("add", o.metadata?.name) }); // add x
 * const running = informer.start();
 * await informer.synced;
 * console.log(informer.store.get("a/x")?.metadata?.resourceVersion); // 3
 * informer.stop();
 * await running;
 * ```
 */
export class Informer<T extends KubernetesObject = KubernetesObject> {
  readonly #source: ListWatchSource<T>;
  readonly #options: InformerOptions<T>;
  readonly #handlers = new Set<InformerHandlers<T>>();
  readonly #stop = new AbortController();
  #store: Store<T>;
  #buffer: T[] | undefined;
  #hasSynced = false;
  #resourceVersion = "";
  #state: WatcherStateName = "Empty";
  #resolveSynced!: () => void;
  readonly #synced: Promise<void>;
  readonly #stats: InformerStats = { initialSyncs: 0, expired: 0, errors: 0, handlerErrors: 0, changes: 0 };

  constructor(source: ListWatchSource<T>, options: InformerOptions<T> = {}) {
    this.#source = source;
    this.#options = options;
    this.#store = new Store<T>(options.indexers);
    this.#synced = new Promise((resolve) => (this.#resolveSynced = resolve));
    if (options.signal?.aborted) this.#stop.abort();
    options.signal?.addEventListener("abort", () => this.#stop.abort(options.signal!.reason), { once: true });
    if (options.resume !== undefined) {
      for (const object of options.resume.objects) this.#store.set(object);
      this.#resourceVersion = options.resume.resourceVersion;
      this.#hasSynced = true;
      this.#state = "InitListed";
      this.#resolveSynced();
    }
  }

  /** The objects, as of {@linkcode resourceVersion}. Replaced whole at the end of each initial sync. */
  get store(): Store<T> {
    return this.#store;
  }

  /** Resolves once the store holds a whole initial sync (at once for a resumed informer). */
  get synced(): Promise<void> {
    return this.#synced;
  }

  /** Whether the store holds a whole initial sync. */
  get hasSynced(): boolean {
    return this.#hasSynced;
  }

  /** The resourceVersion of the last change every handler has seen (or of the last sync or bookmark). */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  /** The watch loop's state. */
  get state(): WatcherStateName {
    return this.#state;
  }

  /** What it did so far. */
  get stats(): Readonly<InformerStats> {
    return this.#stats;
  }

  /** The state to resume from (the resourceVersion of the last change applied, and the objects there). */
  snapshot(): InformerState<T> {
    return { resourceVersion: this.#resourceVersion, objects: this.#store.list() };
  }

  /**
   * Adds handlers; returns what removes them. Handlers added after the initial sync (or to a resumed informer) first
   * get every stored object as an `add` (awaited before the next change), unless `replay` is false: a program resumed
   * from a saved state whose handlers saw those objects in an earlier run wants only the changes since.
   */
  addHandlers(handlers: InformerHandlers<T>, options: { replay?: boolean } = {}): () => void {
    this.#handlers.add(handlers);
    if (this.#hasSynced && handlers.add && options.replay !== false) {
      this.#queue(async () => {
        for (const object of this.#store.list()) await this.#call(handlers, { type: "add", object });
      });
    }
    return () => this.#handlers.delete(handlers);
  }

  /** Handler calls queued outside the loop (a late handler's adds, a resync), run before the next change. */
  #pending: Promise<void> | undefined;

  #queue(work: () => Promise<void>): void {
    const next = (this.#pending ?? Promise.resolve()).then(work);
    this.#pending = next;
    // Nothing pending is the common case, which the loop then checks without an await.
    next.then(() => {
      if (this.#pending === next) this.#pending = undefined;
    });
  }

  /**
   * The changes as an async iterator (from now on; after the initial sync, the stored objects first, as adds). It
   * buffers what its reader has not taken yet; ending the iteration removes it.
   */
  changes(): AsyncIterableIterator<InformerChange<T>> {
    const queue: InformerChange<T>[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    const push = (change: InformerChange<T>) => {
      queue.push(change);
      wake?.();
    };
    const remove = this.addHandlers({
      add: (object) => push({ type: "add", object }),
      update: (old, object) => push({ type: "update", old, object }),
      delete: (object) => push({ type: "delete", object }),
    });
    const stopped = () => {
      ended = true;
      wake?.();
    };
    this.#stop.signal.addEventListener("abort", stopped, { once: true });
    const iterator: AsyncIterableIterator<InformerChange<T>> = {
      next: async () => {
        while (queue.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        if (queue.length > 0) return { done: false, value: queue.shift()! };
        return { done: true, value: undefined };
      },
      return: () => {
        ended = true;
        remove();
        this.#stop.signal.removeEventListener("abort", stopped);
        return Promise.resolve({ done: true, value: undefined });
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /** Stops it: the watch is closed, `start()` resolves. */
  stop(): void {
    this.#stop.abort();
  }

  /** Runs it until stopped. Never rejects for a failure of the cluster or a handler: those go to `onError`. */
  async start(): Promise<void> {
    const resync = this.#options.resyncPeriodMs;
    const timer = resync === undefined ? undefined : setInterval(() => {
      if (!this.#hasSynced) return;
      this.#queue(async () => {
        for (const object of this.#store.list()) await this.#dispatch({ type: "update", old: object, object });
      });
    }, resync);
    try {
      const { indexers: _i, transform: _t, resyncPeriodMs: _r, onError: _e, resume, ...watcherOptions } = this.#options;
      const events = watcher(this.#source, {
        ...watcherOptions,
        signal: this.#stop.signal,
        ...(resume === undefined ? {} : { resourceVersion: resume.resourceVersion }),
      });
      for await (const event of events) {
        while (this.#pending !== undefined) await this.#pending;
        const applying = this.#apply(event);
        if (applying !== undefined) await applying;
      }
    } finally {
      if (timer !== undefined) clearInterval(timer);
      while (this.#pending !== undefined) await this.#pending;
    }
  }

  #report(error: unknown): void {
    try {
      this.#options.onError?.(error);
    } catch {
      // An error handler that throws has nowhere to report to.
    }
  }

  /**
   * Calls a handler; a promise only when the handler returned one (awaited before the next call): handlers that
   * return nothing cost the loop no await.
   */
  #call(handlers: InformerHandlers<T>, change: InformerChange<T>): Promise<void> | undefined {
    let result: unknown;
    try {
      if (change.type === "add") result = handlers.add?.(change.object);
      else if (change.type === "update") result = handlers.update?.(change.old, change.object);
      else result = handlers.delete?.(change.object);
    } catch (error) {
      this.#handlerFailed(error);
      return undefined;
    }
    if (typeof (result as PromiseLike<unknown> | undefined)?.then !== "function") return undefined;
    return Promise.resolve(result).then(() => {}, (error) => this.#handlerFailed(error));
  }

  #handlerFailed(error: unknown): void {
    this.#stats.handlerErrors++;
    this.#report(error);
  }

  async #checkpoint(): Promise<void> {
    for (const handlers of [...this.#handlers]) {
      if (handlers.checkpoint === undefined) continue;
      try {
        await handlers.checkpoint(this.#resourceVersion);
      } catch (error) {
        this.#stats.handlerErrors++;
        this.#report(error);
      }
    }
  }

  /** Hands `change` to every handler, in order; a promise only once a handler returned one. */
  #dispatch(change: InformerChange<T>): Promise<void> | undefined {
    this.#stats.changes++;
    const all = [...this.#handlers];
    for (let i = 0; i < all.length; i++) {
      const waiting = this.#call(all[i], change);
      if (waiting !== undefined) return this.#dispatchAfter(waiting, all, i + 1, change);
    }
    return undefined;
  }

  async #dispatchAfter(
    waiting: Promise<void>,
    all: InformerHandlers<T>[],
    from: number,
    change: InformerChange<T>,
  ): Promise<void> {
    await waiting;
    for (let i = from; i < all.length; i++) await this.#call(all[i], change);
  }

  #transform(object: T): T {
    return this.#options.transform ? this.#options.transform(object) : object;
  }

  /** Applies one event of the watch loop; a promise only when a handler or checkpoint needs waiting for. */
  #apply(event: WatcherEvent<T>): Promise<void> | undefined {
    switch (event.type) {
      case "Apply": {
        const object = this.#transform(event.object);
        const old = this.#store.set(object);
        this.#resourceVersion = event.resourceVersion;
        this.#state = "Watching";
        return this.#dispatch(old === undefined ? { type: "add", object } : { type: "update", old, object });
      }
      case "Delete": {
        const old = this.#store.delete(objectKey(event.object));
        this.#resourceVersion = event.resourceVersion;
        this.#state = "Watching";
        // The deletion of an object the store never had (it came and went while away) is nobody's news.
        return old === undefined
          ? undefined
          : this.#dispatch({ type: "delete", object: this.#transform(event.object) });
      }
      case "InitApply":
        this.#buffer?.push(this.#transform(event.object));
        return undefined;
      default:
        return this.#applyOther(event);
    }
  }

  async #applyOther(event: WatcherEvent<T>): Promise<void> {
    switch (event.type) {
      case "Init":
        this.#state = "InitPage";
        this.#buffer = [];
        return;
      case "InitDone": {
        const next = new Store<T>(this.#options.indexers);
        for (const object of this.#buffer ?? []) next.set(object);
        this.#buffer = undefined;
        const previous = this.#store;
        // Swapped whole: a reader never sees half a sync.
        this.#store = next;
        this.#resourceVersion = event.resourceVersion;
        this.#state = "Watching";
        this.#stats.initialSyncs++;
        const first = !this.#hasSynced;
        this.#hasSynced = true;
        for (const object of next.list()) {
          const old = previous.get(objectKey(object));
          if (old === undefined) await this.#dispatch({ type: "add", object });
          else if (old.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
            await this.#dispatch({ type: "update", old, object });
          }
        }
        for (const key of previous.keys()) {
          if (!next.has(key)) {
            await this.#dispatch({
              type: "delete",
              object: { finalStateUnknown: true, key, object: previous.get(key)! },
            });
          }
        }
        if (first) this.#resolveSynced();
        await this.#checkpoint();
        return;
      }
      case "Bookmark":
        this.#resourceVersion = event.resourceVersion;
        this.#state = "Watching";
        await this.#checkpoint();
        return;
      case "Expired":
        this.#stats.expired++;
        this.#state = "Empty";
        return;
      case "Error":
        this.#stats.errors++;
        this.#state = event.state;
        this.#report(event.error);
        return;
    }
  }
}
