/**
 * The cluster examples, as a reader copies them: README.md's "An informer" and docs/cluster-and-informer.md's "A
 * cluster: kubeconfig, list, watch". Each is taken from its page, pointed at the sources, type-checked strictly, and
 * run in this runtime with KUBECONFIG naming the real kube-apiserver's kubeconfig, while a Pod is created. One change to
 * each text so that it ends: the watch gets `timeoutSeconds: 3`; the informer is handed to the test, which stops it.
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

/** The pages whose ```ts blocks that read a kubeconfig are the cluster examples. */
const PAGES = ["README.md", "docs/cluster-and-informer.md"];

/** The entry points the examples import, longest first, and the sources each stands for. */
const ENTRY_POINTS: [string, string][] = [
  ["watchwire/wire", "wire.ts"],
  ["watchwire/kubernetes", "kubernetes.ts"],
  ["watchwire/capture", "capture.ts"],
  ["watchwire/cli", "cli.ts"],
  ["watchwire", "mod.ts"],
];

function clusterExamples(): string[] {
  return PAGES.flatMap((page) => {
    const text = readFileSync(join(root, page), "utf8");
    return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]).filter((code) =>
      /loadKubeconfig\(/.test(code)
    );
  });
}

/** Writes `example` as a module pointed at the sources, type-checks it, and returns its path. */
function prepare(dir: string, name: string, example: string): string {
  const file = join(dir, `${name}.ts`);
  const body = ENTRY_POINTS
    .reduce((code, [entry, source]) => code.replaceAll(`from "${entry}"`, `from "../../${source}"`), example)
    .replace(/allowWatchBookmarks: true\b/, "allowWatchBookmarks: true, timeoutSeconds: 3");
  const imports = body.match(/^(import[\s\S]*?;\n)+/)?.[0] ?? "";
  const prelude = [
    `const printed: string[] = ((globalThis as Record<string, unknown>).__readmePrinted ??= []) as string[];`,
    `const console = { log: (...values: unknown[]) => printed.push(values.map(String).join(" ")) };`,
  ].join("\n");
  // An informer the example starts is handed to the test, which stops it.
  const informerName = /const (\w+) = informer</.exec(body)?.[1];
  const handOver = informerName === undefined
    ? ""
    : `(globalThis as Record<string, unknown>).__readmeInformer = ${informerName};\n`;
  writeFileSync(file, `${imports}${prelude}\n${body.slice(imports.length)}\n${handOver}export {};\n`);
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: join(root, "tsconfig.json"), include: [file] }));
  const tsc = spawnSync(join(root, "node_modules/.bin/tsc"), ["--noEmit", "-p", join(dir, "tsconfig.json")], {
    encoding: "utf8",
  });
  assert.equal(tsc.status, 0, `the README's ${name} example does not type-check:\n${tsc.stdout}${tsc.stderr}`);
  return file;
}

test("README: the cluster examples list, watch and inform on Pods of the real kube-apiserver", async () => {
  const cluster = await sharedCluster();
  const examples = clusterExamples();
  const informerExample = examples.find((code) => /informer</.test(code)) ?? "";
  const listWatchExample = examples.find((code) => /allowWatchBookmarks: true\b/.test(code)) ?? "";
  assert.match(informerExample, /informer</, "a cluster example runs an informer (README.md)");
  assert.match(listWatchExample, /allowWatchBookmarks: true\b/, "a cluster example lists and watches (docs/)");
  const dir = join(root, ".tmp", `readme-cluster-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const kubectl = (args: string[]) =>
    spawnSync(cluster.binaries.kubectl, ["--kubeconfig", cluster.kubeconfig, ...args], { encoding: "utf8" });
  // Pods in "default" need its ServiceAccount (no controller-manager makes it); another runtime may have made it.
  kubectl(["create", "serviceaccount", "default", "-n", "default"]);
  const previous = process.env.KUBECONFIG;
  const globals = globalThis as Record<string, unknown>;
  try {
    process.env.KUBECONFIG = cluster.kubeconfig;
    for (const [name, example] of [["list-watch", listWatchExample], ["informer", informerExample]] as const) {
      const file = prepare(dir, name, example);
      // The informer example watches every namespace, the list-watch one "default".
      const scope = name === "informer" ? ["-A"] : ["-n", "default"];
      const before = JSON.parse(kubectl(["get", "pods", ...scope, "-o", "json"]).stdout).items.length;
      const printed: string[] = [];
      globals.__readmePrinted = printed;
      const pod = `readme-${name}-${Math.random().toString(36).slice(2, 8)}`;
      const running = import(pathToFileURL(file).href);
      // Once it has listed (loading the sources takes a while), while it watches: a Pod, which stays Pending.
      const listedLine = name === "informer" ? / pods cached at \d+$/ : / pods at \d+$/;
      for (let i = 0; !printed.some((l) => listedLine.test(l)) && i < 600; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const created = kubectl(["run", pod, "-n", "default", "--image=busybox", "--restart=Never"]);
      assert.equal(created.status, 0, created.stderr);
      if (name === "informer") {
        for (let i = 0; !printed.includes(`add ${pod} Pending`) && i < 200; i++) {
          await new Promise((r) => setTimeout(r, 50));
        }
        (globals.__readmeInformer as { stop(): void }).stop();
        await running;
        assert.ok(printed.some((l) => new RegExp(`^${before} pods cached at \\d+$`).test(l)), printed.join("\n"));
        assert.equal(printed.filter((l) => l.startsWith("add ")).length, before + 1, printed.join("\n"));
      } else {
        await running;
        assert.match(printed[0], new RegExp(`^${before} pods at \\d+$`));
      }
      assert.ok(printed.includes(`${name === "informer" ? "add" : "ADDED"} ${pod} Pending`), printed.join("\n"));
      kubectl(["delete", "pod", pod, "-n", "default", "--grace-period=0", "--force"]);
    }
  } finally {
    if (previous === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = previous;
    delete globals.__readmePrinted;
    delete globals.__readmeInformer;
    rmSync(dir, { recursive: true, force: true });
  }
});
