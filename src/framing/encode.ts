/**
 * Encoders for the length-prefixed framings, for tests and tooling: {@linkcode encodeLengthPrefixed} and
 * {@linkcode encodeGrpcMessages}.
 *
 * @module
 */
import { MAX_FRAME_LENGTH } from "./frame_splitter.ts";

/**
 * A message to frame as it is, with its compressed flag set as given (its bytes must then be compressed already).
 *
 * @example
 * ```ts
 * import { encodeGrpcMessages, GrpcMessageDecoderStream, type GrpcMessageInput } from "watchwire/wire";
 *
 * const gzipped = new Blob(["hi"]).stream().pipeThrough(new CompressionStream("gzip"));
 * const input: GrpcMessageInput = { data: new Uint8Array(await new Response(gzipped).arrayBuffer()), compressed: true };
 * const wire = await encodeGrpcMessages([input, Uint8Array.of(0x21)]);
 * const messages = new Blob([wire]).stream().pipeThrough(new GrpcMessageDecoderStream({ encoding: "gzip" }));
 * for await (const { data } of messages) console.log(new TextDecoder().decode(data)); // hi, then !
 * ```
 */
export interface GrpcMessageInput {
  /** The message bytes, as they go on the wire. */
  data: Uint8Array;
  /** The compressed flag. */
  compressed: boolean;
}

/**
 * Options of {@linkcode encodeGrpcMessages}.
 *
 * @example
 * ```ts
 * import { encodeGrpcMessages, type EncodeGrpcOptions } from "watchwire/wire";
 *
 * const options: EncodeGrpcOptions = { compress: true };
 * const wire = await encodeGrpcMessages([new TextEncoder().encode("hello")], options);
 * console.log(wire[0], wire[5], wire[6]); // 1 31 139 (flagged, then a gzip member)
 * ```
 */
export interface EncodeGrpcOptions {
  /** gzip each message given as a plain `Uint8Array` (with the runtime's `CompressionStream`) and flag it. */
  compress?: boolean;
}

/**
 * Frames `messages` as Kubernetes' protobuf watch stream does: each one a 4-byte big-endian length, then its bytes.
 * Throws a `RangeError` for a message longer than 4 GiB - 1.
 *
 * @example
 * ```ts
 * import { encodeLengthPrefixed } from "watchwire/wire";
 *
 * console.log(encodeLengthPrefixed([Uint8Array.of(7, 8), new Uint8Array(0)])); // Uint8Array(10) [ 0, 0, 0, 2, 7, 8, 0, 0, 0, 0 ]
 * ```
 */
export function encodeLengthPrefixed(messages: Iterable<Uint8Array>): Uint8Array<ArrayBuffer> {
  return frame(Array.from(messages, (data) => ({ data, compressed: false })), false);
}

/**
 * Frames `messages` as gRPC does: each one a compressed flag (0 or 1), a 4-byte big-endian length, then its bytes.
 * A plain `Uint8Array` is sent as it is (flag 0), or gzipped (flag 1) with `compress: true`; a
 * {@linkcode GrpcMessageInput} is sent as given. Asynchronous because `CompressionStream` is.
 *
 * @example
 * ```ts
 * import { encodeGrpcMessages } from "watchwire/wire";
 *
 * console.log(await encodeGrpcMessages([Uint8Array.of(7)])); // Uint8Array(6) [ 0, 0, 0, 0, 1, 7 ]
 * const gzipped = await encodeGrpcMessages([Uint8Array.of(7)], { compress: true });
 * console.log(gzipped[0]); // 1
 * ```
 */
export async function encodeGrpcMessages(
  messages: Iterable<Uint8Array | GrpcMessageInput>,
  options: EncodeGrpcOptions = {},
): Promise<Uint8Array<ArrayBuffer>> {
  const list: GrpcMessageInput[] = [];
  for (const m of messages) {
    if (!(m instanceof Uint8Array)) list.push(m);
    else if (options.compress) list.push({ data: await gzip(m), compressed: true });
    else list.push({ data: m, compressed: false });
  }
  return frame(list, true);
}

function frame(messages: GrpcMessageInput[], flagged: boolean): Uint8Array<ArrayBuffer> {
  const prefix = flagged ? 5 : 4;
  let total = 0;
  for (const { data } of messages) {
    if (data.length > MAX_FRAME_LENGTH) throw new RangeError(`message of ${data.length} bytes does not fit a frame`);
    total += prefix + data.length;
  }
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const { data, compressed } of messages) {
    if (flagged) out[at] = compressed ? 1 : 0;
    view.setUint32(at + prefix - 4, data.length);
    out.set(data, at + prefix);
    at += prefix + data.length;
  }
  return out;
}

async function gzip(data: Uint8Array): Promise<Uint8Array> {
  const compressed = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(compressed).arrayBuffer());
}
