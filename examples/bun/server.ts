/**
 * An edge-style function in Bun (`Bun.serve`): each `GET /step` watches the ConfigMaps of a namespace for a time
 * budget (`?budgetMs=`, default 5000) from the state the last request saved in a directory, and answers with the
 * changes it saw, each once. The first request does the initial sync; later ones watch from the saved resourceVersion
 * (no relist while the server still has it), in this process or a new one.
 *
 *   KUBECONFIG=... NAMESPACE=default STATE_DIR=./state bun examples/bun/server.ts
 *
 * It prints `listening on http://127.0.0.1:PORT` (`PORT`, default: any free one). In a project:
 * `import { ... } from "watchwire"` (from this checkout: ../../mod.ts).
 *
 * @module
 */
import {
  connectCluster,
  fileStateStore,
  informer,
  type KubernetesObject,
  loadInformerState,
  loadKubeconfig,
  runInformerWithin,
} from "../../mod.ts";

// Bun's own globals, declared here so that the file type-checks without bun-types.
declare const Bun: {
  env: Record<string, string | undefined>;
  serve(options: { hostname: string; port: number; fetch(request: Request): Response | Promise<Response> }): {
    port: number;
  };
};

const namespace = Bun.env.NAMESPACE ?? "default";
const store = fileStateStore(Bun.env.STATE_DIR ?? "./state");
const key = `configmaps-${namespace}`;
const config = await loadKubeconfig();

async function step(budgetMs: number): Promise<Response> {
  const connection = await connectCluster(config);
  try {
    const resume = await loadInformerState(store, key);
    const configMaps = informer(connection, { version: "v1", resource: "configmaps", namespace }, { resume });
    const changes: string[] = [];
    const line = (type: string, o: KubernetesObject) => `${type} ${o.metadata?.name} ${o.metadata?.resourceVersion}`;
    // replay: false: the objects of the saved state were told to an earlier request.
    configMaps.addHandlers({
      add: (o) => void changes.push(line("add", o)),
      update: (_old, o) => void changes.push(line("update", o)),
      delete: (o) => void changes.push("finalStateUnknown" in o ? `delete ${o.key}` : line("delete", o)),
    }, { replay: false });
    const result = await runInformerWithin(configMaps, { budgetMs, store, key });
    return Response.json({
      resumed: resume !== undefined,
      initialSyncs: configMaps.stats.initialSyncs,
      changes,
      resourceVersion: result.state?.resourceVersion,
      objects: result.state?.objects.length,
      stateBytes: result.bytes,
    });
  } finally {
    await connection.close();
  }
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(Bun.env.PORT ?? 0),
  fetch(request) {
    const url = new URL(request.url);
    if (url.pathname !== "/step") return new Response("GET /step?budgetMs=N\n", { status: 404 });
    return step(Number(url.searchParams.get("budgetMs") ?? 5000));
  },
});
console.log(`listening on http://127.0.0.1:${server.port}`);
