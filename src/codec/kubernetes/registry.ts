/**
 * The decoders of Kubernetes protobuf objects, by `apiVersion` and `kind`: what turns the `raw` bytes of a
 * `runtime.Unknown` envelope into the object the API server's JSON would show.
 *
 * @module
 */

/** A JSON object as `JSON.parse` returns it. */
export type JsonObject = Record<string, unknown>;

/**
 * Decodes one protobuf message, `bytes[start..end)`, into `target` (whose existing keys are kept, e.g. `apiVersion` and
 * `kind` set from the envelope) and returns `target`: the object exactly as `JSON.parse` reads the JSON Go's
 * `encoding/json` writes for the Go value `proto.Unmarshal` makes of the same bytes. Throws a `DecodeError` whose
 * offset is `baseOffset + ` the position in `bytes` of the fault.
 */
export type ObjectDecoder = (
  bytes: Uint8Array,
  start: number,
  end: number,
  target: JsonObject,
  baseOffset: number,
) => JsonObject;

/** The decoders of one group/version's top-level kinds (one generated module each). */
export interface GroupVersionDecoders {
  /** `"v1"`, `"apps/v1"`, ... */
  readonly apiVersion: string;
  /** Decoders by kind. */
  readonly kinds: Readonly<Record<string, ObjectDecoder>>;
  /**
   * The kinds whose field 1 is not `ObjectMeta`: `"list"` where it is `ListMeta` (every `...List` kind, and `Status`),
   * `"none"` where the kind has no metadata (`PodLogOptions`, `DeploymentRollback`, ...).
   */
  readonly metadata?: Readonly<Record<string, "list" | "none">>;
}

/** What the protobuf watch decoder needs: object decoders by `apiVersion`/`kind`, and one for `ObjectMeta`. */
export interface KubernetesProtobufDecoders {
  /** The decoder of `apiVersion`/`kind`, or `undefined` when the kind is not known. */
  decoder(apiVersion: string, kind: string): ObjectDecoder | undefined;
  /** The decoder of `ObjectMeta` (field 1 of the top-level objects), for unknown kinds. */
  readonly objectMeta: ObjectDecoder;
  /**
   * The decoder of field 1 (`metadata`) of a known kind: `ObjectMeta`'s, or `ListMeta`'s for lists and `Status`;
   * `null` when the kind has no metadata (options kinds: decode them in full); `undefined` when the kind is not known
   * (then field 1 is taken to be `ObjectMeta`).
   */
  metadataDecoder(apiVersion: string, kind: string): ObjectDecoder | null | undefined;
}
