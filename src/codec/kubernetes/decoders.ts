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
 * import { coreV1, createKubernetesDecoders } from "watchwire/kubernetes";
 *
 * const decoders = createKubernetesDecoders([coreV1]);
 * console.log(decoders.decoder("v1", "Pod") !== undefined, decoders.decoder("apps/v1", "Deployment")); // true undefined
 * ```
 */
export function createKubernetesDecoders(groupVersions: Iterable<GroupVersionDecoders>): KubernetesProtobufDecoders {
  // By apiVersion, then kind: two lookups of strings the envelope reader has interned (their hashes are cached),
  // rather than one of a key concatenated per event (a new string to hash every time).
  const byVersion = new Map<string, Map<string, KindDecoders>>();
  // v1 Status (the object of ERROR events) always: its module is needed for ObjectMeta anyway.
  for (const gv of [metaV1, ...groupVersions]) {
    let kinds = byVersion.get(gv.apiVersion);
    if (kinds === undefined) byVersion.set(gv.apiVersion, kinds = new Map());
    for (const [kind, decode] of Object.entries(gv.kinds)) {
      const meta = gv.metadata?.[kind];
      kinds.set(kind, { decode, metadata: meta === "list" ? listMeta : meta === "none" ? null : objectMeta });
    }
  }
  // The kind looked up last: a watch is of one kind, and each event looks it up twice (decoder, metadata decoder).
  let lastApiVersion = "";
  let lastKind = "";
  let last: KindDecoders | undefined;
  const lookup = (apiVersion: string, kind: string): KindDecoders | undefined => {
    if (kind === lastKind && apiVersion === lastApiVersion) return last;
    last = byVersion.get(apiVersion)?.get(kind);
    lastApiVersion = apiVersion;
    lastKind = kind;
    return last;
  };
  return {
    decoder: (apiVersion, kind) => lookup(apiVersion, kind)?.decode,
    objectMeta,
    metadataDecoder: (apiVersion, kind) => lookup(apiVersion, kind)?.metadata,
  };
}

/** A kind's decoder and the decoder of its field 1 (null: it has no metadata). */
interface KindDecoders {
  decode: ObjectDecoder;
  metadata: ObjectDecoder | null;
}
