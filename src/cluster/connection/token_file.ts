/**
 * {@linkcode TokenFile}: a bearer token read from a file that rotates (a projected service account token, kubeconfig's
 * `tokenFile`). Internal.
 *
 * The policy, as client-go's (`cachingTokenSource`, one minute): the file is read on first use and again when the
 * token in hand was read `tokenFileRereadMs` (default 60 s) ago or more, at the next request; and at once after a 401
 * with the token in hand. A re-read that fails keeps the token in hand (the file may be mid-rotation); a first read
 * that fails, or a file that holds only whitespace, is a `FILE_UNREADABLE` error.
 *
 * @module
 */
import { ClusterAccessError } from "../errors.ts";
import type { Host } from "../host.ts";
import { readFileFor } from "../host.ts";

/** The default of `ConnectClusterOptions.tokenFileRereadMs`: client-go's one minute. */
export const DEFAULT_TOKEN_FILE_REREAD_MS = 60_000;

/** A token file and the token last read from it. */
export class TokenFile {
  readonly #path: string;
  readonly #host: () => Promise<Host>;
  readonly #now: () => number;
  readonly #tokenFileRereadMs: number;
  readonly #source: string | undefined;
  #token: string | undefined;
  #readAt = 0;
  #reading: Promise<string> | undefined;

  constructor(path: string, host: () => Promise<Host>, now: () => number, tokenFileRereadMs: number, source?: string) {
    this.#path = path;
    this.#host = host;
    this.#now = now;
    this.#tokenFileRereadMs = tokenFileRereadMs;
    this.#source = source;
  }

  /** The token: the one in hand, or read again if it was read `tokenFileRereadMs` ago or more. */
  token(): Promise<string> {
    if (this.#token !== undefined && this.#now() - this.#readAt < this.#tokenFileRereadMs) {
      return Promise.resolve(this.#token);
    }
    return this.#read();
  }

  /** After a 401 with `used`: reads the file again (unless that was done since); true if the token changed. */
  async refresh(used: string): Promise<boolean> {
    if (this.#token !== used) return this.#token !== undefined;
    return (await this.#read()) !== used;
  }

  #read(): Promise<string> {
    this.#reading ??= this.#readOnce().finally(() => this.#reading = undefined);
    return this.#reading;
  }

  async #readOnce(): Promise<string> {
    try {
      const bytes = await readFileFor(await this.#host(), this.#path, "the bearer token file", this.#source);
      const token = new TextDecoder().decode(bytes).trim();
      if (token === "") {
        throw new ClusterAccessError("FILE_UNREADABLE", `the bearer token file ${this.#path} is empty`, {
          source: this.#source,
        });
      }
      this.#token = token;
    } catch (e) {
      if (this.#token === undefined) throw e;
      // Keep the token in hand: the file may be being replaced.
    }
    this.#readAt = this.#now();
    return this.#token;
  }
}
