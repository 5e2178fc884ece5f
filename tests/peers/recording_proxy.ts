/**
 * A loopback TCP proxy (node:net) that records the raw bytes of every connection through it, both directions, so a
 * test or script gets exactly what a real server wrote on the wire (framing, headers, chunk sizes, gzip members).
 */
import { type AddressInfo, connect, createServer, type Socket } from "node:net";

/** The bytes of one proxied connection. */
export interface RecordedConnection {
  /** Bytes the client sent, in order. */
  clientToServer: Uint8Array;
  /** Bytes the server sent, in order. */
  serverToClient: Uint8Array;
}

/** A running recording proxy. */
export interface RecordingProxy {
  /** The port it listens on (127.0.0.1). */
  port: number;
  /** Stops listening, ends every connection, and resolves once the server is closed. */
  close(): Promise<void>;
  /** Client-to-server bytes of all connections, connection after connection in the order they were accepted. */
  clientToServer(): Uint8Array;
  /** Server-to-client bytes of all connections, connection after connection in the order they were accepted. */
  serverToClient(): Uint8Array;
  /** Each connection's bytes, in the order the connections were accepted. */
  connections(): RecordedConnection[];
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Forwards `from` to `to`, recording each chunk (copied) into `record`, with backpressure. */
function forward(from: Socket, to: Socket, record: Uint8Array[]): void {
  from.on("data", (data: Uint8Array) => {
    record.push(new Uint8Array(data));
    if (!to.destroyed && !to.write(data)) {
      from.pause();
      to.once("drain", () => from.resume());
    }
  });
  from.on("end", () => {
    if (!to.destroyed) to.end();
  });
}

/** Starts a recording proxy on 127.0.0.1 (ephemeral port) in front of `targetHost:targetPort`. */
export async function startRecordingProxy(targetPort: number, targetHost = "127.0.0.1"): Promise<RecordingProxy> {
  const records: Array<{ c2s: Uint8Array[]; s2c: Uint8Array[] }> = [];
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    const record = { c2s: [] as Uint8Array[], s2c: [] as Uint8Array[] };
    records.push(record);
    const upstream = connect(targetPort, targetHost);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    track(client);
    track(upstream);
    const fail = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", fail);
    upstream.on("error", fail);
    client.on("close", () => upstream.end());
    upstream.on("close", () => client.end());
    forward(client, upstream, record.c2s);
    forward(upstream, client, record.s2c);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
    clientToServer: () => join(records.flatMap((r) => r.c2s)),
    serverToClient: () => join(records.flatMap((r) => r.s2c)),
    connections: () => records.map((r) => ({ clientToServer: join(r.c2s), serverToClient: join(r.s2c) })),
  };
}
