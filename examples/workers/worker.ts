/**
 * A Cloudflare Worker whose Durable Object keeps an informer of ConfigMaps across requests: each `GET /step` runs the
 * informer for a time budget (`?budgetMs=`, default 5000), from the state the last request saved in the object's
 * storage, and answers with the changes it saw. The first request does the initial sync; later ones watch from the
 * saved resourceVersion (no relist while the server still has it) and see each change once.
 *
 * Bindings (wrangler.toml, or workerd's config: tests/servers/examples.test.ts):
 * - `INFORMER`: the Durable Object namespace of `ConfigMapInformer`;
 * - `KUBE`: a service (or mTLS certificate) binding whose fetch reaches the API server with its TLS: the platform's
 *   fetch cannot trust a cluster's private CA, so `connectCluster` is given this fetch;
 * - `KUBE_SERVER`, `KUBE_TOKEN` (a secret), `NAMESPACE`: text.
 *
 * In a project: `import { ... } from "watchwire"` and `"watchwire/kubernetes"` (this checkout's test bundles them from
 * ../../mod.ts and ../../kubernetes.ts with esbuild). The informer reads protobuf with core/v1's decoders alone
 * (ConfigMaps are core/v1), so the Worker's bundle holds only those of the generated decoders.
 *
 * @module
 */
import {
  connectCluster,
  durableObjectStateStore,
  type DurableObjectStorageLike,
  informer,
  type KubernetesObject,
  loadInformerState,
  runInformerWithin,
} from "../../mod.ts";
import { coreV1, createKubernetesDecoders } from "../../kubernetes.ts";

/** The decoders of the protobuf the informer reads: core/v1's kinds. */
const decoders = createKubernetesDecoders([coreV1]);

/** The parts of the Workers runtime's types used here (from @cloudflare/workers-types in a project). */
interface DurableObjectState {
  storage: DurableObjectStorageLike;
}
interface DurableObjectNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}
interface Env {
  INFORMER: DurableObjectNamespace;
  KUBE: { fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> };
  KUBE_SERVER: string;
  KUBE_TOKEN: string;
  NAMESPACE: string;
}

/** The Durable Object: one informer, its state in the object's storage. */
export class ConfigMapInformer {
  readonly #state: DurableObjectState;
  readonly #env: Env;

  constructor(state: DurableObjectState, env: Env) {
    this.#state = state;
    this.#env = env;
  }

  async fetch(request: Request): Promise<Response> {
    const budgetMs = Number(new URL(request.url).searchParams.get("budgetMs") ?? 5000);
    const store = durableObjectStateStore(this.#state.storage);
    const connection = await connectCluster(
      { server: this.#env.KUBE_SERVER, token: this.#env.KUBE_TOKEN },
      { fetch: (input, init) => this.#env.KUBE.fetch(input, init) },
    );
    try {
      const resume = await loadInformerState(store, "configmaps");
      const configMaps = informer(
        connection,
        { version: "v1", resource: "configmaps", namespace: this.#env.NAMESPACE },
        {
          format: "protobuf",
          protobuf: { decoders },
          resume,
        },
      );
      const changes: string[] = [];
      const line = (type: string, o: KubernetesObject) => `${type} ${o.metadata?.name} ${o.metadata?.resourceVersion}`;
      // replay: false: the objects of the saved state were told to an earlier request.
      configMaps.addHandlers({
        add: (o) => void changes.push(line("add", o)),
        update: (_old, o) => void changes.push(line("update", o)),
        delete: (o) => void changes.push("finalStateUnknown" in o ? `delete ${o.key}` : line("delete", o)),
      }, { replay: false });
      const result = await runInformerWithin(configMaps, { budgetMs, store, key: "configmaps" });
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
}

export default {
  fetch(request: Request, env: Env): Promise<Response> | Response {
    if (new URL(request.url).pathname !== "/step") return new Response("GET /step?budgetMs=N\n", { status: 404 });
    return env.INFORMER.get(env.INFORMER.idFromName("configmaps")).fetch(request);
  },
};
