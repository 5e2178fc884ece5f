/**
 * A raw HTTP/1.1 client on one node:net socket: it writes fixed request bytes (so what it sends is deterministic,
 * unlike a runtime's `fetch`), one request at a time, each once the previous response is complete. Response ends are
 * found by a deliberately small framing scanner of its own (Content-Length, chunked sizes, or the connection's
 * close), independent of the library under test, so a decoder bug cannot change what gets recorded.
 */
import { connect } from "node:net";

/** The bytes of a `GET target` request; `close` asks the server to close the connection after its response. */
export function getRequest(target: string, options: { close?: boolean; host?: string } = {}): string {
  return [
    `GET ${target} HTTP/1.1`,
    `Host: ${options.host ?? "kubernetes.default.svc"}`,
    "User-Agent: watchwire-tests/0.1.0",
    "Accept: application/json",
    `Connection: ${options.close ? "close" : "keep-alive"}`,
    "",
    "",
  ].join("\r\n");
}

const CRLF = Buffer.from("\r\n");
const CRLFCRLF = Buffer.from("\r\n\r\n");

/**
 * Where the response starting at `from` in `bytes` ends: the offset after it, `-1` while it is incomplete, or
 * `Infinity` for a body delimited by the connection's close.
 */
export function responseEnd(bytes: Buffer, from: number): number {
  for (;;) {
    const headEnd = bytes.indexOf(CRLFCRLF, from);
    if (headEnd === -1) return -1;
    const head = bytes.subarray(from, headEnd).toString("latin1").split("\r\n");
    const status = Number(head[0].split(" ")[1]);
    const fields = new Map(
      head.slice(1).map((line) => {
        const colon = line.indexOf(":");
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim().toLowerCase()] as const;
      }),
    );
    const bodyStart = headEnd + 4;
    if (status >= 100 && status < 200) {
      from = bodyStart;
      continue;
    }
    if (status === 204 || status === 304) return bodyStart;
    if ((fields.get("transfer-encoding") ?? "").endsWith("chunked")) {
      let at = bodyStart;
      for (;;) {
        const lineEnd = bytes.indexOf(CRLF, at);
        if (lineEnd === -1) return -1;
        const size = parseInt(bytes.subarray(at, lineEnd).toString("latin1").split(";")[0].trim(), 16);
        if (!Number.isSafeInteger(size)) throw new Error(`bad chunk size line at ${at}`);
        if (size === 0) {
          // Trailer section: field lines, then an empty line.
          let line = lineEnd + 2;
          for (;;) {
            const end = bytes.indexOf(CRLF, line);
            if (end === -1) return -1;
            if (end === line) return end + 2;
            line = end + 2;
          }
        }
        at = lineEnd + 2 + size + 2;
        if (at > bytes.length) return -1;
      }
    }
    const length = fields.get("content-length");
    if (length !== undefined) {
      const end = bodyStart + Number(length);
      return end <= bytes.length ? end : -1;
    }
    return Infinity;
  }
}

/**
 * Sends `requests` on one connection to 127.0.0.1:`port`, each after the previous response has fully arrived, and
 * resolves with everything the server sent once the last response is complete (or the server closed). Fails after
 * `timeoutMs` in all.
 */
export function rawRequests(port: number, requests: string[], timeoutMs = 5000): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    socket.setNoDelay(true);
    const received: Buffer[] = [];
    let bytes = Buffer.alloc(0);
    let next = 0;
    let responseStart = 0;
    let settled = false;
    const timer = setTimeout(
      () => finish(new Error(`raw client: no complete responses after ${timeoutMs} ms`)),
      timeoutMs,
    );
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error === undefined) resolve(new Uint8Array(bytes));
      else reject(error);
    };
    const sendNext = () => socket.write(requests[next++]);
    socket.on("connect", sendNext);
    socket.on("data", (data: Buffer) => {
      received.push(data);
      bytes = Buffer.concat(received);
      let end: number;
      try {
        end = responseEnd(bytes, responseStart);
      } catch (error) {
        finish(error as Error);
        return;
      }
      if (end === -1 || end === Infinity) return;
      responseStart = end;
      if (next < requests.length) sendNext();
      else finish();
    });
    socket.on("end", () => {
      if (next < requests.length) {
        finish(new Error(`raw client: the server closed after ${next} of ${requests.length} requests`));
      } else finish();
    });
    socket.on("error", (error) => finish(error));
  });
}
