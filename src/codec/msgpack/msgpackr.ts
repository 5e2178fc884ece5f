/**
 * msgpackr as the msgpack streams use it: the part of its API they call, the versions accepted, which build Deno
 * loads, and {@linkcode InOrder}, which holds a stage's calls until msgpackr has loaded. msgpackr loads when a msgpack
 * stage first needs it, never with the entry points (see `src/npm_package.ts`). This module names no build of
 * msgpackr: each module that uses one declares it (`msgpack_event_writer.ts`, `unpackr.ts`, `unpackr_no_eval.ts`),
 * so that a bundle holds only the builds its entry point uses. Internal.
 *
 * @module
 */
import { denoHasGranted, type NpmPackage } from "../../npm_package.ts";
import type { MsgpackUnpacker, unpackrOptions } from "./msgpack_event_reader.ts";

/** The msgpackr versions accepted: its range in package.json's dependencies. */
export const MSGPACKR_VERSION = "^2.1.3";

/** What the encoder uses of msgpackr's `Packr` (which returns a Node Buffer where there is one: a Uint8Array). */
export interface MsgpackPacker {
  pack(value: unknown, flags?: number): Uint8Array;
}

/** What the encoder uses of msgpackr's main module. */
export interface PackrModule {
  Packr: new (options: { sequential: true; useRecords: true; maxOwnStructures: number }) => MsgpackPacker;
  RESERVE_START_SPACE: number;
}

/** What the decoders use of a msgpackr module (the main build, or the one without code generation). */
export interface UnpackrModule {
  Unpackr: new (options: ReturnType<typeof unpackrOptions>) => MsgpackUnpacker;
}

/**
 * The build of msgpackr Deno loads for the main entry points: its Node build (the one Node and Bun load, with native
 * string extraction where msgpackr-extract is installed) where Deno has granted what that build reads as it loads
 * (environment variables, its native addon's files, FFI to load it), so that Deno never asks; else `portable` (a
 * subpath of msgpackr's whose Node and Deno export is its portable build), which needs no permission and reads the
 * same values, strings in JavaScript.
 */
export function denoMsgpackrBuild(portable: string): () => string {
  return () => denoHasGranted(["env", "read", "ffi"]) ? "msgpackr" : portable;
}

/**
 * Runs a msgpack stage's calls in their order, each once msgpackr has loaded: at once when it has and no call is
 * waiting (every call once it has loaded in the process), else after the load and the calls before it. So a stage's
 * first `push` may return a promise, and its later ones return none.
 */
export class InOrder<M> {
  readonly #package: NpmPackage<M>;
  #waiting: Promise<void> | undefined;

  constructor(npmPackage: NpmPackage<M>) {
    this.#package = npmPackage;
  }

  /** Runs `call` with the loaded module, now or once it has loaded and the calls before it have run. */
  run(call: (module: M) => void): void | Promise<void> {
    const module = this.#package.loaded;
    if (module !== undefined && this.#waiting === undefined) return call(module);
    const before: Promise<unknown> = this.#waiting ?? this.#package.load();
    return this.#queue(before.then(() => call(this.#package.loaded!)));
  }

  /** Runs `call` (which needs no msgpackr) now, or after the calls that wait. */
  after(call: () => void): void | Promise<void> {
    if (this.#waiting === undefined) return call();
    return this.#queue(this.#waiting.then(call));
  }

  #queue(next: Promise<void>): Promise<void> {
    this.#waiting = next;
    const settled = () => {
      if (this.#waiting === next) this.#waiting = undefined;
    };
    next.then(settled, settled);
    return next;
  }
}
