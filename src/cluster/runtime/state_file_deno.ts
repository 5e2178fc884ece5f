/**
 * The state file adapter for Deno: `Deno.readFile`, `Deno.writeFile`, `Deno.rename`, so that Deno asks only for read
 * and write access to the state's directory. A save writes a temporary file beside the target and renames it over the
 * target, so a reader sees the old bytes or the new ones, never part of them. Internal.
 *
 * @module
 */

/** The part of the Deno namespace used here. */
interface DenoFiles {
  readFile(path: string): Promise<Uint8Array>;
  writeFile(path: string, data: Uint8Array): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  remove(path: string): Promise<void>;
  mkdir(path: string, options: { recursive: boolean }): Promise<void>;
  errors: { NotFound: new (...args: never[]) => Error };
}

const deno = () => (globalThis as unknown as { Deno: DenoFiles }).Deno;

/** The file's bytes, or undefined if it does not exist. */
export async function readStateFile(path: string): Promise<Uint8Array | undefined> {
  try {
    return await deno().readFile(path);
  } catch (error) {
    if (error instanceof deno().errors.NotFound) return undefined;
    throw error;
  }
}

/** Writes `bytes` to `path` whole (a temporary file renamed over it), making its directory if needed. */
export async function writeStateFile(path: string, bytes: Uint8Array): Promise<void> {
  const slash = path.lastIndexOf("/");
  if (slash > 0) await deno().mkdir(path.slice(0, slash), { recursive: true });
  const temporary = `${path}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await deno().writeFile(temporary, bytes);
    await deno().rename(temporary, path);
  } catch (error) {
    await deno().remove(temporary).catch(() => {});
    throw error;
  }
}
