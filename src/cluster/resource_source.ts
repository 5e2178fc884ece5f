/**
 * {@linkcode resourceSource}: a {@linkcode ListWatchSource} of one resource of a cluster, for the watch loop and the
 * informer; {@linkcode informer}: an informer of one resource of a cluster.
 *
 * @module
 */
import type { KubernetesProtobufOptions } from "../codec/kubernetes/protobuf_options.ts";
import type { KubernetesObject } from "../events.ts";
import type { ListWatchSource } from "../watch/list_watch_source.ts";
import { Informer, type InformerOptions } from "../watch/informer.ts";
import type { ClusterConnection } from "./cluster_config.ts";
import { list } from "./list.ts";
import type { ResourceRef } from "./resource.ts";
import { watch } from "./watch.ts";
import { type WebSocketOpener, webSocketWatch } from "./websocket_watch.ts";
import { checkProtobufDecoders } from "./check_protobuf_decoders.ts";

/** The default of {@linkcode ResourceSourceOptions.pageSize}: client-go's page size for an informer's lists. */
export const DEFAULT_PAGE_SIZE = 500;

/**
 * Options of {@linkcode resourceSource}: which objects and how they travel.
 *
 * @example
 * ```ts
 * import type { ResourceSourceOptions } from "watchwire";
 *
 * // Pods of one app, in protobuf, objects decoded as metadata only (the rest on demand).
 * const options: ResourceSourceOptions = { labelSelector: "app=web", format: "protobuf", protobuf: { mode: "metadata" } };
 * console.log(options.format); // protobuf
 * ```
 */
export interface ResourceSourceOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * `"json"` (the default), `"protobuf"` (JSON still for kinds that have no protobuf: CRDs) or `"cbor"` (JSON still
   * from a server that does not serve CBOR: kube-apiserver serves it with its `CBORServingAndStorage` feature gate on).
   */
  format?: "json" | "protobuf" | "cbor";
  /**
   * Options of the protobuf decoding: `decoders`, the kinds decoded (`createKubernetesDecoders([coreV1])`,
   * `builtinDecoders` from `watchwire/kubernetes`), needed with `format: "protobuf"` unless `mode` is `"metadata"` (a
   * metadata-only informer); `mode`. See {@linkcode KubernetesProtobufOptions}.
   */
  protobuf?: KubernetesProtobufOptions;
  /** The page size of lists (`list()`'s `pageSize`). Default 500 (client-go's). */
  pageSize?: number;
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes. Default
   * `DEFAULT_MAX_EVENT_BYTES` (16 MiB).
   */
  maxEventBytes?: number;
  /**
   * How long a list page may keep silent (no response, no byte of its body) before its request is aborted and the
   * list fails (`TIMEOUT`): `list()`'s `idleTimeoutMs`, default 60 s. {@linkcode informer} passes its own
   * `idleTimeoutMs` (the watch loop's) here too, so one setting bounds the silence of its lists and its watches.
   */
  idleTimeoutMs?: number;
  /**
   * How watches travel: `"http"` (the default: `watch()`) or `"websocket"` (`webSocketWatch()`: the same events over
   * a WebSocket). Lists are always plain HTTP.
   */
  transport?: "http" | "websocket";
  /**
   * With `transport: "websocket"`: how the WebSocket is opened. By default the connection's own (`connectCluster`'s in
   * Node, Deno and Bun: the config's TLS and credentials), else `webSocketOpener()` (the runtime's WebSocket: browsers,
   * Workers).
   */
  openWebSocket?: WebSocketOpener;
}

/**
 * A list and a watch of `ref` through `connection`: what {@linkcode watcher} and {@linkcode Informer} read. Watches ask
 * for bookmarks; a streaming list asks `resourceVersionMatch=NotOlderThan`.
 *
 * @example
 * ```ts
 * import { resourceSource, type ClusterConnection } from "watchwire";
 *
 * const connection: ClusterConnection = {
 *   server: "https://127.0.0.1:6443",
 *   headers: async () => new Headers(),
 *   fetch: async (input) => Response.json({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "4" }, items: [] }),
 *   close: async () => {},
 * };
 * const source = resourceSource(connection, { version: "v1", resource: "pods" });
 * console.log((await source.list({ signal: new AbortController().signal })).resourceVersion); // 4
 * ```
 */
export function resourceSource<T extends KubernetesObject = KubernetesObject>(
  connection: ClusterConnection,
  ref: ResourceRef,
  options: ResourceSourceOptions = {},
): ListWatchSource<T> {
  const { pageSize = DEFAULT_PAGE_SIZE, maxEventBytes, idleTimeoutMs, transport, openWebSocket, ...common } = options;
  checkProtobufDecoders(`resourceSource of ${resourceName(ref)}`, options.format, options.protobuf);
  return {
    list: async (request) => {
      const result = await list<T>(connection, ref, {
        ...common,
        pageSize,
        signal: request.signal,
        ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }),
        ...(request.resourceVersion === undefined ? {} : { resourceVersion: request.resourceVersion }),
        ...(request.onListProgress ? { onPage: (page) => request.onListProgress!(page.total) } : {}),
      });
      return { items: result.items, resourceVersion: result.resourceVersion };
    },
    watch: (request) =>
      (transport === "websocket" ? webSocketWatch<T> : watch<T>)(connection, ref, {
        ...common,
        ...(openWebSocket === undefined ? {} : { openWebSocket }),
        allowWatchBookmarks: true,
        timeoutSeconds: request.timeoutSeconds,
        signal: request.signal,
        ...(maxEventBytes === undefined ? {} : { maxEventBytes }),
        ...(request.resourceVersion === undefined ? {} : { resourceVersion: request.resourceVersion }),
        ...(request.sendInitialEvents
          ? { sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" as const }
          : {}),
      }),
  };
}

/**
 * An {@linkcode Informer} of `ref` in the cluster of `connection`: `informer(connection, ref, options).start()`. Its
 * `idleTimeoutMs` bounds the silence of its list pages (each aborted and listed again after it) as it does its watches';
 * without it, a list page may keep silent for `list()`'s default of 60 s. `format: "protobuf"` needs
 * `protobuf.decoders` (the kinds to decode) unless `protobuf.mode` is `"metadata"`: without them `informer` throws a
 * `USAGE` `ClusterAccessError` that says what to pass.
 *
 * @example
 * ```ts
 * import { ClusterAccessError, informer, type ClusterConnection } from "watchwire";
 * import { coreV1, createKubernetesDecoders } from "watchwire/kubernetes";
 *
 * const connection: ClusterConnection = {
 *   server: "https://127.0.0.1:6443",
 *   headers: async () => new Headers(),
 *   fetch: async () => new Response(null, { status: 503 }),
 *   close: async () => {},
 * };
 * const decoders = createKubernetesDecoders([coreV1]); // Pods are core/v1
 * const pods = informer(connection, { version: "v1", resource: "pods" }, { format: "protobuf", protobuf: { decoders } });
 * console.log(pods.hasSynced, pods.store.size); // false 0
 * // Protobuf in full without decoders would give every Pod as its metadata and bytes: refused.
 * try {
 *   informer(connection, { version: "v1", resource: "pods" }, { format: "protobuf" });
 * } catch (e) {
 *   if (e instanceof ClusterAccessError) console.log(e.code); // USAGE
 * }
 * ```
 */
export function informer<T extends KubernetesObject = KubernetesObject>(
  connection: ClusterConnection,
  ref: ResourceRef,
  options: ResourceSourceOptions & InformerOptions<T> = {},
): Informer<T> {
  const {
    labelSelector,
    fieldSelector,
    format,
    protobuf,
    pageSize,
    maxEventBytes,
    transport,
    openWebSocket,
    ...informerOptions
  } = options;
  checkProtobufDecoders(`informer of ${resourceName(ref)}`, format, protobuf);
  const sourceOptions: ResourceSourceOptions = {};
  if (labelSelector !== undefined) sourceOptions.labelSelector = labelSelector;
  if (fieldSelector !== undefined) sourceOptions.fieldSelector = fieldSelector;
  if (format !== undefined) sourceOptions.format = format;
  if (protobuf !== undefined) sourceOptions.protobuf = protobuf;
  if (pageSize !== undefined) sourceOptions.pageSize = pageSize;
  if (maxEventBytes !== undefined) sourceOptions.maxEventBytes = maxEventBytes;
  if (transport !== undefined) sourceOptions.transport = transport;
  if (openWebSocket !== undefined) sourceOptions.openWebSocket = openWebSocket;
  // The watch loop's idle timeout bounds its list pages' silence as well (it stays in the informer's options).
  if (informerOptions.idleTimeoutMs !== undefined) sourceOptions.idleTimeoutMs = informerOptions.idleTimeoutMs;
  return new Informer<T>(resourceSource<T>(connection, ref, sourceOptions), informerOptions);
}

/** `pods`, `deployments.apps`: the resource as kubectl names it. */
function resourceName(ref: ResourceRef): string {
  return ref.group ? `${ref.resource}.${ref.group}` : ref.resource;
}
