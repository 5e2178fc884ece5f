/**
 * {@linkcode statusOnlyDecoders}: the decoders used where none are given and the built-in ones are not imported.
 * Internal.
 *
 * @module
 */
import { createKubernetesDecoders } from "./decoders.ts";
import type { KubernetesProtobufDecoders } from "./registry.ts";

let statusOnly: KubernetesProtobufDecoders | undefined;

/**
 * Decoders of no kind but `v1` `Status` (the object of ERROR events, which every reader decodes): the default of every
 * decoder, whose modules never import the built-in decoders, so that a bundle holds only the
 * group/versions its code names. Every other kind decodes as an unknown one (`KubernetesProtobufObject`).
 */
export function statusOnlyDecoders(): KubernetesProtobufDecoders {
  statusOnly ??= createKubernetesDecoders([]);
  return statusOnly;
}
