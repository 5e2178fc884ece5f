/**
 * Checks refgen stream pairs beyond the committed ones: every folder given (each as `tools/refgen/cmd/fixtures
 * -salt S -out DIR` writes it: the same realistic objects, other fuzzed ones) must pass what
 * tests/kubernetes_fixtures.test.ts asks of fixtures/kubernetes/: each protobuf stream decodes to exactly the events of
 * its JSON stream (whole, and cut at random points), and metadata mode gives the same metadata and, on `decode()`, the
 * same objects. Prints one line per folder and every difference; exits 1 if there is one.
 *
 * Run through `tools/refgen/soak.sh [COUNT] [FIRST] [FILL]`, which makes the folders (needs Go), or directly:
 * `node --import tsx scripts/soak-kubernetes-fixtures.ts DIR...`.
 */
import { readFileSync } from "node:fs";
import process from "node:process";
import { checkFullMode, checkMetadataMode, type StreamPair } from "../tests/_kubernetes_streams.ts";

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error("usage: soak-kubernetes-fixtures.ts DIR...");
  process.exit(2);
}

/** A small seeded generator (xorshift32): the same folder is cut the same way on every run. */
function cutter(seed: number): (bytes: Uint8Array) => Uint8Array[] {
  let x = seed | 1;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  return (bytes) => {
    const chunks: Uint8Array[] = [];
    let at = 0;
    while (at < bytes.length) {
      // Mostly short pieces (headers, varints and envelopes cut in the middle), now and then a long one.
      const n = next() < 0.8 ? 1 + Math.floor(next() * 16) : 1 + Math.floor(next() * 4096);
      chunks.push(bytes.slice(at, at + n));
      at += n;
    }
    return chunks;
  };
}

let failures = 0;
let pairs = 0;
let events = 0;
let partial = 0;
for (const [d, dir] of dirs.entries()) {
  const base = dir.endsWith("/") ? dir : `${dir}/`;
  const read = (name: string) => new Uint8Array(readFileSync(base + name));
  const index: StreamPair[] = JSON.parse(new TextDecoder().decode(read("index.json")));
  const cut = cutter(0x9e3779b9 + d);
  let dirFailures = 0;
  for (const entry of index) {
    const [pb, json] = [read(entry.pb), read(entry.json)];
    try {
      events += (await checkFullMode(pb, json, [cut(pb)])).events;
      partial += await checkMetadataMode(pb);
    } catch (error) {
      dirFailures++;
      console.error(`${base}${entry.pb}: ${entry.apiVersion} ${entry.kind}: ${String(error).slice(0, 3000)}`);
    }
    pairs++;
  }
  failures += dirFailures;
  console.log(`${dir}: ${index.length} kinds, ${dirFailures === 0 ? "all equal" : `${dirFailures} differ`}`);
}
console.log(
  `${dirs.length} folders, ${pairs} stream pairs, ${events} events (each also cut into pieces), ` +
    `${partial} objects in metadata mode: ${failures === 0 ? "no difference" : `${failures} pairs differ`}`,
);
process.exit(failures === 0 ? 0 : 1);
