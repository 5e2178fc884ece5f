// The README's TypeScript examples, as a reader copies them. Each ```ts block that imports "watchwire" is taken from
// README.md as it stands, pointed at the sources instead of the npm package, type-checked with the project's strict
// settings, and run against a real `node:http` server standing in for the API server (it checks the bearer token and
// serves the refgen fixtures: the JSON and the protobuf watch of the same Pods, and a captured HTTP/1.1 response). What
// each example prints must be what its events say. A README example that no longer compiles or runs fails here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const fixtures = join(root, "fixtures");
const TOKEN = "readme-token";

/** The entry points the examples import, longest first, and the sources each stands for. */
const ENTRY_POINTS: [string, string][] = [
  ["watchwire/wire", "wire.ts"],
  ["watchwire/kubernetes", "kubernetes.ts"],
  ["watchwire/capture", "capture.ts"],
  ["watchwire/cli", "cli.ts"],
  ["watchwire", "mod.ts"],
];

/**
 * The ```ts blocks of README.md that import from watchwire's entry points, in order; not the one that reads a
 * kubeconfig, which tests/servers/readme_cluster.test.ts runs against a real kube-apiserver.
 */
function readmeExamples(): string[] {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]).filter((code) =>
    /from "watchwire(\/[\w-]+)?"/.test(code) && !/loadKubeconfig\(/.test(code)
  );
}

const podJsonLines = () =>
  readFileSync(join(fixtures, "kubernetes/streams/v1.Pod.json"), "utf8").split("\n").filter(Boolean);

function serve(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://x");
  // The capture example's file and key log: tcpdump's capture of curl watching over TLS 1.2 (fixtures/README.md).
  if (url.pathname === "/capture") {
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.end(readFileSync(join(fixtures, "captures/capture-tls12-http1-json.pcap")));
    return;
  }
  if (url.pathname === "/keys") {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(readFileSync(join(fixtures, "captures/capture-tls12-http1-json.keys.txt")));
    return;
  }
  if (req.headers.authorization !== `Bearer ${TOKEN}`) {
    res.writeHead(401, { "content-type": "application/json" });
    res.end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}');
    return;
  }
  const watch = url.searchParams.get("watch") === "1" && url.searchParams.get("allowWatchBookmarks") === "true";
  if (!watch || !url.pathname.endsWith("/pods")) {
    res.writeHead(404).end();
    return;
  }
  if ((req.headers.accept ?? "").startsWith("application/vnd.kubernetes.protobuf")) {
    res.writeHead(200, { "content-type": "application/vnd.kubernetes.protobuf;stream=watch" });
    res.end(readFileSync(join(fixtures, "kubernetes/streams/v1.Pod.pb")));
  } else {
    res.writeHead(200, { "content-type": "application/json" });
    // One event per write, as the API server flushes them.
    for (const line of podJsonLines()) res.write(line + "\n");
    res.end();
  }
}

/** What each example prints for the fixtures, from the JSON stream and the capture's recorded events. */
function expectedOutput(index: number): string[] {
  const events = podJsonLines().map((line) => JSON.parse(line));
  const untilError = events.slice(0, events.findIndex((e) => e.type === "ERROR"));
  switch (index) {
    case 0: // JSON watch: type and name until the ERROR
      return untilError.map((e) => `${e.type} ${e.object.metadata?.name}`);
    case 1: // protobuf, metadata mode: type, name, and whether the decoded object has a spec
      return untilError.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.spec !== undefined}`);
    case 2: // a capture: every event's connection and type, as curl received them
      return readFileSync(join(fixtures, "captures/capture-tls12-http1-json.body"), "utf8").split("\n").filter(Boolean)
        .map((line) => `1 ${JSON.parse(line).type}`);
    default:
      throw new Error(`no expected output for README example ${index}`);
  }
}

// Type-checking and running examples in processes: seconds, near bun test's 5 s default on a busy machine.
test("README: its TypeScript examples type-check and print what their events say, against a real server", {
  timeout: 60_000,
}, async () => {
  const examples = readmeExamples();
  assert.equal(examples.length, 3, "the README's ```ts examples that import watchwire");
  // Two levels below the root, so that "../../mod.ts" is the sources' entry point.
  const dir = join(root, ".tmp", `readme-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const server = createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const files = examples.map((code, i) => {
      const file = join(dir, `example${i}.ts`);
      // The reader's own values, declared before the example; console.log collected; the entry points pointed at
      // their sources (the same exports).
      const prelude = [
        `const apiServer = ${JSON.stringify(base)};`,
        `const token = ${JSON.stringify(TOKEN)};`,
        `const printed: string[] = ((globalThis as Record<string, unknown>).__readmePrinted ??= []) as string[];`,
        `const console = { log: (...values: unknown[]) => printed.push(values.map(String).join(" ")) };`,
        `void apiServer, token;`,
      ].join("\n");
      const body = ENTRY_POINTS
        .reduce((text, [entry, source]) => text.replaceAll(`from "${entry}"`, `from "../../${source}"`), code)
        .replaceAll(`"file-or-url"`, JSON.stringify(`${base}/capture`))
        .replaceAll(`"keys-url"`, JSON.stringify(`${base}/keys`));
      // The imports stay first; the prelude follows them.
      const imports = body.match(/^(import[\s\S]*?;\n)+/)?.[0] ?? "";
      writeFileSync(file, `${imports}${prelude}\n${body.slice(imports.length)}\nexport {};\n`);
      return file;
    });

    // Type-check, strict, as the project's own code.
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ extends: join(root, "tsconfig.json"), include: files }),
    );
    const tsc = spawnSync(join(root, "node_modules/.bin/tsc"), ["--noEmit", "-p", join(dir, "tsconfig.json")], {
      encoding: "utf8",
    });
    assert.equal(tsc.status, 0, `README examples do not type-check:\n${tsc.stdout}${tsc.stderr}`);

    for (const [i, file] of files.entries()) {
      const printed: string[] = [];
      (globalThis as Record<string, unknown>).__readmePrinted = printed;
      await import(pathToFileURL(file).href);
      assert.deepEqual(printed, expectedOutput(i), `README example ${i + 1}`);
      assert.ok(printed.length > 0);
    }
  } finally {
    delete (globalThis as Record<string, unknown>).__readmePrinted;
    // The examples' fetch keeps its connection alive, and close() waits for every connection to end: without this
    // it waits for the client's idle timeout (90 s in Deno), as it did under load.
    await new Promise((resolve) => {
      server.close(resolve);
      server.closeAllConnections();
    });
    rmSync(dir, { recursive: true, force: true });
  }
});
