/**
 * kubeconfig parsing, merging and context resolution, on kubeconfigs of the shapes kubectl's own tests use: merged
 * KUBECONFIG files, relative paths, -data fields, exec plugins, missing and mistyped fields (each a clear error that
 * names the file, the entry and the field). Files are real files in a temporary directory, read through the runtime's
 * host adapter, so this runs the same in Node, Deno and Bun.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterAccessError } from "../src/cluster/errors.ts";
import type { Host } from "../src/cluster/host.ts";
import { mergeKubeconfigs, parseKubeconfig } from "../src/cluster/kubeconfig/kubeconfig.ts";
import { loadKubeconfig, readKubeconfig } from "../src/cluster/kubeconfig/load_kubeconfig.ts";
import { resolveContext } from "../src/cluster/kubeconfig/resolve_context.ts";

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);
const base64 = (s: string) => btoa(s);

/** A temporary directory with `files` (paths relative to it); removed after `run`. */
async function withFiles(files: Record<string, string>, run: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "watchwire-kubeconfig-"));
  try {
    for (const [name, content] of Object.entries(files)) {
      const path = join(dir, name);
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, content);
    }
    await run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A host whose environment is `env` and whose files are the real ones. */
async function hostWith(env: Record<string, string>): Promise<Host> {
  const { readFile } = await import("node:fs/promises");
  return { readFile: async (path) => new Uint8Array(await readFile(path)), getEnv: (name) => env[name] };
}

async function rejectsWith(promise: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof ClusterAccessError, `a ClusterAccessError, not ${e}`);
    assert.equal(e.code, code);
    assert.match(e.message, message);
    return true;
  });
}

const KIND_CONFIG = `
apiVersion: v1
kind: Config
preferences: {}
clusters:
- name: kind-dev
  cluster:
    server: https://127.0.0.1:40123
    certificate-authority: certs/ca.crt
- name: prod
  cluster:
    server: https://prod.example:6443/k8s/clusters/c-1
    certificate-authority-data: ${base64("CA-PEM")}
    tls-server-name: api.prod.example
users:
- name: kind-dev
  user:
    client-certificate: ../shared/client.crt
    client-key: /abs/client.key
- name: token-file
  user:
    tokenFile: token
- name: prod-exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/credential-plugin
      args: [get-token, --cluster, prod]
      env:
      - name: PROFILE
        value: prod
      interactiveMode: Never
      provideClusterInfo: true
- name: search-path
  user:
    exec: { apiVersion: client.authentication.k8s.io/v1beta1, command: example-exec-plugin }
- name: impersonating
  user:
    token: abc
    as: jane
    as-groups: [developers, viewers]
    as-uid: "1234"
contexts:
- name: kind-dev
  context: { cluster: kind-dev, user: kind-dev, namespace: web }
- name: prod
  context: { cluster: prod, user: prod-exec }
- name: token-file
  context: { cluster: prod, user: token-file }
- name: impersonating
  context: { cluster: prod, user: impersonating }
current-context: kind-dev
`;

test("kubeconfig: relative paths are taken relative to the file's directory, as kubectl does", async () => {
  const config = await parseKubeconfig(KIND_CONFIG, { path: "/home/me/.kube/config" });
  assert.equal(config.clusters.get("kind-dev")?.["certificate-authority"], "/home/me/.kube/certs/ca.crt");
  assert.equal(config.users.get("kind-dev")?.["client-certificate"], "/home/me/shared/client.crt");
  assert.equal(config.users.get("kind-dev")?.["client-key"], "/abs/client.key");
  assert.equal(config.users.get("token-file")?.tokenFile, "/home/me/.kube/token");
  // An exec command with a separator is relative to the kubeconfig; a bare name is looked up on PATH.
  assert.equal(config.users.get("prod-exec")?.exec?.command, "/home/me/.kube/bin/credential-plugin");
  assert.equal(config.users.get("search-path")?.exec?.command, "example-exec-plugin");
  assert.equal(config["current-context"], "kind-dev");
  assert.deepEqual(config.paths, ["/home/me/.kube/config"]);
});

test("kubeconfig: a context resolves to its cluster, credentials (files read, -data decoded) and namespace", async () => {
  await withFiles({
    ".kube/config": KIND_CONFIG,
    ".kube/certs/ca.crt": "CA FROM FILE",
    "shared/client.crt": "CLIENT CERT",
  }, async (dir) => {
    const host: Host = {
      ...(await hostWith({})),
      // /abs/client.key is not on this machine: the test's host serves it.
      readFile: async (path) =>
        path === "/abs/client.key" ? new TextEncoder().encode("CLIENT KEY") : (await hostWith({})).readFile(path),
    };
    const kubeconfig = await readKubeconfig({ path: join(dir, ".kube/config"), host });
    const dev = await resolveContext(kubeconfig, { host });
    assert.equal(dev.server, "https://127.0.0.1:40123");
    assert.equal(text(dev.caData), "CA FROM FILE");
    assert.equal(text(dev.clientCertificateData), "CLIENT CERT");
    assert.equal(text(dev.clientKeyData), "CLIENT KEY");
    assert.equal(dev.namespace, "web");
    assert.match(dev.source ?? "", /context "kind-dev"/);

    const prod = await resolveContext(kubeconfig, { context: "prod", host });
    assert.equal(prod.server, "https://prod.example:6443/k8s/clusters/c-1");
    assert.equal(text(prod.caData), "CA-PEM");
    assert.equal(prod.tlsServerName, "api.prod.example");
    assert.deepEqual(prod.exec, {
      apiVersion: "client.authentication.k8s.io/v1",
      command: join(dir, ".kube/bin/credential-plugin"),
      args: ["get-token", "--cluster", "prod"],
      env: [{ name: "PROFILE", value: "prod" }],
      interactiveMode: "Never",
      provideClusterInfo: true,
    });
    assert.equal(prod.namespace, undefined);

    const tokenFile = await resolveContext(kubeconfig, { context: "token-file", host });
    assert.equal(tokenFile.tokenFile, join(dir, ".kube/token"), "kept as a path, re-read as it rotates");
    assert.equal(tokenFile.token, undefined);

    const impersonating = await resolveContext(kubeconfig, { context: "impersonating", host });
    assert.deepEqual(impersonating.impersonate, { user: "jane", groups: ["developers", "viewers"], uid: "1234" });
  });
});

test("kubeconfig: KUBECONFIG's files merge as kubectl merges them (first definition and current-context win)", async () => {
  await withFiles({
    "a.yaml": `
clusters: [{ name: shared, cluster: { server: "https://a.example" } }]
users: [{ name: me, user: { token: from-a } }]
contexts: [{ name: a, context: { cluster: shared, user: me } }]
`,
    "b.yaml": `
current-context: b
clusters:
- { name: shared, cluster: { server: "https://b.example" } }
- { name: only-b, cluster: { server: "https://only-b.example" } }
users: [{ name: me, user: { token: from-b } }]
contexts:
- { name: a, context: { cluster: only-b } }
- { name: b, context: { cluster: shared, user: me, namespace: bee } }
`,
    "c.yaml": "current-context: c\n",
  }, async (dir) => {
    const env = {
      KUBECONFIG: [join(dir, "a.yaml"), join(dir, "missing.yaml"), join(dir, "b.yaml"), join(dir, "c.yaml")].join(":"),
    };
    const host = await hostWith(env);
    const merged = await readKubeconfig({ host });
    assert.deepEqual(
      merged.paths,
      [join(dir, "a.yaml"), join(dir, "b.yaml"), join(dir, "c.yaml")],
      "a missing file is skipped",
    );
    assert.equal(merged["current-context"], "b", "the first file that sets current-context wins");
    assert.equal(merged.clusters.get("shared")?.server, "https://a.example");
    assert.equal(merged.clusters.get("only-b")?.server, "https://only-b.example");
    assert.equal(merged.contexts.get("a")?.cluster, "shared");
    const config = await loadKubeconfig({ host });
    assert.equal(config.server, "https://a.example");
    assert.equal(config.token, "from-a");
    assert.equal(config.namespace, "bee");
    // --context picks another; --kubeconfig reads one file alone.
    assert.equal((await loadKubeconfig({ host, context: "a" })).namespace, undefined);
    const alone = await loadKubeconfig({ host, path: join(dir, "b.yaml") });
    assert.equal(alone.server, "https://b.example");
    assert.equal(alone.token, "from-b");

    await rejectsWith(
      readKubeconfig({ host: await hostWith({ KUBECONFIG: join(dir, "none.yaml") }) }),
      "KUBECONFIG_NOT_FOUND",
      /none of the KUBECONFIG files exists: .*none\.yaml/,
    );
    await rejectsWith(
      readKubeconfig({ host, path: join(dir, "none.yaml") }),
      "KUBECONFIG_NOT_FOUND",
      /none\.yaml does not exist/,
    );
  });
});

test("kubeconfig: without KUBECONFIG, ~/.kube/config is read", async () => {
  await withFiles({ ".kube/config": KIND_CONFIG, ".kube/certs/ca.crt": "CA" }, async (dir) => {
    const config = await resolveContext(await readKubeconfig({ host: await hostWith({ HOME: dir }) }), {
      context: "token-file",
      host: await hostWith({}),
    });
    assert.equal(config.tokenFile, join(dir, ".kube/token"));
    await rejectsWith(
      readKubeconfig({ host: await hostWith({ HOME: join(dir, "nobody") }) }),
      "KUBECONFIG_NOT_FOUND",
      /KUBECONFIG is not set and .*nobody\/\.kube\/config does not exist/,
    );
  });
});

test("kubeconfig: missing and mistyped fields are errors that name the file, the entry and the field", async () => {
  const cases: [string, string, RegExp][] = [
    ["clusters: [{ name: dev, cluster: {} }]", "KUBECONFIG_INVALID", /\/k cluster "dev": server is missing/],
    ["clusters: [{ name: dev }]", "KUBECONFIG_INVALID", /\/k cluster "dev": cluster is missing/],
    ["clusters: [{ cluster: { server: x } }]", "KUBECONFIG_INVALID", /\/k clusters\[0\]: name is missing/],
    ["clusters: { dev: {} }", "KUBECONFIG_INVALID", /\/k: clusters must be a list/],
    ["contexts: [{ name: c, context: { user: u } }]", "KUBECONFIG_INVALID", /\/k context "c": cluster is missing/],
    [
      "users: [{ name: u, user: { token: 12345 } }]",
      "KUBECONFIG_INVALID",
      /\/k user "u": token must be a string, not number/,
    ],
    [
      "users: [{ name: u, user: { exec: { command: aws } } }]",
      "KUBECONFIG_INVALID",
      /\/k user "u": exec.apiVersion is missing/,
    ],
    [
      "users: [{ name: u, user: { exec: { apiVersion: v1 } } }]",
      "KUBECONFIG_INVALID",
      /\/k user "u": exec.command is missing/,
    ],
    [
      "clusters: [{ name: c, cluster: { server: x, insecure-skip-tls-verify: maybe } }]",
      "KUBECONFIG_INVALID",
      /insecure-skip-tls-verify must be true or false, not "maybe"/,
    ],
    ["kind: Pod", "KUBECONFIG_INVALID", /\/k: kind is "Pod", not Config/],
    ["- a list", "KUBECONFIG_INVALID", /\/k: must be a mapping/],
    ["clusters: [ { name: x", "KUBECONFIG_INVALID", /\/k is not valid YAML/],
  ];
  for (const [yaml, code, message] of cases) {
    await rejectsWith(parseKubeconfig(yaml, { path: "/k" }), code, message);
  }
});

test("kubeconfig: contexts, clusters and users that do not exist, and fields kubectl refuses together", async () => {
  const host: Host = {
    readFile: () => Promise.reject(Object.assign(new Error("no"), { code: "ENOENT" })),
    getEnv: () => undefined,
  };
  const resolve = async (yaml: string, context?: string) =>
    resolveContext(await parseKubeconfig(yaml, { path: "/k" }), { host, ...(context ? { context } : {}) });
  const cluster = "clusters: [{ name: c, cluster: { server: https://x } }]\n";
  await rejectsWith(resolve(cluster), "CONTEXT_NOT_FOUND", /kubeconfig \/k has no current-context/);
  await rejectsWith(
    resolve(cluster + "contexts: [{ name: a, context: { cluster: c } }]", "b"),
    "CONTEXT_NOT_FOUND",
    /context "b" is not in kubeconfig \/k \(contexts: "a"\)/,
  );
  await rejectsWith(
    resolve("contexts: [{ name: a, context: { cluster: gone } }]", "a"),
    "CONTEXT_NOT_FOUND",
    /context "a" names cluster "gone", which is not in kubeconfig \/k/,
  );
  await rejectsWith(
    resolve(cluster + "contexts: [{ name: a, context: { cluster: c, user: gone } }]", "a"),
    "CONTEXT_NOT_FOUND",
    /names user "gone"/,
  );
  const withUser = (user: string, clusterFields = "") =>
    resolve(
      `clusters: [{ name: c, cluster: { server: https://x${clusterFields} } }]\nusers: [{ name: u, user: ${user} }]\n` +
        "contexts: [{ name: a, context: { cluster: c, user: u } }]\ncurrent-context: a\n",
    );
  await rejectsWith(
    withUser("{}", `, certificate-authority: ca.crt, certificate-authority-data: ${base64("x")}`),
    "KUBECONFIG_INVALID",
    /certificate-authority and certificate-authority-data are both set/,
  );
  await rejectsWith(
    withUser("{}", `, insecure-skip-tls-verify: true, certificate-authority-data: ${base64("x")}`),
    "KUBECONFIG_INVALID",
    /insecure-skip-tls-verify with a certificate authority/,
  );
  await rejectsWith(
    withUser(`{ client-certificate-data: ${base64("c")} }`),
    "KUBECONFIG_INVALID",
    /user "u": client-certificate is set but client-key is missing/,
  );
  await rejectsWith(
    withUser("{ token: t, username: a, password: b }"),
    "KUBECONFIG_INVALID",
    /more than one authentication method/,
  );
  await rejectsWith(
    withUser("{ client-certificate: /no/such.crt, client-key: /no/such.key }"),
    "FILE_UNREADABLE",
    /cannot read \/no\/such\.crt \(client-certificate of user "u"\): ENOENT/,
  );
  await rejectsWith(
    withUser("{ client-certificate-data: '%%%', client-key-data: a2V5 }"),
    "KUBECONFIG_INVALID",
    /client-certificate-data is not base64/,
  );
  await rejectsWith(withUser("{ auth-provider: { name: gcp } }"), "UNSUPPORTED", /auth-provider "gcp" was removed/);
  // insecure-skip-tls-verify alone, and YAML 1.1's `yes` as kubectl reads it.
  assert.equal((await withUser("{ token: t }", ", insecure-skip-tls-verify: yes")).insecureSkipTlsVerify, true);
  // A timestamp-looking token stays a string, as for kubectl.
  assert.equal((await withUser("{ token: 2026-11-28 }")).token, "2026-11-28");
  // Basic auth.
  const basic = await withUser("{ username: admin, password: s3cret }");
  assert.deepEqual([basic.username, basic.password], ["admin", "s3cret"]);
});

test("kubeconfig: merging keeps every file's entries and paths in order", async () => {
  const a = await parseKubeconfig("users: [{ name: u, user: { token: a } }]", { path: "/a" });
  const b = await parseKubeconfig("users: [{ name: u, user: { token: b } }, { name: v }]\ncurrent-context: x", {
    path: "/b",
  });
  const merged = mergeKubeconfigs([a, b]);
  assert.equal(merged.users.get("u")?.token, "a");
  assert.deepEqual(merged.users.get("v"), {}, "a user with no fields is an empty user, as kubectl allows");
  assert.equal(merged["current-context"], "x");
  assert.deepEqual(merged.paths, ["/a", "/b"]);
});

test("kubeconfig: a billion-laughs file is refused, not expanded", async () => {
  const lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 12; i++) lines.push(`a${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(", ")}]`);
  await rejectsWith(parseKubeconfig(lines.join("\n"), { path: "/k" }), "KUBECONFIG_INVALID", /not valid YAML/);
});
