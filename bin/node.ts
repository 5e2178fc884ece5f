#!/usr/bin/env node
/**
 * The `watchwire` command for Node and Bun: runtime glue (files, stdin, stdout, signals, exit status) around `runCli`.
 *
 * ```sh
 * npx watchwire decode --output table fixtures/node-http-watch.http
 * bun bin/node.ts decode fixtures/node-http-watch.http
 * npx watchwire watch -A --state pods.state pods
 * ```
 *
 * @module
 */
import { mkdir, open as openFile, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
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

/** A file's bytes, or undefined if it does not exist (`watch --state`). */
async function readStateFile(path: string): Promise<Uint8Array | undefined> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Writes a file whole: a temporary file beside it, renamed over it (`watch --state`). */
async function writeStateFile(path: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, bytes);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** SIGINT and SIGTERM call `handler` once; a second one ends the process at once (exit status 130). */
function onInterrupt(handler: () => void): () => void {
  let interrupted = false;
  const listener = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    handler();
  };
  process.on("SIGINT", listener);
  process.on("SIGTERM", listener);
  return () => {
    process.off("SIGINT", listener);
    process.off("SIGTERM", listener);
  };
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
  readFile: readStateFile,
  writeFile: writeStateFile,
  onInterrupt,
});
