/**
 * A JSON request to the API server, for the server tests and the benchmarks that use their pieces (this module, unlike
 * tests/servers/_cluster.ts, starts no test runner when imported).
 *
 * @module
 */
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";

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
