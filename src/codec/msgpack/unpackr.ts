/**
 * The msgpackr decoder of `MsgpackEventDecoder` and `MsgpackEventDecoderStream`: msgpackr's main build. Internal.
 *
 * @module
 */
import { Unpackr } from "msgpackr";
import { type MsgpackUnpacker, unpackrOptions } from "./format.ts";

/**
 * A new msgpackr decoder for one stream segment. Once it has read a record shape three times, it tries to compile a
 * reader for the shape with `new Function`, which reads it faster; where code generation is forbidden it reads on as
 * before (a CSP reports the try: `watchwire/msgpack-no-eval` never makes it).
 */
export function newUnpackr(): MsgpackUnpacker {
  return new Unpackr(unpackrOptions());
}
