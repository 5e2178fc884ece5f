/// <reference lib="dom" />
/**
 * `node:fs` for the benchmarks run in a browser (scripts/browser-bench.ts bundles them with this in its place): a
 * synchronous `readFileSync` of a URL on the bench server, by synchronous XMLHttpRequest, which a dedicated Worker may
 * make (the benchmarks run in one). The benchmarks name their files relative to `import.meta.url`, which in the bundle
 * is the server's `/bench.js`, so `../fixtures/...` is the server's `/fixtures/...`.
 *
 * @module
 */

/** The bytes at `url` (an absolute URL on the bench server), or an Error naming its status. */
export function readFileSync(url: URL | string): Uint8Array {
  const request = new XMLHttpRequest();
  request.open("GET", String(url), false);
  request.responseType = "arraybuffer";
  request.send();
  if (request.status !== 200) throw new Error(`readFileSync ${url}: HTTP ${request.status}`);
  return new Uint8Array(request.response as ArrayBuffer);
}
