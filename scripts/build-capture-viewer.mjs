// @ts-self-types="./build-capture-viewer.d.mts"
/**
 * Builds the capture viewer (web/capture-viewer/) into a static site: index.html, viewer.css, and viewer.js, the page's
 * module bundled by esbuild with the library **as published**: `watchwire`, `watchwire/capture`, ... resolve through
 * package.json's `exports` to dist/ (built by `npm install`, or `npx tsc -p tsconfig.build.json`), never to src/. The
 * bundle is a classic script (IIFE), so that the built index.html also works opened from disk (`file://`).
 *
 *   node scripts/build-capture-viewer.mjs [--out DIR]     (default: web/capture-viewer/dist)
 *
 * @module
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const pageDir = join(root, "web", "capture-viewer");

/** The newest modification time of the files under `dir` whose names end in `suffix`. */
function newest(dir, suffix) {
  let time = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) time = Math.max(time, newest(path, suffix));
    else if (entry.name.endsWith(suffix)) time = Math.max(time, statSync(path).mtimeMs);
  }
  return time;
}

/** Builds the site into `out` (default web/capture-viewer/dist); returns its files and the library files bundled. */
export async function buildCaptureViewer(options = {}) {
  const out = resolve(options.out ?? join(pageDir, "dist"));
  const entry = join(root, "dist", "capture.js");
  if (!existsSync(entry)) {
    throw new Error("dist/ has no build of the library: run `npm install` (or `npx tsc -p tsconfig.build.json`) first");
  }
  const warnings = [];
  if (newest(join(root, "src"), ".ts") > newest(join(root, "dist", "src"), ".js")) {
    warnings.push("dist/ is older than src/: `npx tsc -p tsconfig.build.json` rebuilds it");
  }
  mkdirSync(out, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: [join(pageDir, "viewer.ts")],
    outfile: join(out, "viewer.js"),
    bundle: true,
    format: "iife",
    platform: "browser",
    target: ["es2022"],
    minify: true,
    sourcemap: true,
    metafile: true,
    logLevel: "silent",
  });
  const inputs = Object.keys(Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined).inputs);
  // Only what is in the bundle: esbuild also warns of modules it read and then left out (the cluster code's
  // import.meta, say, which the page does not use).
  for (const w of result.warnings) {
    if (w.location === null || inputs.includes(w.location.file)) warnings.push(`esbuild: ${w.text}`);
  }
  // As published: the library comes from dist/ (through package.json's exports), the page's own modules from web/.
  const fromSource = inputs.filter((path) => !/^(dist|node_modules|web)\//.test(path.split(sep).join("/")));
  if (fromSource.length > 0) {
    throw new Error(`the bundle took the library from elsewhere than dist/: ${fromSource.slice(0, 5).join(", ")}`);
  }
  for (const file of ["index.html", "viewer.css"]) copyFileSync(join(pageDir, file), join(out, file));
  const files = readdirSync(out).sort();
  return {
    out,
    files,
    bundleBytes: statSync(join(out, "viewer.js")).size,
    libraryFiles: inputs.filter((path) => path.startsWith("dist/")).length,
    warnings,
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const at = process.argv.indexOf("--out");
  const out = at < 0 ? undefined : process.argv[at + 1];
  if (at >= 0 && out === undefined) {
    console.error("usage: node scripts/build-capture-viewer.mjs [--out DIR]");
    process.exit(2);
  }
  try {
    const built = await buildCaptureViewer({ out });
    for (const warning of built.warnings) console.error(`warning: ${warning}`);
    console.log(
      `capture viewer: ${relative(process.cwd(), built.out) || "."}/{${built.files.join(",")}} ` +
        `(viewer.js ${built.bundleBytes} bytes, ${built.libraryFiles} files of dist/)`,
    );
  } catch (error) {
    console.error(`build-capture-viewer: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  }
}
