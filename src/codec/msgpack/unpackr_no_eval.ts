/**
 * The msgpackr decoder of `watchwire/msgpack-no-eval`: msgpackr's build without code generation, loaded when one of
 * its decoders first decodes. Internal.
 *
 * @module
 */
import { NpmPackage } from "../../npm_package.ts";
import { type MsgpackUnpacker, unpackrOptions } from "./msgpack_event_reader.ts";
import { MSGPACKR_VERSION, type UnpackrModule } from "./msgpackr.ts";

// msgpackr's `unpack-no-eval` is its decoder alone, built with every `new Function` replaced by a name that is never
// defined: it never compiles a record reader, so it never trips a Content-Security-Policy, and it reads nothing of its
// host (no permission in Deno). It has no type declarations of its own; those of the main build describe it
// (src/codec/msgpack/msgpackr_no_eval.d.ts).
/** msgpackr's decoder built without code generation. */
export const msgpackrUnpackrNoEval: NpmPackage<UnpackrModule> = new NpmPackage<UnpackrModule>({
  specifier: "msgpackr/unpack-no-eval",
  version: MSGPACKR_VERSION,
  importBare: () => import("msgpackr/unpack-no-eval"),
});

/** A new msgpackr decoder for one stream segment that never tries to generate code (msgpackr must have loaded). */
export function newUnpackrNoEval(): MsgpackUnpacker {
  const msgpackr = msgpackrUnpackrNoEval.loaded;
  if (msgpackr === undefined) throw new Error("msgpackr has not loaded: await msgpackrUnpackrNoEval.load() first");
  return new msgpackr.Unpackr(unpackrOptions());
}
