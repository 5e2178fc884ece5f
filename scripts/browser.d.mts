// Types of scripts/browser.mjs.
import type { IncomingMessage } from "node:http";

/** A browser running headless, in its own process group. */
export interface RunningBrowser {
  /** What `--version` printed, e.g. "Mozilla Firefox 153.7.0esr". */
  version: string;
  /** Its output on stderr so far. */
  log(): string;
  /** Rejects when the browser exits before {@linkcode RunningBrowser.stop} (already handled). */
  exited: Promise<never>;
  /** Ends the browser and all its helper processes, then removes its profile. */
  stop(): Promise<void>;
}

export interface BrowserOptions {
  /**
   * For timing: Firefox's full `performance.now()` precision (it rounds to 1 ms by default, against fingerprinting)
   * and `gc()` in Chromium's contexts (V8's `--expose-gc`, as the benchmarks get in Node and Deno).
   */
  forBenchmarks?: boolean;
  /**
   * A server certificate (PEM) to accept from `host`:`port` though no root the browser knows signed it (a test
   * cluster's private CA): Chromium's `--ignore-certificate-errors-spki-list` with its key's hash, Firefox's
   * certificate exception for it in the profile's `cert_override.txt`.
   */
  acceptServerCertificate?: { host: string; port: number; pem: string };
}

/** Whether `command` (a name or a path) is a Firefox. */
export function isFirefox(command: string): boolean;

/** Writes a fresh Firefox profile's prefs that keep the first run quiet, and `more`. */
export function writeFirefoxPrefs(profile: string, more?: Record<string, boolean | number | string>): void;

/** `--version` of `command`, or an Error saying how to install it. */
export function browserVersion(command: string): string;

/** Starts `command` (chromium or firefox-esr, or a path to either) headless on `url`. */
export function startBrowser(command: string, url: string, options?: BrowserOptions): RunningBrowser;

/** The text of a request's body: what a page in the browser POSTs back to the script's server. */
export function postedText(req: IncomingMessage): Promise<string>;
