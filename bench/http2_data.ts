/**
 * Builders of HTTP/2 traffic for the benchmarks (bench/http2.bench.ts, bench/etcd.bench.ts): header blocks made of
 * HPACK literals (no Huffman, no indexing: any decoder can read them with an empty dynamic table), DATA frames of a
 * given size, and byte concatenation.
 *
 * @module
 */
import { encodeHttp2Frame } from "../src/transport/http2/frame_encoder.ts";

const encoder = new TextEncoder();

/** An HPACK integer with an `n`-bit prefix (RFC 7541 §5.1), first byte ORed with `high`. */
function hpackInt(out: number[], value: number, n: number, high: number): void {
  const max = (1 << n) - 1;
  if (value < max) {
    out.push(high | value);
    return;
  }
  out.push(high | max);
  value -= max;
  while (value >= 128) {
    out.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  out.push(value);
}

/** A header block of "literal header field without indexing, new name" representations (RFC 7541 §6.2.2). */
export function literalHeaderBlock(fields: readonly (readonly [string, string])[]): Uint8Array {
  const out: number[] = [];
  for (const [name, value] of fields) {
    out.push(0x00);
    const n = encoder.encode(name);
    hpackInt(out, n.length, 7, 0);
    out.push(...n);
    const v = encoder.encode(value);
    hpackInt(out, v.length, 7, 0);
    out.push(...v);
  }
  return Uint8Array.from(out);
}

/** `payload` as DATA frames on `streamId` of at most `frameSize` bytes each; END_STREAM on the last if `endStream`. */
export function dataFrames(streamId: number, payload: Uint8Array, frameSize: number, endStream: boolean): Uint8Array[] {
  const frames: Uint8Array[] = [];
  for (let at = 0; at < payload.length; at += frameSize) {
    const end = Math.min(at + frameSize, payload.length);
    frames.push(
      encodeHttp2Frame({
        type: "DATA",
        streamId,
        endStream: endStream && end === payload.length,
        data: payload.subarray(at, end),
      }),
    );
  }
  return frames;
}

export { concatBytes as concat } from "../src/bytes.ts";

/** `n` deterministic pseudo-random bytes (an LCG: cheap, the same in every runtime). */
export function filler(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s >>> 24;
  }
  return out;
}
