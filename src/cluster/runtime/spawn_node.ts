/**
 * The command adapter for Node and Bun (`node:child_process`): runs an exec credential plugin with no standard input
 * and collects its output. Loaded only by dynamic import (`../connection/adapters.ts`). Internal.
 *
 * @module
 */
import { spawn } from "node:child_process";
import process from "node:process";
import type { CommandResult } from "../connection/adapters.ts";

/** Runs `command` with `args` and the environment plus `env`; rejects (error `code` `ENOENT`) if it does not exist. */
export function runCommand(command: string, args: string[], env: Record<string, string>): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const stdout: Uint8Array[] = [];
    const stderr: Uint8Array[] = [];
    child.stdout.on("data", (chunk: Uint8Array) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Uint8Array) => stderr.push(chunk));
    child.once("error", reject);
    child.once("close", (status, signal) => {
      resolve({ status, signal, stdout: concat(stdout), stderr: concat(stderr) });
    });
  });
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
