/**
 * {@linkcode TcpReassembler}: TCP segments to the ordered byte streams of each connection's two directions, with the
 * gaps where the capture lost bytes. Internal.
 *
 * @module
 */
import {
  type CaptureTime,
  TCP_ACK,
  TCP_FIN,
  TCP_RST,
  TCP_SYN,
  type TcpConnectionInfo,
  type TcpSegment,
  type TcpStreamEvent,
} from "../records.ts";
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import { TcpConnection } from "./tcp_connection.ts";
import { connectionKeyOf, TcpConnectionTable } from "./tcp_connection_table.ts";
import type { DeliveryCause } from "./tcp_direction_reassembler.ts";

/** The default of `maxBufferedBytes`: 4 MiB per direction. */
export const DEFAULT_MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** The default of `maxBufferedSegments`: 4,096 per direction. */
export const DEFAULT_MAX_BUFFERED_SEGMENTS = 4096;
/** The default of `maxConnections`: 65,536. */
export const DEFAULT_MAX_CONNECTIONS = 65_536;

/** Options of {@linkcode TcpReassembler}. */
export interface TcpReassemblerOptions {
  /**
   * The most payload bytes one direction holds out of order, waiting for bytes before them. Over it, the first hole
   * is declared lost (a `gap`) and what follows it delivered, until the bytes held are within it again. Default
   * {@linkcode DEFAULT_MAX_BUFFERED_BYTES}.
   */
  maxBufferedBytes?: number;
  /**
   * The most pieces (segments, or their parts left when trimmed) one direction holds out of order; over it, as over
   * `maxBufferedBytes`. Bounds the cost of keeping them sorted. Default {@linkcode DEFAULT_MAX_BUFFERED_SEGMENTS}.
   */
  maxBufferedSegments?: number;
  /**
   * The most connections open at once. A segment that opens one more closes the least recently active one first
   * (reason `"end"`: for the reassembly, its capture ends there). As many connections closed by FIN or RST are
   * remembered, so that their last segments open no new ones. Default {@linkcode DEFAULT_MAX_CONNECTIONS}.
   */
  maxConnections?: number;
}

/** `value` if an integer of at least `min`, else a RangeError naming `name`; `fallback` when undefined. */
function checkedOption(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`${name} must be an integer of at least ${min}, not ${value}`);
  }
  return value;
}

/**
 * Reassembles TCP: segments, in capture order, to the bytes each side of each connection sent, once each and in
 * order.
 *
 * - Connections are told apart by their 4-tuple (either direction is the same connection) and numbered from 1 in
 *   order of first sight; each starts with an `open` event. One opens at a SYN (its sender is the client; a SYN-ACK
 *   whose SYN was missed makes its sender the server), or, when the capture starts mid-connection, at its first
 *   segment that carries bytes (roles `"guessed"`: the lower port is the server's, the destination's on equal ports).
 *   A lone ACK, FIN or RST opens none.
 * - Stream offsets count from the byte after the SYN (its ISN + 1), or from the first sequence number seen in a
 *   direction without a SYN; they are plain numbers that go on past 2^32 as sequence numbers wrap.
 * - Bytes in order are delivered at once, as the segment's payload (a view of it where a part was delivered before);
 *   bytes out of order wait, sorted, for the bytes before them. Bytes delivered or held before are not delivered again:
 *   the first copy of a byte wins.
 * - Bytes are declared lost (a `gap`) when the other side acknowledges them unseen (all but the last sequence number
 *   an ACK covers, which may be a FIN the capture missed), when a direction holds more than `maxBufferedBytes` or
 *   `maxBufferedSegments` out of order, when a segment was cut by the snapshot length (its `missingBytes`), or when
 *   the connection closes with holes; delivery goes on after them. One loss may show as adjacent gaps.
 * - A data event carries the time and file offset of the segment that made its bytes deliverable (its own file offset
 *   when the connection's end did). A SYN's payload (TCP Fast Open) is data at offset 0; an RST's is ignored.
 * - A connection closes (`close`, then it is forgotten) when both FINs and every byte before them are through
 *   (`"fin"`), at an RST (`"rst"`), at a SYN on its 4-tuple that is not its own (`"reused"`: another ISN), when
 *   `maxConnections` are open and another opens (`"end"`, the least recently active), or at the end of input
 *   (`"end"`). Except after both FINs, what is held is delivered first, holes declared lost.
 */
export class TcpReassembler implements StreamDecoder<TcpSegment, TcpStreamEvent> {
  readonly #maxBufferedBytes: number;
  readonly #maxBufferedSegments: number;
  readonly #maxConnections: number;
  readonly #table: TcpConnectionTable;
  #nextId = 1;
  /** The connection of the last segment, while open. */
  #recent: TcpConnection | undefined = undefined;
  #lastTime: CaptureTime | undefined = undefined;

  constructor(options: TcpReassemblerOptions = {}) {
    this.#maxBufferedBytes = checkedOption(
      "maxBufferedBytes",
      options.maxBufferedBytes,
      DEFAULT_MAX_BUFFERED_BYTES,
      0,
    );
    this.#maxBufferedSegments = checkedOption(
      "maxBufferedSegments",
      options.maxBufferedSegments,
      DEFAULT_MAX_BUFFERED_SEGMENTS,
      0,
    );
    this.#maxConnections = checkedOption("maxConnections", options.maxConnections, DEFAULT_MAX_CONNECTIONS, 1);
    // As many connections closed by FIN or RST are remembered as may be open: a bound derived from `maxConnections`.
    this.#table = new TcpConnectionTable(this.#maxConnections);
  }

  /** Takes one segment, emitting the events it makes. */
  push(segment: TcpSegment, emit: (event: TcpStreamEvent) => void): void {
    const flags = segment.flags;
    const time: CaptureTime = { seconds: segment.seconds, nanoseconds: segment.nanoseconds };
    this.#lastTime = time;
    const cause: DeliveryCause = { time, fileOffset: segment.fileOffset };
    const syn = (flags & TCP_SYN) !== 0;
    // Segments come in runs of one connection: the last one's 4-tuple is compared before a key is made and looked up.
    let connection = this.#recent;
    if (connection === undefined || !connection.carries(segment)) {
      connection = this.#table.find(connectionKeyOf(segment));
    }
    if (syn) {
      if (connection !== undefined && !synOf(connection, segment)) {
        this.#close(connection, "reused", cause, emit);
        connection = undefined;
      }
      if (connection === undefined) connection = this.#open(segment, "syn", time, emit);
      else this.#table.touch(connection);
    } else if (connection === undefined) {
      if (
        (flags & TCP_RST) !== 0 || (segment.payload.length === 0 && segment.missingBytes === 0) ||
        this.#table.wasClosed(connectionKeyOf(segment))
      ) {
        return;
      }
      connection = this.#open(segment, "guessed", time, emit);
    } else {
      this.#table.touch(connection);
    }
    this.#recent = connection;

    const sender = connection.sentBy(segment);
    const receiver = connection.peerOf(sender);
    // The SYN takes one sequence number: its payload (TCP Fast Open) and the stream start after it.
    const first = syn ? (segment.sequence + 1) >>> 0 : segment.sequence;
    sender.base ??= first;
    if ((flags & TCP_RST) === 0) {
      const fin = (flags & TCP_FIN) !== 0;
      sender.accept(
        sender.offsetOf(first),
        segment.payload,
        segment.missingBytes,
        fin,
        segment.fileOffset,
        cause,
        emit,
      );
    }
    if ((flags & TCP_ACK) !== 0 && receiver.base !== undefined) {
      receiver.acknowledged(receiver.offsetOf(segment.acknowledgment), cause, emit);
    }
    if ((flags & TCP_RST) !== 0) {
      this.#close(connection, "rst", cause, emit);
      return;
    }
    sender.bound(this.#maxBufferedBytes, this.#maxBufferedSegments, cause, emit);
    if (connection.client.finished && connection.server.finished) this.#close(connection, "fin", cause, emit);
  }

  /** The capture has ended: every open connection delivers what it holds (holes declared lost) and closes (`"end"`). */
  finish(emit: (event: TcpStreamEvent) => void): void {
    const time = this.#lastTime;
    if (time === undefined) return;
    const cause: DeliveryCause = { time, fileOffset: undefined };
    for (const connection of this.#table.connections()) this.#close(connection, "end", cause, emit);
  }

  /** Opens a connection at `segment` (its first), after closing the least recently active one if at the limit. */
  #open(
    segment: TcpSegment,
    roles: "syn" | "guessed",
    time: CaptureTime,
    emit: (event: TcpStreamEvent) => void,
  ): TcpConnection {
    if (this.#table.size >= this.#maxConnections) {
      this.#close(this.#table.oldest!, "end", { time, fileOffset: undefined }, emit);
    }
    // A SYN's sender is the client, a SYN-ACK's the server; else the higher port is taken as the client's.
    const clientIsSource = roles === "syn"
      ? (segment.flags & TCP_ACK) === 0
      : segment.sourcePort >= segment.destinationPort;
    const info: TcpConnectionInfo = {
      id: this.#nextId++,
      client: clientIsSource ? segment.source : segment.destination,
      clientPort: clientIsSource ? segment.sourcePort : segment.destinationPort,
      server: clientIsSource ? segment.destination : segment.source,
      serverPort: clientIsSource ? segment.destinationPort : segment.sourcePort,
      roles,
      seconds: time.seconds,
      nanoseconds: time.nanoseconds,
    };
    const connection = new TcpConnection(connectionKeyOf(segment), info);
    // A SYN-ACK acknowledges the client's ISN + 1: where the client's stream starts.
    if (roles === "syn" && !clientIsSource) connection.client.base = segment.acknowledgment;
    this.#table.add(connection);
    emit({ kind: "open", connection: info });
    return connection;
  }

  /** Closes `connection` for `reason`, delivering what it holds first (nothing is left after both FINs). */
  #close(
    connection: TcpConnection,
    reason: "fin" | "rst" | "reused" | "end",
    cause: DeliveryCause,
    emit: (event: TcpStreamEvent) => void,
  ): void {
    if (reason !== "fin") connection.flush(cause, emit);
    this.#table.remove(connection, reason === "fin" || reason === "rst");
    if (this.#recent === connection) this.#recent = undefined;
    emit({ kind: "close", connection: connection.info.id, reason, time: cause.time });
  }
}

/**
 * Whether the SYN `segment` belongs to `connection`: its sender's stream starts just after it (a retransmitted SYN or
 * SYN-ACK), or it is the first SYN-ACK from its server, and answers the connection's SYN. Any other SYN starts a new connection.
 */
function synOf(connection: TcpConnection, segment: TcpSegment): boolean {
  const sender = connection.sentBy(segment);
  if (sender.base !== undefined) return sender.base === ((segment.sequence + 1) >>> 0);
  if (connection.info.roles !== "syn" || sender !== connection.server || (segment.flags & TCP_ACK) === 0) return false;
  // It acknowledges the SYN, and the SYN's payload if it took it (TCP Fast Open), and nothing more.
  const client = connection.client;
  const acknowledged = client.offsetOf(segment.acknowledgment);
  return acknowledged >= 0 && acknowledged <= client.nextOffset;
}
