/**
 * `node:process` for the benchmarks run in a browser (scripts/browser-bench.ts bundles them with this in its place):
 * only what bench/harness.ts uses. `argv` carries `--quick` from the Worker's URL; what the harness writes to stdout
 * and stderr is POSTed to the bench server, in order; {@linkcode flushed} resolves once all of it has arrived.
 *
 * @module
 */

let queue: Promise<unknown> = Promise.resolve();

function stream(path: string): { write(text: string): boolean } {
  return {
    write(text: string): boolean {
      const sent = queue.then(() => fetch(path, { method: "POST", body: text }));
      queue = sent;
      return true;
    },
  };
}

/** Resolves once everything written so far has reached the server. */
export function flushed(): Promise<unknown> {
  return queue;
}

const quick = new URL(location.href).searchParams.get("quick") === "1";

/** The parts of `process` the benchmarks' harness reads: empty `versions` (none of Node, Deno or Bun). */
const process = {
  argv: ["browser", "bench", ...(quick ? ["--quick"] : [])],
  versions: {} as Record<string, string>,
  stdout: stream("/stdout"),
  stderr: stream("/stderr"),
};
export default process;
