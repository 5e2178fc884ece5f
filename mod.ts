/**
 * watchwire: Kubernetes (and etcd) watch traffic to typed watch events, with Web Streams, in any JavaScript runtime.
 *
 * This entry point is what a program that watches a cluster needs: cluster access (kubeconfig, `connectCluster`,
 * `list`, `watch`, `informer`), the watch loop and the informer with its store and state stores,
 * {@linkcode decodeWatchResponse} for a watch `Response` of your own, the events, the errors and the option types.
 * The layers (HTTP/1.1, HTTP/2, HPACK, framing, NDJSON, etcd, msgpack) are in `watchwire/wire`; the generated
 * Kubernetes protobuf decoders and the types of every built-in kind in `watchwire/kubernetes`; captured connections
 * in `watchwire/capture`; the command line in `watchwire/cli`.
 *
 * Nothing here imports the generated protobuf decoders: Kubernetes protobuf decodes the kinds of the `decoders` you
 * pass (`protobuf: { decoders }`), none but `v1` `Status` by default, so a bundle holds only the group/versions its
 * code names, and none for JSON.
 *
 * @example
 * ```ts
 * import { decodeWatchResponse } from "watchwire";
 *
 * const body = '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web","resourceVersion":"5"}}}\n';
 * const response = new Response(body, { headers: { "content-type": "application/json;stream=watch" } });
 * for await (const event of decodeWatchResponse(response)) {
 *   if (event.type !== "ERROR") console.log(event.type, event.object.metadata?.name); // ADDED web
 * }
 * ```
 *
 * @module
 */
// Events, errors and the object types every part of the API speaks.
export * from "./src/errors.ts";
export * from "./src/events.ts";
// A watch Response to events.
export {
  BUILTIN_WATCH_CODECS,
  type DecodeWatchOptions,
  decodeWatchResponse,
  decodeWatchResponseBatches,
  type WatchBodyCodec,
} from "./src/watch/decode_watch_response.ts";
// What a caller of decodeWatchResponse, list, watch or informer passes for Kubernetes protobuf, and what it gets.
export type {
  KubernetesProtobufInputViews,
  KubernetesProtobufMode,
  KubernetesProtobufOptions,
} from "./src/codec/kubernetes/protobuf_options.ts";
export type { KubernetesProtobufDecoders } from "./src/codec/kubernetes/registry.ts";
export * from "./src/codec/kubernetes/protobuf_object.ts";
// The watch loop, the informer, its store, its saved state.
export * from "./src/watch/list_watch_source.ts";
export * from "./src/watch/backoff.ts";
export * from "./src/watch/watcher.ts";
export * from "./src/watch/store.ts";
export * from "./src/watch/informer.ts";
export * from "./src/watch/informer_state.ts";
export * from "./src/watch/state_store.ts";
export * from "./src/watch/run_informer.ts";
// Cluster access: kubeconfig, in-cluster config, a fetch with the cluster's TLS and credentials in Node, Deno and
// Bun (runtime adapters loaded only where they run), resource URLs, list, watch, discovery, informer.
export * from "./src/cluster/mod.ts";
