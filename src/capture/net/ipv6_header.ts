/**
 * The IPv6 header of a captured packet and its extension headers: the payload's place and protocol, and the
 * fragment header's fields. Internal.
 *
 * @module
 */
import type { IpHeader } from "./ip_header.ts";
import { type SkipPacket, skipShort } from "./packet_problems.ts";

const HOP_BY_HOP = 0;
const ROUTING = 43;
const FRAGMENT = 44;
const AUTHENTICATION = 51;
const DESTINATION_OPTIONS = 60;

/**
 * Reads the IPv6 header at `at`, then its extension headers, into `ip` and returns `true`, or reports to `skip` why
 * the packet cannot be read and returns `false`. The payload ends where the payload length says (trailing padding
 * left out; an end past the captured data kept, as long as the packet was that long on the wire, `wireEnd`). A payload
 * length of 0 (a jumbogram, or a segmentation-offload packet) is taken to mean the rest of the packet.
 */
export function readIpv6Header(data: Uint8Array, at: number, wireEnd: number, ip: IpHeader, skip: SkipPacket): boolean {
  if (data.length < at + 40) return skipShort(skip, "IPv6 header", at, at + 40, wireEnd);
  const version = data[at] >> 4;
  if (version !== 6) return skip("malformed", at, `IP version ${version} where the link layer says IPv6`);
  let payloadLength = (data[at + 4] << 8) | data[at + 5];
  if (payloadLength === 0) payloadLength = wireEnd - at - 40;
  if (at + 40 + payloadLength > wireEnd) {
    return skip(
      "malformed",
      at,
      `IPv6 payload length ${payloadLength} is over the packet's ${wireEnd - at - 40} bytes`,
    );
  }
  ip.version = 6;
  ip.addressAt = at + 8;
  ip.payloadEnd = at + 40 + payloadLength;
  ip.fragmented = false;
  return readIpv6Extensions(data, data[at + 6], at + 40, wireEnd, ip, skip);
}

/**
 * Follows IPv6 extension headers from header type `next` at `at` to the upper-layer header, whose type and offset it
 * writes into `ip` (as `protocol`, `payloadStart`), or up to a fragment header, whose fields it writes (`fragmented`
 * and the rest; `protocol` is then the first header of the fragmented part). Headers must end by `ip.payloadEnd`.
 * Hop-by-hop, routing, destination options and authentication headers are skipped by their lengths; an atomic fragment
 * header (offset 0, no more fragments) is skipped too.
 */
export function readIpv6Extensions(
  data: Uint8Array,
  next: number,
  at: number,
  wireEnd: number,
  ip: IpHeader,
  skip: SkipPacket,
): boolean {
  const end = ip.payloadEnd;
  for (;;) {
    switch (next) {
      case HOP_BY_HOP:
      case ROUTING:
      case DESTINATION_OPTIONS:
      case AUTHENTICATION: {
        if (!hasHeader(data, at, 2, end, wireEnd, next, skip)) return false;
        const length = next === AUTHENTICATION ? (data[at + 1] + 2) * 4 : (data[at + 1] + 1) * 8;
        if (!hasHeader(data, at, length, end, wireEnd, next, skip)) return false;
        next = data[at];
        at += length;
        continue;
      }
      case FRAGMENT: {
        if (!hasHeader(data, at, 8, end, wireEnd, next, skip)) return false;
        const offsetAndFlags = (data[at + 2] << 8) | data[at + 3];
        const fragmentOffset = offsetAndFlags & 0xfff8;
        const moreFragments = (offsetAndFlags & 1) !== 0;
        next = data[at];
        if (fragmentOffset !== 0 || moreFragments) {
          ip.fragmented = true;
          ip.fragmentOffset = fragmentOffset;
          ip.moreFragments = moreFragments;
          ip.identification = ((data[at + 4] << 24) | (data[at + 5] << 16) | (data[at + 6] << 8) | data[at + 7]) >>> 0;
          ip.protocol = next;
          ip.payloadStart = at + 8;
          return true;
        }
        at += 8; // an atomic fragment (RFC 6946): the whole datagram
        continue;
      }
      default:
        ip.protocol = next;
        ip.payloadStart = at;
        return true;
    }
  }
}

/** Whether the `length` bytes of extension header `type` at `at` are within the payload and captured. */
function hasHeader(
  data: Uint8Array,
  at: number,
  length: number,
  end: number,
  wireEnd: number,
  type: number,
  skip: SkipPacket,
): boolean {
  if (at + length > end) {
    return skip("malformed", at, `IPv6 extension header ${type} of ${length} bytes runs past the payload's end`);
  }
  if (at + length > data.length) return skipShort(skip, `IPv6 extension header ${type}`, at, at + length, wireEnd);
  return true;
}
