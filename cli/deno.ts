/**
 * The `watchwire` command for Deno: runtime glue (files, stdin, stdout, exit status) around `runCli`.
 *
 * ```sh
 * deno run --allow-read cli/deno.ts decode --output table fixtures/node-http-watch.http
 * ```
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
});
Deno.exit(status);
