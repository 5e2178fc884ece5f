/**
 * How the decoders (Kubernetes protobuf, etcd, Kubernetes CBOR) make the arrays, objects and events they return: in
 * forms that carry no V8 allocation site, so that V8 never pretenures them.
 *
 * V8 tracks array literals (`[v]`, `[]`) and object literals with properties (`{ type, object }`) by allocation site:
 * when most objects of a site survive young-generation collections, as when a caller keeps every decoded object of an
 * initial list, V8 allocates that site's later objects directly in the old generation ("pretenuring"), and may not go
 * back when they stop surviving. Old-generation objects cost more to make and to fill field by field (each store goes
 * through the write barrier) and are freed only by full collections, so after an informer's initial sync every later
 * decoding is slower, whether or not its objects are kept. `{}` and `new Array()` carry no allocation site that V8
 * pretenures, and cost the same as literals. What it gives up: where every decoded object is kept, pretenuring saves
 * copying them out of the young generation.
 * Kept: decoding after a sync whose objects are kept (bench/RESULTS.md §11, "What each optimisation mechanism buys").
 *
 * Internal: used by the generated decoders (through `kubernetes/generated_runtime.ts`), the Kubernetes object and frame readers,
 * the lazy properties, the etcd decoder and the Kubernetes CBOR decoder.
 *
 * @module
 */
import type { WatchEvent } from "../events.ts";
import type { JsonObject } from "./kubernetes/registry.ts";

/** A new array holding `v`: what `[v]` makes, without its allocation site. */
export function listOf(v: unknown): unknown[] {
  // Not `[v]`: see the module's comment.
  const a = new Array<unknown>();
  a.push(v);
  return a;
}

/** A new empty array: what `[]` makes, without its allocation site. */
export function emptyList<T = unknown>(): T[] {
  return new Array<T>();
}

/** A new object whose first properties are `kind` and `apiVersion` (the order the API server writes them in). */
export function objectOfKind(kind: string, apiVersion: string): JsonObject {
  const o: JsonObject = {};
  o.kind = kind;
  o.apiVersion = apiVersion;
  return o;
}

/** A new watch event `{ type, object }`. */
export function watchEventOf(type: WatchEvent<unknown>["type"], object: unknown): WatchEvent<unknown> {
  const event = {} as WatchEvent<unknown>;
  event.type = type;
  event.object = object;
  return event;
}
