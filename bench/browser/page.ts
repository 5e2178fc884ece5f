/**
 * The page scripts/browser-bench.ts loads: starts the bundled benchmark (`/bench.js`) in a dedicated module Worker,
 * away from the page's event loop, and reports a Worker that fails to load or throws to `/failed`. The Worker itself
 * POSTs `/done` when the benchmark has finished and everything it printed has arrived.
 *
 * @module
 */
const worker = new Worker(`/bench.js${location.search}`, { type: "module" });
worker.addEventListener("error", (event) => {
  fetch("/failed", { method: "POST", body: `the Worker failed: ${event.message || "(no message: it did not load)"}` });
});
