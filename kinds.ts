/**
 * watchwire/kinds: TypeScript types of every built-in Kubernetes kind (k8s.io/api v0.37.2), generated from the Go
 * types by `scripts/gen-kinds.ts`, for `decodeWatchResponse<Pod>(...)` and friends. Types only: importing them adds
 * nothing to a bundle.
 *
 * Each type says what Go's `encoding/json` writes, which is what the API server sends and what watchwire's protobuf
 * decoders give: the JSON field names; a field is optional only where Go can leave it out (`omitempty`, `omitzero`)
 * and admits `null` where Go can write one (a nil slice, map or pointer without `omitempty`, a zero `Time`); a kind's
 * `apiVersion` and `kind` are literal types, set in what a watch sends, optional inside another object
 * ({@linkcode Nested}: a List's `items`). `IntOrString` is `number | string`, `Quantity`, `Time` and `MicroTime` are
 * strings, `[]byte` a base64 string, `RawExtension` `unknown`.
 *
 * Every group/version is a namespace named after its Go package (`core_v1`, `apps_v1`, `apps_v1beta1`, ...), and each
 * name is also exported flat from the group/version that ranks first (a kind before a type of the same name that is
 * not one, then GA before beta before alpha, the higher version first, core before the named groups): `Pod` is
 * `core_v1.Pod`, `Deployment` `apps_v1.Deployment`.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse } from "watchwire";
 * import type { apps_v1beta2, Deployment, Pod } from "watchwire/kinds";
 *
 * const pods = new Response(
 *   '{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"app","image":"nginx:1.29"}]},"status":{}}}\n',
 *   { headers: { "content-type": "application/json" } },
 * );
 * const [added] = await Array.fromAsync(decodeWatchResponse<Pod>(pods));
 * // spec.containers is null in Go's JSON of a Pod without containers (a BOOKMARK's): hence the ?.
 * if (added.type === "ADDED") console.log(added.object.metadata.name, added.object.spec.containers?.[0].image); // web nginx:1.29
 * // Every version, by its Go package's name: apps/v1beta2's Deployment beside apps/v1's.
 * const deployments = new Response(
 *   '{"type":"MODIFIED","object":{"apiVersion":"apps/v1beta2","kind":"Deployment","metadata":{"name":"api"},"spec":{"replicas":3}}}\n',
 *   { headers: { "content-type": "application/json" } },
 * );
 * const [modified] = await Array.fromAsync(decodeWatchResponse<Deployment | apps_v1beta2.Deployment>(deployments));
 * if (modified.type === "MODIFIED") console.log(modified.object.apiVersion, modified.object.spec.replicas); // apps/v1beta2 3
 * ```
 *
 * @module
 */
export type * from "./src/kinds/index.ts";
