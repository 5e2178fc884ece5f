/**
 * The CLI in Node, Deno and Bun on the same damaged captures: every run must print the same stdout and stderr and exit
 * with the same status, and no run may end with an exit status other than 0 or 1 or print a stack trace.
 *
 * Each case takes a bundled capture (the HTTP/1.1 fixtures with their request side, the etcd and Go captures with
 * theirs), damages one side (a bit flipped, a byte inserted, bytes deleted, or the end cut off), and runs
 * `decode --output ndjson|table [--request FILE] FILE` with `node --import tsx bin/node.ts`, `bun bin/node.ts` and
 * `deno run --allow-read bin/deno.ts`. The cases follow from the seed (a fixed xorshift generator), so a difference is
 * reproduced by running the same seed and count again; the damaged files of a differing case are kept and named.
 * A case takes about two seconds (three runtimes start), so this is a script, run by .ci/run with a few cases, rather
 * than a test.
 *
 *   node --import tsx scripts/cross-runtime-cli.ts [COUNT=20] [SEED=1]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const count = Number(process.argv[2] ?? 20);
let seed = Number(process.argv[3] ?? 1) | 0 || 1;
if (!Number.isInteger(count) || count < 1) {
  console.error("usage: cross-runtime-cli.ts [COUNT=20] [SEED=1]");
  process.exit(2);
}

/** xorshift32: the same seed gives the same cases. */
function random(): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
}
const below = (n: number) => Math.floor(random() * n);

/** [server-to-client, client-to-server] of every bundled capture. */
const captures: [string, string][] = [];
for (const name of readdirSync(join(root, "fixtures"))) {
  const file = join(root, "fixtures", name);
  if (name.endsWith(".http") && !name.endsWith(".request.http")) {
    captures.push([file, file.replace(/\.http$/, ".request.http")]);
  }
  if (name.endsWith(".s2c.bin")) captures.push([file, file.replace(/\.s2c\.bin$/, ".c2s.bin")]);
}
for (const name of readdirSync(join(root, "fixtures/kubernetes/captures"))) {
  const file = join(root, "fixtures/kubernetes/captures", name);
  if (name.endsWith(".s2c.bin")) captures.push([file, file.replace(/\.s2c\.bin$/, ".c2s.bin")]);
}
captures.sort();

function damage(bytes: Uint8Array): Uint8Array {
  const at = below(bytes.length);
  switch (below(4)) {
    case 0: {
      const out = bytes.slice();
      out[at] ^= 1 << below(8);
      return out;
    }
    case 1:
      return Uint8Array.from([...bytes.subarray(0, at), below(256), ...bytes.subarray(at)]);
    case 2:
      return Uint8Array.from([...bytes.subarray(0, at), ...bytes.subarray(at + 1 + below(4))]);
    default:
      return bytes.slice(0, at);
  }
}

const deno = join(root, "node_modules/.bin/deno");
const bun = join(root, "node_modules/.bin/bun");
const runtimes: [string, string, string[]][] = [
  ["node", process.execPath, ["--import", "tsx", join(root, "bin/node.ts")]],
  ["deno", deno, ["run", "--allow-read", join(root, "bin/deno.ts")]],
  ["bun", bun, [join(root, "bin/node.ts")]],
];

const scratch = mkdtempSync(join(tmpdir(), "watchwire-cross-runtime-"));
let differing = 0;
for (let i = 0; i < count; i++) {
  const [s2c, c2s] = captures[below(captures.length)];
  const withRequest = random() < 0.6;
  const damageRequest = withRequest && random() < 0.3;
  const server = new Uint8Array(readFileSync(s2c));
  const client = new Uint8Array(readFileSync(c2s));
  const serverFile = join(scratch, `case${i}.s2c`);
  const clientFile = join(scratch, `case${i}.c2s`);
  writeFileSync(serverFile, damageRequest ? server : damage(server));
  writeFileSync(clientFile, damageRequest ? damage(client) : client);
  const args = ["decode", "--output", random() < 0.5 ? "ndjson" : "table"];
  if (withRequest) args.push("--request", clientFile);
  args.push(serverFile);
  const results = runtimes.map(([name, command, prefix]) => {
    const run = spawnSync(command, [...prefix, ...args], { cwd: root, encoding: "utf8", maxBuffer: 1 << 28 });
    return { name, status: run.status, stdout: run.stdout, stderr: run.stderr, error: run.error };
  });
  const problems: string[] = [];
  for (const r of results) {
    if (r.error !== undefined) problems.push(`${r.name} did not run: ${r.error}`);
    else if (r.status !== 0 && r.status !== 1) {
      problems.push(`${r.name} exited with ${r.status}: ${r.stderr.slice(0, 500)}`);
    } else if (/\n\s+at /.test(r.stderr)) problems.push(`${r.name} printed a stack trace: ${r.stderr.slice(0, 500)}`);
  }
  const [first, ...others] = results;
  for (const r of others) {
    for (const key of ["status", "stdout", "stderr"] as const) {
      if (r[key] !== first[key]) {
        problems.push(
          `${r.name}'s ${key} differs from node's:\n  node: ${String(first[key]).slice(0, 400)}\n  ${r.name}: ${
            String(r[key]).slice(0, 400)
          }`,
        );
      }
    }
  }
  const what = `case ${i}: ${s2c.slice(root.length)} (${damageRequest ? "request side damaged" : "damaged"}), ${
    args.slice(1).join(" ")
  }`;
  if (problems.length > 0) {
    differing++;
    console.log(`DIFFERS ${what}\n${problems.join("\n")}`);
  } else console.log(`same    ${what.replaceAll(scratch, "$TMP")}: exit ${first.status}`);
}
if (differing === 0) rmSync(scratch, { recursive: true, force: true });
console.log(
  `cross-runtime CLI: ${count} cases (seed ${process.argv[3] ?? 1}), ${differing} differing${
    differing > 0 ? `; their files are in ${scratch}` : ""
  }`,
);
process.exit(differing === 0 ? 0 : 1);
