// Types of scripts/workerd.mjs.

/** A Worker running in workerd (see {@linkcode startWorker}). */
export interface RunningWorker {
  /** Its base URL on loopback. */
  url: string;
  /** workerd's output so far. */
  log(): string;
  /** Rejects when workerd exits (already handled: race it with what waits on the Worker). */
  exited: Promise<never>;
  /** Ends workerd and removes its files. */
  stop(): void;
}

/**
 * Starts workerd with the Worker `module` (ES module source, no compatibility flags) on a free loopback port and waits
 * until it answers; every fetch of the Worker goes to `outbound` (`host:port`).
 */
export function startWorker(options: { module: string; outbound: string }): Promise<RunningWorker>;
