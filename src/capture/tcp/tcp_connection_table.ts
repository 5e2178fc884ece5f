/**
 * {@linkcode TcpConnectionTable}: the connections being reassembled, by 4-tuple, in order of activity; and the
 * 4-tuples of those lately closed. Internal.
 *
 * @module
 */
import type { TcpSegment } from "../records.ts";
import type { TcpConnection } from "./tcp_connection.ts";

/** The key of a segment's 4-tuple: the same for both directions (the lower address and port first). */
export function connectionKeyOf(segment: TcpSegment): string {
  const { source, destination } = segment;
  return source < destination || (source === destination && segment.sourcePort <= segment.destinationPort)
    ? `${source} ${segment.sourcePort} ${destination} ${segment.destinationPort}`
    : `${destination} ${segment.destinationPort} ${source} ${segment.sourcePort}`;
}

/**
 * The open connections by key, in order of first sight, and in a list from the most to the least recently active
 * (O(1) to touch, O(1) to find the oldest). Also the keys of up to `maxClosed` connections closed by FIN or RST, the
 * oldest forgotten first: what comes on them later (the last ACK, retransmissions, data in flight when the RST went)
 * belongs to a connection that is over, and opens no new one unless it is a SYN.
 */
export class TcpConnectionTable {
  readonly #open = new Map<string, TcpConnection>();
  readonly #closed = new Set<string>();
  readonly #maxClosed: number;
  #newest: TcpConnection | undefined = undefined;
  #oldest: TcpConnection | undefined = undefined;

  constructor(maxClosed: number) {
    this.#maxClosed = maxClosed;
  }

  /** How many connections are open. */
  get size(): number {
    return this.#open.size;
  }

  /** The least recently active open connection. */
  get oldest(): TcpConnection | undefined {
    return this.#oldest;
  }

  /** The open connection of `key`. */
  find(key: string): TcpConnection | undefined {
    return this.#open.get(key);
  }

  /** Whether the connection of `key` was lately closed by FIN or RST (and no other opened since). */
  wasClosed(key: string): boolean {
    return this.#closed.has(key);
  }

  /** Adds a connection, as the most recently active. */
  add(connection: TcpConnection): void {
    this.#open.set(connection.key, connection);
    this.#closed.delete(connection.key);
    this.#link(connection);
  }

  /** Makes `connection` the most recently active. */
  touch(connection: TcpConnection): void {
    if (connection === this.#newest) return;
    this.#unlink(connection);
    this.#link(connection);
  }

  /** Removes `connection`; with `remember`, keeps its key among the closed ones. */
  remove(connection: TcpConnection, remember: boolean): void {
    this.#open.delete(connection.key);
    this.#unlink(connection);
    if (!remember) return;
    this.#closed.add(connection.key);
    if (this.#closed.size > this.#maxClosed) this.#closed.delete(this.#closed.values().next().value!);
  }

  /** The open connections, in order of first sight (a copy: removing them as they come is fine). */
  connections(): TcpConnection[] {
    return [...this.#open.values()];
  }

  #link(connection: TcpConnection): void {
    connection.older = this.#newest;
    connection.newer = undefined;
    if (this.#newest !== undefined) this.#newest.newer = connection;
    else this.#oldest = connection;
    this.#newest = connection;
  }

  #unlink(connection: TcpConnection): void {
    const { newer, older } = connection;
    if (newer !== undefined) newer.older = older;
    else this.#newest = older;
    if (older !== undefined) older.newer = newer;
    else this.#oldest = newer;
    connection.newer = connection.older = undefined;
  }
}
