/**
 * First module of the benchmark Worker that scripts/browser-bench.ts bundles: sends what would otherwise be lost in
 * the Worker (an unhandled rejection, an uncaught error) to the bench server's `/failed`, so the run ends with it at
 * once rather than at a timeout.
 *
 * @module
 */
const fail = (text: string) => fetch("/failed", { method: "POST", body: text });
addEventListener("error", (event) => {
  const e = event as ErrorEvent;
  fail(`uncaught in the Worker: ${e.error instanceof Error ? e.error.stack : e.message}`);
});
addEventListener("unhandledrejection", (event) => {
  const reason = (event as PromiseRejectionEvent).reason;
  fail(`unhandled rejection in the Worker: ${reason instanceof Error ? reason.stack : String(reason)}`);
});
