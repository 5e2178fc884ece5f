/**
 * {@linkcode ListWatchSource}: what the watch loop needs of a cluster, a paginated list and a watch of one resource.
 * Cluster access provides one (`resourceSource`); tests and other transports provide their own.
 *
 * @module
 */
import type { KubernetesObject, WatchEvent } from "../events.ts";

/**
 * A list request of the watch loop: everything, paginated by the source.
 *
 * @example
 * ```ts
 * import type { SourceListRequest } from "watchwire";
 *
 * const request: SourceListRequest = { signal: new AbortController().signal };
 * console.log(request.resourceVersion); // undefined
 * ```
 */
export interface SourceListRequest {
  /** `undefined`: the newest state (a quorum read). */
  resourceVersion?: string;
  signal: AbortSignal;
  /** Called as pages arrive, with the number of objects so far: the watch loop's `onListProgress`. */
  onListProgress?: (objects: number) => void;
}

/**
 * A watch request of the watch loop. Bookmarks are always asked for.
 *
 * @example
 * ```ts
 * import type { SourceWatchRequest } from "watchwire";
 *
 * const request: SourceWatchRequest = { sendInitialEvents: true, timeoutSeconds: 300, signal: new AbortController().signal };
 * console.log(request.sendInitialEvents); // true
 * ```
 */
export interface SourceWatchRequest {
  /** Where to start: the last resourceVersion seen; absent for a streaming list of the newest state. */
  resourceVersion?: string;
  /** A streaming list: the current objects as ADDED events, then the bookmark annotated `k8s.io/initial-events-end`. */
  sendInitialEvents?: boolean;
  /** How long the server keeps the watch open. */
  timeoutSeconds: number;
  signal: AbortSignal;
}

/**
 * A list and a watch of one resource (one namespace or all, with the same selectors for both).
 *
 * @example
 * ```ts
 * import type { ListWatchSource } from "watchwire";
 *
 * // A source with no objects whose watches end at once (a test double).
 * const empty: ListWatchSource = {
 *   list: async () => ({ items: [], resourceVersion: "1" }),
 *   watch: async () => new ReadableStream({ start: (c) => c.close() }),
 * };
 * console.log((await empty.list({ signal: new AbortController().signal })).resourceVersion); // 1
 * ```
 */
export interface ListWatchSource<T = KubernetesObject> {
  /** Every object and the list's resourceVersion; a failed request rejects (with the HTTP status if there was one). */
  list(request: SourceListRequest): Promise<{ items: T[]; resourceVersion: string }>;
  /** The events of one watch; a refused request is one ERROR event (its Status), as on the wire. */
  watch(request: SourceWatchRequest): Promise<ReadableStream<WatchEvent<T>>>;
}
