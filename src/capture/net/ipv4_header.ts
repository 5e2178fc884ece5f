/**
 * The IPv4 header of a captured packet: its lengths, its fragment fields, its payload's place. Internal.
 *
 * @module
 */
import type { IpHeader } from "./ip_header.ts";
import { type SkipPacket, skipShort } from "./packet_problems.ts";

/**
 * Reads the IPv4 header at `at` into `ip` and returns `true`, or reports to `skip` why the packet cannot be read and
 * returns `false`. The payload ends where the total length says: trailing link-layer padding is left out, and an end
 * past the captured data is kept (the snapshot length cut the packet) as long as the packet was that long on the wire
 * (`wireEnd`). A total length of 0 (a segmentation-offload packet, its length left to the hardware) is taken to mean
 * the rest of the packet. The header checksum is not checked: captures on hosts that offload it have wrong ones.
 */
export function readIpv4Header(data: Uint8Array, at: number, wireEnd: number, ip: IpHeader, skip: SkipPacket): boolean {
  if (data.length < at + 20) return skipShort(skip, "IPv4 header", at, at + 20, wireEnd);
  const version = data[at] >> 4;
  if (version !== 4) return skip("malformed", at, `IP version ${version} where the link layer says IPv4`);
  const headerLength = (data[at] & 15) * 4;
  if (headerLength < 20) {
    return skip("malformed", at, `IPv4 header length ${headerLength} (IHL ${headerLength / 4}) is under 20`);
  }
  const flagsAndOffset = (data[at + 6] << 8) | data[at + 7];
  const fragmentOffset = (flagsAndOffset & 0x1fff) * 8;
  const moreFragments = (flagsAndOffset & 0x2000) !== 0;
  let totalLength = (data[at + 2] << 8) | data[at + 3];
  if (totalLength === 0 && fragmentOffset === 0 && !moreFragments) totalLength = wireEnd - at;
  if (totalLength < headerLength) {
    return skip("malformed", at, `IPv4 header length ${headerLength} is over the total length ${totalLength}`);
  }
  if (at + totalLength > wireEnd) {
    return skip("malformed", at, `IPv4 total length ${totalLength} is over the packet's ${wireEnd - at} bytes`);
  }
  if (data.length < at + headerLength) return skipShort(skip, "IPv4 header", at, at + headerLength, wireEnd);
  ip.version = 4;
  ip.addressAt = at + 12;
  ip.protocol = data[at + 9];
  ip.payloadStart = at + headerLength; // options, if any, skipped
  ip.payloadEnd = at + totalLength;
  ip.fragmented = fragmentOffset !== 0 || moreFragments;
  ip.fragmentOffset = fragmentOffset;
  ip.moreFragments = moreFragments;
  ip.identification = (data[at + 4] << 8) | data[at + 5];
  return true;
}
