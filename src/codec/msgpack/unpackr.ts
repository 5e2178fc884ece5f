/**
 * The msgpackr decoder of `MsgpackEventDecoder` and `MsgpackEventDecoderStream`: msgpackr's main build, loaded when
 * one of them first decodes. Internal.
 *
 * @module
 */
import { NpmPackage } from "../../npm_package.ts";
import { type MsgpackUnpacker, unpackrOptions } from "./msgpack_event_reader.ts";
import { denoMsgpackrBuild, MSGPACKR_VERSION, type UnpackrModule } from "./msgpackr.ts";

/** msgpackr's main build, for its `Unpackr` (in Deno, without its permissions, its portable build: `msgpackr/unpack`). */
export const msgpackrUnpackr: NpmPackage<UnpackrModule> = new NpmPackage<UnpackrModule>({
  specifier: "msgpackr",
  version: MSGPACKR_VERSION,
  importBare: () => import("msgpackr"),
  denoSpecifier: denoMsgpackrBuild("msgpackr/unpack"),
});

/**
 * A new msgpackr decoder for one stream segment (msgpackr must have loaded: `msgpackrUnpackr.load()`). Once it has
 * read a record shape three times, it tries to compile a reader for the shape with `new Function`, which reads it
 * faster; where code generation is forbidden it reads on as before (a CSP reports the try:
 * `watchwire/msgpack-no-eval` never makes it).
 */
export function newUnpackr(): MsgpackUnpacker {
  const msgpackr = msgpackrUnpackr.loaded;
  if (msgpackr === undefined) throw new Error("msgpackr has not loaded: await msgpackrUnpackr.load() first");
  return new msgpackr.Unpackr(unpackrOptions());
}
