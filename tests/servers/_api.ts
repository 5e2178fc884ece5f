/**
 * A JSON request to the API server, for the server tests and the benchmarks that use their pieces (this module, unlike
 * tests/servers/_cluster.ts, starts no test runner when imported).
 *
 * @module
 */
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";
import type { WatchEvent } from "../../src/events.ts";
import type { ResourceRef } from "../../src/cluster/resource.ts";

/**
 * A request with the connection's credentials (JSON in, JSON out; PATCH as a merge patch): the answer, or an error with
 * the server's message.
 */
export async function apiRequest<T = unknown>(
  c: ClusterConnection,
  method: string,
  url: URL,
  body?: unknown,
): Promise<T> {
  const headers = await c.headers();
  headers.set("accept", "application/json");
  if (body !== undefined) {
    headers.set("content-type", method === "PATCH" ? "application/merge-patch+json" : "application/json");
  }
  const response = await c.fetch(url, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url.pathname}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Reads events until `until` returns true for one (or the stream ends); the events read. */
export async function readUntil<T>(
  events: ReadableStream<WatchEvent<T>>,
  until: (event: WatchEvent<T>) => boolean,
  timeoutMs = 20_000,
): Promise<WatchEvent<T>[]> {
  const seen: WatchEvent<T>[] = [];
  const reader = events.getReader();
  const timer = setTimeout(() => reader.cancel(new Error("timeout")).catch(() => {}), timeoutMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      seen.push(value);
      if (until(value)) break;
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
  return seen;
}

/** The resources the server tests use, in namespace `namespace`. */
export const CONFIGMAPS = (namespace: string): ResourceRef => ({ version: "v1", resource: "configmaps", namespace });
export const SECRETS = (namespace: string): ResourceRef => ({ version: "v1", resource: "secrets", namespace });
export const PODS = (namespace: string): ResourceRef => ({ version: "v1", resource: "pods", namespace });
export const WIDGETS = (namespace: string): ResourceRef => ({
  group: "watchwire.example",
  version: "v1",
  resource: "widgets",
  namespace,
});

/** A CustomResourceDefinition of the tests' own: `widgets.watchwire.example`, any fields kept. */
export const WIDGET_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.watchwire.example" },
  spec: {
    group: "watchwire.example",
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
    }],
  },
};
