/**
 * Captures that tests build byte by byte (never presented as recordings): pcap records (link type raw IPv4) of one
 * TCP connection between 10.0.0.1 (the client) and 10.0.0.2.
 */

const u16 = (n: number) => [(n >>> 8) & 255, n & 255];
const u32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const le32 = (n: number) => u32(n).reverse();

/** A pcap file's header: little-endian, microseconds, snaplen 65535, link type 101 (raw IP). */
export const PCAP_HEADER: readonly number[] = [
  ...le32(0xa1b2c3d4),
  2,
  0,
  4,
  0,
  0,
  0,
  0,
  0,
  0,
  0,
  0,
  0,
  ...le32(65535),
  ...le32(101),
];

/** One TCP connection's packets as pcap records, each side's sequence numbers kept. */
export class TcpPackets {
  readonly #seq = { client: 1000, server: 5000 };
  readonly #serverPort: number;

  constructor(serverPort: number) {
    this.#serverPort = serverPort;
  }

  /** The pcap record of a packet `from` one side with TCP `flags` and `payload`, captured at `seconds`. */
  packet(from: "client" | "server", flags: number, payload: ArrayLike<number>, seconds = 1_700_000_000): number[] {
    const seq = this.#seq;
    const [src, dst, sport, dport] = from === "client"
      ? [[10, 0, 0, 1], [10, 0, 0, 2], 40000, this.#serverPort]
      : [[10, 0, 0, 2], [10, 0, 0, 1], this.#serverPort, 40000];
    const tcp = [
      ...u16(sport),
      ...u16(dport),
      ...u32(seq[from]),
      ...u32(seq[from === "client" ? "server" : "client"]),
      0x50,
      flags,
      ...u16(65535),
      0,
      0,
      0,
      0,
      ...Array.from(payload),
    ];
    // SYN and FIN take a sequence number each.
    seq[from] = (seq[from] + payload.length + ((flags & 3) !== 0 ? 1 : 0)) >>> 0;
    const ip = [0x45, 0, ...u16(20 + tcp.length), 0, 0, 0x40, 0, 64, 6, 0, 0, ...src, ...dst, ...tcp];
    return [...le32(seconds), ...le32(0), ...le32(ip.length), ...le32(ip.length), ...ip];
  }
}

/**
 * A pcap of one TCP connection that a test builds: `client` payloads, then `server` payloads, each in a packet of its
 * own and acknowledged by the client; the server packets at `drop` are left out (their bytes lost, which the client's
 * acknowledgments tell).
 */
export function tcpCapture(client: Uint8Array[], server: Uint8Array[], drop: number[]): Uint8Array {
  const packets = new TcpPackets(8080);
  const records: number[][] = [];
  const packet = (from: "client" | "server", flags: number, payload: Uint8Array, keep = true) => {
    const record = packets.packet(from, flags, payload, 1_700_000_000 + records.length);
    if (keep) records.push(record);
  };
  packet("client", 0x02, new Uint8Array(0));
  packet("server", 0x12, new Uint8Array(0));
  for (const bytes of client) packet("client", 0x18, bytes);
  server.forEach((bytes, k) => {
    packet("server", 0x18, bytes, !drop.includes(k));
    packet("client", 0x10, new Uint8Array(0));
  });
  packet("client", 0x11, new Uint8Array(0));
  packet("server", 0x11, new Uint8Array(0));
  packet("client", 0x10, new Uint8Array(0));
  return Uint8Array.from([...PCAP_HEADER, ...records.flat()]);
}
