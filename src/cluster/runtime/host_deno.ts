/**
 * The files and environment adapter for Deno: `Deno.readFile` and `Deno.env.get`, so that Deno asks only for read
 * access to the files read (`--allow-read=FILE`) and for the variables read (`--allow-env=NAME`), and nothing to load
 * the adapter itself (it is imported by a literal specifier, which Deno resolves ahead). Internal.
 *
 * @module
 */

/** The part of the Deno namespace used here. */
interface DenoFiles {
  readFile(path: string): Promise<Uint8Array>;
  env: { get(name: string): string | undefined };
}

const deno = () => (globalThis as unknown as { Deno: DenoFiles }).Deno;

/** A file's bytes. */
export function readFile(path: string): Promise<Uint8Array> {
  return deno().readFile(path);
}

/** An environment variable, or undefined. */
export function getEnv(name: string): string | undefined {
  return deno().env.get(name);
}
