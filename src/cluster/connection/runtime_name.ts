/**
 * {@linkcode RuntimeName} and {@linkcode detectRuntime}: which runtime adapter cluster access uses.
 *
 * @module
 */

/**
 * The runtime whose adapters cluster access uses: `node`, `deno` and `bun` have TLS, file and command adapters; `web`
 * (browsers, Cloudflare Workers and the like) has none, and its TLS is the platform's or a caller's fetch.
 *
 * @example
 * ```ts
 * import { detectRuntime, type RuntimeName } from "watchwire";
 *
 * const runtime: RuntimeName = detectRuntime();
 * console.log(["node", "deno", "bun", "web"].includes(runtime)); // true
 * ```
 */
export type RuntimeName = "node" | "deno" | "bun" | "web";

/**
 * The runtime this code runs in. Deno and Bun are told by their globals (both also have `process.versions.node`), Node
 * by `process.versions.node`; anything else is `web`.
 *
 * @example
 * ```ts
 * import { detectRuntime } from "watchwire";
 *
 * if (detectRuntime() === "web") console.log("pass connectCluster a fetch that does the cluster's TLS");
 * ```
 */
export function detectRuntime(): RuntimeName {
  const g = globalThis as {
    Deno?: { version?: { deno?: string } };
    Bun?: unknown;
    process?: { versions?: { node?: string } };
    navigator?: { userAgent?: string };
  };
  if (typeof g.Deno?.version?.deno === "string") return "deno";
  if (g.Bun !== undefined) return "bun";
  // Workers with Node compatibility have a `process` too; their navigator says so.
  if (g.navigator?.userAgent === "Cloudflare-Workers") return "web";
  if (typeof g.process?.versions?.node === "string") return "node";
  return "web";
}
