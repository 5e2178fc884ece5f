/**
 * watchwire: Kubernetes (and etcd) watch traffic to typed watch events, with Web Streams, in any JavaScript runtime.
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
export * from "./core.ts";
export * from "./src/cli/main.ts";
// Every built-in kind by default (the core ones decode only the kinds they are given).
export {
  decodeKubernetesProtobufObject,
  decodeWatchResponse,
  decodeWatchResponseBatches,
  KubernetesProtobufWatchDecoder,
  KubernetesProtobufWatchDecoderStream,
  KubernetesProtobufWatchEventDecoder,
  KubernetesProtobufWatchEventDecoderStream,
} from "./src/builtin_defaults.ts";
// Cluster access: kubeconfig, in-cluster config, a fetch with the cluster's TLS and credentials in Node, Deno and
// Bun (runtime adapters loaded only where they run), resource URLs, list, watch, discovery.
export * from "./src/cluster/mod.ts";
