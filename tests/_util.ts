/**
 * Shared test helpers: byte streams from chunk lists, collecting streams, and the fast-check arbitrary that splits
 * an input into chunks (down to single bytes) for split-invariance properties.
 */
import { type ChildProcess, spawnSync } from "node:child_process";
import process from "node:process";
import v8 from "node:v8";
import vm from "node:vm";
import fc from "fast-check";
import { DecodeError } from "../mod.ts";

export const encoder = new TextEncoder();
export const utf8 = (s: string): Uint8Array => encoder.encode(s);

/** The bytes a string of hex digits spells (two per byte). */
export function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** A stream that yields `chunks` in order, one per pull (queuing them all up front is slow in Node for many). */
export function streamOf<T>(chunks: Iterable<T>): ReadableStream<T> {
  const list = [...chunks];
  let next = 0;
  return new ReadableStream<T>({
    pull(controller) {
      if (next < list.length) controller.enqueue(list[next++]);
      else controller.close();
    },
  }, { highWaterMark: 0 });
}

/** A stream that yields `chunks`, then never ends (so a decoder that waits for more input hangs). */
export function endless(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next < chunks.length) controller.enqueue(chunks[next++]);
      else return new Promise(() => {});
    },
  }, { highWaterMark: 0 });
}

/** A stream that yields `chunks`, one per pull, then fails with `reason` (a cut connection, a fault further up). */
export function failingAfter<T>(chunks: T[], reason: unknown): ReadableStream<T> {
  let next = 0;
  return new ReadableStream<T>({
    pull(controller) {
      if (next < chunks.length) controller.enqueue(chunks[next++]);
      else controller.error(reason);
    },
  }, { highWaterMark: 0 });
}

/**
 * The first line a test server started as a child process writes to stdout (its ports, as JSON), parsed; a server
 * that exits or fails first, or says nothing within 15 s, rejects.
 */
export function firstLineOf<T>(child: ChildProcess, what: string): Promise<T> {
  return within(
    new Promise<T>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (chunk: Uint8Array) => {
        out += new TextDecoder().decode(chunk);
        if (out.includes("\n")) resolve(JSON.parse(out.slice(0, out.indexOf("\n"))));
      });
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`the test server exited (${code}) before it listened`)));
    }),
    15_000,
    what,
  );
}

/** `promise`, or a rejection naming `what` if it has not settled within `ms` (a hang). */
export function within<T>(promise: Promise<T>, ms: number, what = "the result"): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms (a hang)`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** As {@linkcode drain}, by a slow reader: it waits `pauseMs` before each read, so values queue up meanwhile. */
export async function drainSlowly<T>(
  stream: ReadableStream<T>,
  pauseMs: number,
): Promise<{ values: T[]; error: unknown }> {
  const values: T[] = [];
  const reader = stream.getReader();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    try {
      const { done, value } = await reader.read();
      if (done) return { values, error: undefined };
      values.push(value);
    } catch (error) {
      return { values, error };
    }
  }
}

/** Everything `stream` yields, then how it ended: `error` is what it failed with, if it failed. */
export async function drain<T>(stream: ReadableStream<T>): Promise<{ values: T[]; error: unknown }> {
  const values: T[] = [];
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { values, error: undefined };
      values.push(value);
    }
  } catch (error) {
    return { values, error };
  }
}

/** Cuts `bytes` at `cuts` (sorted or not, deduplicated here) into chunks that are copies, as a network would deliver. */
export function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.filter((c) => c > 0 && c < bytes.length))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const p of points) {
    chunks.push(bytes.slice(from, p));
    from = p;
  }
  chunks.push(bytes.slice(from));
  return chunks;
}

/** Single bytes: the finest split. */
export function bytewise(bytes: Uint8Array): Uint8Array[] {
  return Array.from(bytes, (b) => Uint8Array.of(b));
}

/** An arbitrary set of cut points for an input of `length` bytes. */
export function cutsFor(length: number): fc.Arbitrary<number[]> {
  return fc.array(fc.integer({ min: 1, max: Math.max(1, length - 1) }), { maxLength: Math.min(64, length) });
}

/** Concatenates byte arrays (tests only: the library never concatenates payloads). */
export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A comparable summary of an error: its code and offset for a DecodeError, else its string form. */
export function errorKey(error: unknown): string | undefined {
  if (error === undefined) return undefined;
  if (error instanceof DecodeError) return `${error.code}@${error.offset}`;
  return String(error);
}

/**
 * Asserts split invariance of a byte-stream decoder: for the whole input, for single bytes and for `runs` random
 * partitions, the decoded values and the error (code and offset) are identical. `decode` builds a fresh pipeline.
 */
export async function assertSplitInvariant<T>(
  input: Uint8Array,
  decode: (source: ReadableStream<Uint8Array>) => ReadableStream<T>,
  options: { runs?: number; normalize?: (values: T[]) => unknown } = {},
): Promise<{ values: T[]; error: unknown }> {
  const normalize = options.normalize ?? ((v: T[]) => v);
  const reference = await drain(decode(streamOf([input.slice()])));
  const expected = JSON.stringify({ values: normalize(reference.values), error: errorKey(reference.error) });
  const single = await drain(decode(streamOf(bytewise(input))));
  const got = JSON.stringify({ values: normalize(single.values), error: errorKey(single.error) });
  if (got !== expected) throw new Error(`byte-by-byte split differs:\n${got}\nexpected\n${expected}`);
  await fc.assert(
    fc.asyncProperty(cutsFor(input.length), async (cuts) => {
      const result = await drain(decode(streamOf(splitAt(input, cuts))));
      const actual = JSON.stringify({ values: normalize(result.values), error: errorKey(result.error) });
      if (actual !== expected) throw new Error(`split at ${cuts} differs:\n${actual}\nexpected\n${expected}`);
    }),
    { numRuns: options.runs ?? 100 },
  );
  return reference;
}

/** Decodes bytes to text (for payload comparisons). */
export function text(parts: Uint8Array[] | Uint8Array): string {
  return new TextDecoder().decode(Array.isArray(parts) ? concat(parts) : parts);
}

/** Which runtime runs the tests. */
export function currentRuntime(): "node" | "deno" | "bun" {
  const g = globalThis as { Deno?: unknown; Bun?: unknown };
  return g.Deno ? "deno" : g.Bun ? "bun" : "node";
}

/**
 * Runs the script `child` in a fresh process of the current runtime with code generation from strings forbidden where
 * the engine can forbid it (V8's flag in Node and Deno; Bun has none, the script must replace `Function` itself), and
 * returns the JSON object it prints last on stdout; a non-zero exit fails with its stderr.
 */
export function runWithoutCodegen(child: string, root: string): Record<string, unknown> {
  const runtime = currentRuntime();
  const g = globalThis as { Deno?: { execPath(): string } };
  const command = runtime === "deno"
    ? [
      g.Deno!.execPath(),
      "run",
      "-A",
      "--config",
      `${root}/deno.json`,
      "--v8-flags=--disallow-code-generation-from-strings",
      child,
    ]
    : runtime === "bun"
    ? [process.execPath, child]
    : [process.execPath, "--import", "tsx", "--disallow-code-generation-from-strings", child];
  const r = spawnSync(command[0], command.slice(1), { cwd: root, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!);
}

/**
 * A full garbage collection where the runtime offers one (Bun.gc; V8's, exposed here, in Node and Deno), for tests
 * that check memory stays bounded.
 */
export function collectGarbage(): void {
  const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
  if (bun !== undefined) return bun.gc(true);
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
}
