/**
 * {@linkcode captureFormatOf}: which format a capture file is in (pcap or pcapng), from its first 4 bytes. Internal.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import { PCAP_MAGIC_MICROSECONDS, PCAP_MAGIC_NANOSECONDS, PcapReader } from "./pcap_reader.ts";
import { PcapngReader, SECTION_HEADER_BLOCK } from "./pcapng_reader.ts";
import { readUint32 } from "./read_uint.ts";
import type { CaptureFormatReader } from "./unit_plan.ts";

/** The bytes a capture file must start with before its format can be told. */
export const MAGIC_LENGTH = 4;

/**
 * The reader of the format whose magic number `head` (a file's first 4 or more bytes) starts with: pcap (0xa1b2c3d4
 * or 0xa1b23c4d, either byte order) or pcapng (a Section Header Block, 0x0a0d0d0a). Anything else is
 * `CAPTURE_INVALID` at offset 0, naming the bytes found.
 */
export function captureFormatOf(head: Uint8Array, maxRecordBytes: number): CaptureFormatReader {
  const little = readUint32(head, 0, true);
  const big = readUint32(head, 0, false);
  if (little === SECTION_HEADER_BLOCK) return new PcapngReader(maxRecordBytes);
  for (const magic of [little, big]) {
    if (magic === PCAP_MAGIC_MICROSECONDS || magic === PCAP_MAGIC_NANOSECONDS) return new PcapReader(maxRecordBytes);
  }
  throw new DecodeError("CAPTURE_INVALID", 0, `not a pcap or pcapng file: starts with ${bytesText(head)}`);
}

/** The first 4 bytes of `head` as a person reads them: hex, and the text they spell where printable. */
function bytesText(head: Uint8Array): string {
  const bytes = Array.from(head.subarray(0, MAGIC_LENGTH));
  const hex = bytes.map((b) => b.toString(16).padStart(2, "0")).join(" ");
  const text = bytes.every((b) => b >= 0x20 && b < 0x7f) ? ` ("${String.fromCharCode(...bytes)}")` : "";
  return hex + text;
}
