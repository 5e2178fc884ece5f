/**
 * `watchwire watch`'s arguments: `--output state FILE` (as issue 36 spells it) is `--state FILE`; other outputs and
 * a missing FILE are usage errors. `--mode full|metadata`, and `--metadata-only` as its shorthand.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseWatchArgs } from "../src/cli/watch.ts";

test("watch arguments: --output state FILE keeps the state in FILE, as --state FILE does", () => {
  const spelt = parseWatchArgs(["--output", "state", "pods.state", "pods"], false);
  const short = parseWatchArgs(["--state", "pods.state", "pods"], false);
  assert.notEqual(spelt, "help");
  assert.deepEqual(spelt, short);
  assert.equal((spelt as { state?: string }).state, "pods.state");
  // With a format as well: both kept.
  const both = parseWatchArgs(["-o", "ndjson", "--output", "state", "s.bin", "pods"], false) as {
    output?: string;
    state?: string;
  };
  assert.deepEqual([both.output, both.state], ["ndjson", "s.bin"]);
  assert.throws(() => parseWatchArgs(["--output", "yaml", "pods"], false), /ndjson, table or state FILE/);
  assert.throws(() => parseWatchArgs(["pods", "--output", "state"], false));
});

test("watch arguments: --mode full|metadata (the protobuf option's name); --metadata-only is --mode metadata", () => {
  const mode = (args: string[]) => (parseWatchArgs([...args, "pods"], false) as { mode?: string }).mode;
  assert.deepEqual([mode([]), mode(["--mode", "metadata"]), mode(["--mode=full"])], ["full", "metadata", "full"]);
  assert.deepEqual(
    parseWatchArgs(["--metadata-only", "pods"], false),
    parseWatchArgs(["--mode", "metadata", "pods"], false),
  );
  assert.throws(() => parseWatchArgs(["--mode", "partial", "pods"], false), /--mode must be full or metadata/);
  // Metadata mode is protobuf's: with JSON or CBOR, a usage error that names the option as it was given.
  assert.throws(
    () => parseWatchArgs(["--format", "json", "--mode", "metadata", "pods"], false),
    /--mode metadata needs --format protobuf/,
  );
  assert.throws(
    () => parseWatchArgs(["--format", "cbor", "--metadata-only", "pods"], false),
    /--metadata-only needs --format protobuf/,
  );
});
