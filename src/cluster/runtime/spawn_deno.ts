/**
 * The command adapter for Deno: `Deno.Command`, which adds `env` to the inherited environment without reading it
 * (so only `--allow-run` is needed, not `--allow-env`, as `node:child_process` with an `env` would). Loaded only by
 * dynamic import in Deno (`../connection/adapters.ts`). Internal.
 *
 * @module
 */
import type { CommandResult } from "../connection/adapters.ts";

/** The part of the Deno namespace used here. */
interface DenoCommand {
  Command: new (command: string, options: {
    args: string[];
    env: Record<string, string>;
    stdin: "null";
    stdout: "piped";
    stderr: "piped";
  }) => { output(): Promise<{ code: number; signal: string | null; stdout: Uint8Array; stderr: Uint8Array }> };
}

/** Runs `command` with `args` and the environment plus `env`; rejects (`Deno.errors.NotFound`) if it does not exist. */
export async function runCommand(command: string, args: string[], env: Record<string, string>): Promise<CommandResult> {
  const deno = (globalThis as unknown as { Deno: DenoCommand }).Deno;
  const output = await new deno.Command(command, { args, env, stdin: "null", stdout: "piped", stderr: "piped" })
    .output();
  return {
    status: output.signal === null ? output.code : null,
    signal: output.signal,
    stdout: output.stdout,
    stderr: output.stderr,
  };
}
