/**
 * YAML text to a value, through the `yaml` package (loaded on first use, so that nothing else pays for it), read as
 * kubectl reads a kubeconfig. Internal.
 *
 * @module
 */

import { NpmPackage } from "../../npm_package.ts";

const yaml = new NpmPackage<typeof import("yaml")>({
  specifier: "yaml",
  version: "^2.9.1",
  importBare: () => import("yaml"),
});

/**
 * The value of a YAML document. YAML 1.1, as kubectl's parser (go-yaml v2): `yes` and `on` are true; timestamps
 * stay strings, as they do for kubectl.
 */
export async function parseYaml(text: string): Promise<unknown> {
  return (await yaml.load()).parse(text, {
    version: "1.1",
    // A small alias budget: a kubeconfig has no reason for many aliases, and a billion-laughs file is refused.
    maxAliasCount: 100,
    customTags: (tags) =>
      tags.filter((t) => typeof t === "string" ? t !== "timestamp" : t.tag !== "tag:yaml.org,2002:timestamp"),
  });
}
