/**
 * PacketDecoder (src/capture/net/): captured packets to TCP segments.
 *
 * Most packets here are built byte by byte by this test (the builders below; checksums left zero, as the decoder does
 * not check them): they are not captures. The real ones are fixtures/captures/net-*.pcap, loopback traffic captured
 * with tcpdump, each compared with what tshark made of the same file (its `.tshark.tsv` beside it); a small pcap walker
 * here gets their packets out.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { type CapturedPacket, TCP_ACK, TCP_FIN, TCP_PSH, TCP_SYN, type TcpSegment } from "../src/capture/records.ts";
import { ipv4Text, ipv6Text } from "../src/capture/net/address_text.ts";
import { Ipv6TextCache } from "../src/capture/net/ipv6_text_cache.ts";
import { PacketDecoder, type PacketDecoderOptions } from "../src/capture/net/packet_decoder.ts";
import type { PacketProblem } from "../src/capture/net/packet_problems.ts";

// ---- Builders: packets byte by byte --------------------------------------------------------------------------------

type Bytes = number[];
const u16 = (n: number): Bytes => [(n >>> 8) & 255, n & 255];
const u32 = (n: number): Bytes => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const filled = (length: number, seed = 1): Bytes => Array.from({ length }, (_, i) => (i * 7 + seed) & 255);

const V4_SOURCE = [192, 0, 2, 1];
const V4_DESTINATION = [198, 51, 100, 2];
const V6_SOURCE = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const V6_DESTINATION = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

interface TcpFields {
  sourcePort?: number;
  destinationPort?: number;
  sequence?: number;
  acknowledgment?: number;
  flags?: number;
  /** In 32-bit words; by default 5 plus the options'. */
  dataOffset?: number;
  options?: Bytes;
  payload?: Bytes;
}

function tcpBytes(f: TcpFields = {}): Bytes {
  const options = f.options ?? [];
  const dataOffset = f.dataOffset ?? 5 + options.length / 4;
  return [
    ...u16(f.sourcePort ?? 40000),
    ...u16(f.destinationPort ?? 80),
    ...u32(f.sequence ?? 0x01020304),
    ...u32(f.acknowledgment ?? 0xfffffffe),
    dataOffset << 4,
    f.flags ?? TCP_PSH | TCP_ACK,
    ...u16(65535), // window
    0,
    0, // checksum
    0,
    0, // urgent pointer
    ...options,
    ...(f.payload ?? []),
  ];
}

interface Ipv4Fields {
  source?: Bytes;
  destination?: Bytes;
  protocol?: number;
  identification?: number;
  moreFragments?: boolean;
  /** In bytes (a multiple of 8). */
  fragmentOffset?: number;
  options?: Bytes;
  ihl?: number;
  totalLength?: number;
  version?: number;
}

function ipv4Bytes(payload: Bytes, f: Ipv4Fields = {}): Bytes {
  const options = f.options ?? [];
  const ihl = f.ihl ?? 5 + options.length / 4;
  return [
    ((f.version ?? 4) << 4) | ihl,
    0,
    ...u16(f.totalLength ?? 20 + options.length + payload.length),
    ...u16(f.identification ?? 0x1234),
    ...u16((f.moreFragments ? 0x2000 : 0) | ((f.fragmentOffset ?? 0) / 8)),
    64,
    f.protocol ?? 6,
    0,
    0, // checksum
    ...(f.source ?? V4_SOURCE),
    ...(f.destination ?? V4_DESTINATION),
    ...options,
    ...payload,
  ];
}

interface Ipv6Fields {
  source?: Bytes;
  destination?: Bytes;
  payloadLength?: number;
  version?: number;
}

/** An IPv6 header whose Next Header is `next`, then `payload` (extension headers and all). */
function ipv6Bytes(next: number, payload: Bytes, f: Ipv6Fields = {}): Bytes {
  return [
    (f.version ?? 6) << 4,
    0,
    0,
    0,
    ...u16(f.payloadLength ?? payload.length),
    next,
    64,
    ...(f.source ?? V6_SOURCE),
    ...(f.destination ?? V6_DESTINATION),
    ...payload,
  ];
}

/** A hop-by-hop, routing or destination options header of `length` bytes (a multiple of 8), padded with PadN. */
const extension = (
  next: number,
  length: number,
): Bytes => [next, length / 8 - 1, 1, length - 4, ...filled(length - 4, 0)];
/** An authentication header of `length` bytes (a multiple of 4, at least 12). */
const authentication = (next: number, length: number): Bytes => [next, length / 4 - 2, 0, 0, ...filled(length - 4)];
const fragmentHeader = (next: number, offset: number, more: boolean, identification: number): Bytes => [
  next,
  0,
  ...u16(offset | (more ? 1 : 0)),
  ...u32(identification),
];

/** An Ethernet II frame: MAC addresses, `tags` (VLAN TPIDs, each with a TCI), then `type` and `payload`. */
function ethernet(type: number, payload: Bytes, tags: number[] = []): Bytes {
  const vlans = tags.flatMap((tpid, i) => [...u16(tpid), ...u16(100 + i)]);
  return [...filled(6, 0xa0), ...filled(6, 0xb0), ...vlans, ...u16(type), ...payload];
}

const sll = (
  protocol: number,
  payload: Bytes,
): Bytes => [0, 0, ...u16(772), ...u16(6), ...filled(8), ...u16(protocol), ...payload];
const sll2 = (protocol: number, payload: Bytes): Bytes => [
  ...u16(protocol),
  0,
  0,
  ...u32(1),
  ...u16(772),
  0,
  6,
  ...filled(8),
  ...payload,
];
const littleEndian32 = (n: number): Bytes => u32(n).reverse();

const TIME = { seconds: 1_700_000_000, nanoseconds: 123_456_789 };

function captured(linkType: number, bytes: Bytes, extra: Partial<CapturedPacket> = {}): CapturedPacket {
  const data = Uint8Array.from(bytes);
  return {
    kind: "packet",
    interfaceId: 0,
    linkType,
    data,
    originalLength: data.length,
    fileOffset: 24,
    ...TIME,
    ...extra,
  };
}

/** `packet` as the capture would have it with a snapshot length of `snap`: cut, its length on the wire kept. */
function cut(packet: CapturedPacket, snap: number): CapturedPacket {
  return { ...packet, data: packet.data.slice(0, snap), originalLength: packet.data.length };
}

type PlainSegment = Omit<TcpSegment, "payload"> & { payload: number[] };
const plain = (s: TcpSegment): PlainSegment => ({ ...s, payload: Array.from(s.payload) });

function decodeAll(packets: CapturedPacket[], options?: PacketDecoderOptions) {
  const decoder = new PacketDecoder(options);
  const segments: TcpSegment[] = [];
  for (const packet of packets) decoder.decode(packet, (s) => segments.push(s));
  return { decoder, segments, plain: segments.map(plain) };
}

/** The segment of the default TCP fields with `payload`, from the default IPv4 (or, `v6`, IPv6) addresses. */
function expected(payload: Bytes, v6 = false, extra: Partial<PlainSegment> = {}): PlainSegment {
  return {
    ...TIME,
    source: v6 ? "2001:db8::1" : "192.0.2.1",
    sourcePort: 40000,
    destination: v6 ? "2001:db8::2" : "198.51.100.2",
    destinationPort: 80,
    sequence: 0x01020304,
    acknowledgment: 0xfffffffe,
    flags: TCP_PSH | TCP_ACK,
    payload,
    missingBytes: 0,
    fileOffset: 24,
    ...extra,
  };
}

const NO_SKIPS = { linkType: 0, notTcp: 0, malformed: 0, truncated: 0, fragmentsDropped: 0, fragmentsPending: 0 };
const problemsOf = (decoder: PacketDecoder) =>
  decoder.problems.map(({ reason, fileOffset, packetOffset }: PacketProblem) => ({ reason, fileOffset, packetOffset }));

// ---- Addresses -----------------------------------------------------------------------------------------------------

test("net: IPv4 addresses dotted, IPv6 addresses in RFC 5952 form", () => {
  assert.equal(ipv4Text(Uint8Array.of(9, 10, 0, 1, 255, 0), 2), "0.1.255.0");
  const v6 = (groups: number[]) => ipv6Text(Uint8Array.from([7, ...groups.flatMap(u16)]), 1);
  const cases: [number[], string][] = [
    [[0, 0, 0, 0, 0, 0, 0, 0], "::"],
    [[0, 0, 0, 0, 0, 0, 0, 1], "::1"],
    [[1, 0, 0, 0, 0, 0, 0, 0], "1::"],
    [[0x2001, 0xdb8, 0, 0, 0, 0, 0, 1], "2001:db8::1"],
    [[0x2001, 0xdb8, 0, 0, 1, 0, 0, 1], "2001:db8::1:0:0:1"], // equal runs: the first
    [[0x2001, 0, 0, 1, 0, 0, 0, 1], "2001:0:0:1::1"], // the longest run
    [[0x2001, 0xdb8, 0, 1, 1, 1, 1, 1], "2001:db8:0:1:1:1:1:1"], // one zero group is not compressed
    [[0xfe80, 0, 0, 0, 0xabcd, 0xef01, 0x2345, 0x6789], "fe80::abcd:ef01:2345:6789"],
    [[0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff], "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
    [[0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201], "::ffff:192.0.2.1"], // IPv4-mapped
    [[0, 0, 0, 0, 0, 0xffff, 0, 1], "::ffff:0.0.0.1"],
    [[0, 0, 0, 0, 0, 0xfffe, 0xc000, 0x0201], "::fffe:c000:201"],
    [[0, 0, 0, 0, 1, 0xffff, 0xc000, 0x0201], "::1:ffff:c000:201"],
    [[0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x0201], "64:ff9b::c000:201"],
    [[1, 2, 3, 4, 5, 6, 7, 0], "1:2:3:4:5:6:7:0"],
    [[0, 2, 3, 4, 5, 6, 7, 8], "0:2:3:4:5:6:7:8"],
  ];
  for (const [groups, text] of cases) assert.equal(v6(groups), text, groups.join(","));
});

test("net: IPv6 text is what WHATWG URL serialization gives (RFC 5952 too), for addresses not IPv4-mapped", () => {
  // Few distinct group values, so that zero runs of every length and position come up.
  const group = fc.oneof(fc.constant(0), fc.constant(0), fc.constant(1), fc.integer({ min: 0, max: 0xffff }));
  fc.assert(
    fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), (groups) => {
      const bytes = Uint8Array.from(groups.flatMap(u16));
      fc.pre(!(groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff));
      const full = groups.map((g) => g.toString(16)).join(":");
      assert.equal(`[${ipv6Text(bytes, 0)}]`, new URL(`http://[${full}]/`).hostname);
    }),
    { numRuns: 500 },
  );
});

test("net: the cache of recent IPv6 texts gives what writing each address gives", () => {
  // Addresses from a small pool, so that some are remembered and some have been forgotten.
  const pool = Array.from({ length: 7 }, (_, k) => Uint8Array.from([...V6_SOURCE.slice(0, 14), k >> 2, k & 3]));
  fc.assert(
    fc.property(fc.array(fc.nat({ max: 6 }), { maxLength: 60 }), fc.nat({ max: 8 }), (picks, shift) => {
      const cache = new Ipv6TextCache();
      for (const k of picks) {
        const data = new Uint8Array(shift + 16);
        data.set(pool[k], shift);
        assert.equal(cache.text(data, shift), ipv6Text(pool[k], 0));
      }
    }),
  );
});

// ---- Link types ----------------------------------------------------------------------------------------------------

test("net: every link type read, to the same segment (IPv4 and IPv6)", () => {
  const payload = filled(11);
  const v4 = ipv4Bytes(tcpBytes({ payload }));
  const v6 = ipv6Bytes(6, tcpBytes({ payload }));
  const cases: [string, number, Bytes, boolean][] = [
    ["Ethernet IPv4", 1, ethernet(0x0800, v4), false],
    ["Ethernet IPv6", 1, ethernet(0x86dd, v6), true],
    ["Linux cooked v1 IPv4", 113, sll(0x0800, v4), false],
    ["Linux cooked v1 IPv6", 113, sll(0x86dd, v6), true],
    ["Linux cooked v2 IPv4", 276, sll2(0x0800, v4), false],
    ["Linux cooked v2 IPv6", 276, sll2(0x86dd, v6), true],
    ["raw IP, IPv4", 101, v4, false],
    ["raw IP, IPv6", 101, v6, true],
    ["raw IPv4", 228, v4, false],
    ["raw IPv6", 229, v6, true],
    ["BSD loopback, little-endian 2", 0, [...littleEndian32(2), ...v4], false],
    ["BSD loopback, big-endian 2", 0, [...u32(2), ...v4], false],
    ["BSD loopback, little-endian 24 (NetBSD, OpenBSD)", 0, [...littleEndian32(24), ...v6], true],
    ["BSD loopback, little-endian 28 (FreeBSD)", 0, [...littleEndian32(28), ...v6], true],
    ["BSD loopback, little-endian 30 (macOS)", 0, [...littleEndian32(30), ...v6], true],
    ["BSD loopback, big-endian 30", 0, [...u32(30), ...v6], true],
    ["OpenBSD loopback, 2", 108, [...u32(2), ...v4], false],
    ["OpenBSD loopback, 24", 108, [...u32(24), ...v6], true],
  ];
  for (const [name, linkType, bytes, isV6] of cases) {
    const { decoder, plain } = decodeAll([captured(linkType, bytes)]);
    assert.deepEqual(plain, [expected(payload, isV6)], name);
    assert.deepEqual(decoder.skipped, NO_SKIPS, name);
  }
});

test("net: an unsupported link type is counted, and reported once per link type", () => {
  const v4 = ipv4Bytes(tcpBytes());
  const packets = [105, 105, 127, 105].map((linkType, i) => captured(linkType, v4, { fileOffset: 100 * i }));
  const { decoder, segments } = decodeAll(packets);
  assert.equal(segments.length, 0);
  assert.deepEqual(decoder.skipped, { ...NO_SKIPS, linkType: 4 });
  assert.deepEqual(problemsOf(decoder), [
    { reason: "linkType", fileOffset: 0, packetOffset: 0 },
    { reason: "linkType", fileOffset: 200, packetOffset: 0 },
  ]);
  assert.match(decoder.problems[0].detail, /link type 105/);
});

test("net: loopback families that are not IP, and raw IP of another version", () => {
  const v4 = ipv4Bytes(tcpBytes());
  const { decoder } = decodeAll([
    captured(0, [...littleEndian32(7), ...v4]), // OSI
    captured(108, [...littleEndian32(2), ...v4]), // LINKTYPE_LOOP is big-endian: 0x02000000 is no family
    captured(101, [0x50, ...v4.slice(1)]),
    captured(101, []),
  ]);
  assert.deepEqual(decoder.skipped, { ...NO_SKIPS, notTcp: 2, malformed: 2 });
});

test("net: VLAN tags, one, stacked 802.1ad + 802.1Q, and three deep", () => {
  const payload = filled(5);
  const v4 = ipv4Bytes(tcpBytes({ payload }));
  const v6 = ipv6Bytes(6, tcpBytes({ payload }));
  for (const tags of [[0x8100], [0x88a8, 0x8100], [0x9100, 0x88a8, 0x8100]]) {
    const { plain } = decodeAll([captured(1, ethernet(0x0800, v4, tags)), captured(1, ethernet(0x86dd, v6, tags))]);
    assert.deepEqual(plain, [expected(payload), expected(payload, true)], tags.join(" "));
  }
  // A tag after the Linux cooked header (libpcap puts back the tag the kernel took off).
  assert.deepEqual(decodeAll([captured(113, sll(0x8100, [0, 100, 8, 0, ...v4]))]).plain, [expected(payload)]);
  // A tag cut by the snapshot length, and one on a frame that ends inside it.
  const tagged = captured(1, ethernet(0x0800, v4, [0x8100, 0x8100]));
  const { decoder } = decodeAll([cut(tagged, 20), { ...tagged, data: tagged.data.slice(0, 20), originalLength: 20 }]);
  assert.deepEqual(decoder.skipped, { ...NO_SKIPS, truncated: 1, malformed: 1 });
  assert.deepEqual(problemsOf(decoder).map((p) => p.packetOffset), [18, 18]);
});

test("net: link headers cut short", () => {
  const v4 = ipv4Bytes(tcpBytes());
  const { decoder } = decodeAll([
    cut(captured(1, ethernet(0x0800, v4)), 10),
    captured(1, filled(10)),
    cut(captured(113, sll(0x0800, v4)), 15),
    cut(captured(276, sll2(0x0800, v4)), 19),
    captured(0, [2, 0, 0]),
  ]);
  assert.deepEqual(decoder.skipped, { ...NO_SKIPS, truncated: 3, malformed: 2 });
});

// ---- IPv4 ----------------------------------------------------------------------------------------------------------

test("net: IPv4 options are skipped by the header length", () => {
  const payload = filled(9);
  for (const options of [[1, 1, 1, 0], filled(40)]) {
    const { plain } = decodeAll([captured(228, ipv4Bytes(tcpBytes({ payload }), { options }))]);
    assert.deepEqual(plain, [expected(payload)], `${options.length} bytes of options`);
  }
});

test("net: TCP options are skipped by the data offset; numbers, ports and flags read as unsigned", () => {
  const payload = filled(3);
  const tcp = tcpBytes({
    sourcePort: 65535,
    destinationPort: 1,
    sequence: 0xffffffff,
    acknowledgment: 0x80000000,
    flags: 0xff,
    options: [2, 4, 5, 0xb4, 1, 1, 8, 10, ...filled(8)], // MSS, NOP, NOP, timestamps
    payload,
  });
  const { plain } = decodeAll([captured(228, ipv4Bytes(tcp))]);
  assert.deepEqual(plain, [
    expected(payload, false, {
      sourcePort: 65535,
      destinationPort: 1,
      sequence: 0xffffffff,
      acknowledgment: 0x80000000,
      flags: 0xff,
    }),
  ]);
});

test("net: trailing Ethernet padding is left out of the payload", () => {
  const short = ethernet(0x0800, ipv4Bytes(tcpBytes({ payload: [0x61, 0x62] })));
  const padded = [...short, ...Array(60 - short.length).fill(0xee)];
  const empty = ethernet(0x0800, ipv4Bytes(tcpBytes({ flags: TCP_ACK })));
  const { plain } = decodeAll([captured(1, padded), captured(1, [...empty, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee])]);
  assert.deepEqual(plain, [expected([0x61, 0x62]), expected([], false, { flags: TCP_ACK })]);
  const v6 = ethernet(0x86dd, ipv6Bytes(6, tcpBytes({ payload: [0x63] })));
  assert.deepEqual(decodeAll([captured(1, [...v6, 0xee, 0xee])]).plain, [expected([0x63], true)]);
});

test("net: a total length of 0 (segmentation offload) means the rest of the packet", () => {
  const payload = filled(100);
  const { plain } = decodeAll([captured(228, ipv4Bytes(tcpBytes({ payload }), { totalLength: 0 }))]);
  assert.deepEqual(plain, [expected(payload)]);
  const v6 = decodeAll([captured(229, ipv6Bytes(6, tcpBytes({ payload }), { payloadLength: 0 }))]);
  assert.deepEqual(v6.plain, [expected(payload, true)]);
});

// ---- Snapshot length -----------------------------------------------------------------------------------------------

test("net: a packet the snapshot length cut gives what was captured, and missingBytes", () => {
  const payload = filled(100);
  const v4 = captured(1, ethernet(0x0800, ipv4Bytes(tcpBytes({ payload, options: filled(12) }))));
  // 14 + 20 + 32 bytes of headers: cut at 96, 30 payload bytes are left.
  assert.deepEqual(decodeAll([cut(v4, 96)]).plain, [expected(payload.slice(0, 30), false, { missingBytes: 70 })]);
  // Cut inside the TCP options: the numbers and flags are there, the payload is all missing.
  assert.deepEqual(decodeAll([cut(v4, 60)]).plain, [expected([], false, { missingBytes: 100 })]);
  // Cut right after the TCP header, or with no payload at all.
  assert.deepEqual(decodeAll([cut(v4, 66)]).plain, [expected([], false, { missingBytes: 100 })]);
  const v6 = captured(113, sll(0x86dd, ipv6Bytes(0, [...extension(6, 8), ...tcpBytes({ payload })])));
  assert.deepEqual(decodeAll([cut(v6, 100)]).plain, [expected(payload.slice(0, 16), true, { missingBytes: 84 })]);
  // Cut inside the fixed TCP header, the IPv4 header, the IPv6 header or an extension header: truncated.
  const { decoder, segments } = decodeAll([cut(v4, 50), cut(v4, 30), cut(v6, 50), cut(v6, 60), cut(v4, 14)]);
  assert.equal(segments.length, 0);
  assert.deepEqual(decoder.skipped, { ...NO_SKIPS, truncated: 5 });
  assert.deepEqual(problemsOf(decoder).map((p) => p.packetOffset), [34, 14, 16, 56, 14]);
});

// ---- Other traffic -------------------------------------------------------------------------------------------------

test("net: other traffic (ARP, UDP, ICMP, ICMPv6, ESP, 802.3, no next header) is counted and skipped", () => {
  const udp = [...u16(5353), ...u16(5353), ...u16(12), 0, 0, 1, 2, 3, 4];
  const packets = [
    captured(1, ethernet(0x0806, filled(28))), // ARP
    captured(1, ethernet(0x0800, ipv4Bytes(udp, { protocol: 17 }))),
    captured(1, ethernet(0x0800, ipv4Bytes([8, 0, 0, 0, 0, 1, 0, 1], { protocol: 1 }))), // ICMP echo
    captured(1, ethernet(0x86dd, ipv6Bytes(58, [128, 0, 0, 0, 0, 1, 0, 1]))), // ICMPv6 echo
    captured(1, ethernet(0x86dd, ipv6Bytes(0, [...extension(17, 8), ...udp]))),
    captured(229, ipv6Bytes(50, filled(24))), // ESP
    captured(229, ipv6Bytes(59, [])), // no next header
    captured(1, ethernet(46, filled(46))), // 802.3: a length, not an EtherType
    captured(1, ethernet(0x0800, ipv4Bytes(udp, { protocol: 17, moreFragments: true }))), // a UDP fragment
    captured(1, ethernet(0x86dd, ipv6Bytes(44, [...fragmentHeader(17, 0, true, 9), ...filled(16)]))),
  ];
  const { decoder, segments } = decodeAll(packets);
  assert.equal(segments.length, 0);
  assert.deepEqual(decoder.skipped, { ...NO_SKIPS, notTcp: packets.length });
  assert.deepEqual(decoder.problems, []);
});

// ---- Damaged packets -----------------------------------------------------------------------------------------------

test("net: malformed packets are counted and skipped, never thrown, with their offsets", () => {
  const tcp = tcpBytes({ payload: filled(10) });
  const at = (fileOffset: number, bytes: Bytes) => captured(1, ethernet(0x0800, bytes), { fileOffset });
  const packets = [
    at(1000, ipv4Bytes(tcp, { ihl: 4 })), // IHL < 5
    at(2000, ipv4Bytes(tcp, { ihl: 15 })), // a header length past the end (over the total length)
    at(3000, ipv4Bytes(tcp, { totalLength: 200 })), // a total length past the end of the packet
    at(4000, ipv4Bytes(tcp, { totalLength: 19 })), // a total length under the header
    at(5000, ipv4Bytes(tcpBytes({ dataOffset: 4 }))), // TCP data offset < 5
    at(6000, ipv4Bytes(tcpBytes({ dataOffset: 15 }))), // a TCP header past the segment's end
    at(7000, ipv4Bytes(tcp.slice(0, 12))), // a TCP segment shorter than a header
    at(8000, ipv4Bytes(tcp, { version: 6 })), // the EtherType says IPv4
    captured(1, ethernet(0x86dd, ipv6Bytes(6, tcp, { version: 4 })), { fileOffset: 9000 }),
    captured(1, ethernet(0x86dd, ipv6Bytes(6, tcp, { payloadLength: 500 })), { fileOffset: 10_000 }),
    captured(1, ethernet(0x86dd, ipv6Bytes(60, [6, 200, ...filled(30)])), { fileOffset: 11_000 }), // ext. past the end
    at(12_000, ipv4Bytes(tcp)), // a good one among them
  ];
  const { decoder, plain } = decodeAll(packets, { maxProblems: 20 });
  assert.deepEqual(plain, [expected(filled(10), false, { fileOffset: 12_000 })]);
  assert.deepEqual(decoder.skipped, { ...NO_SKIPS, malformed: 11 });
  assert.deepEqual(problemsOf(decoder), [
    { reason: "malformed", fileOffset: 1000, packetOffset: 14 },
    { reason: "malformed", fileOffset: 2000, packetOffset: 14 },
    { reason: "malformed", fileOffset: 3000, packetOffset: 14 },
    { reason: "malformed", fileOffset: 4000, packetOffset: 14 },
    { reason: "malformed", fileOffset: 5000, packetOffset: 34 },
    { reason: "malformed", fileOffset: 6000, packetOffset: 34 },
    { reason: "malformed", fileOffset: 7000, packetOffset: 34 },
    { reason: "malformed", fileOffset: 8000, packetOffset: 14 },
    { reason: "malformed", fileOffset: 9000, packetOffset: 14 },
    { reason: "malformed", fileOffset: 10_000, packetOffset: 14 },
    { reason: "malformed", fileOffset: 11_000, packetOffset: 54 },
  ]);
  const details = decoder.problems.map((p) => p.detail);
  assert.match(details[0], /IHL 4/);
  assert.match(details[4], /data offset 4 is under 5/);
  // The list keeps the first few only; the counts go on.
  const few = decodeAll([...packets, ...packets], { maxProblems: 3 }).decoder;
  assert.deepEqual(few.problems.map((p) => p.fileOffset), [1000, 2000, 3000]);
  assert.equal(few.skipped.malformed, 22);
  assert.throws(() => new PacketDecoder({ maxProblems: -1 }), RangeError);
});

test("net: random and damaged bytes never throw, and give at most one segment a packet", () => {
  const good = [
    captured(1, ethernet(0x0800, ipv4Bytes(tcpBytes({ payload: filled(20) }), { options: filled(8) }))),
    captured(1, ethernet(0x86dd, ipv6Bytes(0, [...extension(60, 16), ...extension(6, 8), ...tcpBytes()]))),
    captured(276, sll2(0x0800, ipv4Bytes(tcpBytes(), { moreFragments: true }))),
    captured(229, ipv6Bytes(44, [...fragmentHeader(6, 8, false, 1), ...tcpBytes()])),
  ];
  const linkType = fc.constantFrom(0, 1, 101, 108, 113, 228, 229, 276);
  const mutated = fc.record({
    base: fc.constantFrom(...good),
    flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
    keep: fc.nat(),
    extra: fc.nat({ max: 100 }),
  }).map(({ base, flips, keep, extra }) => {
    const data = base.data.slice(0, keep % (base.data.length + 1));
    for (const [at, value] of flips) if (data.length > 0) data[at % data.length] = value;
    return { ...base, data, originalLength: data.length + extra };
  });
  const random = fc.record({ linkType, data: fc.uint8Array({ maxLength: 120 }), extra: fc.nat({ max: 100 }) }).map((
    r,
  ) => captured(r.linkType, Array.from(r.data), { originalLength: r.data.length + r.extra }));
  fc.assert(
    fc.property(fc.array(fc.oneof(mutated, random), { maxLength: 30 }), (packets) => {
      const decoder = new PacketDecoder({ maxPendingFragments: 4 });
      for (const packet of packets) {
        let count = 0;
        decoder.decode(packet, (segment) => {
          count++;
          assert.ok(Number.isInteger(segment.missingBytes) && segment.missingBytes >= 0);
        });
        assert.ok(count <= 1);
      }
      decoder.finish();
      assert.equal(decoder.skipped.fragmentsPending, 0);
    }),
    { numRuns: 400 },
  );
});

// ---- IPv6 extension headers ----------------------------------------------------------------------------------------

test("net: IPv6 extension headers (hop-by-hop, routing, destination options, authentication) are skipped", () => {
  const payload = filled(13);
  const tcp = tcpBytes({ payload });
  const chains: [number, Bytes][] = [
    [0, [...extension(6, 8), ...tcp]],
    [0, [...extension(43, 8), ...extension(60, 24), ...extension(6, 16), ...tcp]],
    [51, [...authentication(6, 24), ...tcp]],
    [51, [...authentication(60, 12), ...extension(6, 8), ...tcp]],
    [44, [...fragmentHeader(6, 0, false, 77), ...tcp]], // an atomic fragment: a whole datagram
    [0, [...extension(44, 8), ...fragmentHeader(60, 0, false, 78), ...extension(6, 8), ...tcp]],
  ];
  for (const [next, rest] of chains) {
    const { decoder, plain } = decodeAll([captured(229, ipv6Bytes(next, rest))]);
    assert.deepEqual(plain, [expected(payload, true)], `${next}: ${rest.length}`);
    assert.deepEqual(decoder.skipped, NO_SKIPS);
  }
});

// ---- Fragments -----------------------------------------------------------------------------------------------------

/** `tcp` (an IP payload) cut at `cuts` (multiples of 8) into IPv4 fragments of datagram `identification`. */
function ipv4Fragments(tcp: Bytes, cuts: number[], identification = 0x4242, f: Ipv4Fields = {}): Bytes[] {
  const points = [0, ...cuts, tcp.length];
  return points.slice(0, -1).map((start, i) =>
    ipv4Bytes(tcp.slice(start, points[i + 1]), {
      ...f,
      identification,
      fragmentOffset: start,
      moreFragments: i < points.length - 2,
    })
  );
}

/** `fragmentable` (what follows the fragment header) cut at `cuts` into IPv6 fragments, after `unfragmentable`. */
function ipv6Fragments(
  fragmentable: Bytes,
  cuts: number[],
  { identification = 0x01020304, next = 6, unfragmentable = [] as Bytes, first = 44 } = {},
): Bytes[] {
  const points = [0, ...cuts, fragmentable.length];
  return points.slice(0, -1).map((start, i) =>
    ipv6Bytes(first, [
      ...unfragmentable,
      ...fragmentHeader(next, start, i < points.length - 2, identification),
      ...fragmentable.slice(start, points[i + 1]),
    ])
  );
}

const withOffsets = (linkType: number, packets: Bytes[], order: number[]) =>
  order.map((k, i) =>
    captured(linkType, packets[k], { fileOffset: 1000 * (i + 1), seconds: TIME.seconds + i, nanoseconds: k })
  );

test("net: IPv4 fragments reassembled, in order and out of order; the segment is the last fragment's", () => {
  const payload = filled(100);
  const tcp = tcpBytes({ payload }); // 120 bytes
  const fragments = ipv4Fragments(tcp, [16, 48, 104]);
  for (const order of [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]]) {
    const { decoder, plain } = decodeAll(withOffsets(1, fragments.map((f) => ethernet(0x0800, f)), order));
    assert.deepEqual(plain, [
      expected(payload, false, { fileOffset: 4000, seconds: TIME.seconds + 3, nanoseconds: order[3] }),
    ], order.join(" "));
    assert.deepEqual(decoder.skipped, NO_SKIPS);
  }
  // While fragments wait, they are counted as pending.
  const { decoder } = decodeAll(withOffsets(228, fragments, [0, 2]));
  assert.deepEqual(decoder.skipped, { ...NO_SKIPS, fragmentsPending: 2 });
  decoder.finish();
  assert.deepEqual(decoder.skipped, { ...NO_SKIPS, fragmentsDropped: 2 });
  assert.deepEqual(problemsOf(decoder), [{ reason: "fragmentsDropped", fileOffset: 1000, packetOffset: 0 }]);
});

test("net: IPv4 fragments: datagrams told apart by source, destination and identification", () => {
  const a = tcpBytes({ payload: filled(30, 1) });
  const b = tcpBytes({ payload: filled(30, 2) });
  const c = tcpBytes({ payload: filled(30, 3) });
  const fa = ipv4Fragments(a, [24]);
  const fb = ipv4Fragments(b, [24], 0x4243);
  const fc2 = ipv4Fragments(c, [24], 0x4242, { source: [192, 0, 2, 9] });
  const { plain } = decodeAll(withOffsets(228, [...fa, ...fb, ...fc2], [0, 2, 4, 5, 3, 1]));
  assert.deepEqual(plain.map((s) => [s.source, s.payload[0]]), [["192.0.2.9", 3], ["192.0.2.1", 2], ["192.0.2.1", 1]]);
});

test("net: overlapping fragments: the first copy of a byte wins", () => {
  const payload = filled(40);
  const tcp = tcpBytes({ payload }); // 60 bytes
  const other = tcp.map((b) => b ^ 0xff);
  const first = ipv4Bytes(tcp.slice(0, 32), { moreFragments: true });
  const overlapping = ipv4Bytes(other.slice(24, 48), { fragmentOffset: 24, moreFragments: true }); // 24..48
  const last = ipv4Bytes(tcp.slice(40), { fragmentOffset: 40 }); // 40..60: its first 8 bytes overlap the one above
  const { plain } = decodeAll(withOffsets(228, [first, overlapping, last], [0, 1, 2]));
  const want = [...tcp.slice(0, 32), ...other.slice(32, 48), ...tcp.slice(48)].slice(20);
  assert.deepEqual(plain.map((s) => s.payload), [want]);
  // The same, the last first: now its bytes 40..48 came before the overlapping fragment's.
  const reversed = decodeAll(withOffsets(228, [first, overlapping, last], [2, 1, 0])).plain;
  assert.deepEqual(reversed.map((s) => s.payload), [
    [...tcp.slice(0, 24), ...other.slice(24, 40), ...tcp.slice(40)].slice(20),
  ]);
  // A duplicate of every fragment changes nothing.
  const fragments = ipv4Fragments(tcp, [8, 32]);
  const twice = decodeAll(withOffsets(228, [...fragments, ...fragments], [3, 0, 4, 1, 2])).plain;
  assert.deepEqual(twice.map((s) => s.payload), [payload]);
});

test("net: IPv6 fragments reassembled, with headers before and after the fragment header", () => {
  const payload = filled(200);
  const tcp = tcpBytes({ payload });
  const cases = [
    { fragmentable: tcp, next: 6, unfragmentable: [] as Bytes, first: 44 },
    { fragmentable: [...extension(6, 16), ...tcp], next: 60, unfragmentable: extension(44, 8), first: 0 },
  ];
  for (const { fragmentable, next, unfragmentable, first } of cases) {
    const fragments = ipv6Fragments(fragmentable, [8, 64, 136], { next, unfragmentable, first });
    for (const order of [[0, 1, 2, 3], [3, 1, 2, 0], [2, 3, 0, 1]]) {
      const { decoder, plain } = decodeAll(withOffsets(1, fragments.map((f) => ethernet(0x86dd, f)), order));
      assert.deepEqual(plain, [
        expected(payload, true, { fileOffset: 4000, seconds: TIME.seconds + 3, nanoseconds: order[3] }),
      ]);
      assert.deepEqual(decoder.skipped, NO_SKIPS);
    }
  }
  // Reassembled, the fragmentable part turns out to be UDP behind a destination options header: not TCP.
  const udp = ipv6Fragments([...extension(17, 8), ...filled(40)], [16], { next: 60 });
  assert.deepEqual(decodeAll(withOffsets(229, udp, [1, 0])).decoder.skipped, { ...NO_SKIPS, notTcp: 1 });
});

test("net: fragments that contradict their datagram, or cannot be fragments, are malformed", () => {
  const tcp = tcpBytes({ payload: filled(60) }); // 80 bytes
  const good = ipv4Fragments(tcp, [40]);
  const packets = [
    good[1], // the last: 40..80
    ipv4Bytes(tcp.slice(40, 72), { fragmentOffset: 40, identification: 0x4242 }), // a second last, ending elsewhere
    // Past the end.
    ipv4Bytes(tcp.slice(0, 48).concat(filled(40)), { fragmentOffset: 48, moreFragments: true, identification: 0x4242 }),
    ipv4Bytes(tcp.slice(0, 12), { moreFragments: true, identification: 1 }), // not a multiple of 8, not last
    ipv4Bytes([], { fragmentOffset: 8, identification: 2 }), // no payload
    ipv4Bytes(filled(16), { fragmentOffset: 65528, identification: 3 }), // past 64 KiB
    good[0],
  ];
  const { decoder, plain } = decodeAll(withOffsets(228, packets, [0, 1, 2, 3, 4, 5, 6]));
  assert.deepEqual(plain.map((s) => s.payload), [filled(60)]);
  assert.deepEqual(decoder.skipped, { ...NO_SKIPS, malformed: 5 });
});

test("net: a reassembled datagram's damaged TCP header is reported at its last fragment", () => {
  const tcp = tcpBytes({ dataOffset: 3, payload: filled(20) });
  const fragments = ipv4Fragments(tcp, [16]).map((f) => ethernet(0x0800, f));
  const { decoder, segments } = decodeAll(withOffsets(1, fragments, [1, 0]));
  assert.equal(segments.length, 0);
  assert.deepEqual(decoder.skipped, { ...NO_SKIPS, malformed: 1 });
  assert.deepEqual(problemsOf(decoder), [{ reason: "malformed", fileOffset: 2000, packetOffset: 34 }]);
  assert.match(decoder.problems[0].detail, /data offset 3 is under 5 \(at byte 0 of the reassembled datagram\)/);
});

test("net: fragment limits: maxFragmentedBytes, maxPendingFragments, the timeout, the snapshot length", () => {
  const tcp = tcpBytes({ payload: filled(100) }); // 120 bytes
  const fragments = ipv4Fragments(tcp, [40, 80]);
  // Over maxFragmentedBytes (a duplicate counted too): the datagram is given up.
  const over = decodeAll(withOffsets(228, fragments, [0, 1, 0, 2]), { maxFragmentedBytes: 119 }).decoder;
  assert.deepEqual(over.skipped, { ...NO_SKIPS, fragmentsDropped: 3, fragmentsPending: 1 });
  assert.match(over.problems[0].detail, /maxFragmentedBytes \(119\)/);
  assert.equal(decodeAll(withOffsets(228, fragments, [0, 1, 2]), { maxFragmentedBytes: 120 }).segments.length, 1);
  // maxPendingFragments: the datagram waiting longest gives way.
  const a = ipv4Fragments(tcp, [40], 1);
  const b = ipv4Fragments(tcp, [40], 2);
  const c = ipv4Fragments(tcp, [40], 3);
  const pending = decodeAll(withOffsets(228, [...a, ...b, ...c], [0, 2, 4, 3, 5, 1]), { maxPendingFragments: 2 });
  assert.equal(pending.segments.length, 2); // b and c; a's first fragment was dropped for c, its second waits
  assert.deepEqual(pending.decoder.skipped, { ...NO_SKIPS, fragmentsDropped: 1, fragmentsPending: 1 });
  assert.deepEqual(problemsOf(pending.decoder), [{ reason: "fragmentsDropped", fileOffset: 1000, packetOffset: 0 }]);
  const off = decodeAll(withOffsets(228, a, [0, 1]), { maxPendingFragments: 0 }).decoder;
  assert.deepEqual(off.skipped, { ...NO_SKIPS, fragmentsDropped: 2 });
  // Fragments more than fragmentTimeoutSeconds apart are not of one datagram.
  const late = [captured(228, a[0]), captured(228, a[1], { seconds: TIME.seconds + 61 })];
  assert.deepEqual(decodeAll(late).decoder.skipped, { ...NO_SKIPS, fragmentsDropped: 1, fragmentsPending: 1 });
  assert.equal(decodeAll(late, { fragmentTimeoutSeconds: 61 }).segments.length, 1);
  // A fragment the snapshot length cut cannot be put back: dropped at once.
  const snapped = decodeAll([cut(captured(228, a[0]), 40), captured(228, a[1])]).decoder;
  assert.deepEqual(snapped.skipped, { ...NO_SKIPS, fragmentsDropped: 1, fragmentsPending: 1 });
  for (const bad of [{ maxFragmentedBytes: -1 }, { maxPendingFragments: 1.5 }, { fragmentTimeoutSeconds: NaN }]) {
    assert.throws(() => new PacketDecoder(bad), RangeError);
  }
});

test("net: fragments are copied: the packets' buffers may be reused once decoded", () => {
  const tcp = tcpBytes({ payload: filled(40) });
  const [first, last] = ipv4Fragments(tcp, [32]).map((f) => captured(228, f));
  const decoder = new PacketDecoder();
  const segments: TcpSegment[] = [];
  decoder.decode(first, (s) => segments.push(s));
  first.data.fill(0);
  decoder.decode(last, (s) => segments.push(s));
  assert.deepEqual(segments.map(plain).map((s) => s.payload), [filled(40)]);
});

test("net: fragmented at random 8-byte-aligned points and shuffled, a packet gives the same segment", () => {
  const packetArbitrary = fc.record({
    v6: fc.boolean(),
    ethernet: fc.boolean(),
    tcp: fc.record({
      sourcePort: fc.integer({ min: 0, max: 65535 }),
      destinationPort: fc.integer({ min: 0, max: 65535 }),
      sequence: fc.nat({ max: 0xffffffff }),
      acknowledgment: fc.nat({ max: 0xffffffff }),
      flags: fc.integer({ min: 0, max: 255 }),
      options: fc.integer({ min: 0, max: 10 }).map((words) => filled(words * 4, 3)),
      payload: fc.uint8Array({ minLength: 1, maxLength: 1500 }).map((p) => Array.from(p)),
    }),
    destinationOptions: fc.boolean(),
    hopByHop: fc.boolean(),
    identification: fc.nat({ max: 0xffff }),
    ipOptions: fc.integer({ min: 0, max: 10 }).map((words) => filled(words * 4, 5)),
  });
  const arbitrary = packetArbitrary.chain((p) => {
    const tcp = tcpBytes(p.tcp);
    const fragmentable = p.v6 && p.destinationOptions ? [...extension(6, 8), ...tcp] : tcp;
    const blocks = Math.ceil(fragmentable.length / 8);
    return fc.record({
      p: fc.constant(p),
      fragmentable: fc.constant(fragmentable),
      cuts: fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, blocks - 1) }), { minLength: 1, maxLength: 12 })
        .map((cuts) => cuts.filter((c) => c * 8 < fragmentable.length).map((c) => c * 8).sort((a, b) => a - b)),
      duplicates: fc.array(fc.nat(), { maxLength: 3 }),
      order: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 30, maxLength: 30 }),
    });
  });
  fc.assert(
    fc.property(arbitrary, ({ p, fragmentable, cuts, duplicates, order }) => {
      const frame = (ip: Bytes) => p.ethernet ? ethernet(p.v6 ? 0x86dd : 0x0800, ip) : ip;
      const linkType = p.ethernet ? 1 : 101;
      const unfragmentable = p.hopByHop ? extension(44, 8) : [];
      const fragmentOptions = {
        identification: p.identification,
        next: p.destinationOptions ? 60 : 6,
        unfragmentable,
        first: p.hopByHop ? 0 : 44,
      };
      const whole = p.v6
        ? ipv6Bytes(p.hopByHop ? 0 : fragmentOptions.next, [
          ...(p.hopByHop ? extension(fragmentOptions.next, 8) : []),
          ...fragmentable,
        ])
        : ipv4Bytes(fragmentable, { identification: p.identification, options: p.ipOptions });
      const reference = decodeAll([captured(linkType, frame(whole))]).plain;
      assert.equal(reference.length, 1);

      const pieces = p.v6
        ? ipv6Fragments(fragmentable, cuts, fragmentOptions)
        : ipv4Fragments(fragmentable, cuts, p.identification, { options: p.ipOptions });
      const sent = [...pieces, ...duplicates.map((d) => pieces[d % pieces.length])];
      const shuffled = sent.map((bytes, i) => ({ bytes, key: order[i % order.length] + i * 1e-9 }))
        .sort((a, b) => a.key - b.key).map((x) => captured(linkType, frame(x.bytes)));
      const { decoder, plain: got } = decodeAll(shuffled);
      // Reassembled once every piece is in; duplicates that come after it start the datagram again (and may complete
      // it again, when they hold every piece).
      assert.ok(got.length >= 1);
      for (const segment of got) assert.deepEqual(segment, reference[0]);
      const pending = decoder.skipped.fragmentsPending;
      assert.deepEqual(decoder.skipped, { ...NO_SKIPS, fragmentsPending: pending });
      decoder.finish();
      assert.deepEqual(decoder.skipped, { ...NO_SKIPS, fragmentsDropped: pending });
    }),
    { numRuns: 300 },
  );
});

// ---- Real captures -------------------------------------------------------------------------------------------------

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/captures/${name}`, import.meta.url));

/** The packets of a classic pcap file (24-byte file header, 16-byte record headers): just enough for these tests. */
function pcapPackets(file: Uint8Array): CapturedPacket[] {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const magic = view.getUint32(0, true);
  const little = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
  const nano = (little ? magic : view.getUint32(0, false)) === 0xa1b23c4d;
  assert.ok(little || [0xa1b2c3d4, 0xa1b23c4d].includes(view.getUint32(0, false)), "a classic pcap file");
  const linkType = view.getUint32(20, little) & 0xffff;
  const packets: CapturedPacket[] = [];
  for (let at = 24; at + 16 <= file.length;) {
    const captured = view.getUint32(at + 8, little);
    packets.push({
      kind: "packet",
      interfaceId: 0,
      linkType,
      seconds: view.getUint32(at, little),
      nanoseconds: view.getUint32(at + 4, little) * (nano ? 1 : 1000),
      data: file.subarray(at + 16, at + 16 + captured),
      originalLength: view.getUint32(at + 12, little),
      fileOffset: at,
    });
    at += 16 + captured;
  }
  return packets;
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

// Each .tshark.tsv is `tshark -r FILE -T fields -e tcp.srcport -e tcp.dstport -e tcp.seq_raw -e tcp.ack_raw
// -e tcp.flags -e tcp.len -e ip.src -e ipv6.src -e ip.dst -e ipv6.dst -e tcp.payload`: one line a frame.
const CAPTURES: [string, number][] = [
  ["net-lo-ethernet.pcap", 1],
  ["net-any-sll2.pcap", 276],
  ["net-any-sll.pcap", 113],
  ["net-lo-snaplen-80.pcap", 1],
];

for (const [name, linkType] of CAPTURES) {
  test(`net: ${name} (tcpdump, loopback) decodes as tshark reads it`, () => {
    const packets = pcapPackets(new Uint8Array(readFileSync(fixture(name))));
    const rows = readFileSync(fixture(`${name}.tshark.tsv`), "utf8").split("\n").filter((line) => line !== "");
    assert.equal(packets.length, rows.length);
    assert.ok(packets.every((p) => p.linkType === linkType));
    const { decoder, segments } = decodeAll(packets);
    assert.deepEqual(decoder.skipped, NO_SKIPS);
    assert.equal(segments.length, packets.length);
    let v4 = 0;
    let v6 = 0;
    let missing = 0;
    rows.forEach((row, i) => {
      const [sport, dport, seq, ack, flags, length, ipSource, ipv6Source, ipDestination, ipv6Destination, payload] = row
        .split("\t");
      const segment = segments[i];
      assert.equal(segment.fileOffset, packets[i].fileOffset);
      assert.equal(segment.seconds, packets[i].seconds);
      assert.deepEqual(
        [segment.sourcePort, segment.destinationPort, segment.sequence, segment.acknowledgment, segment.flags],
        [Number(sport), Number(dport), Number(seq), Number(ack), Number(flags) & 0xff],
        `frame ${i + 1}`,
      );
      assert.equal(segment.payload.length + segment.missingBytes, Number(length), `frame ${i + 1}`);
      assert.equal(hex(segment.payload), payload, `frame ${i + 1}`);
      assert.equal(segment.source, ipSource || ipv6Source);
      assert.equal(segment.destination, ipDestination || ipv6Destination);
      if (ipSource) v4++;
      else v6++;
      missing += segment.missingBytes;
    });
    assert.ok(v4 > 0 && v6 > 0, "both IPv4 and IPv6 connections");
    assert.ok(segments.some((s) => s.flags & TCP_SYN) && segments.some((s) => s.flags & TCP_FIN));
    assert.equal(missing > 0, name.includes("snaplen"));
  });
}
