/**
 * {@linkcode captureConnections}: a capture file (pcap, pcapng) to its TCP connections, each as the application bytes
 * its two peers sent (decrypted with a key log when the connection is TLS), found by their bytes, not by port numbers.
 *
 * @module
 */
import type { CaptureTime, TcpConnectionInfo, TcpDirection, TcpStreamEvent } from "./records.ts";
import { CaptureFileDecoder, type CaptureFileDecoderOptions } from "./file/capture_file_decoder.ts";
import { PacketDecoder, type PacketDecoderOptions } from "./net/packet_decoder.ts";
import { TcpReassembler, type TcpReassemblerOptions } from "./tcp/tcp_reassembler.ts";
import { KeyLog } from "./tls/key_log.ts";
import { TlsConnectionDecryptor, type TlsConnectionDecryptorOptions } from "./tls/tls_connection_decryptor.ts";
import type { TlsEvent, TlsHandshakeEvent } from "./tls/tls_events.ts";
import { ByteFeed } from "./byte_feed.ts";
import { CaptureAbandoned } from "./capture_abandoned.ts";
import { CaptureGap, type CaptureLostBytes, type CaptureResumption } from "./capture_gap.ts";
import { FIRST_BYTES_NEEDED, sideOfFirstBytes } from "./first_bytes.ts";
import { DecoderStream, type StreamDecoder } from "../streams/decoder_stream.ts";

/** A pcapng Decryption Secrets Block's type for an NSS key log ("TLSK"). */
const TLS_KEY_LOG_SECRETS = 0x544c534b;

/** How far (in bytes not yet taken by the connections' readers) the capture is read ahead of them. */
const READ_AHEAD_BYTES = 1024 * 1024;

/** Events queued for the reader before the capture is read further. */
const QUEUED_EVENTS = 16;

/** The default of `maxUnreadBytes`. */
export const DEFAULT_MAX_UNREAD_BYTES = 64 * 1024 * 1024;

/** Options of {@linkcode captureConnections}: the key log, and the limits of each layer. */
export interface CaptureConnectionsOptions
  extends CaptureFileDecoderOptions, PacketDecoderOptions, TcpReassemblerOptions, TlsConnectionDecryptorOptions {
  /**
   * NSS key log lines (`SSLKEYLOGFILE`, Node's `--tls-keylog`) for the TLS connections; a pcapng file's Decryption
   * Secrets Blocks add theirs.
   */
  keyLog?: string | Uint8Array;
  /**
   * The most bytes of one direction that may wait for its reader, in bytes; a connection whose reader falls further
   * behind is given up (a `problem`). Default {@linkcode DEFAULT_MAX_UNREAD_BYTES}.
   */
  maxUnreadBytes?: number;
}

export { CaptureAbandoned, CaptureGap, type CaptureLostBytes, type CaptureResumption };

/**
 * One TCP connection of a capture, as the application bytes each peer sent.
 *
 * Each direction is one stream up to its first gap (bytes lost from the capture), where it fails with a
 * {@linkcode CaptureGap}; the gap's `resumed` promise holds the stream of the bytes after it (which fails at the next
 * gap in the same way), from where decoding can go on: right after the hole for a plain connection, at the next
 * record that decrypts for TLS. A reader that does not resume cancels that stream. A stream that fails with another
 * {@linkcode CaptureAbandoned} ends where decoding stopped for good (the reason was reported as a `problem`). A stream
 * its reader cancelled stays so: nothing of its direction is resumed.
 */
export interface CapturedConnection {
  /** The connection: its number and endpoints, the roles corrected by its bytes when they were guessed. */
  readonly info: TcpConnectionInfo;
  /** Whether the bytes below were decrypted (`"tls"`) or are as captured (`"plain"`). */
  readonly transport: "tls" | "plain";
  /** The bytes the client sent, up to its first gap. */
  readonly clientToServer: ReadableStream<Uint8Array>;
  /** The bytes the server sent, up to its first gap. */
  readonly serverToClient: ReadableStream<Uint8Array>;
  /** The capture time of the bytes a reader of `direction` (of its latest stream) took last (see `ByteFeed`). */
  timeOf(direction: TcpDirection): CaptureTime;
  /** The TLS handshake's parameters, once known (ALPN: `"h2"` or `"http/1.1"`). */
  readonly tls: TlsHandshakeEvent | undefined;
}

/** What {@linkcode captureConnections} hands on, in capture order. */
export type CaptureConnectionEvent =
  | { readonly kind: "connection"; readonly connection: CapturedConnection }
  | {
    readonly kind: "tls";
    readonly connection: number;
    readonly handshake: TlsHandshakeEvent;
    readonly time: CaptureTime;
  }
  /** Bytes lost from the capture, as the TCP reassembly reports them (`direction` by the corrected roles). */
  | Extract<TcpStreamEvent, { kind: "gap" }>
  | {
    readonly kind: "problem";
    readonly connection: number | undefined;
    readonly message: string;
    readonly time: CaptureTime | undefined;
  }
  | Extract<TcpStreamEvent, { kind: "close" }>
  | {
    readonly kind: "summary";
    /** Packets read, and those skipped (not TCP, link types not read, damaged). */
    readonly packets: number;
    readonly skipped: Readonly<Record<string, number>>;
    readonly connections: number;
    readonly gaps: number;
  };

/** A gap of a direction whose bytes have not resumed yet. */
interface PendingGap {
  readonly error: CaptureGap;
  readonly resolve: (resumption: CaptureResumption | undefined) => void;
  /** The bytes of the gaps so far. */
  skipped: number;
}

/** A connection being read: its classification, its feeds, its decryptor. */
class Connection implements CapturedConnection {
  info: TcpConnectionInfo;
  transport: "tls" | "plain" = "plain";
  tls: TlsHandshakeEvent | undefined;
  /** Whether the connection was announced (its first bytes classified). */
  announced = false;
  /** The first bytes of each direction, by the reassembly's roles, until classified. */
  readonly waiting: { client: Uint8Array[]; server: Uint8Array[] } = { client: [], server: [] };
  waitingTime: CaptureTime;
  /** Whether the roles are the reassembly's swapped. */
  swapped = false;
  /** The current stream of each direction: the first, or the one after its last gap. */
  readonly feeds: { client: ByteFeed; server: ByteFeed };
  /** Each direction's gap whose bytes after it have not resumed yet. */
  readonly gaps: { client: PendingGap | undefined; server: PendingGap | undefined } = {
    client: undefined,
    server: undefined,
  };
  readonly #taken: (bytes: number) => void;
  readonly clientToServer: ReadableStream<Uint8Array>;
  readonly serverToClient: ReadableStream<Uint8Array>;
  decryptor: TlsConnectionDecryptor | undefined;
  /** TLS bytes pushed whose decryption has not finished, and the last push. */
  decrypting = 0;
  lastPush: Promise<void> = Promise.resolve();
  abandoned = false;

  constructor(info: TcpConnectionInfo, taken: (bytes: number) => void) {
    this.info = info;
    this.waitingTime = info;
    this.#taken = taken;
    const time = { seconds: info.seconds, nanoseconds: info.nanoseconds };
    this.feeds = { client: new ByteFeed(time, taken), server: new ByteFeed(time, taken) };
    // The first streams: the reader may come after gaps have replaced the feeds.
    this.clientToServer = this.feeds.client.stream;
    this.serverToClient = this.feeds.server.stream;
  }

  timeOf(direction: TcpDirection): CaptureTime {
    return this.feeds[direction].time;
  }

  /**
   * Bytes of `role` were lost: its stream ends here with a {@linkcode CaptureGap} (or, if one is pending, the gap joins
   * it). A stream its reader cancelled stays so.
   */
  lose(role: TcpDirection, lost: CaptureLostBytes): void {
    const pending = this.gaps[role];
    if (pending !== undefined) {
      pending.error.gaps.push(lost);
      pending.skipped += lost.length;
      return;
    }
    if (this.feeds[role].cancelled) return;
    let resolve!: (resumption: CaptureResumption | undefined) => void;
    const resumed = new Promise<CaptureResumption | undefined>((r) => (resolve = r));
    const error = new CaptureGap(this.info.id, role, lost, resumed);
    this.gaps[role] = { error, resolve, skipped: lost.length };
    this.feeds[role].end(error);
  }

  /**
   * The bytes of `role` go on after its pending gap, from `streamOffset` (`skippedBytes` not handed on, by default the
   * gaps'): a new stream for them.
   */
  resume(role: TcpDirection, streamOffset: number, skippedBytes: number | undefined, time: CaptureTime): void {
    const pending = this.gaps[role];
    if (pending === undefined) return;
    this.gaps[role] = undefined;
    const feed = new ByteFeed(time, this.#taken);
    this.feeds[role] = feed;
    pending.resolve({ stream: feed.stream, streamOffset, skippedBytes: skippedBytes ?? pending.skipped, time });
  }

  /** The bytes of `role` (of both, by default) will not resume after a pending gap. */
  giveUp(role?: TcpDirection): void {
    for (const r of role === undefined ? (["client", "server"] as const) : [role]) {
      this.gaps[r]?.resolve(undefined);
      this.gaps[r] = undefined;
    }
  }

  /** The role of bytes the reassembly says `direction` sent. */
  roleOf(direction: TcpDirection): TcpDirection {
    return this.swapped ? (direction === "client" ? "server" : "client") : direction;
  }
}

const concat = (chunks: Uint8Array[]): Uint8Array => {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
};

/**
 * Reads a capture file (pcap or pcapng, as a stream: a file, stdin, a growing pipe) and hands on its TCP connections
 * as they start, each as two byte streams (see {@linkcode CapturedConnection}), with the capture's TLS handshakes, gaps
 * (bytes lost from the capture), problems and closes, and a summary at the end.
 *
 * - Layers: the capture file's records (a `DecodeError` for a malformed file, after everything before the fault),
 *   link layer, IPv4/IPv6 (fragments reassembled), TCP reassembled per connection and direction.
 * - A connection is announced once its first bytes say what it is: a TLS ClientHello or ServerHello, an HTTP/2
 *   preface or SETTINGS, an HTTP/1.1 request or status line. Where the capture started mid-connection (roles guessed
 *   by port numbers) and the bytes say otherwise, the roles are swapped.
 * - TLS connections are decrypted with `options.keyLog` and the key logs in the file (pcapng Decryption Secrets
 *   Blocks); a connection whose keys are missing or wrong, or whose handshake is not in the capture, gets a `problem`
 *   naming it, and its streams end with a {@linkcode CaptureAbandoned}; the other connections go on.
 * - A gap in a direction (bytes lost) ends that direction's stream there with a {@linkcode CaptureGap}, whose
 *   `resumed` holds the bytes after it: a plain connection's from right after the hole; a TLS connection's from the
 *   next record that decrypts (options `maxResyncRecords`), unless the gap cut the handshake (a `problem` then).
 * - Nothing waits for a connection's readers: bytes not read yet are held (up to `maxUnreadBytes` per direction,
 *   beyond which the connection is given up), so one connection never holds up another. Each connection's streams
 *   must be read (or cancelled), beside the events rather than in the loop that reads them: the capture is read on
 *   only as its events are.
 */
export function captureConnections(
  capture: ReadableStream<Uint8Array>,
  options: CaptureConnectionsOptions = {},
): ReadableStream<CaptureConnectionEvent> {
  return capture.pipeThrough(
    new DecoderStream(new CaptureConnectionsDecoder(options), { readableHighWaterMark: QUEUED_EVENTS }),
  );
}

/**
 * The decoding of {@linkcode captureConnections}: capture file bytes in, connection events out. Its `push` waits while
 * the connections' readers are behind (see `caughtUp`) and while decryption catches up; `DecoderStream` gives the
 * back-pressure from the events' reader, delivers what came before a fault, and tells `failed` on cancel.
 */
class CaptureConnectionsDecoder implements StreamDecoder<Uint8Array, CaptureConnectionEvent> {
  readonly #options: CaptureConnectionsOptions;
  readonly #keyLog: KeyLog;
  readonly #maxUnreadBytes: number;
  readonly #files: CaptureFileDecoder;
  readonly #packets: PacketDecoder;
  readonly #tcp: TcpReassembler;
  readonly #connections = new Map<number, Connection>();
  /** TCP events of the chunk being read, handled after it (their handling may wait). */
  readonly #tcpEvents: TcpStreamEvent[] = [];
  readonly #take = (event: TcpStreamEvent) => void this.#tcpEvents.push(event);
  // Back-pressure: bytes pushed to the connections' readers and not taken yet, and a wake-up when they take some.
  #unread = 0;
  #progressed: (() => void) | undefined;
  readonly #taken = (bytes: number) => {
    this.#unread -= bytes;
    const wake = this.#progressed;
    this.#progressed = undefined;
    wake?.();
  };
  #packetCount = 0;
  #tcpConnections = 0;
  #gaps = 0;
  /** The stage's emit, kept for the decryptor's events, which come after `push` has returned. */
  #emit: (event: CaptureConnectionEvent) => void = () => {};

  constructor(options: CaptureConnectionsOptions) {
    this.#options = options;
    this.#keyLog = new KeyLog(options.keyLog);
    this.#maxUnreadBytes = options.maxUnreadBytes ?? DEFAULT_MAX_UNREAD_BYTES;
    this.#files = new CaptureFileDecoder(options);
    this.#packets = new PacketDecoder(options);
    this.#tcp = new TcpReassembler(options);
  }

  async push(chunk: Uint8Array, emit: (event: CaptureConnectionEvent) => void): Promise<void> {
    this.#emit = emit;
    try {
      this.#files.push(chunk, (record) => {
        if (record.kind === "secrets") {
          if (record.secretsType === TLS_KEY_LOG_SECRETS) this.#keyLog.add(record.data);
          return;
        }
        this.#packetCount++;
        this.#packets.push(record, (segment) => this.#tcp.push(segment, this.#take));
      });
    } catch (error) {
      // A fault in the file: what came before it is handed on, and the connections end where they are.
      this.#tcp.finish(this.#take);
      await this.#handle().catch(() => {});
      throw error;
    }
    await this.#handle();
    await this.#caughtUp();
  }

  async finish(emit: (event: CaptureConnectionEvent) => void): Promise<void> {
    this.#emit = emit;
    this.#files.finish();
    this.#tcp.finish(this.#take);
    await this.#handle();
    const skipped = { ...this.#packets.skipped } as Record<string, number>;
    emit({
      kind: "summary",
      packets: this.#packetCount,
      skipped,
      connections: this.#tcpConnections,
      gaps: this.#gaps,
    });
  }

  /** The reader cancelled (or the capture failed): each connection's streams end. */
  failed(reason: unknown): void {
    this.#emit = () => {};
    const message = reason instanceof Error ? reason.message : "the capture's reader cancelled it";
    for (const c of this.#connections.values()) {
      c.feeds.client.end(new CaptureAbandoned(message));
      c.feeds.server.end(new CaptureAbandoned(message));
      c.giveUp();
    }
  }

  async #handle(): Promise<void> {
    const events = this.#tcpEvents;
    for (let i = 0; i < events.length; i++) {
      const waited = this.#onTcp(events[i]);
      if (waited !== undefined) await waited;
    }
    events.length = 0;
  }

  /**
   * Waits while the readers hold more than READ_AHEAD_BYTES unread and are taking them: the capture is read no further
   * ahead of them than that. A reader that takes nothing while the capture's next bytes are unread may be waiting for
   * those very bytes (a response waits for its request's end): reading goes on then, up to `maxUnreadBytes`.
   */
  async #caughtUp(): Promise<void> {
    while (this.#unread > READ_AHEAD_BYTES) {
      let tick: ReturnType<typeof setTimeout> | undefined;
      const moved = await Promise.race([
        new Promise<boolean>((resolve) => (this.#progressed = () => resolve(true))),
        new Promise<boolean>((resolve) => (tick = setTimeout(() => resolve(false), 0))),
      ]);
      clearTimeout(tick);
      this.#progressed = undefined;
      if (!moved) return;
    }
  }

  #abandon(c: Connection, message: string, time: CaptureTime | undefined): void {
    if (c.abandoned) return;
    c.abandoned = true;
    this.#emit({ kind: "problem", connection: c.info.id, message, time });
    const reason = new CaptureAbandoned(`connection ${c.info.id}: ${message}`);
    c.feeds.client.end(reason);
    c.feeds.server.end(reason);
    c.giveUp();
  }

  #feed(c: Connection, role: TcpDirection, bytes: Uint8Array, time: CaptureTime): void {
    const target = c.feeds[role];
    if (!target.cancelled) this.#unread += bytes.length;
    target.push(bytes, time);
    if (target.unread > this.#maxUnreadBytes && !target.cancelled) {
      this.#abandon(c, `its ${role}'s bytes were not read (over ${this.#maxUnreadBytes} bytes waiting)`, time);
    }
  }

  #onTls(c: Connection, time: CaptureTime): (event: TlsEvent) => void {
    // The `lost` and `resync` events come from the decryptor's serial work, in order with the data around them.
    return (event) => {
      if (c.abandoned) return;
      switch (event.kind) {
        case "handshake":
          c.tls = event;
          this.#emit({ kind: "tls", connection: c.info.id, handshake: event, time });
          break;
        case "data":
          this.#feed(c, event.direction, event.bytes, time);
          break;
        case "alert":
          break;
        case "lost":
          c.lose(event.direction, { streamOffset: event.streamOffset, length: event.length, time });
          break;
        case "resync":
          c.resume(event.direction, event.recordOffset, event.skippedBytes, time);
          break;
        case "problem":
          if (event.direction === undefined) this.#abandon(c, `TLS: ${event.message}`, time);
          else {
            const message = `TLS (${event.direction}): ${event.message}`;
            this.#emit({ kind: "problem", connection: c.info.id, message, time });
            c.feeds[event.direction].end(new CaptureAbandoned(`connection ${c.info.id}: ${event.message}`));
            c.giveUp(event.direction);
          }
      }
    };
  }

  /** Passes bytes of `role` on: to the decryptor, or to the feed. */
  #deliver(c: Connection, role: TcpDirection, bytes: Uint8Array, time: CaptureTime): void {
    if (c.abandoned) return;
    if (c.decryptor === undefined) {
      this.#feed(c, role, bytes, time);
      return;
    }
    c.decrypting += bytes.length;
    c.lastPush = c.decryptor.push(role, bytes, this.#onTls(c, time)).then(
      () => void (c.decrypting -= bytes.length),
      (error) => this.#abandon(c, `TLS: ${error instanceof Error ? error.message : String(error)}`, time),
    );
  }

  /** Classifies a connection by its first bytes, once enough have come; then announces it and passes them on. */
  #classify(c: Connection, done: boolean): void {
    const heads = { client: concat(c.waiting.client), server: concat(c.waiting.server) };
    const enough = (b: Uint8Array) => b.length >= FIRST_BYTES_NEEDED;
    const client = sideOfFirstBytes(heads.client);
    const server = sideOfFirstBytes(heads.server);
    if (!done && client.side === undefined && server.side === undefined) {
      if (!enough(heads.client) && !enough(heads.server)) return; // wait for more
    }
    if (c.info.roles === "guessed" && (client.side === "server" || server.side === "client")) {
      c.swapped = true;
      const i = c.info;
      c.info = { ...i, client: i.server, clientPort: i.serverPort, server: i.client, serverPort: i.clientPort };
    }
    c.transport = client.tls || server.tls ? "tls" : "plain";
    if (c.transport === "tls") c.decryptor = new TlsConnectionDecryptor(this.#keyLog, this.#options);
    c.announced = true;
    this.#emit({ kind: "connection", connection: c });
    for (const direction of ["client", "server"] as const) {
      const bytes = heads[direction];
      if (bytes.length > 0) this.#deliver(c, c.roleOf(direction), bytes, c.waitingTime);
    }
    c.waiting.client = [];
    c.waiting.server = [];
  }

  async #end(c: Connection): Promise<void> {
    if (!c.announced) this.#classify(c, true);
    if (c.decryptor !== undefined && !c.abandoned) {
      const time = c.waitingTime;
      await c.decryptor.end(this.#onTls(c, time)).catch((error) => this.#abandon(c, String(error), time));
    }
    c.feeds.client.end();
    c.feeds.server.end();
    c.giveUp();
  }

  #onTcp(event: TcpStreamEvent): Promise<void> | void {
    switch (event.kind) {
      case "open":
        this.#tcpConnections++;
        this.#connections.set(event.connection.id, new Connection(event.connection, this.#taken));
        return;
      case "data": {
        const c = this.#connections.get(event.connection)!;
        c.waitingTime = event.time;
        if (!c.announced) {
          c.waiting[event.direction].push(event.bytes);
          this.#classify(c, false);
          return;
        }
        const role = c.roleOf(event.direction);
        if (c.decryptor === undefined && c.gaps[role] !== undefined) {
          c.resume(role, event.streamOffset, undefined, event.time);
        }
        this.#deliver(c, role, event.bytes, event.time);
        // Decryption is asynchronous: it is let catch up before much is pushed ahead of it.
        if (c.decrypting > 1024 * 1024) return c.lastPush;
        return;
      }
      case "gap": {
        this.#gaps++;
        const c = this.#connections.get(event.connection)!;
        const role = c.roleOf(event.direction);
        this.#emit({
          kind: "gap",
          connection: event.connection,
          direction: role,
          streamOffset: event.streamOffset,
          length: event.length,
          time: event.time,
        });
        if (!c.announced) this.#classify(c, true);
        if (c.decryptor !== undefined) {
          c.lastPush = c.decryptor.gap(role, event.length, this.#onTls(c, event.time)).catch(() => {});
        } else {
          c.lose(role, { streamOffset: event.streamOffset, length: event.length, time: event.time });
        }
        return;
      }
      case "close": {
        const c = this.#connections.get(event.connection)!;
        this.#connections.delete(event.connection);
        return this.#end(c).then(() =>
          this.#emit({ kind: "close", connection: c.info.id, reason: event.reason, time: event.time })
        );
      }
    }
  }
}
