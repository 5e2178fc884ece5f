/**
 * The state file adapter for Node and Bun: `node:fs/promises`, loaded by `fileStateStore` where it runs, so that the
 * library core never imports `node:*`. A save writes a temporary file beside the target and renames it over the
 * target, so a reader sees the old bytes or the new ones, never part of them. Internal.
 *
 * @module
 */
import { mkdir, readFile as readFromDisk, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import process from "node:process";

/** The file's bytes, or undefined if it does not exist. */
export async function readStateFile(path: string): Promise<Uint8Array | undefined> {
  try {
    return new Uint8Array(await readFromDisk(path));
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Writes `bytes` to `path` whole (a temporary file renamed over it), making its directory if needed. */
export async function writeStateFile(path: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await writeFile(temporary, bytes);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
}
