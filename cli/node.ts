#!/usr/bin/env node
/**
 * The `watchwire` command for Node and Bun: runtime glue (files, stdin, stdout, exit status) around `runCli`.
 *
 * ```sh
 * npx watchwire decode --output table fixtures/node-http-watch.http
 * bun cli/node.ts decode fixtures/node-http-watch.http
 * ```
 *
 * @module
 */
import { open as openFile, readFile } from "node:fs/promises";
import process from "node:process";
import { runCli } from "../src/cli/main.ts";

const READ_SIZE = 64 * 1024;

/** A file (or stdin for "-") as a byte stream; every read gets a fresh buffer since chunks are handed on as views. */
async function open(path: string): Promise<ReadableStream<Uint8Array>> {
  if (path === "-") {
    const stdin = process.stdin;
    return new ReadableStream<Uint8Array>({
      start(controller) {
        stdin.on("data", (chunk: Uint8Array) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 1) <= 0) stdin.pause();
        });
        stdin.on("end", () => controller.close());
        stdin.on("error", (error) => controller.error(error));
      },
      pull() {
        stdin.resume();
      },
      cancel() {
        stdin.destroy();
      },
    }, { highWaterMark: 4 });
  }
  const handle = await openFile(path, "r");
  // Opening a directory succeeds (on Linux); reading it fails. Refused here, as a file that cannot be read.
  if ((await handle.stat()).isDirectory()) {
    await handle.close();
    throw new Error("is a directory");
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const buffer = new Uint8Array(READ_SIZE);
      const { bytesRead } = await handle.read(buffer, 0, READ_SIZE, null);
      if (bytesRead === 0) {
        await handle.close();
        controller.close();
      } else {
        controller.enqueue(buffer.subarray(0, bytesRead));
      }
    },
    async cancel() {
      await handle.close();
    },
  });
}

function write(stream: NodeJS.WriteStream): (text: string) => Promise<void> | void {
  return (text) => {
    if (stream.write(text)) return;
    return new Promise((resolve) => stream.once("drain", resolve));
  };
}

async function version(): Promise<string> {
  for (const up of ["../package.json", "../../package.json"]) {
    try {
      return JSON.parse(await readFile(new URL(up, import.meta.url), "utf8")).version;
    } catch {
      // Not there from this location (source or dist): try the next.
    }
  }
  return "unknown";
}

process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  // A closed pipe (`watchwire decode x | head`) ends the run quietly.
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

process.exitCode = await runCli(process.argv.slice(2), {
  open,
  stdout: write(process.stdout),
  stderr: write(process.stderr),
  stdoutIsTerminal: process.stdout.isTTY === true,
  version: await version(),
});
