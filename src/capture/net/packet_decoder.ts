/**
 * {@linkcode PacketDecoder}: captured packets to the TCP segments they carry, through the link layer, IPv4 or IPv6
 * (fragments reassembled) and TCP; other traffic and damaged packets counted and skipped. Internal.
 *
 * @module
 */
import type { CapturedPacket, TcpSegment } from "../records.ts";
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import { ipv4Text } from "./address_text.ts";
import { FragmentReassembler, type FragmentReassemblerOptions } from "./fragment_reassembler.ts";
import { type IpHeader, newIpHeader, PROTOCOL_TCP } from "./ip_header.ts";
import { readIpv4Header } from "./ipv4_header.ts";
import { readIpv6Extensions, readIpv6Header } from "./ipv6_header.ts";
import { Ipv6TextCache } from "./ipv6_text_cache.ts";
import { findNetworkLayer, type NetworkLayer } from "./link_layer.ts";
import type { PacketProblem, PacketSkipCounts, SkipPacket } from "./packet_problems.ts";
import { newTcpHeader, readTcpHeader } from "./tcp_header.ts";

/** The default of `maxProblems`: how many problems {@linkcode PacketDecoder.problems} keeps. */
export const DEFAULT_MAX_PROBLEMS = 16;

/** Options of {@linkcode PacketDecoder}: the fragment reassembly's limits, and how many problems it keeps. */
export interface PacketDecoderOptions extends FragmentReassemblerOptions {
  /**
   * How many problems (the first) {@linkcode PacketDecoder.problems} keeps. Default {@linkcode DEFAULT_MAX_PROBLEMS}.
   */
  maxProblems?: number;
}

// IPv6 headers that may come first in a fragment's fragmented part before TCP: the decoder reassembles those.
const IPV6_MAY_LEAD_TO_TCP = new Set([PROTOCOL_TCP, 0, 43, 51, 60]);
// The largest a reassembled payload may end: an IPv4 total length (less the smallest header) or an IPv6 payload length.
const MAX_FRAGMENTED_END_V4 = 65535 - 20;
const MAX_FRAGMENTED_END_V6 = 65535 - 8;

/**
 * Decodes captured packets to their TCP segments. Reads link types 0 and 108 (BSD and OpenBSD loopback), 1 (Ethernet,
 * VLAN tags stacked), 101, 228 and 229 (raw IP), 113 and 276 (Linux cooked v1 and v2); IPv4 (options skipped) and IPv6
 * (extension headers skipped); fragments of both reassembled (in any order, the first copy of an overlapped byte
 * winning); TCP options skipped. A payload is a view of the packet's bytes (of a reassembled datagram's, for
 * fragments); a packet the snapshot length cut gives a segment with `missingBytes`. Checksums are not checked
 * (captures on hosts that offload them have wrong ones).
 *
 * A capture holds other traffic and damaged packets: those are skipped, never thrown, and counted in
 * {@linkcode skipped}; the first few damaged ones are kept, with their offsets, in {@linkcode problems}.
 */
export class PacketDecoder implements StreamDecoder<CapturedPacket, TcpSegment> {
  readonly #reassembler: FragmentReassembler;
  readonly #maxProblems: number;
  readonly #problems: PacketProblem[] = [];
  readonly #counts = { linkType: 0, notTcp: 0, malformed: 0, truncated: 0, fragmentsDropped: 0 };
  readonly #linkTypesReported = new Set<number>();
  readonly #link: NetworkLayer = { start: 0, version: 0 };
  readonly #ip = newIpHeader();
  readonly #tcp = newTcpHeader();
  readonly #ipv6Texts = new Ipv6TextCache();
  readonly #skip: SkipPacket;
  /** The packet being decoded, for the problems' offsets. */
  #packet: CapturedPacket | undefined;
  /** While a reassembled datagram is read: where its last fragment's payload starts in that packet. */
  #datagramAt = -1;

  constructor(options: PacketDecoderOptions = {}) {
    const maxProblems = options.maxProblems ?? DEFAULT_MAX_PROBLEMS;
    if (!Number.isInteger(maxProblems) || maxProblems < 0) {
      throw new RangeError(`maxProblems must be an integer of 0 or more, not ${maxProblems}`);
    }
    this.#maxProblems = maxProblems;
    this.#reassembler = new FragmentReassembler(options, (fragments, fileOffset, packetOffset, detail) => {
      this.#counts.fragmentsDropped += fragments;
      this.#report({ reason: "fragmentsDropped", fileOffset, packetOffset, detail });
    });
    this.#skip = (reason, packetOffset, detail) => {
      this.#counts[reason]++;
      if (reason === "notTcp" || this.#problems.length >= this.#maxProblems) return false;
      const packet = this.#packet!;
      if (reason === "linkType") {
        if (this.#linkTypesReported.has(packet.linkType)) return false;
        this.#linkTypesReported.add(packet.linkType);
      }
      if (this.#datagramAt !== -1) {
        detail += ` (at byte ${packetOffset} of the reassembled datagram)`;
        packetOffset = this.#datagramAt;
      }
      this.#report({ reason, fileOffset: packet.fileOffset, packetOffset, detail });
      return false;
    };
  }

  /** How many packets were skipped, by reason, and how many fragments wait for the rest of their datagram. */
  get skipped(): PacketSkipCounts {
    return { ...this.#counts, fragmentsPending: this.#reassembler.pendingFragments };
  }

  /**
   * The first problems met (up to `maxProblems`): damaged packets, packets cut inside their headers, given-up
   * fragments, and the first packet of each link type not read.
   */
  get problems(): readonly PacketProblem[] {
    return this.#problems;
  }

  /** Decodes one packet, passing its TCP segment (if it carries one, or completes a fragmented one) to `emit`. */
  decode(packet: CapturedPacket, emit: (segment: TcpSegment) => void): void {
    const data = packet.data;
    const wireEnd = Math.max(packet.originalLength, data.length);
    const ip = this.#ip;
    this.#packet = packet;
    if (!findNetworkLayer(packet.linkType, data, wireEnd, this.#link, this.#skip)) return;
    const read = this.#link.version === 4 ? readIpv4Header : readIpv6Header;
    if (!read(data, this.#link.start, wireEnd, ip, this.#skip)) return;
    if (ip.fragmented) {
      this.#fragment(packet, ip, emit);
      return;
    }
    if (ip.protocol !== PROTOCOL_TCP) {
      this.#skip("notTcp", ip.payloadStart, "not TCP");
      return;
    }
    this.#segment(packet, data, ip.payloadStart, ip.payloadEnd, emit);
  }

  /** {@linkcode decode}, as a {@linkcode StreamDecoder}. */
  push(packet: CapturedPacket, emit: (segment: TcpSegment) => void): void {
    this.decode(packet, emit);
  }

  /** The capture has ended: datagrams still waiting for fragments are given up (counted in `fragmentsDropped`). */
  finish(): void {
    this.#reassembler.dropAll("datagram not completed by the end of the capture");
  }

  /** A fragment: held, or (the last one missing) its datagram reassembled and decoded. */
  #fragment(packet: CapturedPacket, ip: IpHeader, emit: (segment: TcpSegment) => void): void {
    const data = packet.data;
    const v4 = ip.version === 4;
    if (v4 ? ip.protocol !== PROTOCOL_TCP : !IPV6_MAY_LEAD_TO_TCP.has(ip.protocol)) {
      this.#skip("notTcp", ip.payloadStart, "not TCP");
      return;
    }
    const length = ip.payloadEnd - ip.payloadStart;
    const headerAt = v4 ? ip.addressAt - 12 : ip.addressAt - 8;
    if (length === 0) {
      this.#skip("malformed", ip.payloadStart, "fragment with no payload");
      return;
    }
    if (ip.moreFragments && length % 8 !== 0) {
      this.#skip("malformed", ip.payloadStart, `fragment of ${length} bytes (not a multiple of 8) before the last`);
      return;
    }
    if (ip.fragmentOffset + length > (v4 ? MAX_FRAGMENTED_END_V4 : MAX_FRAGMENTED_END_V6)) {
      this.#skip("malformed", ip.payloadStart, `fragment ends at byte ${ip.fragmentOffset + length}, past 64 KiB`);
      return;
    }
    if (ip.payloadEnd > data.length) {
      // Its missing bytes would be a hole inside the datagram: it cannot be reassembled.
      this.#counts.fragmentsDropped++;
      this.#report({
        reason: "fragmentsDropped",
        fileOffset: packet.fileOffset,
        packetOffset: headerAt,
        detail: "fragment cut by the snapshot length",
      });
      return;
    }
    const source = v4 ? ipv4Text(data, ip.addressAt) : this.#ipv6Texts.text(data, ip.addressAt);
    const destination = v4 ? ipv4Text(data, ip.addressAt + 4) : this.#ipv6Texts.text(data, ip.addressAt + 16);
    const key = `${ip.version} ${source} ${destination} ${ip.protocol} ${ip.identification}`;
    const outcome = this.#reassembler.add(
      key,
      ip.fragmentOffset,
      data.subarray(ip.payloadStart, ip.payloadEnd),
      !ip.moreFragments,
      packet.seconds,
      packet.fileOffset,
      headerAt,
    );
    if (outcome === "conflict") {
      this.#skip("malformed", ip.payloadStart, "fragment contradicts its datagram's others (its end)");
      return;
    }
    if (typeof outcome === "string") return;
    this.#datagramAt = ip.payloadStart;
    try {
      ip.payloadEnd = outcome.length;
      ip.fragmented = false;
      if (!v4 && !readIpv6Extensions(outcome, ip.protocol, 0, outcome.length, ip, this.#skip)) return;
      if (!v4 && ip.fragmented) {
        this.#skip("malformed", ip.payloadStart, "a fragment header inside a reassembled datagram");
        return;
      }
      if (ip.protocol !== PROTOCOL_TCP) {
        this.#skip("notTcp", 0, "not TCP");
        return;
      }
      this.#segment(packet, outcome, v4 ? 0 : ip.payloadStart, outcome.length, emit, source, destination);
    } finally {
      this.#datagramAt = -1;
    }
  }

  /**
   * Emits the segment of the TCP header at `at` in `bytes` (the packet's data, or a reassembled datagram's payload,
   * whose addresses are then given), ending at `end` by the IP lengths.
   */
  #segment(
    packet: CapturedPacket,
    bytes: Uint8Array,
    at: number,
    end: number,
    emit: (segment: TcpSegment) => void,
    source?: string,
    destination?: string,
  ): void {
    const tcp = this.#tcp;
    if (!readTcpHeader(bytes, at, end, tcp, this.#skip)) return;
    if (source === undefined || destination === undefined) {
      const data = packet.data;
      const addressAt = this.#ip.addressAt;
      const v4 = this.#ip.version === 4;
      source = v4 ? ipv4Text(data, addressAt) : this.#ipv6Texts.text(data, addressAt);
      destination = v4 ? ipv4Text(data, addressAt + 4) : this.#ipv6Texts.text(data, addressAt + 16);
    }
    emit({
      seconds: packet.seconds,
      nanoseconds: packet.nanoseconds,
      source,
      sourcePort: tcp.sourcePort,
      destination,
      destinationPort: tcp.destinationPort,
      sequence: tcp.sequence,
      acknowledgment: tcp.acknowledgment,
      flags: tcp.flags,
      payload: bytes.subarray(tcp.payloadStart, tcp.payloadEnd),
      missingBytes: tcp.missingBytes,
      fileOffset: packet.fileOffset,
    });
  }

  #report(problem: PacketProblem): void {
    if (this.#problems.length < this.#maxProblems) this.#problems.push(problem);
  }
}
