/**
 * {@linkcode TcpDirectionReassembler}: one direction of a TCP connection, from payloads placed at stream offsets to its
 * bytes delivered once each and in order, with a gap where bytes were lost. Internal.
 *
 * @module
 */
import type { CaptureTime, TcpDirection, TcpStreamEvent } from "../records.ts";
import { streamOffsetOf } from "./sequence_offset.ts";

/**
 * What made bytes deliverable: a segment (its time, and its file offset for the data events), or the end of a
 * connection that no segment of its own closed (`fileOffset` undefined: data keeps the file offset of its segment).
 */
export interface DeliveryCause {
  readonly time: CaptureTime;
  readonly fileOffset: number | undefined;
}

/** Bytes held until the bytes before them arrive, or (no `bytes`) a range known lost: cut by the snapshot length. */
interface HeldPiece {
  readonly offset: number;
  readonly end: number;
  readonly bytes: Uint8Array | undefined;
  /** File offset of the segment the piece came from. */
  readonly fileOffset: number;
}

/**
 * One direction of a connection. Bytes are placed by stream offset ({@linkcode TcpDirectionReassembler.offsetOf});
 * those at the next offset to deliver go out at once (a view of the payload, nothing held), the others wait in a
 * sorted array of disjoint pieces until the bytes before them come, or are declared lost.
 */
export class TcpDirectionReassembler {
  /** The connection's id and this direction, as the events name them. */
  readonly connection: number;
  readonly direction: TcpDirection;
  /** The sequence number of stream offset 0: set at this direction's SYN (its ISN + 1) or its first segment. */
  base: number | undefined = undefined;
  #next = 0;
  #fin: number | undefined = undefined;
  readonly #held: HeldPiece[] = [];
  #heldBytes = 0;

  constructor(connection: number, direction: TcpDirection) {
    this.connection = connection;
    this.direction = direction;
  }

  /** The stream offset of the next byte to deliver: every byte before it was delivered or declared lost. */
  get nextOffset(): number {
    return this.#next;
  }

  /** Whether a FIN was seen and every byte before it has been delivered (or declared lost). */
  get finished(): boolean {
    return this.#fin !== undefined && this.#next >= this.#fin;
  }

  /** The stream offset of `sequence` (once {@linkcode base} is set): the nearest to what was delivered so far. */
  offsetOf(sequence: number): number {
    return streamOffsetOf(sequence, this.base!, this.#next);
  }

  /**
   * Takes a segment: its `payload` at stream offset `offset`, then `missingBytes` the capture cut off (lost), then,
   * with `fin`, the end of the stream.
   */
  accept(
    offset: number,
    payload: Uint8Array,
    missingBytes: number,
    fin: boolean,
    fileOffset: number,
    cause: DeliveryCause,
    emit: (event: TcpStreamEvent) => void,
  ): void {
    const end = offset + payload.length;
    if (fin) this.#finAt(end + missingBytes);
    if (payload.length > 0) this.#take(offset, end, payload, fileOffset, cause, emit);
    if (missingBytes > 0) this.#take(end, end + missingBytes, undefined, fileOffset, cause, emit);
  }

  /**
   * The peer acknowledged everything before `offset`: bytes before it never seen were sent all the same (the capture
   * missed them), so they are declared lost and what follows them is delivered.
   */
  acknowledged(offset: number, cause: DeliveryCause, emit: (event: TcpStreamEvent) => void): void {
    // The last sequence number acknowledged may be a FIN the capture missed, not a byte: it is left out until bytes
    // after it come (then the next ACK covers it) or the FIN is seen (which it may then be).
    const limit = this.#fin === undefined ? offset - 1 : this.#fin < offset ? this.#fin : offset;
    if (limit > this.#next) this.#forceTo(limit, cause, emit);
  }

  /**
   * Declares lost the holes before held bytes until at most `maxBufferedBytes` bytes in at most `maxBufferedSegments`
   * pieces wait.
   */
  bound(
    maxBufferedBytes: number,
    maxBufferedSegments: number,
    cause: DeliveryCause,
    emit: (event: TcpStreamEvent) => void,
  ): void {
    const held = this.#held;
    while (held.length > 0 && (this.#heldBytes > maxBufferedBytes || held.length > maxBufferedSegments)) {
      this.#forceTo(held[0].offset, cause, emit);
    }
  }

  /** The connection ends: every held byte is delivered, holes (up to a FIN seen) declared lost. */
  flush(cause: DeliveryCause, emit: (event: TcpStreamEvent) => void): void {
    const held = this.#held;
    const limit = this.#fin ?? (held.length > 0 ? held[held.length - 1].end : this.#next);
    if (limit > this.#next) this.#forceTo(limit, cause, emit);
  }

  /** Places the range `start`..`end` (`bytes`, or lost when undefined) in the stream. */
  #take(
    start: number,
    end: number,
    bytes: Uint8Array | undefined,
    fileOffset: number,
    cause: DeliveryCause,
    emit: (event: TcpStreamEvent) => void,
  ): void {
    const next = this.#next;
    const origin = start;
    if (this.#fin !== undefined && end > this.#fin) end = this.#fin;
    if (start < next) start = next; // bytes already delivered: a retransmission
    if (end <= start) return;
    const piece = bytes === undefined || (start === origin && end === origin + bytes.length)
      ? bytes
      : bytes.subarray(start - origin, end - origin);
    if (start === next && this.#held.length === 0) {
      // In order, nothing waiting: out at once.
      this.#emitPiece(start, end, piece, fileOffset, cause, emit);
      this.#next = end;
      return;
    }
    this.#hold(start, end, piece, fileOffset);
    this.#drain(cause, emit);
  }

  /** Holds the range `start`..`end` where no held piece is: the first copy of a byte wins. */
  #hold(start: number, end: number, bytes: Uint8Array | undefined, fileOffset: number): void {
    const held = this.#held;
    // The first piece ending after `start` (pieces are disjoint and sorted, so their ends are sorted too).
    let low = 0;
    let high = held.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (held[middle].end <= start) low = middle + 1;
      else high = middle;
    }
    let at = start;
    for (let i = low; at < end;) {
      const next = held[i] as HeldPiece | undefined;
      const to = next === undefined || next.offset >= end ? end : next.offset;
      if (to > at) {
        this.#insert(i, {
          offset: at,
          end: to,
          bytes: bytes === undefined ? undefined : bytes.subarray(at - start, to - start),
          fileOffset,
        });
        i++;
      }
      if (next === undefined || next.offset >= end) break;
      at = next.end;
      i++;
    }
  }

  #insert(index: number, piece: HeldPiece): void {
    if (index === this.#held.length) this.#held.push(piece);
    else this.#held.splice(index, 0, piece);
    if (piece.bytes !== undefined) this.#heldBytes += piece.bytes.length;
  }

  /** Delivers the held pieces that now follow on from what was delivered. */
  #drain(cause: DeliveryCause, emit: (event: TcpStreamEvent) => void): void {
    const held = this.#held;
    let i = 0;
    while (i < held.length && held[i].offset === this.#next) this.#deliver(held[i++], cause, emit);
    if (i > 0) held.splice(0, i);
  }

  /** Delivers everything held before `limit`, declaring lost the holes between, up to `limit`; then what follows. */
  #forceTo(limit: number, cause: DeliveryCause, emit: (event: TcpStreamEvent) => void): void {
    const held = this.#held;
    let i = 0;
    for (; i < held.length && held[i].offset < limit; i++) {
      const piece = held[i];
      if (piece.offset > this.#next) this.#emitPiece(this.#next, piece.offset, undefined, 0, cause, emit);
      this.#deliver(piece, cause, emit);
    }
    if (i > 0) held.splice(0, i);
    if (limit > this.#next) {
      this.#emitPiece(this.#next, limit, undefined, 0, cause, emit);
      this.#next = limit;
    }
    this.#drain(cause, emit);
  }

  #deliver(piece: HeldPiece, cause: DeliveryCause, emit: (event: TcpStreamEvent) => void): void {
    if (piece.bytes !== undefined) this.#heldBytes -= piece.bytes.length;
    this.#emitPiece(piece.offset, piece.end, piece.bytes, piece.fileOffset, cause, emit);
    this.#next = piece.end;
  }

  /** Emits bytes as a data event, or (no `bytes`) the range as a gap. */
  #emitPiece(
    offset: number,
    end: number,
    bytes: Uint8Array | undefined,
    fileOffset: number,
    cause: DeliveryCause,
    emit: (event: TcpStreamEvent) => void,
  ): void {
    if (bytes === undefined) {
      emit({
        kind: "gap",
        connection: this.connection,
        direction: this.direction,
        streamOffset: offset,
        length: end - offset,
        time: cause.time,
      });
    } else {
      emit({
        kind: "data",
        connection: this.connection,
        direction: this.direction,
        streamOffset: offset,
        bytes,
        time: cause.time,
        fileOffset: cause.fileOffset ?? fileOffset,
      });
    }
  }

  /** The stream ends at `offset` (the first FIN seen counts); held bytes past it are dropped. */
  #finAt(offset: number): void {
    if (this.#fin !== undefined) return;
    const fin = offset > this.#next ? offset : this.#next;
    this.#fin = fin;
    const held = this.#held;
    while (held.length > 0 && held[held.length - 1].end > fin) {
      const piece = held.pop()!;
      if (piece.bytes !== undefined) this.#heldBytes -= piece.bytes.length;
      if (piece.offset < fin) {
        this.#insert(held.length, {
          offset: piece.offset,
          end: fin,
          bytes: piece.bytes?.subarray(0, fin - piece.offset),
          fileOffset: piece.fileOffset,
        });
        break;
      }
    }
  }
}
