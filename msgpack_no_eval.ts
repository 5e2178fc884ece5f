/**
 * watchwire/msgpack-no-eval: the msgpack event decoders of the `watchwire` entry point, `MsgpackEventDecoderStream`
 * and `MsgpackEventDecoder`, on msgpackr's decoder built without code generation. Same options, same events, same
 * errors; no `new Function`, ever. For pages and Workers whose Content-Security-Policy forbids `'unsafe-eval'`: the
 * main entry points' decoders decode the same there, but try `new Function` once, which the browser reports as a
 * violation. This entry point imports nothing of msgpackr's main build, so a bundle holds one msgpackr decoder.
 * The encoder (`MsgpackEventEncoderStream`, from `watchwire` or `watchwire/core`) never generates code.
 *
 * @example
 * ```ts
 * import { DecodeError } from "watchwire";
 * import { MsgpackEventDecoderStream } from "watchwire/msgpack-no-eval";
 *
 * // Not a watchwire msgpack stream: the error names the first wrong byte.
 * try {
 *   await Array.fromAsync(ReadableStream.from([Uint8Array.of(0, 0, 0, 5, 0x57, 0x57, 0x4d, 0x50, 9)])
 *     .pipeThrough(new MsgpackEventDecoderStream()));
 * } catch (e) {
 *   if (e instanceof DecodeError) console.log(e.code, e.offset); // MESSAGE_INVALID 8
 * }
 * ```
 *
 * @module
 */
export * from "./src/codec/msgpack/no_eval/msgpack_event_decoder_stream.ts";
export * from "./src/codec/msgpack/no_eval/msgpack_event_decoder.ts";
export type { MsgpackEventDecoderOptions } from "./src/codec/msgpack/msgpack_event_decoder_stream.ts";
