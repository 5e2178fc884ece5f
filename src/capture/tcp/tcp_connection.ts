/**
 * {@linkcode TcpConnection}: a TCP connection being reassembled: what the events say of it and its two directions.
 * Internal.
 *
 * @module
 */
import type { TcpConnectionInfo, TcpSegment, TcpStreamEvent } from "../records.ts";
import { type DeliveryCause, TcpDirectionReassembler } from "./tcp_direction_reassembler.ts";

/** A connection: its info, the reassembly of each direction, and its place in its table's activity list. */
export class TcpConnection {
  /** The key of its 4-tuple in the table (the same for both directions). */
  readonly key: string;
  readonly info: TcpConnectionInfo;
  /** The bytes the client sends, and those the server sends. */
  readonly client: TcpDirectionReassembler;
  readonly server: TcpDirectionReassembler;
  /** The connections active just after and just before this one, in its table's list (most recent first). */
  newer: TcpConnection | undefined = undefined;
  older: TcpConnection | undefined = undefined;

  constructor(key: string, info: TcpConnectionInfo) {
    this.key = key;
    this.info = info;
    this.client = new TcpDirectionReassembler(info.id, "client");
    this.server = new TcpDirectionReassembler(info.id, "server");
  }

  /** Whether `segment` belongs to this connection's 4-tuple, in either direction. */
  carries(segment: TcpSegment): boolean {
    const info = this.info;
    return segment.sourcePort === info.clientPort
      ? segment.destinationPort === info.serverPort && segment.source === info.client &&
        segment.destination === info.server
      : segment.sourcePort === info.serverPort && segment.destinationPort === info.clientPort &&
        segment.source === info.server && segment.destination === info.client;
  }

  /** The direction `segment` travels in: the client's when its source is the client. */
  sentBy(segment: TcpSegment): TcpDirectionReassembler {
    const info = this.info;
    return segment.sourcePort === info.clientPort && segment.source === info.client ? this.client : this.server;
  }

  /** The direction opposite `direction`. */
  peerOf(direction: TcpDirectionReassembler): TcpDirectionReassembler {
    return direction === this.client ? this.server : this.client;
  }

  /** Delivers what both directions hold, holes declared lost (the connection is closing). */
  flush(cause: DeliveryCause, emit: (event: TcpStreamEvent) => void): void {
    this.client.flush(cause, emit);
    this.server.flush(cause, emit);
  }
}
