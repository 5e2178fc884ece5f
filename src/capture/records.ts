/**
 * The values that flow between the capture layers: capture-file records (pcap, pcapng) to TCP segments to the byte
 * streams of each connection's two directions. Each layer's module produces one of these and reads the one before.
 *
 * @module
 */

/**
 * When a packet was captured: whole seconds since the Unix epoch, and nanoseconds within that second.
 *
 * @example
 * ```ts
 * import type { CaptureTime } from "watchwire/capture";
 *
 * const time: CaptureTime = { seconds: 1795891617, nanoseconds: 827986000 };
 * console.log(new Date(time.seconds * 1000 + time.nanoseconds / 1e6).toISOString()); // 2026-11-28T18:46:57.827Z
 * ```
 */
export interface CaptureTime {
  /** Whole seconds since 1970-01-01T00:00:00Z. */
  readonly seconds: number;
  /** Nanoseconds within the second, 0 to 999,999,999. */
  readonly nanoseconds: number;
}

/** One captured packet of a pcap or pcapng file. */
export interface CapturedPacket extends CaptureTime {
  readonly kind: "packet";
  /** The interface it was captured on: its pcapng Interface Description Block's index in its section; 0 for pcap. */
  readonly interfaceId: number;
  /** The interface's link type (a LINKTYPE_* number: 1 Ethernet, 113 Linux cooked, 276 Linux cooked v2, ...). */
  readonly linkType: number;
  /** The captured bytes: at most the snapshot length, a view the reader may keep (never written again). */
  readonly data: Uint8Array;
  /** The packet's length on the wire (more than `data.length` when the capture cut it). */
  readonly originalLength: number;
  /** Byte offset of the packet's record (pcap) or block (pcapng) in the capture file. */
  readonly fileOffset: number;
}

/** The secrets of a pcapng Decryption Secrets Block (e.g. a TLS key log, secrets type 0x544c534b). */
export interface CapturedSecrets {
  readonly kind: "secrets";
  /** The block's secrets type: 0x544c534b ("TLSK") for an NSS key log. */
  readonly secretsType: number;
  /** The secrets' bytes (for TLSK: key log lines, UTF-8). */
  readonly data: Uint8Array;
  /** Byte offset of the block in the capture file. */
  readonly fileOffset: number;
}

/** What a capture file holds, in file order. */
export type CaptureRecord = CapturedPacket | CapturedSecrets;

/** TCP header flags, as in the header's flags byte. */
export const TCP_FIN = 0x01;
/** @see {@linkcode TCP_FIN} */
export const TCP_SYN = 0x02;
/** @see {@linkcode TCP_FIN} */
export const TCP_RST = 0x04;
/** @see {@linkcode TCP_FIN} */
export const TCP_PSH = 0x08;
/** @see {@linkcode TCP_FIN} */
export const TCP_ACK = 0x10;

/** One TCP segment, out of its IPv4 or IPv6 packet (fragments reassembled). */
export interface TcpSegment extends CaptureTime {
  /** Source address: dotted IPv4 (`"10.0.0.1"`) or RFC 5952 IPv6 (`"::1"`). */
  readonly source: string;
  readonly sourcePort: number;
  /** Destination address, written as `source` is. */
  readonly destination: string;
  readonly destinationPort: number;
  /** Sequence and acknowledgment numbers (unsigned 32-bit). */
  readonly sequence: number;
  readonly acknowledgment: number;
  /** The flags byte: {@linkcode TCP_FIN}, {@linkcode TCP_SYN}, ... */
  readonly flags: number;
  /** The payload captured (a view of the packet's bytes). */
  readonly payload: Uint8Array;
  /** Payload bytes the capture cut off (snapshot length): on the wire the payload was this much longer. */
  readonly missingBytes: number;
  /** Byte offset of the packet's record in the capture file. */
  readonly fileOffset: number;
}

/** Which side sent bytes: the client (who opened the connection, or is taken to have) or the server. */
export type TcpDirection = "client" | "server";

/** A TCP connection, as the reassembly knows it. */
export interface TcpConnectionInfo extends CaptureTime {
  /** A number of its own, from 1, in the order connections were first seen. */
  readonly id: number;
  readonly client: string;
  readonly clientPort: number;
  readonly server: string;
  readonly serverPort: number;
  /**
   * How the roles were told: `"syn"` (the handshake was captured) or `"guessed"` (the capture started mid-connection:
   * the side on the lower port taken as the server). A later layer that reads the bytes may swap them.
   */
  readonly roles: "syn" | "guessed";
}

/** What the TCP reassembly hands on: the bytes of each direction in order, with the gaps where bytes were lost. */
export type TcpStreamEvent =
  | { readonly kind: "open"; readonly connection: TcpConnectionInfo }
  | {
    readonly kind: "data";
    readonly connection: number;
    readonly direction: TcpDirection;
    /** Where `bytes` start in this direction's stream (0 = the first byte after the SYN, or the first seen). */
    readonly streamOffset: number;
    readonly bytes: Uint8Array;
    /** When the packet that completed these bytes was captured, and where its record is in the file. */
    readonly time: CaptureTime;
    readonly fileOffset: number;
  }
  | {
    readonly kind: "gap";
    readonly connection: number;
    readonly direction: TcpDirection;
    /** Where the missing bytes start in this direction's stream, and how many are missing. */
    readonly streamOffset: number;
    readonly length: number;
    readonly time: CaptureTime;
  }
  | {
    readonly kind: "close";
    readonly connection: number;
    /** `"fin"` both sides, `"rst"`, `"reused"` (a new SYN on the same ports), or `"end"` (the capture ended). */
    readonly reason: "fin" | "rst" | "reused" | "end";
    readonly time: CaptureTime;
  };
