/**
 * Typed Kubernetes watch events and the minimal object shapes they carry.
 *
 * @module
 */

/** `metadata.ownerReferences[]` of an object. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** `metadata.managedFields[]` of an object. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
  subresource?: string;
}

/** `metadata` of every Kubernetes object (`meta/v1.ObjectMeta`). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  selfLink?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string | null;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

/** `metadata` of list objects (`meta/v1.ListMeta`). */
export interface ListMeta {
  selfLink?: string;
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** Any Kubernetes object: `apiVersion`, `kind`, `metadata` and whatever else its kind has. */
export interface KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** A list object (`PodList` and friends). */
export interface KubernetesList<T extends KubernetesObject = KubernetesObject> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

/** `meta/v1.StatusCause`. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** `meta/v1.StatusDetails`. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/**
 * `meta/v1.Status`: what an `ERROR` event carries, e.g. `{ code: 410, reason: "Expired" }` when the watch's
 * resourceVersion is too old and the client must relist.
 */
export interface Status {
  apiVersion?: string;
  kind?: "Status" | string;
  metadata?: ListMeta;
  status?: "Success" | "Failure" | string;
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

/**
 * The annotation a BOOKMARK carries at the end of the initial events of a `sendInitialEvents` watch.
 *
 * @example
 * ```ts
 * import { INITIAL_EVENTS_END_ANNOTATION, type WatchEvent } from "watchwire";
 *
 * const event: WatchEvent = {
 *   type: "BOOKMARK",
 *   object: { metadata: { resourceVersion: "42", annotations: { [INITIAL_EVENTS_END_ANNOTATION]: "true" } } },
 * };
 * console.log(event.type === "BOOKMARK" && event.object.metadata.annotations?.[INITIAL_EVENTS_END_ANNOTATION]); // true
 * ```
 */
export const INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end";

/** The object of a BOOKMARK event: only its resourceVersion (and a few annotations) is meaningful. */
export interface BookmarkObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    resourceVersion: string;
    annotations?: Record<string, string>;
  } & ObjectMeta;
}

/** `ADDED`, `MODIFIED` or `DELETED`: an object changed. */
export interface ObjectWatchEvent<T, K extends "ADDED" | "MODIFIED" | "DELETED" = "ADDED" | "MODIFIED" | "DELETED"> {
  type: K;
  object: T;
}

/** `BOOKMARK`: the watch has seen everything up to `object.metadata.resourceVersion`. */
export interface BookmarkWatchEvent {
  type: "BOOKMARK";
  object: BookmarkObject;
}

/** `ERROR`: the server ended the watch with a `Status` (410 `Expired`: relist). */
export interface ErrorWatchEvent {
  type: "ERROR";
  object: Status;
}

/**
 * One event of a Kubernetes watch, discriminated on `type`.
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "watchwire";
 *
 * interface Pod { metadata?: { name?: string; resourceVersion?: string }; spec?: unknown }
 *
 * function describe(event: WatchEvent<Pod>): string {
 *   switch (event.type) {
 *     case "ADDED":
 *     case "MODIFIED":
 *     case "DELETED":
 *       return `${event.type} ${event.object.metadata?.name}`;
 *     case "BOOKMARK":
 *       return `at ${event.object.metadata.resourceVersion}`;
 *     case "ERROR":
 *       return `error ${event.object.code} ${event.object.reason}`;
 *   }
 * }
 * console.log(describe({ type: "ERROR", object: { code: 410, reason: "Expired" } }));
 * ```
 */
export type WatchEvent<T = KubernetesObject> =
  | ObjectWatchEvent<T, "ADDED">
  | ObjectWatchEvent<T, "MODIFIED">
  | ObjectWatchEvent<T, "DELETED">
  | BookmarkWatchEvent
  | ErrorWatchEvent;

/** The five event types of a Kubernetes watch. */
export type WatchEventType = WatchEvent["type"];

/** The event types, in the order Kubernetes documents them. */
export const WATCH_EVENT_TYPES: readonly WatchEventType[] = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"];
