/**
 * {@linkcode watcher}: the watch loop, an explicit state machine over a {@linkcode ListWatchSource}: an initial sync
 * (a streaming list, or a paginated list then a watch), then watches resumed from the last resourceVersion, a relist
 * when the server no longer has it, backoff on failures. It never ends by itself: only its signal stops it.
 *
 * @module
 */
import type { KubernetesObject, Status, WatchEvent } from "../events.ts";
import { Backoff, type BackoffOptions } from "./backoff.ts";
import type { ListWatchSource } from "./list_watch_source.ts";

/**
 * The watch loop's states (kube-rs's names):
 * - `Empty`: nothing synced; the next step starts an initial sync.
 * - `InitPage`: a paginated list is being read.
 * - `InitialWatch`: a streaming list is being read, up to its `k8s.io/initial-events-end` bookmark.
 * - `InitListed`: synced at a resourceVersion, no watch open: the next step opens one from it.
 * - `Watching`: a watch is open and its events are applied.
 *
 * @example
 * ```ts
 * import type { WatcherStateName } from "watchwire";
 *
 * const synced = (state: WatcherStateName) => state === "InitListed" || state === "Watching";
 * console.log(synced("InitPage")); // false
 * ```
 */
export type WatcherStateName = "Empty" | "InitPage" | "InitialWatch" | "InitListed" | "Watching";

/**
 * What the watch loop says, in order. An initial sync is `Init`, an `InitApply` per object, `InitDone`: a store
 * replaces its contents with those objects at `InitDone`, whole (a failed sync starts again with `Init`). Then
 * `Apply` and `Delete` per change, `Bookmark` when the server says how far it got. `Expired`: the server no longer has
 * the resourceVersion (410), a new initial sync follows. `Error`: a failure, retried after `retryInMs`.
 *
 * @example
 * ```ts
 * import type { WatcherEvent } from "watchwire";
 *
 * function describe(event: WatcherEvent): string {
 *   switch (event.type) {
 *     case "Apply":
 *     case "Delete":
 *       return `${event.type} ${event.object.metadata?.name} at ${event.resourceVersion}`;
 *     case "Error":
 *       return `retry in ${event.retryInMs} ms: ${event.error}`;
 *     default:
 *       return event.type;
 *   }
 * }
 * console.log(describe({ type: "InitDone", resourceVersion: "9" })); // InitDone
 * ```
 */
export type WatcherEvent<T = KubernetesObject> =
  | { type: "Init" }
  | { type: "InitApply"; object: T }
  | { type: "InitDone"; resourceVersion: string }
  | { type: "Apply"; object: T; resourceVersion: string }
  | { type: "Delete"; object: T; resourceVersion: string }
  | { type: "Bookmark"; resourceVersion: string }
  | { type: "Expired"; status: Status }
  | { type: "Error"; error: unknown; retryInMs: number; state: WatcherStateName };

/**
 * Options of {@linkcode watcher}.
 *
 * @example
 * ```ts
 * import type { WatcherOptions } from "watchwire";
 *
 * // A paginated list then a watch, never a streaming list; resume from a saved resourceVersion.
 * const options: WatcherOptions = { initialSync: "list", resourceVersion: "12345" };
 * console.log(options.initialSync); // list
 * ```
 */
export interface WatcherOptions {
  /**
   * How the initial sync is made: `"auto"` (the default) a streaming list, and a paginated list from then on if the
   * server refuses it (as client-go falls back); `"streaming"` always a streaming list; `"list"` always a list.
   */
  initialSync?: "auto" | "streaming" | "list";
  /**
   * Resume: start synced at this resourceVersion (the store holds the objects as they were there), with a watch from
   * it and no initial sync, unless the server no longer has it (then `Expired` and a relist).
   */
  resourceVersion?: string;
  /** Each watch's `timeoutSeconds`: a random whole number in [300, 600] by default (client-go's). */
  timeoutSeconds?: () => number;
  /** The backoff after failures, or its options (800 ms doubling up to 30 s, reset after 2 healthy minutes). */
  backoff?: Backoff | BackoffOptions;
  /**
   * A watch that gives no event (bookmarks count) for this long is closed and opened again: a stalled connection. So
   * is one whose response does not come within it (its request aborted). Default: its `timeoutSeconds` plus 30 s (the
   * server ends a healthy one by then). Only the time waiting for the server counts, not the time the loop's consumer
   * (a slow handler) takes. The cluster's `informer()` gives the same limit to its list pages (`list()`'s
   * `idleTimeoutMs`: no response, or no byte of the body, for this long is a `TIMEOUT`).
   */
  idleTimeoutMs?: number;
  /** Stops the loop: the watch is closed and the iteration ends. */
  signal?: AbortSignal;
  /** Called while a paginated initial list reads pages, with the number of objects so far. */
  onListProgress?(objects: number): void;
  /** Waits (tests pass a fake clock): resolves after `ms`, or rejects when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * The annotation of the bookmark that ends a streaming list's initial events.
 *
 * @example
 * ```ts
 * import { INITIAL_EVENTS_END } from "watchwire";
 *
 * const bookmark = { metadata: { resourceVersion: "7", annotations: { [INITIAL_EVENTS_END]: "true" } } };
 * console.log(bookmark.metadata.annotations[INITIAL_EVENTS_END]); // true
 * ```
 */
export const INITIAL_EVENTS_END = "k8s.io/initial-events-end";

function sleepFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}

const randomTimeout = () => 300 + Math.floor(Math.random() * 301);

function statusOf(event: WatchEvent<unknown>): Status | undefined {
  return event.type === "ERROR" ? event.object : undefined;
}

/** The server no longer has the resourceVersion: 410 Gone / Expired. */
function isExpired(status: Status): boolean {
  return status.code === 410 || status.reason === "Expired" || status.reason === "Gone";
}

/** The resourceVersion is newer than the server's (a watch cache behind etcd): relist, as client-go does. */
function isTooLarge(status: Status): boolean {
  return status.details?.causes?.some((c) => c.reason === "ResourceVersionTooLarge") === true ||
    /too large resource version/i.test(status.message ?? "");
}

/** A streaming list refused: the WatchList feature off, or a server from before it. */
function refusesStreamingList(status: Status): boolean {
  return (status.code === 422 || status.code === 400 || status.code === 403 || status.code === 501) &&
    /sendInitialEvents|resourceVersionMatch|watch-?list/i.test(status.message ?? "");
}

/**
 * A watch refused or ended by the server with a Status (an ERROR event), as the informer reports it.
 *
 * @example
 * ```ts
 * import { WatchStatusError } from "watchwire";
 *
 * const error = new WatchStatusError({ kind: "Status", code: 500, reason: "InternalError", message: "etcd" }, "watch");
 * console.log(error.message, error.status.code); // watch: 500 InternalError etcd 500
 * ```
 */
export class WatchStatusError extends Error {
  /** The server's Status. */
  readonly status: Status;
  constructor(status: Status, what: string) {
    super(`${what}: ${status.code ?? ""} ${status.reason ?? ""} ${status.message ?? ""}`.replace(/\s+/g, " ").trim());
    this.name = "WatchStatusError";
    this.status = status;
  }
}

/**
 * An open watch went silent (no event, no bookmark) for longer than it should: closed and opened again.
 *
 * @example
 * ```ts
 * import { WatchIdleError } from "watchwire";
 *
 * console.log(new WatchIdleError(330000).message); // the watch gave no event for 330000 ms: closed, to be opened again
 * ```
 */
export class WatchIdleError extends Error {
  constructor(idleTimeoutMs: number) {
    super(`the watch gave no event for ${idleTimeoutMs} ms: closed, to be opened again`);
    this.name = "WatchIdleError";
  }
}

/**
 * The watch loop: yields {@linkcode WatcherEvent}s for as long as it is iterated and its signal is not aborted. It
 * asks for bookmarks, tracks the resourceVersion of every event, re-watches from it when a watch ends (no relist),
 * relists when it expired (410) or is too large, honours a 429's retry-after, and waits with backoff (full jitter)
 * after failures, which it reports as `Error` events and never ends on.
 *
 * @example
 * ```ts
 * import { watcher, type ListWatchSource } from "watchwire";
 *
 * const source: ListWatchSource = {
 *   list: async () => ({ items: [{ metadata: { name: "a", resourceVersion: "5" } }], resourceVersion: "5" }),
 *   watch: async () => new ReadableStream({ start: (c) => c.close() }),
 * };
 * const stop = new AbortController();
 * const types: string[] = [];
 * for await (const event of watcher(source, { initialSync: "list", signal: stop.signal })) {
 *   types.push(event.type);
 *   if (event.type === "InitDone") stop.abort();
 * }
 * console.log(types); // [ "Init", "InitApply", "InitDone" ]
 * ```
 */
export async function* watcher<T extends KubernetesObject = KubernetesObject>(
  source: ListWatchSource<T>,
  options: WatcherOptions = {},
): AsyncGenerator<WatcherEvent<T>, void, undefined> {
  const signal = options.signal ?? new AbortController().signal;
  const sleep = options.sleep ?? sleepFor;
  const backoff = options.backoff instanceof Backoff ? options.backoff : new Backoff(options.backoff);
  const nextTimeoutSeconds = options.timeoutSeconds ?? randomTimeout;
  let streaming = options.initialSync !== "list";
  let state: WatcherStateName = options.resourceVersion === undefined ? "Empty" : "InitListed";
  let resourceVersion = options.resourceVersion ?? "";
  let reader: ReadableStreamDefaultReader<WatchEvent<T>> | undefined;
  /** The `timeoutSeconds` of the watch in hand. */
  let timeoutSeconds = 0;
  let opened = 0;
  let eventsThisWatch = 0;

  /** Ends the watch in hand: its request (its own signal, aborted with the loop's too) and its body. */
  let release: (() => void) | undefined;
  const close = () => {
    reader?.cancel().catch(() => {});
    reader = undefined;
    release?.();
    release = undefined;
  };
  /** After a failure: an Error event, then the wait (at least `atLeastMs`). */
  async function* fail(error: unknown, atLeastMs = 0): AsyncGenerator<WatcherEvent<T>> {
    const retryInMs = Math.max(backoff.next(), atLeastMs);
    yield { type: "Error", error, retryInMs, state };
    await sleep(retryInMs, signal);
  }
  const open = async (request: { resourceVersion?: string; sendInitialEvents?: boolean }) => {
    release?.();
    timeoutSeconds = nextTimeoutSeconds();
    // A server that never answers is as stalled as one that stops sending: given up after the idle time too (a
    // WatchIdleError, thrown: the same state again after a wait), its request aborted.
    const own = new AbortController();
    // The loop's abort also ends a pending read (a source may not end its stream on the signal).
    const stop = () => {
      own.abort(signal.reason);
      reader?.cancel().catch(() => {});
    };
    signal.addEventListener("abort", stop, { once: true });
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    release = () => {
      signal.removeEventListener("abort", stop);
      clearTimeout(watchdog);
      own.abort();
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unanswered = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WatchIdleError(watchIdleTimeoutMs())), watchIdleTimeoutMs());
    });
    try {
      const stream = await Promise.race([
        source.watch({ ...request, timeoutSeconds, signal: own.signal }),
        unanswered,
      ]);
      reader = stream.getReader();
    } finally {
      clearTimeout(timer);
    }
    opened = Date.now();
    eventsThisWatch = 0;
    idle = false;
    // One timer per watch, not one per read (a timer per event costs the loop much of its speed): when it fires, a
    // read waiting for the idle time has its reader cancelled, which ends the read, and `idle` says why; otherwise it
    // is set again for when the read in progress (or the next) would reach the idle time. Time spent in the loop's
    // consumer (a slow handler) is not the server's silence, and does not count.
    const idleTimeoutMs = watchIdleTimeoutMs();
    const current = reader;
    const check = () => {
      const waited = readingSince === 0 ? 0 : Date.now() - readingSince;
      if (waited >= idleTimeoutMs) {
        idle = true;
        current.cancel().catch(() => {});
      } else {
        watchdog = setTimeout(check, idleTimeoutMs - waited);
      }
    };
    watchdog = setTimeout(check, idleTimeoutMs);
  };
  /** When the read in progress began (0: none in progress). */
  let readingSince = 0;
  let idle = false;
  /** The idle timeout of the watch in hand: `options.idleTimeoutMs`, or by default its `timeoutSeconds` plus 30 s. */
  const watchIdleTimeoutMs = () => options.idleTimeoutMs ?? (timeoutSeconds + 30) * 1000;
  const retryAfterMs = (status: Status) => (status.details?.retryAfterSeconds ?? 0) * 1000;

  try {
    while (!signal.aborted) {
      try {
        switch (state) {
          case "Empty": {
            if (streaming) {
              await open({ sendInitialEvents: true });
              yield { type: "Init" };
              state = "InitialWatch";
            } else {
              state = "InitPage";
            }
            break;
          }

          case "InitPage": {
            yield { type: "Init" };
            const listed = await source.list({
              signal,
              ...(options.onListProgress ? { onListProgress: options.onListProgress } : {}),
            });
            for (const object of listed.items) yield { type: "InitApply", object };
            resourceVersion = listed.resourceVersion;
            yield { type: "InitDone", resourceVersion };
            state = "InitListed";
            break;
          }

          case "InitListed": {
            await open({ resourceVersion });
            state = "Watching";
            break;
          }

          case "InitialWatch":
          case "Watching": {
            readingSince = Date.now();
            let read: ReadableStreamReadResult<WatchEvent<T>>;
            try {
              read = await reader!.read();
            } finally {
              readingSince = 0;
            }
            if (signal.aborted) return;
            if (idle) {
              close();
              state = state === "Watching" ? "InitListed" : "Empty";
              yield* fail(new WatchIdleError(watchIdleTimeoutMs()));
              break;
            }
            if (read.done) {
              reader = undefined;
              if (state === "InitialWatch") {
                // Ended before its initial-events-end bookmark: the sync is not whole.
                state = "Empty";
                yield* fail(new Error("the streaming list ended before its initial-events-end bookmark"));
              } else {
                state = "InitListed";
                // A watch the server ends at once, with nothing in it, again and again: back off.
                if (eventsThisWatch === 0 && Date.now() - opened < 1000) {
                  yield* fail(new Error("the watch ended at once, with no event"));
                }
              }
              break;
            }
            eventsThisWatch++;
            const event = read.value;
            const status = statusOf(event as WatchEvent<unknown>);
            if (status !== undefined) {
              close();
              if (state === "InitialWatch" && options.initialSync !== "streaming" && refusesStreamingList(status)) {
                // The server does not do streaming lists: lists from now on.
                streaming = false;
                state = "Empty";
                yield {
                  type: "Error",
                  error: new WatchStatusError(status, "streaming list refused, listing"),
                  retryInMs: 0,
                  state,
                };
              } else if (isExpired(status)) {
                state = "Empty";
                yield { type: "Expired", status };
              } else if (isTooLarge(status)) {
                state = "Empty";
                yield* fail(new WatchStatusError(status, "resourceVersion too large, relisting"));
              } else {
                state = state === "Watching" ? "InitListed" : "Empty";
                yield* fail(new WatchStatusError(status, "watch"), retryAfterMs(status));
              }
              break;
            }
            if (state === "InitialWatch") {
              if (event.type === "BOOKMARK") {
                const metadata = (event.object as KubernetesObject).metadata;
                if (metadata?.annotations?.[INITIAL_EVENTS_END] === "true") {
                  resourceVersion = metadata.resourceVersion ?? resourceVersion;
                  yield { type: "InitDone", resourceVersion };
                  state = "Watching";
                }
              } else if (event.type === "ADDED" || event.type === "MODIFIED") {
                yield { type: "InitApply", object: event.object as T };
              }
              break;
            }
            const rv = (event.object as KubernetesObject).metadata?.resourceVersion ?? resourceVersion;
            resourceVersion = rv;
            if (event.type === "BOOKMARK") yield { type: "Bookmark", resourceVersion: rv };
            else if (event.type === "DELETED") yield { type: "Delete", object: event.object as T, resourceVersion: rv };
            else yield { type: "Apply", object: event.object as T, resourceVersion: rv };
            break;
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        close();
        // A request that failed (the network, a refused list) or a watch cut mid-body: the same state again.
        if (state === "InitPage" || state === "InitialWatch") state = "Empty";
        else if (state === "Watching") state = "InitListed";
        const status = (error as { status?: number }).status;
        try {
          yield* fail(error, status === 429 ? 1000 : 0);
        } catch (e) {
          if (signal.aborted) return;
          throw e;
        }
      }
    }
  } finally {
    close();
  }
}
