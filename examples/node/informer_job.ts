/**
 * A scheduled job in Node (cron, a CI step, a Lambda-style function): each run watches the ConfigMaps of a namespace
 * for a time budget, from where the last run stopped, prints each change once (one line each) and saves the
 * informer's state in a directory for the next run. The first run does the initial sync (every ConfigMap, as `add`);
 * later runs watch from the saved resourceVersion, with no relist while the server still has it.
 *
 *   KUBECONFIG=... NAMESPACE=default STATE_DIR=./state BUDGET_MS=5000 node --import tsx examples/node/informer_job.ts
 *
 * In a project: `import { ... } from "watchwire"` (from this checkout: ../../mod.ts).
 *
 * @module
 */
import process from "node:process";
import {
  connectCluster,
  fileStateStore,
  informer,
  type KubernetesObject,
  loadInformerState,
  loadKubeconfig,
  runInformerWithin,
} from "../../mod.ts";

const namespace = process.env.NAMESPACE ?? "default";
const store = fileStateStore(process.env.STATE_DIR ?? "./state");
const key = `configmaps-${namespace}`;

const connection = await connectCluster(await loadKubeconfig());
try {
  const resume = await loadInformerState(store, key);
  const configMaps = informer(connection, { version: "v1", resource: "configmaps", namespace }, { resume });
  const line = (type: string, o: KubernetesObject) => `${type} ${o.metadata?.name} ${o.metadata?.resourceVersion}`;
  // replay: false: the objects of the saved state were printed by an earlier run.
  configMaps.addHandlers({
    add: (o) => console.log(line("add", o)),
    update: (_old, o) => console.log(line("update", o)),
    delete: (o) => console.log("finalStateUnknown" in o ? `delete ${o.key}` : line("delete", o)),
  }, { replay: false });
  const result = await runInformerWithin(configMaps, { budgetMs: Number(process.env.BUDGET_MS ?? 5000), store, key });
  console.error(
    `${resume === undefined ? "started" : "resumed"}; initial syncs: ${configMaps.stats.initialSyncs}; ` +
      `saved ${result.state?.objects.length ?? 0} objects at resourceVersion ${result.state?.resourceVersion} ` +
      `(${result.bytes} bytes)`,
  );
} finally {
  await connection.close();
}
