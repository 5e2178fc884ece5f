/**
 * The runtime adapter for files and environment variables: `node:fs/promises` and `node:process`, which Node, Deno
 * and Bun all provide (Deno asks only for read access to the files read and for the variables read). Loaded by
 * dynamic import where a file or variable is needed, so that the library core never imports `node:*`. Internal.
 *
 * @module
 */
import { readFile as readFileFromDisk } from "node:fs/promises";
import { env } from "node:process";

/** A file's bytes. */
export async function readFile(path: string): Promise<Uint8Array> {
  return new Uint8Array(await readFileFromDisk(path));
}

/** An environment variable, or undefined. */
export function getEnv(name: string): string | undefined {
  return env[name];
}
