/**
 * {@linkcode readTcpHeader}: the TCP header of a captured packet (ports, numbers, flags) and where its payload is.
 * Internal.
 *
 * @module
 */
import type { SkipPacket } from "./packet_problems.ts";

/** What a TCP header says: written by {@linkcode readTcpHeader}, one object reused. */
export interface TcpHeader {
  sourcePort: number;
  destinationPort: number;
  /** Unsigned 32-bit. */
  sequence: number;
  /** Unsigned 32-bit. */
  acknowledgment: number;
  /** The flags byte (FIN 0x01 ... CWR 0x80). */
  flags: number;
  /** Offsets of the payload's captured bytes in the packet's data. */
  payloadStart: number;
  payloadEnd: number;
  /** Payload bytes past the captured data: the snapshot length cut them. */
  missingBytes: number;
}

/** A {@linkcode TcpHeader} to reuse. */
export function newTcpHeader(): TcpHeader {
  return {
    sourcePort: 0,
    destinationPort: 0,
    sequence: 0,
    acknowledgment: 0,
    flags: 0,
    payloadStart: 0,
    payloadEnd: 0,
    missingBytes: 0,
  };
}

/**
 * Reads the TCP header at `at` of a segment that ends at `end` by the IP lengths (past `data.length` when the capture
 * cut it) into `tcp` and returns `true`, or reports to `skip` why it cannot and returns `false`. Options are skipped
 * by the data offset; when the capture cut the packet inside them, the payload is empty and all of it missing. The
 * checksum is not checked (captures on hosts that offload it have wrong ones).
 */
export function readTcpHeader(data: Uint8Array, at: number, end: number, tcp: TcpHeader, skip: SkipPacket): boolean {
  if (at + 20 > end) return skip("malformed", at, `TCP segment of ${end - at} bytes is under the 20 of a header`);
  if (at + 20 > data.length) return skip("truncated", at, "TCP header cut by the snapshot length");
  const headerLength = (data[at + 12] >> 4) * 4;
  if (headerLength < 20) {
    return skip("malformed", at, `TCP data offset ${headerLength / 4} is under 5`);
  }
  if (at + headerLength > end) {
    return skip("malformed", at, `TCP header length ${headerLength} is over the segment's ${end - at} bytes`);
  }
  tcp.sourcePort = (data[at] << 8) | data[at + 1];
  tcp.destinationPort = (data[at + 2] << 8) | data[at + 3];
  tcp.sequence = ((data[at + 4] << 24) | (data[at + 5] << 16) | (data[at + 6] << 8) | data[at + 7]) >>> 0;
  tcp.acknowledgment = ((data[at + 8] << 24) | (data[at + 9] << 16) | (data[at + 10] << 8) | data[at + 11]) >>> 0;
  tcp.flags = data[at + 13];
  const payloadStart = at + headerLength;
  const capturedEnd = Math.min(end, data.length);
  tcp.payloadStart = Math.min(payloadStart, capturedEnd);
  tcp.payloadEnd = capturedEnd;
  tcp.missingBytes = end - Math.max(payloadStart, capturedEnd);
  return true;
}
