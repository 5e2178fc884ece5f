/**
 * {@linkcode Host}: how cluster access reads files and environment variables. The default is the runtime adapter
 * (`runtime/host_node.ts`, or `runtime/host_deno.ts` in Deno, loaded on first use); tests and platforms without files pass
 * their own.
 *
 * @module
 */
import { loadAdapter } from "./connection/adapters.ts";
import { detectRuntime } from "./connection/runtime_name.ts";
import { ClusterAccessError } from "./errors.ts";

/**
 * Files and environment variables, as cluster access reads them.
 *
 * @example
 * ```ts
 * import type { Host } from "watchwire";
 *
 * // A host with one file and no environment, e.g. for a test or a Worker with a bundled kubeconfig.
 * const files: Record<string, string> = { "/config": "clusters: []" };
 * const host: Host = {
 *   readFile: async (path) => new TextEncoder().encode(files[path]),
 *   getEnv: () => undefined,
 * };
 * console.log(new TextDecoder().decode(await host.readFile("/config"))); // clusters: []
 * ```
 */
export interface Host {
  /** A file's bytes; rejects if it cannot be read. */
  readFile(path: string): Promise<Uint8Array>;
  /** An environment variable, or undefined. */
  getEnv(name: string): string | undefined;
}

/** The runtime's host (`Deno.*` in Deno, `node:fs/promises` and `node:process` elsewhere), loaded on first use. */
export function defaultHost(): Promise<Host> {
  return loadAdapter(detectRuntime() === "deno" ? "hostDeno" : "host");
}

/** A file's bytes, or a `FILE_UNREADABLE` error naming the file, why it was read and the config's source. */
export async function readFileFor(host: Host, path: string, why: string, source?: string): Promise<Uint8Array> {
  try {
    return await host.readFile(path);
  } catch (e) {
    const reason = (e as { code?: unknown }).code ?? (e as Error).message ?? String(e);
    throw new ClusterAccessError("FILE_UNREADABLE", `cannot read ${path} (${why}): ${reason}`, { source, cause: e });
  }
}
