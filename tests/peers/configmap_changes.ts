/**
 * The ConfigMap changes the WebSocket checks watch (tests/servers/websocket_*.test.ts, scripts/browser-websocket-check.ts),
 * made with kubectl through `run` (each caller's own kubectl: the tests' waits for node:test, the script's does not).
 */

/** Runs kubectl with `args` (and `input` on stdin); its stdout. */
export type Kubectl = (args: string[], input?: string) => string;

/**
 * In namespace `ns`: `a` added, `b` added with text and binary data and a label, `a` updated, `b` labelled, `deleted`
 * deleted, then `b` annotated; returns the resourceVersion of that last change.
 */
export function changeConfigMaps(run: Kubectl, ns: string, deleted = "a"): string {
  run(["create", "configmap", "a", "-n", ns, "--from-literal=k=v"]);
  const b = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "b", namespace: ns, labels: { app: "ws" } },
    data: { text: "héllo ✓ \u{1f600}", empty: "" },
    binaryData: { bin: "AAEC/w==" },
  };
  run(["create", "-f", "-"], JSON.stringify(b));
  run(["patch", "configmap", "a", "-n", ns, "-p", '{"data":{"k":"v2","more":"x"}}']);
  run(["label", "configmap", "b", "-n", ns, "tier=front"]);
  run(["delete", "configmap", deleted, "-n", ns]);
  const rv = run(["annotate", "configmap", "b", "-n", ns, "note=end", "-o", "jsonpath={.metadata.resourceVersion}"]);
  if (!/^\d+$/.test(rv)) throw new Error(`kubectl annotate printed ${JSON.stringify(rv)}, not a resourceVersion`);
  return rv;
}
