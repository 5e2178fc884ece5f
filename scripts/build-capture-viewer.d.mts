// Types of scripts/build-capture-viewer.mjs.

/** Where to build. */
export interface BuildCaptureViewerOptions {
  /** The site's directory (default web/capture-viewer/dist). */
  out?: string;
}

/** What was built. */
export interface BuiltCaptureViewer {
  /** The site's directory, absolute. */
  out: string;
  /** Its files: index.html, viewer.css, viewer.js, viewer.js.map. */
  files: string[];
  /** The size of viewer.js. */
  bundleBytes: number;
  /** How many files of dist/ the bundle holds. */
  libraryFiles: number;
  /** A dist/ older than src/, esbuild's warnings. */
  warnings: string[];
}

/** Builds the capture viewer into a static site, with the library as published (dist/, through package.json's exports). */
export function buildCaptureViewer(options?: BuildCaptureViewerOptions): Promise<BuiltCaptureViewer>;
