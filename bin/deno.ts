/**
 * The `watchwire` command for Deno: runtime glue (files, stdin, stdout, signals, exit status) around `runCli`.
 *
 * ```sh
 * deno run --allow-read bin/deno.ts decode --output table fixtures/node-http-watch.http
 * deno run --allow-net --allow-read --allow-env --allow-write=pods.state bin/deno.ts watch --state pods.state pods
 * ```
 *
 * `watch` needs `--allow-net` (the API server), `--allow-env` (KUBECONFIG, HOME), `--allow-read` (the kubeconfig and
 * the files it names, the state file), `--allow-write` (the state file) and, for an exec credential plugin,
 * `--allow-run`.
 *
 * @module
 */
// deno-lint-ignore-file no-explicit-any
import { runCli } from "../src/cli/main.ts";

// Deno's namespace, reached without a dependency on its type definitions (the project type-checks with tsc too).
const Deno = (globalThis as any).Deno;
const encoder = new TextEncoder();

async function writeAll(writer: { write(p: Uint8Array): Promise<number> }, text: string): Promise<void> {
  let bytes = encoder.encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(await writer.write(bytes));
}

async function version(): Promise<string> {
  try {
    return JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url))).version;
  } catch {
    return "unknown";
  }
}

/** A file (or stdin for "-") as a byte stream. */
async function open(path: string): Promise<ReadableStream<Uint8Array>> {
  if (path === "-") return Deno.stdin.readable;
  const file = await Deno.open(path, { read: true });
  // Opening a directory succeeds (on Linux); reading it fails. Refused here, as a file that cannot be read.
  if ((await file.stat()).isDirectory) {
    file.close();
    throw new Error("is a directory");
  }
  return file.readable;
}

/** A file's bytes, or undefined if it does not exist (`watch --state`). */
async function readFile(path: string): Promise<Uint8Array | undefined> {
  try {
    return await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/** Writes a file whole: a temporary file beside it, renamed over it (`watch --state`). */
async function writeFile(path: string, bytes: Uint8Array): Promise<void> {
  const temporary = `${path}.${Deno.pid}.tmp`;
  try {
    await Deno.writeFile(temporary, bytes);
    await Deno.rename(temporary, path);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    throw error;
  }
}

/** SIGINT and SIGTERM call `handler` once; a second one ends the process at once (exit status 130). */
function onInterrupt(handler: () => void): () => void {
  let interrupted = false;
  const listener = () => {
    if (interrupted) Deno.exit(130);
    interrupted = true;
    handler();
  };
  Deno.addSignalListener("SIGINT", listener);
  Deno.addSignalListener("SIGTERM", listener);
  return () => {
    Deno.removeSignalListener("SIGINT", listener);
    Deno.removeSignalListener("SIGTERM", listener);
  };
}

const status = await runCli(Deno.args, {
  open,
  stdout: async (text) => {
    try {
      await writeAll(Deno.stdout, text);
    } catch (error) {
      // A closed pipe (`... | head`) ends the run quietly.
      if (error instanceof Deno.errors.BrokenPipe) Deno.exit(0);
      throw error;
    }
  },
  stderr: (text) => writeAll(Deno.stderr, text),
  stdoutIsTerminal: Deno.stdout.isTerminal(),
  version: await version(),
  readFile,
  writeFile,
  onInterrupt,
});
Deno.exit(status);
