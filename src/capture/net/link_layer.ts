/**
 * The link layer of a captured packet: where its IP header starts, and which IP version it is, for the link types
 * the capture layers read. Internal.
 *
 * @module
 */
import { type SkipPacket, skipShort } from "./packet_problems.ts";

/** LINKTYPE_NULL: BSD loopback, a 4-byte address family in the capturing host's byte order. */
export const LINKTYPE_NULL = 0;
/** LINKTYPE_ETHERNET (DLT_EN10MB): Ethernet II, with 802.1Q / 802.1ad VLAN tags. Also Linux's `lo`. */
export const LINKTYPE_ETHERNET = 1;
/** LINKTYPE_RAW: a raw IP packet, its version in its first nibble. */
export const LINKTYPE_RAW = 101;
/** LINKTYPE_LOOP: OpenBSD loopback, a 4-byte address family in network byte order. */
export const LINKTYPE_LOOP = 108;
/** LINKTYPE_LINUX_SLL: Linux cooked capture v1 (`tcpdump -i any -y LINUX_SLL`), 16 bytes, protocol at byte 14. */
export const LINKTYPE_LINUX_SLL = 113;
/** LINKTYPE_IPV4: a raw IPv4 packet. */
export const LINKTYPE_IPV4 = 228;
/** LINKTYPE_IPV6: a raw IPv6 packet. */
export const LINKTYPE_IPV6 = 229;
/** LINKTYPE_LINUX_SLL2: Linux cooked capture v2 (`tcpdump -i any`), 20 bytes, protocol at byte 0. */
export const LINKTYPE_LINUX_SLL2 = 276;

/** Where a packet's IP header starts and its version: written by {@linkcode findNetworkLayer}. */
export interface NetworkLayer {
  /** Offset of the IP header in the packet's captured data. */
  start: number;
  /** 4 or 6. */
  version: number;
}

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
const ETHERTYPE_VLAN = 0x8100; // 802.1Q
const ETHERTYPE_QINQ = 0x88a8; // 802.1ad
const ETHERTYPE_QINQ_OLD = 0x9100; // the pre-802.1ad QinQ tag some switches still send

/**
 * Reads the link-layer header of a packet of link type `linkType`: on success writes where the IP header starts and
 * its version into `found` and returns `true`; otherwise reports why to `skip` (an unknown link type, a packet that is
 * not IP, a header cut short) and returns `false`. `wireEnd` is the packet's length on the wire, which tells a header
 * the capture cut (`"truncated"`) from one the packet never had room for (`"malformed"`).
 */
export function findNetworkLayer(
  linkType: number,
  data: Uint8Array,
  wireEnd: number,
  found: NetworkLayer,
  skip: SkipPacket,
): boolean {
  switch (linkType) {
    case LINKTYPE_ETHERNET:
      if (data.length < 14) return skipShort(skip, "Ethernet header", 0, 14, wireEnd);
      return fromEtherType(data, 12, 14, wireEnd, found, skip);
    case LINKTYPE_LINUX_SLL:
      if (data.length < 16) return skipShort(skip, "Linux cooked (SLL) header", 0, 16, wireEnd);
      return fromEtherType(data, 14, 16, wireEnd, found, skip);
    case LINKTYPE_LINUX_SLL2:
      if (data.length < 20) return skipShort(skip, "Linux cooked v2 (SLL2) header", 0, 20, wireEnd);
      return fromEtherType(data, 0, 20, wireEnd, found, skip);
    case LINKTYPE_RAW:
      if (data.length < 1) return skipShort(skip, "raw IP packet", 0, 1, wireEnd);
      found.start = 0;
      found.version = data[0] >> 4;
      if (found.version === 4 || found.version === 6) return true;
      return skip("malformed", 0, `raw IP packet of version ${found.version}`);
    case LINKTYPE_IPV4:
      found.start = 0;
      found.version = 4;
      return true;
    case LINKTYPE_IPV6:
      found.start = 0;
      found.version = 6;
      return true;
    case LINKTYPE_NULL:
    case LINKTYPE_LOOP: {
      if (data.length < 4) return skipShort(skip, "loopback header", 0, 4, wireEnd);
      let family = ((data[0] << 24) | (data[1] << 16) | (data[2] << 8) | data[3]) >>> 0;
      // LINKTYPE_NULL is in the capturing host's byte order: a family (a small number) read the wrong way round has
      // its low 16 bits zero.
      if (linkType === LINKTYPE_NULL && (family & 0xffff) === 0) family = data[0] | (data[1] << 8);
      found.start = 4;
      if (family === 2) found.version = 4;
      else if (family === 24 || family === 28 || family === 30) found.version = 6; // the BSDs' and macOS's AF_INET6
      else return skip("notTcp", 0, "not IP");
      return true;
    }
    default:
      return skip("linkType", 0, `link type ${linkType} is not read (only 0, 1, 101, 108, 113, 228, 229, 276)`);
  }
}

/** After an EtherType at `typeAt` and the header that ends at `payloadAt`: any VLAN tags, then IPv4 or IPv6. */
function fromEtherType(
  data: Uint8Array,
  typeAt: number,
  payloadAt: number,
  wireEnd: number,
  found: NetworkLayer,
  skip: SkipPacket,
): boolean {
  let type = (data[typeAt] << 8) | data[typeAt + 1];
  let at = payloadAt;
  // Each tag: 2 bytes of tag control, then the EtherType of what follows.
  while (type === ETHERTYPE_VLAN || type === ETHERTYPE_QINQ || type === ETHERTYPE_QINQ_OLD) {
    if (data.length < at + 4) return skipShort(skip, "VLAN tag", at, at + 4, wireEnd);
    type = (data[at + 2] << 8) | data[at + 3];
    at += 4;
  }
  found.start = at;
  if (type === ETHERTYPE_IPV4) found.version = 4;
  else if (type === ETHERTYPE_IPV6) found.version = 6;
  else return skip("notTcp", 0, "not IP");
  return true;
}
