/**
 * watchwire/cli: the `watchwire` command (`decode`, `watch`) without its runtime glue. {@linkcode runCli} takes the
 * arguments and a {@linkcode CliHost} (files, stdin, stdout, stderr, a cluster connection) and returns the exit
 * status, so it runs in any runtime and in tests. The executables are the glue: `bin/node.ts` (the npm bin
 * `watchwire`, for Node and Bun) and `bin/deno.ts` (`deno task decode` in a checkout). It decodes every built-in kind
 * of Kubernetes protobuf, so importing it brings in all the generated decoders.
 *
 * @example
 * ```ts
 * import { runCli } from "watchwire/cli";
 *
 * // `watchwire decode -` on a JSON watch body from stdin, its output collected.
 * let out = "";
 * const status = await runCli(["decode", "--output", "ndjson", "-"], {
 *   open: async () => new Blob(['{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web"}}}\n']).stream(),
 *   stdout: (text) => void (out += text),
 *   stderr: () => {},
 *   stdoutIsTerminal: false,
 *   version: "0.1.0",
 * });
 * console.log(status, out.trim()); // 0 {"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web"}}}
 * ```
 *
 * @module
 */
export * from "./src/cli/main.ts";
