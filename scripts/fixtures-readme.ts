/**
 * Writes the per-file list of fixtures/kubernetes/streams/ into fixtures/README.md (between the `streams:begin` and
 * `streams:end` markers) from fixtures/kubernetes/index.json and the files themselves, so that every stream file is
 * named with what made it. `--check` fails instead if the README differs from what it would write.
 *
 * Run: `node --import tsx scripts/fixtures-readme.ts [--check]`.
 */
import { readFileSync, writeFileSync } from "node:fs";

const root = new URL("../fixtures/", import.meta.url);
const readme = new URL("README.md", root);
const BEGIN = "<!-- streams:begin (written by scripts/fixtures-readme.ts) -->";
const END = "<!-- streams:end -->";

interface Entry {
  apiVersion: string;
  kind: string;
  pb: string;
  json: string;
  realistic: string;
}

const OBJECTS: Record<string, string> = {
  handwritten: "hand-written realistic object",
  "handwritten items": "a List of the hand-written realistic object",
  filler: "deterministic filler object",
};

/** Frames of a length-prefixed protobuf watch stream. */
function frames(bytes: Uint8Array): number {
  let n = 0;
  for (let at = 0; at + 4 <= bytes.length; n++) {
    at += 4 + new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0);
  }
  return n;
}

const index: Entry[] = JSON.parse(readFileSync(new URL("kubernetes/index.json", root), "utf8"));
const rows: string[] = [];
for (const e of index) {
  const pb = new Uint8Array(readFileSync(new URL(`kubernetes/${e.pb}`, root)));
  const json = readFileSync(new URL(`kubernetes/${e.json}`, root));
  const lines = json.toString("utf8").split("\n").filter((l) => l !== "").length;
  const what = `\`${e.apiVersion}\` \`${e.kind}\` (ADDED: ${OBJECTS[e.realistic] ?? e.realistic})`;
  rows.push(`| \`kubernetes/${e.pb}\` | protobuf watch stream, ${pb.length} B, ${frames(pb)} frames: ${what} |`);
  rows.push(`| \`kubernetes/${e.json}\` | JSON watch stream, ${json.length} B, ${lines} lines: ${what} |`);
}
const section = [
  BEGIN,
  "",
  "Each was written by `go run ./cmd/fixtures` (run by `tools/refgen/regen.sh fixtures`; Go 1.26.8, `k8s.io/api`,",
  "`k8s.io/apimachinery`, `k8s.io/client-go` v0.37.2, `sigs.k8s.io/randfill` v1.0.0), with the events, objects and",
  "encoders described above; `kubernetes/index.json` lists the same files.",
  "",
  "| file | what it is |",
  "| ---- | ---------- |",
  ...rows,
  "",
  END,
].join("\n");

const text = readFileSync(readme, "utf8");
const start = text.indexOf(BEGIN);
const end = text.indexOf(END);
if (start === -1 || end === -1) throw new Error(`fixtures/README.md has no ${BEGIN} ... ${END} section`);
const next = text.slice(0, start) + section + text.slice(end + END.length);
if (process.argv.includes("--check")) {
  if (next !== text) {
    console.error(
      "fixtures/README.md: the stream file list is out of date (node --import tsx scripts/fixtures-readme.ts)",
    );
    process.exit(1);
  }
  console.log(`fixtures/README.md: ${rows.length} stream files, as listed`);
} else {
  writeFileSync(readme, next);
  console.log(`fixtures/README.md: ${rows.length} stream files listed`);
}
