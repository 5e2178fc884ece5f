/**
 * {@linkcode NpmPackage}: an npm package the library loads only when it is used, found the same way in Node, Bun, Deno,
 * bundles (Workers, browsers) and type checkers. A runtime adapter: the one module of the library core that looks at
 * Deno's namespace (whether it exists, how a specifier resolves there, what has been granted). Internal.
 *
 * Why not a static `import ... from "msgpackr"`: every entry point that re-exports a user of the package would load
 * it, used or not, and Deno resolves a bare specifier only through the *importing project's* import map, `deno.json`
 * or `package.json`. A Deno user who imports `mod.ts` by path or URL has none that names the package, so the whole
 * module graph failed to load (`Import "msgpackr" not a dependency`), JSON-only use included; with the checkout's own
 * config it loaded, and msgpackr, loading, asked for env access. Deno needs `npm:` specifiers there; Node, Bun, tsc
 * and bundlers need the bare one; a module inside `node_modules` (watchwire installed from npm) must use the bare one
 * in Deno too.
 *
 * How it loads:
 *
 * - everywhere but Deno, `importBare`: a literal `import("msgpackr")` in the package's user, which Node and Bun
 *   resolve as any import, bundlers (esbuild, Bun, webpack, Vite) put in the bundle, and tsc types (assigning it to
 *   `() => Promise<M>` checks the package's own types against `M`, the part of it the library uses);
 * - in Deno, a computed `import()`, which Deno leaves out of the module graph until it runs: the bare specifier (or
 *   `denoSpecifier`) where it resolves (a project with the package in its `node_modules` or import map, watchwire
 *   installed from npm, this checkout), else `npm:<name>@<version>[/<subpath>]`, which Deno fetches into its cache on
 *   first use (no permission asked; Deno must reach the npm registry once). The literal `import()` of `importBare`
 *   never runs in Deno, and an unresolved dynamic import does not stop Deno loading or type-checking the graph.
 *
 * To load another package this way (e.g. `yaml` for kubeconfig files): add it to package.json's `dependencies`, and
 * in the module that uses it declare the part of it used and one `NpmPackage` (tests/deno_import.test.ts checks that
 * each declared package's `version` is its range in package.json, and that JSON-only use loads none):
 *
 * ```ts ignore
 * import { NpmPackage } from "../npm_package.ts";
 *
 * interface Yaml {
 *   parse(text: string): unknown;
 * }
 * const yaml = new NpmPackage<Yaml>({ specifier: "yaml", version: "^2.8.1", importBare: () => import("yaml") });
 *
 * export async function parseKubeconfig(text: string): Promise<unknown> {
 *   return (await yaml.load()).parse(text); // loads yaml on the first call, in every runtime
 * }
 * ```
 *
 * A synchronous API can use `loaded` once `load()` has settled (the msgpack streams: their first chunk waits for the
 * load, later ones do not).
 *
 * @module
 */

/** How {@linkcode NpmPackage} finds a package. */
export interface NpmPackageOptions<M> {
  /** The package name, with a subpath if any: `"msgpackr"`, `"msgpackr/unpack-no-eval"`, `"@scope/name/sub"`. */
  specifier: string;
  /** The versions accepted where Deno fetches the package itself: its range in package.json's dependencies. */
  version: string;
  /** `() => import("<specifier>")`, the specifier written out: what Node, Bun, bundlers and tsc see. */
  importBare: () => Promise<M>;
  /**
   * Deno only: another specifier of the same package to load there, decided when it loads (e.g. a build that needs
   * no permission unless the permissions of the usual one have been granted: see {@linkcode denoHasGranted}).
   */
  denoSpecifier?: () => string;
}

interface DenoNamespace {
  version: { deno: string };
  permissions: { querySync(descriptor: { name: string }): { state: string } };
}

/** Deno's namespace where this runs in Deno (not merely where something named Deno exists). */
function deno(): DenoNamespace | undefined {
  const candidate = (globalThis as { Deno?: Partial<DenoNamespace> }).Deno;
  return typeof candidate?.version?.deno === "string" ? candidate as DenoNamespace : undefined;
}

/**
 * Whether this runs in Deno with every one of the permissions `names` granted outright (queried, never asked for).
 * False outside Deno.
 */
export function denoHasGranted(names: readonly ("env" | "read" | "ffi" | "net" | "sys" | "run" | "write")[]): boolean {
  const d = deno();
  if (d === undefined) return false;
  return names.every((name) => d.permissions.querySync({ name }).state === "granted");
}

/** `specifier` as Deno fetches it from npm: `npm:name@version`, and the subpath after it. */
function npmSpecifier(specifier: string, version: string): string {
  const parts = specifier.split("/");
  const nameParts = specifier.startsWith("@") ? 2 : 1;
  const subpath = parts.slice(nameParts).join("/");
  return `npm:${parts.slice(0, nameParts).join("/")}@${version}${subpath === "" ? "" : `/${subpath}`}`;
}

/** Whether Deno resolves the bare `specifier` from here (import map, package.json with node_modules, or from npm). */
function resolvesInDeno(specifier: string): boolean {
  try {
    (import.meta as unknown as { resolve(specifier: string): string }).resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

const declared: NpmPackage<unknown>[] = [];

/** Every {@linkcode NpmPackage} made so far (those of the modules loaded): for the tests. */
export function declaredNpmPackages(): readonly NpmPackage<unknown>[] {
  return declared;
}

/**
 * An npm package loaded on first use (see the module's documentation for how, in each runtime). Once loaded it stays
 * loaded; a failed load is tried again by the next `load()`.
 */
export class NpmPackage<M> {
  readonly specifier: string;
  readonly version: string;
  readonly #importBare: () => Promise<M>;
  readonly #denoSpecifier: (() => string) | undefined;
  #loaded: M | undefined;
  #loading: Promise<M> | undefined;

  constructor(options: NpmPackageOptions<M>) {
    this.specifier = options.specifier;
    this.version = options.version;
    this.#importBare = options.importBare;
    this.#denoSpecifier = options.denoSpecifier;
    declared.push(this as NpmPackage<unknown>);
  }

  /** The package's module once a `load()` has succeeded, else undefined. */
  get loaded(): M | undefined {
    return this.#loaded;
  }

  /** Loads the package (once: later calls share the load), or rejects with an error naming it. */
  load(): Promise<M> {
    if (this.#loaded !== undefined) return Promise.resolve(this.#loaded);
    this.#loading ??= this.#import().then(
      (module) => {
        this.#loaded = module;
        return module;
      },
      (error) => {
        this.#loading = undefined;
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(`cannot load the npm package ${this.specifier}: ${reason}`, { cause: error });
      },
    );
    return this.#loading;
  }

  #import(): Promise<M> {
    if (deno() === undefined) return this.#importBare();
    const specifier = this.#denoSpecifier?.() ?? this.specifier;
    const target = resolvesInDeno(specifier) ? specifier : npmSpecifier(specifier, this.version);
    // Computed, so that Deno does not resolve it with the module graph; the comments keep bundlers from trying to.
    return import(/* webpackIgnore: true */ /* @vite-ignore */ target) as Promise<M>;
  }
}
