/**
 * Why a captured packet gave no TCP segment, and the record kept of the first few damaged ones. Internal.
 *
 * @module
 */

/**
 * Why a packet gave no segment: `"linkType"` (a link type the decoder does not read), `"notTcp"` (other traffic: ARP,
 * UDP, ICMP, ...), `"malformed"` (a header whose lengths contradict each other or the packet's length on the wire),
 * `"truncated"` (the capture's snapshot length cut the packet before its TCP header ended).
 */
export type PacketSkipReason = "linkType" | "notTcp" | "malformed" | "truncated";

/**
 * Tells the decoder that the packet at hand is skipped: why, at which byte of its captured data, and what is wrong
 * (a constant where the reason is `"notTcp"`, which is not a problem). Returns `false`, so a parser can
 * `return skip(...)`.
 */
export type SkipPacket = (reason: PacketSkipReason, packetOffset: number, detail: string) => false;

/** One packet, or a datagram's fragments, that the decoder could not use and reports. */
export interface PacketProblem {
  /** `"fragmentsDropped"`: a fragmented datagram given up (incomplete, over a limit, or cut by the capture). */
  readonly reason: Exclude<PacketSkipReason, "notTcp"> | "fragmentsDropped";
  /** Byte offset in the capture file of the packet's record (for dropped fragments: of the datagram's first one). */
  readonly fileOffset: number;
  /** Byte offset of the fault in the packet's captured data (for dropped fragments: of that fragment's IP header). */
  readonly packetOffset: number;
  /** What is wrong, for a person. */
  readonly detail: string;
}

/** How many packets the decoder skipped, by reason, and how many fragments wait for the rest of their datagram. */
export interface PacketSkipCounts {
  /** Packets of a link type the decoder does not read. */
  readonly linkType: number;
  /** Packets of other protocols (ARP, UDP, ICMP, ESP, ...). */
  readonly notTcp: number;
  /** Packets whose headers contradict each other or the packet's length on the wire. */
  readonly malformed: number;
  /** Packets the snapshot length cut before their TCP header's first 20 bytes (or inside the IP headers). */
  readonly truncated: number;
  /** Fragments discarded with their datagram (never completed, over a limit, or cut by the snapshot length). */
  readonly fragmentsDropped: number;
  /** Fragments held now, waiting for the rest of their datagram. */
  readonly fragmentsPending: number;
}

/**
 * Skips a packet whose `what`, at `at`, needs the bytes up to `end` where the captured data stops sooner: cut by the
 * snapshot length (`"truncated"`) when the packet was that long on the wire (`wireEnd`), else `"malformed"`.
 */
export function skipShort(skip: SkipPacket, what: string, at: number, end: number, wireEnd: number): false {
  if (end <= wireEnd) return skip("truncated", at, `${what} cut by the snapshot length`);
  return skip("malformed", at, `${what} needs ${end - at} bytes, the packet has ${Math.max(0, wireEnd - at)}`);
}
