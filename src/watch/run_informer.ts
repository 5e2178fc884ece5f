/**
 * {@linkcode runInformerWithin}: an informer run for a time budget (an edge function's request, a cron job's slot),
 * its state saved at each checkpoint and at the end, so that the next run resumes where this one stopped.
 *
 * @module
 */
import type { KubernetesObject } from "../events.ts";
import type { Informer, InformerState } from "./informer.ts";
import { saveInformerState, type StateStore } from "./state_store.ts";

/**
 * Options of {@linkcode runInformerWithin}: the budget (`budgetMs` or `deadline`), and where the state goes.
 *
 * @example
 * ```ts
 * import { memoryStateStore, type RunInformerOptions } from "watchwire";
 *
 * // A Worker request with 30 s of wall time: stop after 25 s, keep 2 s of it for the last save.
 * const options: RunInformerOptions = { budgetMs: 25_000, reserveMs: 2_000, store: memoryStateStore(), key: "pods" };
 * console.log(options.budgetMs); // 25000
 * ```
 */
export interface RunInformerOptions {
  /** How long the run may take, from the call, in ms. One of `budgetMs` and `deadline` is needed. */
  budgetMs?: number;
  /** When the run must be over, in ms since the epoch (as `Date.now()`); the earlier of the two when both are given. */
  deadline?: number;
  /**
   * How much of the budget is kept for the end (the last change's handlers, the last save): the informer is stopped
   * this long before the deadline. Default: a fifth of the budget, at most 1000 ms.
   */
  reserveMs?: number;
  /** Where the state is saved (at each checkpoint and at the end), under `key`. Without it, nothing is saved. */
  store?: StateStore;
  /** The state's key in `store`. Default `"informer"`. */
  key?: string;
  /** Ends the run early (the state is saved as at the deadline). */
  signal?: AbortSignal;
  /** The clock (tests pass their own): `Date.now`. */
  now?: () => number;
}

/**
 * What {@linkcode runInformerWithin} did.
 *
 * @example
 * ```ts
 * import type { InformerRunResult } from "watchwire";
 *
 * const result: InformerRunResult = { state: { resourceVersion: "9", objects: [] }, checkpoints: 1, ended: "budget", bytes: 40 };
 * console.log(result.ended); // budget
 * ```
 */
export interface InformerRunResult<T = KubernetesObject> {
  /**
   * The state at the end: the resourceVersion of the last change applied (every handler done with it), and the
   * objects there. `undefined` if the informer never synced (nothing to resume from; nothing saved).
   */
  state: InformerState<T> | undefined;
  /** Times the state was saved at a checkpoint (a bookmark, an initial sync's end) during the run, the end not counted. */
  checkpoints: number;
  /** Why it ended: the budget ran out, or the signal aborted. */
  ended: "budget" | "signal";
  /** The size of the last state saved, in bytes (0 if nothing was saved). */
  bytes: number;
}

/**
 * Runs `informer` (a new one, not started: build it with `resume: await loadInformerState(store, key)` to go on from
 * the last run, and add its handlers with `{ replay: false }` to hear only of changes since) until `reserveMs` before the deadline, then stops it, waits for the change being handled to finish,
 * saves its state and returns it. During the run the state is saved at each checkpoint (each bookmark, and the end of
 * an initial sync: see the `checkpoint` handler), so a run cut short by its platform still leaves a recent state.
 *
 * The state saved is always the informer's own after a whole change (its `resourceVersion` is that of the last change
 * every handler has seen), so a run resumed from it sees every later change once: none lost, none again. While the
 * server still has that resourceVersion the next run needs no initial sync (a watch from it); once it has not (410
 * Gone, after etcd's compaction), it relists and its handlers get what changed meanwhile (`add`, `update`, `delete`
 * with `DeletedFinalStateUnknown`). Handlers should be quick: the budget cannot cut one short.
 *
 * @example
 * ```ts
 * import { Informer, type ListWatchSource, loadInformerState, memoryStateStore, runInformerWithin } from "watchwire";
 *
 * // A cluster stand-in with two ConfigMaps at resourceVersion 10, and watches that stay open with no event.
 * const source: ListWatchSource = {
 *   list: async () => ({
 *     items: ["a", "b"].map((name) => ({ metadata: { namespace: "web", name, resourceVersion: "10" } })),
 *     resourceVersion: "10",
 *   }),
 *   watch: async ({ signal }) => new ReadableStream({ start: (c) => signal.addEventListener("abort", () => c.close()) }),
 * };
 * const store = memoryStateStore();
 * for (const run of [1, 2]) {
 *   const informer = new Informer(source, { initialSync: "list", resume: await loadInformerState(store, "cms") });
 *   // replay: false, so that run 2 is not told again of the objects run 1 saw (its store has them).
 *   informer.addHandlers({ add: (o) => console.log(run, "add", o.metadata?.name) }, { replay: false }); // 1 add a, 1 add b
 *   const result = await runInformerWithin(informer, { budgetMs: 200, store, key: "cms" });
 *   console.log(run, result.state?.resourceVersion, informer.stats.initialSyncs); // 1 10 1, then 2 10 0
 * }
 * ```
 */
export async function runInformerWithin<T extends KubernetesObject = KubernetesObject>(
  informer: Informer<T>,
  options: RunInformerOptions,
): Promise<InformerRunResult<T>> {
  const now = options.now ?? Date.now;
  const start = now();
  if (options.budgetMs === undefined && options.deadline === undefined) {
    throw new TypeError("runInformerWithin needs budgetMs or deadline");
  }
  const deadline = Math.min(
    options.deadline ?? Infinity,
    options.budgetMs === undefined ? Infinity : start + options.budgetMs,
  );
  const reserve = options.reserveMs ?? Math.min(1000, Math.max(0, deadline - start) / 5);
  const key = options.key ?? "informer";
  const store = options.store;
  let checkpoints = 0;
  let bytes = 0;
  let state: InformerState<T> | undefined;
  let ended: "budget" | "signal" = "budget";

  const save = async () => {
    // Never synced: there is nothing to resume from.
    if (!informer.hasSynced) return;
    state = informer.snapshot();
    if (store !== undefined) bytes = await saveInformerState(store, key, state);
  };
  const remove = informer.addHandlers({
    checkpoint: async () => {
      await save();
      if (store !== undefined) checkpoints++;
    },
  });
  const stop = () => {
    ended = "signal";
    informer.stop();
  };
  const timer = setTimeout(() => informer.stop(), Math.max(0, deadline - reserve - now()));
  if (options.signal?.aborted) stop();
  options.signal?.addEventListener("abort", stop, { once: true });
  try {
    await informer.start();
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", stop);
    remove();
  }
  await save();
  return { state, checkpoints, ended, bytes };
}
