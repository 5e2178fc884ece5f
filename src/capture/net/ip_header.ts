/**
 * {@linkcode IpHeader}: what an IPv4 or IPv6 header (and its extension headers) says about the packet's payload, as
 * the IP readers write it for the TCP reader and the fragment reassembly. Internal.
 *
 * @module
 */

/** The IP protocol number of TCP. */
export const PROTOCOL_TCP = 6;

/** What the IP layer of one packet says: written by `readIpv4Header` / `readIpv6Header`, one object reused. */
export interface IpHeader {
  /** 4 or 6. */
  version: number;
  /** Offset of the source address in the packet's data; the destination follows it (4 or 16 bytes later). */
  addressAt: number;
  /**
   * The protocol of the payload: IPv4's protocol field; for IPv6, the header after the extension headers (for a
   * fragment, the Next Header of its fragment header: the first header of the fragmented part).
   */
  protocol: number;
  /** Offset of the payload (after every header read) in the packet's data. */
  payloadStart: number;
  /** Offset where the payload ends by the IP lengths: past the captured data when the snapshot length cut it. */
  payloadEnd: number;
  /** Whether the packet is a fragment of a larger datagram (an IPv6 atomic fragment is not). */
  fragmented: boolean;
  /** For a fragment: where its payload goes in the datagram's, in bytes. */
  fragmentOffset: number;
  /** For a fragment: whether more follow (its payload is not the datagram's last). */
  moreFragments: boolean;
  /** For a fragment: the datagram's identification (16 bits in IPv4, 32 in IPv6). */
  identification: number;
}

/** An {@linkcode IpHeader} to reuse. */
export function newIpHeader(): IpHeader {
  return {
    version: 0,
    addressAt: 0,
    protocol: 0,
    payloadStart: 0,
    payloadEnd: 0,
    fragmented: false,
    fragmentOffset: 0,
    moreFragments: false,
    identification: 0,
  };
}
