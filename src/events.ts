/**
 * Typed Kubernetes watch events and the minimal object shapes they carry.
 *
 * @module
 */

/**
 * `metadata.ownerReferences[]` of an object.
 *
 * @example
 * ```ts
 * import type { OwnerReference } from "watchwire";
 * import { toWatchEvent } from "watchwire/wire";
 *
 * const event = toWatchEvent(JSON.parse(
 *   '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web-1","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"u1","controller":true}]}}}',
 * ));
 * if (event.type === "ADDED") {
 *   const owner: OwnerReference | undefined = event.object.metadata?.ownerReferences?.find((ref) => ref.controller);
 *   console.log(owner?.kind, owner?.name); // ReplicaSet web
 * }
 * ```
 */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/**
 * `metadata.managedFields[]` of an object.
 *
 * @example
 * ```ts
 * import type { ManagedFieldsEntry } from "watchwire";
 * import { toWatchEvent } from "watchwire/wire";
 *
 * const event = toWatchEvent(JSON.parse(
 *   '{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"web","managedFields":[{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]}}}',
 * ));
 * if (event.type === "MODIFIED") {
 *   const entries: ManagedFieldsEntry[] = event.object.metadata?.managedFields ?? [];
 *   for (const entry of entries) console.log(entry.manager, entry.operation); // kubectl Apply
 * }
 * ```
 */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  /** `null` where the entry's `*metav1.Time` is set to the zero time (Go writes that as null). */
  time?: string | null;
  fieldsType?: string;
  fieldsV1?: unknown;
  subresource?: string;
}

/**
 * `metadata` of every Kubernetes object (`meta/v1.ObjectMeta`).
 *
 * @example
 * ```ts
 * import type { ObjectMeta } from "watchwire";
 * import { JsonWatchEventDecoderStream } from "watchwire/wire";
 *
 * const body = new Blob([
 *   '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web","namespace":"prod","resourceVersion":"7","labels":{"app":"web"}}}}\n',
 * ]).stream();
 * for await (const event of body.pipeThrough(new JsonWatchEventDecoderStream())) {
 *   if (event.type !== "ADDED") continue;
 *   const meta: ObjectMeta = event.object.metadata ?? {};
 *   console.log(`${meta.namespace}/${meta.name}`, meta.labels?.app, meta.resourceVersion); // prod/web web 7
 * }
 * ```
 */
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

/**
 * `metadata` of list objects (`meta/v1.ListMeta`).
 *
 * @example
 * ```ts
 * import type { KubernetesList, ListMeta } from "watchwire";
 *
 * // A list (GET /api/v1/pods) tells where the watch that follows it starts.
 * const list: KubernetesList = await new Response('{"kind":"PodList","metadata":{"resourceVersion":"100"},"items":[]}').json();
 * const meta: ListMeta = list.metadata ?? {};
 * console.log(`/api/v1/pods?watch=1&resourceVersion=${meta.resourceVersion}`); // /api/v1/pods?watch=1&resourceVersion=100
 * ```
 */
export interface ListMeta {
  selfLink?: string;
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/**
 * Any Kubernetes object: `apiVersion`, `kind`, `metadata` and whatever else its kind has.
 *
 * @example
 * ```ts
 * import type { KubernetesObject } from "watchwire";
 * import { JsonWatchEventDecoderStream } from "watchwire/wire";
 *
 * interface ConfigMap extends KubernetesObject {
 *   data?: Record<string, string>;
 * }
 * const body = new Blob(['{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},"data":{"k":"v"}}}\n']).stream();
 * for await (const event of body.pipeThrough(new JsonWatchEventDecoderStream<ConfigMap>())) {
 *   if (event.type === "ADDED") console.log(event.object.kind, event.object.metadata?.name, event.object.data?.k); // ConfigMap cfg v
 * }
 * ```
 */
export interface KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/**
 * A list object (`PodList` and friends).
 *
 * @example
 * ```ts
 * import type { KubernetesList, KubernetesObject } from "watchwire";
 *
 * interface Pod extends KubernetesObject {
 *   spec?: { nodeName?: string };
 * }
 * const list: KubernetesList<Pod> = await new Response(
 *   '{"kind":"PodList","metadata":{"resourceVersion":"100"},"items":[{"metadata":{"name":"a"},"spec":{"nodeName":"n1"}}]}',
 * ).json();
 * for (const pod of list.items) console.log(pod.metadata?.name, pod.spec?.nodeName); // a n1
 * ```
 */
export interface KubernetesList<T extends KubernetesObject = KubernetesObject> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

/**
 * `meta/v1.StatusCause`.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse, type StatusCause } from "watchwire";
 *
 * const response = new Response(
 *   '{"kind":"Status","status":"Failure","reason":"Invalid","code":422,"details":{"causes":[{"reason":"FieldValueInvalid","field":"spec.replicas"}]}}',
 *   { status: 422 },
 * );
 * for await (const event of decodeWatchResponse(response)) {
 *   if (event.type !== "ERROR") continue;
 *   const causes: StatusCause[] = event.object.details?.causes ?? [];
 *   for (const cause of causes) console.log(cause.reason, cause.field); // FieldValueInvalid spec.replicas
 * }
 * ```
 */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/**
 * `meta/v1.StatusDetails`.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse, type StatusDetails } from "watchwire";
 *
 * const response = new Response(
 *   '{"kind":"Status","status":"Failure","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":2}}',
 *   { status: 429 },
 * );
 * for await (const event of decodeWatchResponse(response)) {
 *   if (event.type !== "ERROR") continue;
 *   const details: StatusDetails = event.object.details ?? {};
 *   console.log(event.object.reason, details.retryAfterSeconds); // TooManyRequests 2
 * }
 * ```
 */
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
 *
 * @example
 * ```ts
 * import type { Status } from "watchwire";
 * import { JsonWatchEventDecoderStream } from "watchwire/wire";
 *
 * const body = new Blob([
 *   '{"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}\n',
 * ]).stream();
 * for await (const event of body.pipeThrough(new JsonWatchEventDecoderStream())) {
 *   if (event.type !== "ERROR") continue;
 *   const status: Status = event.object;
 *   console.log(status.code, status.reason, status.code === 410 ? "relist" : "retry"); // 410 Expired relist
 * }
 * ```
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

/**
 * The object of a BOOKMARK event: only its resourceVersion (and a few annotations) is meaningful.
 *
 * @example
 * ```ts
 * import { type BookmarkObject, INITIAL_EVENTS_END_ANNOTATION } from "watchwire";
 * import { JsonWatchEventDecoderStream } from "watchwire/wire";
 *
 * const body = new Blob([
 *   '{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}\n',
 * ]).stream();
 * for await (const event of body.pipeThrough(new JsonWatchEventDecoderStream())) {
 *   if (event.type !== "BOOKMARK") continue;
 *   const bookmark: BookmarkObject = event.object;
 *   console.log(bookmark.metadata.resourceVersion, bookmark.metadata.annotations?.[INITIAL_EVENTS_END_ANNOTATION]); // 12 true
 * }
 * ```
 */
export interface BookmarkObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    resourceVersion: string;
    annotations?: Record<string, string>;
  } & ObjectMeta;
}

/**
 * `ADDED`, `MODIFIED` or `DELETED`: an object changed.
 *
 * @example
 * ```ts
 * import type { ObjectWatchEvent } from "watchwire";
 * import { toWatchEvent } from "watchwire/wire";
 *
 * interface Pod {
 *   metadata?: { name?: string };
 * }
 * const cache = new Map<string, Pod>();
 * function apply(event: ObjectWatchEvent<Pod>): void {
 *   const name = event.object.metadata?.name ?? "";
 *   if (event.type === "DELETED") cache.delete(name);
 *   else cache.set(name, event.object);
 * }
 * const event = toWatchEvent<Pod>(JSON.parse('{"type":"ADDED","object":{"metadata":{"name":"web"}}}'));
 * if (event.type !== "BOOKMARK" && event.type !== "ERROR") apply(event);
 * console.log(cache.has("web")); // true
 * ```
 */
export interface ObjectWatchEvent<T, K extends "ADDED" | "MODIFIED" | "DELETED" = "ADDED" | "MODIFIED" | "DELETED"> {
  type: K;
  object: T;
}

/**
 * `BOOKMARK`: the watch has seen everything up to `object.metadata.resourceVersion`.
 *
 * @example
 * ```ts
 * import type { BookmarkWatchEvent } from "watchwire";
 * import { toWatchEvent } from "watchwire/wire";
 *
 * let resumeFrom = "";
 * function remember(event: BookmarkWatchEvent): void {
 *   resumeFrom = event.object.metadata.resourceVersion;
 * }
 * const event = toWatchEvent(JSON.parse('{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"31"}}}'));
 * if (event.type === "BOOKMARK") remember(event);
 * console.log(resumeFrom); // 31
 * ```
 */
export interface BookmarkWatchEvent {
  type: "BOOKMARK";
  object: BookmarkObject;
}

/**
 * `ERROR`: the server ended the watch with a `Status` (410 `Expired`: relist).
 *
 * @example
 * ```ts
 * import { decodeWatchResponse, type ErrorWatchEvent } from "watchwire";
 *
 * // A response that is not 2xx becomes one ERROR event, its Status made from the HTTP status if the body is not one.
 * for await (const event of decodeWatchResponse(new Response("forbidden", { status: 403 }))) {
 *   if (event.type !== "ERROR") continue;
 *   const error: ErrorWatchEvent = event;
 *   console.log(error.object.code, error.object.reason, error.object.message); // 403 Forbidden forbidden
 * }
 * ```
 */
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

/**
 * The five event types of a Kubernetes watch.
 *
 * @example
 * ```ts
 * import type { WatchEventType } from "watchwire";
 * import { toWatchEvent } from "watchwire/wire";
 *
 * const counts: Partial<Record<WatchEventType, number>> = {};
 * for (const line of ['{"type":"ADDED","object":{}}', '{"type":"MODIFIED","object":{}}', '{"type":"ADDED","object":{}}']) {
 *   const type: WatchEventType = toWatchEvent(JSON.parse(line)).type;
 *   counts[type] = (counts[type] ?? 0) + 1;
 * }
 * console.log(counts.ADDED, counts.MODIFIED, counts.DELETED ?? 0); // 2 1 0
 * ```
 */
export type WatchEventType = WatchEvent["type"];

/**
 * The event types, in the order Kubernetes documents them.
 *
 * @example
 * ```ts
 * import { WATCH_EVENT_TYPES, type WatchEventType } from "watchwire";
 *
 * const isWatchEventType = (s: string): s is WatchEventType => (WATCH_EVENT_TYPES as readonly string[]).includes(s);
 * console.log(WATCH_EVENT_TYPES.join(" ")); // ADDED MODIFIED DELETED BOOKMARK ERROR
 * console.log(isWatchEventType("MODIFIED"), isWatchEventType("SYNC")); // true false
 * ```
 */
export const WATCH_EVENT_TYPES: readonly WatchEventType[] = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"];
