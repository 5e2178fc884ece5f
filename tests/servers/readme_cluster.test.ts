/**
 * The README's cluster example ("A cluster: kubeconfig, list, watch"), as a reader copies it: taken from README.md,
 * pointed at the sources, type-checked strictly, and run in this runtime with KUBECONFIG naming the real
 * kube-apiserver's kubeconfig, while Pods are created. One change to its text: the watch gets `timeoutSeconds: 3`, so
 * that it ends (the example's watch runs until the server ends it).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { sharedCluster } from "./_cluster.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));

function clusterExample(): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const examples = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]).filter((code) =>
    /loadKubeconfig\(/.test(code)
  );
  assert.equal(examples.length, 1, "one README example reads a kubeconfig");
  return examples[0];
}

test("README: the cluster example lists and watches Pods of the real kube-apiserver", async () => {
  const cluster = await sharedCluster();
  const example = clusterExample();
  assert.match(example, /allowWatchBookmarks: true\b/);
  const dir = join(root, ".tmp", `readme-cluster-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const kubectl = (args: string[], input?: string) =>
    spawnSync(cluster.binaries.kubectl, ["--kubeconfig", cluster.kubeconfig, ...args], {
      encoding: "utf8",
      ...(input === undefined ? {} : { input }),
    });
  // Pods in "default" need its ServiceAccount (no controller-manager makes it); another runtime may have made it.
  kubectl(["create", "serviceaccount", "default", "-n", "default"]);
  const before = JSON.parse(kubectl(["get", "pods", "-n", "default", "-o", "json"]).stdout).items.length;
  const previous = process.env.KUBECONFIG;
  try {
    const file = join(dir, "example.ts");
    const body = example
      .replaceAll(`from "watchwire"`, `from "../../mod.ts"`)
      .replaceAll(`from "watchwire/kinds"`, `from "../../kinds.ts"`)
      .replace(/allowWatchBookmarks: true\b/, "allowWatchBookmarks: true, timeoutSeconds: 3");
    const imports = body.match(/^(import[\s\S]*?;\n)+/)?.[0] ?? "";
    const prelude = [
      `const printed: string[] = ((globalThis as Record<string, unknown>).__readmePrinted ??= []) as string[];`,
      `const console = { log: (...values: unknown[]) => printed.push(values.map(String).join(" ")) };`,
    ].join("\n");
    writeFileSync(file, `${imports}${prelude}\n${body.slice(imports.length)}\nexport {};\n`);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ extends: join(root, "tsconfig.json"), include: [file] }),
    );
    const tsc = spawnSync(join(root, "node_modules/.bin/tsc"), ["--noEmit", "-p", join(dir, "tsconfig.json")], {
      encoding: "utf8",
    });
    assert.equal(tsc.status, 0, `the README's cluster example does not type-check:\n${tsc.stdout}${tsc.stderr}`);

    process.env.KUBECONFIG = cluster.kubeconfig;
    const printed: string[] = [];
    (globalThis as Record<string, unknown>).__readmePrinted = printed;
    const name = `readme-${Math.random().toString(36).slice(2, 8)}`;
    const running = import(pathToFileURL(file).href);
    // Once it has listed (loading the sources takes a while), while its watch runs: a Pod, which stays Pending.
    for (let i = 0; printed.length === 0 && i < 600; i++) await new Promise((r) => setTimeout(r, 50));
    const created = kubectl(["run", name, "-n", "default", "--image=busybox", "--restart=Never"]);
    assert.equal(created.status, 0, created.stderr);
    await running;
    assert.match(printed[0], new RegExp(`^${before} pods at \\d+$`));
    assert.ok(printed.includes(`ADDED ${name} Pending`), printed.join("\n"));
    kubectl(["delete", "pod", name, "-n", "default", "--grace-period=0", "--force"]);
  } finally {
    if (previous === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = previous;
    delete (globalThis as Record<string, unknown>).__readmePrinted;
    rmSync(dir, { recursive: true, force: true });
  }
});
