/**
 * The msgpackr decoder of `watchwire/msgpack-no-eval`: msgpackr's build without code generation. Internal.
 *
 * @module
 */
// msgpackr's `unpack-no-eval` is its decoder alone, built with every `new Function` replaced by a name that is never
// defined: it never compiles a record reader, so it never trips a Content-Security-Policy. It has no type
// declarations of its own; those of the main build describe it (src/codec/msgpack/msgpackr_no_eval.d.ts).
import { Unpackr } from "msgpackr/unpack-no-eval";
import { type MsgpackUnpacker, unpackrOptions } from "./format.ts";

/** A new msgpackr decoder for one stream segment that never tries to generate code. */
export function newUnpackrNoEval(): MsgpackUnpacker {
  return new Unpackr(unpackrOptions());
}
