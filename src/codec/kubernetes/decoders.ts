/**
 * {@linkcode createKubernetesDecoders}: a {@linkcode KubernetesProtobufDecoders} from the generated decoders of the
 * group/versions an application needs.
 *
 * @module
 */
import { metaV1 } from "./generated/meta_v1.ts";
import { listMetaDecoder as listMeta, objectMetaDecoder as objectMeta } from "./meta_decoders.ts";
import type { GroupVersionDecoders, KubernetesProtobufDecoders, ObjectDecoder } from "./registry.ts";

/**
 * Builds the decoders of the given group/versions (each a generated module's export: `appsV1`, `coreV1`, ...), and
 * always of `v1` `Status` (the object of ERROR events); a kind of another group/version then decodes as an unknown kind (apiVersion, kind, metadata and the raw bytes), and a
 * bundler leaves the decoders of the group/versions not named out. Later entries win where two give the same kind.
 *
 * @example
 * ```ts
 * import { coreV1, createKubernetesDecoders } from "watchwire";
 *
 * const decoders = createKubernetesDecoders([coreV1]);
 * console.log(decoders.decoder("v1", "Pod") !== undefined, decoders.decoder("apps/v1", "Deployment")); // true undefined
 * ```
 */
export function createKubernetesDecoders(groupVersions: Iterable<GroupVersionDecoders>): KubernetesProtobufDecoders {
  const byKey = new Map<string, ObjectDecoder>();
  const metaByKey = new Map<string, ObjectDecoder | null>();
  // v1 Status (the object of ERROR events) always: its module is needed for ObjectMeta anyway.
  for (const gv of [metaV1, ...groupVersions]) {
    for (const [kind, decode] of Object.entries(gv.kinds)) {
      const key = `${gv.apiVersion}\n${kind}`;
      byKey.set(key, decode);
      const meta = gv.metadata?.[kind];
      metaByKey.set(key, meta === "list" ? listMeta : meta === "none" ? null : objectMeta);
    }
  }
  return {
    decoder: (apiVersion, kind) => byKey.get(`${apiVersion}\n${kind}`),
    objectMeta,
    metadataDecoder: (apiVersion, kind) => metaByKey.get(`${apiVersion}\n${kind}`),
  };
}
