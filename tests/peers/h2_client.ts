/**
 * An h2c (HTTP/2 over cleartext TCP, prior knowledge: RFC 9113 §3.3) client for tests against runtime servers: a
 * `node:http2` client that fetches paths concurrently over one connection through a recording proxy and returns what it
 * received and the bytes of the connection, and a raw probe that sends the client preface and records the reply.
 */
import { Buffer } from "node:buffer";
import * as http2 from "node:http2";
import { connect } from "node:net";
import { startRecordingProxy } from "./recording_proxy.ts";

/** What one request got, as the node:http2 client saw it. */
export interface H2cResult {
  path: string;
  /** The response header fields (node's object), or undefined when none came. */
  headers: Record<string, unknown> | undefined;
  body: string;
  /** The request's error (its code), if it failed. */
  error: string | undefined;
}

/** One recorded h2c connection. */
export interface H2cRecording {
  results: H2cResult[];
  /** The session's error (its code), if any. */
  sessionError: string | undefined;
  c2s: Uint8Array;
  s2c: Uint8Array;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * GETs `paths` concurrently over one h2c connection to 127.0.0.1:`port`, through a recording proxy. No
 * Accept-Encoding is sent (bodies stay uncompressed).
 */
export async function recordH2c(port: number, paths: string[], timeoutMs = 15000): Promise<H2cRecording> {
  const proxy = await startRecordingProxy(port);
  let client: http2.ClientHttp2Session | undefined;
  let sessionError: string | undefined;
  try {
    client = http2.connect(`http://127.0.0.1:${proxy.port}`);
    client.on("error", (e: Error & { code?: string }) => sessionError ??= e.code ?? String(e));
    const fetchPath = (path: string) =>
      new Promise<H2cResult>((resolve) => {
        const request = client!.request({ ":path": path, ":method": "GET" });
        const parts: Uint8Array[] = [];
        let headers: Record<string, unknown> | undefined;
        let error: string | undefined;
        request.on("response", (h: http2.IncomingHttpHeaders) => headers = { ...h });
        request.on("data", (chunk: Uint8Array) => parts.push(new Uint8Array(chunk)));
        request.on("error", (e: Error & { code?: string }) => error ??= e.code ?? String(e));
        const done = () => resolve({ path, headers, body: Buffer.concat(parts).toString("utf8"), error });
        request.on("close", done);
      });
    const results = await withDeadline(Promise.all(paths.map(fetchPath)), timeoutMs, `h2c requests to :${port}`);
    if (!client.closed && !client.destroyed) {
      await withDeadline(new Promise<void>((resolve) => client!.close(() => resolve())), 5000, "closing the session");
    }
    await sleep(50); // let the proxy see the last bytes
    const [connection] = proxy.connections();
    return { results, sessionError, c2s: connection.clientToServer, s2c: connection.serverToClient };
  } finally {
    client?.destroy();
    await proxy.close();
  }
}

/** The HTTP/2 client connection preface followed by an empty SETTINGS frame. */
export const H2C_PREFACE = new Uint8Array([
  ...new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
  0,
  0,
  0,
  4,
  0,
  0,
  0,
  0,
  0,
]);

/** Sends {@linkcode H2C_PREFACE} to 127.0.0.1:`port` and returns every byte of the reply until close (or `waitMs`). */
export function probeH2cPreface(port: number, waitMs = 2000): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const parts: Uint8Array[] = [];
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on("connect", () => socket.write(H2C_PREFACE));
    socket.on("data", (chunk: Uint8Array) => parts.push(new Uint8Array(chunk)));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(new Uint8Array(Buffer.concat(parts)));
    });
  });
}
