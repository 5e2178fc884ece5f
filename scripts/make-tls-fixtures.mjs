// Records real TLS connections on loopback for tests/capture_tls.test.ts (the TLS decryption of issue 38), each through a
// plain TCP relay that keeps the bytes of both directions, with the key log of the connection:
//
//   fixtures/captures/tls-<name>.c2s.bin        the client-to-server bytes, as the relay received them
//   fixtures/captures/tls-<name>.s2c.bin        the server-to-client bytes
//   fixtures/captures/tls-<name>.keys.txt       the NSS key log (SSLKEYLOGFILE format) of the connection
//   fixtures/captures/tls-<name>.expected.json  what the TLS stack reported (version, suite, ALPN, SNI) and the
//                                               plaintext each side wrote (base64), as the peers handed it over
//
// Producers: node:tls for each of TLS 1.2 and 1.3 and three cipher suites (HTTP/1.1 written raw on the sockets), one
// node:http2 connection (ALPN h2), one TLS 1.2 CBC connection (a suite the decryptor does not support), curl against a
// node:tls server, `openssl s_client` sending TLS 1.3 KeyUpdates to a node:tls server, and Go's crypto/tls
// (tools/tlsfixtures, with and without a HelloRetryRequest). Certificates are fresh self-signed ones (openssl req).
//
//   node scripts/make-tls-fixtures.mjs
//
// Needs openssl, curl and go (/usr/local/go/bin/go, or GO=...) on the machine; prints their versions at the end.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect as netConnect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Duplex } from "node:stream";
import { fileURLToPath } from "node:url";
import * as http2 from "node:http2";
import * as tls from "node:tls";
import { selfSignedCertificate } from "./self-signed.mjs";
import process from "node:process";

const OUT = fileURLToPath(new URL("../fixtures/captures/", import.meta.url));
const GO = process.env.GO ?? "/usr/local/go/bin/go";
const SERVER_NAME = "watchwire.test";
const tmp = mkdtempSync(join(tmpdir(), "watchwire-tls-"));

/** A self-signed certificate for SERVER_NAME: `kind` "rsa" (2048 bits) or "ec" (P-256). */
const certificate = (kind) => selfSignedCertificate(tmp, kind, SERVER_NAME);
const rsa = certificate("rsa");
const ec = certificate("ec");
const SERVER_CREDENTIALS = { key: [rsa.key, ec.key], cert: [rsa.cert, ec.cert] };

const listening = (server) =>
  new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server.address().port));
  });

/**
 * A TCP relay on a port of its own to `targetPort`, for one connection: `done` resolves, once both directions have
 * ended, to the bytes of each.
 */
async function relay(targetPort) {
  const c2s = [];
  const s2c = [];
  let finished;
  const done = new Promise((resolve) => (finished = resolve));
  const server = createServer((client) => {
    server.close();
    const upstream = netConnect(targetPort, "127.0.0.1");
    let open = 2;
    const closed = () => {
      if (--open === 0) finished({ c2s: Buffer.concat(c2s), s2c: Buffer.concat(s2c) });
    };
    client.on("data", (data) => {
      c2s.push(Buffer.from(data));
      upstream.write(data);
    });
    upstream.on("data", (data) => {
      s2c.push(Buffer.from(data));
      client.write(data);
    });
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
    client.on("close", closed);
    upstream.on("close", closed);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  const port = await listening(server);
  return { port, done };
}

/** A key log's lines from both peers, each once, in the order first logged. */
function keyLogOf(lines) {
  return [...new Set(lines.map((l) => l.toString().trim()))].join("\n") + "\n";
}

/** What the server's TLS socket reports about its connection (while it is open). */
function describe(socket) {
  return {
    version: { "TLSv1.2": "1.2", "TLSv1.3": "1.3" }[socket.getProtocol()] ?? socket.getProtocol(),
    cipherSuite: socket.getCipher().standardName,
    alpn: socket.alpnProtocol || "",
    serverName: socket.servername || "",
    helloRetry: false,
  };
}

function write(name, { c2s, s2c }, keys, expected) {
  writeFileSync(join(OUT, `${name}.c2s.bin`), c2s);
  writeFileSync(join(OUT, `${name}.s2c.bin`), s2c);
  writeFileSync(join(OUT, `${name}.keys.txt`), keys);
  const json = {
    ...expected,
    clientPlaintext: Buffer.from(expected.clientPlaintext).toString("base64"),
    serverPlaintext: Buffer.from(expected.serverPlaintext).toString("base64"),
  };
  writeFileSync(join(OUT, `${name}.expected.json`), JSON.stringify(json, null, 2) + "\n");
  console.log(
    `${name}: TLS ${expected.version} ${expected.cipherSuite} ALPN "${expected.alpn}", ${c2s.length} + ${s2c.length} bytes`,
  );
}

const nodeProducer = `node ${process.version} node:tls (OpenSSL ${process.versions.openssl})`;

/**
 * A raw-socket HTTP/1.1 server: reads a request head, answers with a `bodyBytes`-byte body and ends. `received` and
 * `sent` collect the plaintext; `onConnection` gets the server's TLS socket once the request has been read.
 */
function http1Server(options, bodyBytes, keyLog) {
  const received = [];
  const sent = [];
  let socketSeen;
  const seen = new Promise((resolve) => (socketSeen = resolve));
  const server = tls.createServer({ ...SERVER_CREDENTIALS, ...options }, (socket) => {
    let head = "";
    socket.on("data", (data) => {
      received.push(Buffer.from(data));
      head += data.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      const body = "watchwire over node:tls\n".repeat(Math.ceil(bodyBytes / 24)).slice(0, bodyBytes);
      const response = Buffer.from(
        `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n` +
          body,
      );
      sent.push(response);
      socketSeen(describe(socket));
      socket.end(response);
    });
    socket.on("error", () => {});
  });
  server.on("keylog", (line) => keyLog.push(line));
  return { server, received, sent, seen };
}

/** node:tls client and server, HTTP/1.1 written raw, with the given TLS options on both sides. */
async function nodeHttp1(name, options, bodyBytes) {
  const keyLog = [];
  const { server, received, sent, seen } = http1Server(
    { ...options, ALPNProtocols: ["http/1.1"] },
    bodyBytes,
    keyLog,
  );
  const serverPort = await listening(server);
  const { port, done } = await relay(serverPort);
  const request = Buffer.from(`GET /watchwire/${name} HTTP/1.1\r\nHost: ${SERVER_NAME}\r\nConnection: close\r\n\r\n`);
  const clientGot = [];
  await new Promise((resolve, reject) => {
    const socket = tls.connect({
      ...options,
      port,
      host: "127.0.0.1",
      servername: SERVER_NAME,
      rejectUnauthorized: false,
      ALPNProtocols: ["http/1.1"],
    }, () => socket.write(request));
    socket.on("keylog", (line) => keyLog.push(line));
    socket.on("data", (data) => clientGot.push(Buffer.from(data)));
    socket.on("end", () => socket.end());
    socket.on("close", resolve);
    socket.on("error", reject);
  });
  const connection = await seen;
  const bytes = await done;
  server.close();
  check(name, Buffer.concat(received), request, Buffer.concat(clientGot), Buffer.concat(sent));
  write(name, bytes, keyLogOf(keyLog), {
    producer: nodeProducer,
    ...connection,
    clientPlaintext: request,
    serverPlaintext: Buffer.concat(sent),
  });
}

function check(name, serverGot, clientSent, clientGot, serverSent) {
  if (!serverGot.equals(clientSent)) throw new Error(`${name}: the server received other bytes than the client sent`);
  if (!clientGot.equals(serverSent)) {
    throw new Error(
      `${name}: the client received other bytes (${clientGot.length}) than the server sent (${serverSent.length})`,
    );
  }
}

/** A Duplex over `socket`'s plaintext that keeps what goes through it: how an HTTP/2 session's bytes are seen. */
function tapped(socket, sent, received) {
  const duplex = new Duplex({
    write(chunk, _encoding, callback) {
      sent.push(Buffer.from(chunk));
      socket.write(chunk, callback);
    },
    final(callback) {
      socket.end();
      callback();
    },
    read() {},
  });
  socket.on("data", (data) => {
    received.push(Buffer.from(data));
    duplex.push(data);
  });
  socket.on("end", () => duplex.push(null));
  socket.on("error", (error) => duplex.destroy(error));
  return duplex;
}

/** node:http2 over node:tls with ALPN h2: one GET and its response; the plaintext tapped between TLS and HTTP/2. */
async function nodeHttp2(name) {
  const keyLog = [];
  const serverSent = [];
  const serverGot = [];
  const h2 = http2.createServer();
  h2.on("stream", (stream, headers) => {
    stream.respond({ ":status": 200, "content-type": "text/plain" });
    stream.end(`watchwire over h2: ${headers[":path"]}\n`.repeat(20));
  });
  let socketSeen;
  const seen = new Promise((resolve) => (socketSeen = resolve));
  const server = tls.createServer({ ...SERVER_CREDENTIALS, ALPNProtocols: ["h2"] }, (socket) => {
    socketSeen(describe(socket));
    h2.emit("connection", tapped(socket, serverSent, serverGot));
  });
  server.on("keylog", (line) => keyLog.push(line));
  const { port, done } = await relay(await listening(server));
  const clientSent = [];
  const clientGot = [];
  const socket = tls.connect({
    port,
    host: "127.0.0.1",
    servername: SERVER_NAME,
    rejectUnauthorized: false,
    ALPNProtocols: ["h2"],
  });
  socket.on("keylog", (line) => keyLog.push(line));
  await new Promise((resolve, reject) => {
    socket.once("secureConnect", resolve);
    socket.once("error", reject);
  });
  const session = http2.connect(`https://${SERVER_NAME}`, {
    createConnection: () => tapped(socket, clientSent, clientGot),
  });
  const body = await new Promise((resolve, reject) => {
    const request = session.request({ ":path": "/watchwire/h2" });
    const parts = [];
    request.on("data", (data) => parts.push(data));
    request.on("end", () => resolve(Buffer.concat(parts)));
    request.on("error", reject);
    request.end();
  });
  if (!body.toString().startsWith("watchwire over h2")) throw new Error(`${name}: unexpected body ${body}`);
  await new Promise((resolve) => session.close(resolve));
  const connection = await seen;
  const bytes = await done;
  server.close();
  h2.close();
  // The server's GOAWAY answers the client's: it is in the relay's bytes, but the client, gone, reads it no more.
  const clientRead = Buffer.concat(clientGot);
  check(
    name,
    Buffer.concat(serverGot),
    Buffer.concat(clientSent),
    clientRead,
    Buffer.concat(serverSent).subarray(0, clientRead.length),
  );
  write(name, bytes, keyLogOf(keyLog), {
    producer: `${nodeProducer} and node:http2`,
    ...connection,
    clientPlaintext: Buffer.concat(clientSent),
    serverPlaintext: Buffer.concat(serverSent),
  });
}

/** curl (its SSLKEYLOGFILE key log only) against a node:tls HTTP/1.1 server. */
async function curl(name) {
  const keyLog = [];
  const { server, received, sent, seen } = http1Server({ ALPNProtocols: ["http/1.1"] }, 1500, keyLog);
  const { port, done } = await relay(await listening(server));
  const keys = join(tmp, `${name}.keys.txt`);
  const bodyFile = join(tmp, `${name}.body`);
  const args = [
    "--http1.1",
    "-k",
    "-s",
    "-S",
    "--resolve",
    `${SERVER_NAME}:${port}:127.0.0.1`,
    "-o",
    bodyFile,
    `https://${SERVER_NAME}:${port}/watchwire/curl`,
  ];
  console.log(`  SSLKEYLOGFILE=${keys} curl ${args.join(" ")}`);
  await run("curl", args, { SSLKEYLOGFILE: keys });
  const connection = await seen;
  const bytes = await done;
  server.close();
  const response = Buffer.concat(sent);
  if (!response.toString("latin1").endsWith(readFileSync(bodyFile, "latin1"))) throw new Error(`${name}: body differs`);
  write(name, bytes, readFileSync(keys, "utf8"), {
    producer: `${curlVersion()} against ${nodeProducer}`,
    ...connection,
    clientPlaintext: Buffer.concat(received),
    serverPlaintext: response,
  });
}

/**
 * `openssl s_client` (its -keylogfile only) against a node:tls server that answers each line it gets: between its
 * lines, s_client's "K" command sends a KeyUpdate that requests one back, and "k" one that does not.
 */
async function opensslKeyUpdate(name) {
  const received = [];
  const sent = [];
  let socketSeen;
  const seen = new Promise((resolve) => (socketSeen = resolve));
  const server = tls.createServer({ ...SERVER_CREDENTIALS, ALPNProtocols: ["http/1.1"] }, (socket) => {
    socketSeen(describe(socket));
    const say = (text) => {
      const bytes = Buffer.from(text);
      sent.push(bytes);
      socket.write(bytes);
    };
    say("x-server ready\n");
    socket.on("data", (data) => {
      received.push(Buffer.from(data));
      say(`x-server got ${JSON.stringify(data.toString())}\n`);
    });
    socket.on("end", () => socket.end());
    socket.on("error", () => {});
  });
  const { port, done } = await relay(await listening(server));
  const keys = join(tmp, `${name}.keys.txt`);
  const args = [
    "s_client",
    "-connect",
    `127.0.0.1:${port}`,
    "-servername",
    SERVER_NAME,
    "-tls1_3",
    "-ciphersuites",
    "TLS_AES_256_GCM_SHA384",
    "-alpn",
    "http/1.1",
    "-keylogfile",
    keys,
  ];
  console.log(`  openssl ${args.join(" ")}  (stdin: lines, "K", a line, "k", a line, "Q", 400 ms apart)`);
  const child = spawn("openssl", args, { stdio: ["pipe", "ignore", "ignore"] });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const pause = () => new Promise((resolve) => setTimeout(resolve, 400));
  await pause();
  for (const line of ["x-client one\n", "K\n", "x-client two\n", "k\n", "x-client three\n", "Q\n"]) {
    child.stdin.write(line);
    await pause();
  }
  child.stdin.end();
  await exited;
  const connection = await seen;
  const bytes = await done;
  server.close();
  write(name, bytes, readFileSync(keys, "utf8"), {
    producer: `${opensslVersion()} s_client against ${nodeProducer}`,
    ...connection,
    keyUpdates: true,
    clientPlaintext: Buffer.concat(received),
    serverPlaintext: Buffer.concat(sent),
  });
}

/** Go's crypto/tls (tools/tlsfixtures). */
async function go(name, extra = []) {
  const args = ["run", ".", "-out", OUT, "-name", name, ...extra];
  console.log(`  (cd tools/tlsfixtures && ${GO} ${args.join(" ").replace(OUT, "../../fixtures/captures/")})`);
  await run(GO, args, {}, fileURLToPath(new URL("../tools/tlsfixtures/", import.meta.url)));
}

function run(command, args, env, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, ...env },
      cwd,
    });
    child.on("error", reject);
    child.on("exit", (code) => code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`)));
  });
}

const firstLine = (command, args) => execFileSync(command, args, { encoding: "utf8" }).split("\n")[0].trim();
const curlVersion = () => firstLine("curl", ["--version"]);
const opensslVersion = () => firstLine("openssl", ["version"]);

try {
  const v12 = { minVersion: "TLSv1.2", maxVersion: "TLSv1.2" };
  const v13 = { minVersion: "TLSv1.3", maxVersion: "TLSv1.3" };
  await nodeHttp1("tls-1.2-aes128gcm", { ...v12, ciphers: "ECDHE-RSA-AES128-GCM-SHA256" }, 2000);
  await nodeHttp1("tls-1.2-aes256gcm", { ...v12, ciphers: "ECDHE-ECDSA-AES256-GCM-SHA384" }, 2000);
  await nodeHttp1("tls-1.2-chacha20", { ...v12, ciphers: "ECDHE-RSA-CHACHA20-POLY1305" }, 2000);
  await nodeHttp1("tls-1.2-cbc", { ...v12, ciphers: "ECDHE-RSA-AES128-SHA" }, 500);
  await nodeHttp1("tls-1.3-aes128gcm", { ...v13, ciphers: "TLS_AES_128_GCM_SHA256" }, 20000);
  await nodeHttp1("tls-1.3-aes256gcm", { ...v13, ciphers: "TLS_AES_256_GCM_SHA384" }, 2000);
  await nodeHttp1("tls-1.3-chacha20", { ...v13, ciphers: "TLS_CHACHA20_POLY1305_SHA256" }, 2000);
  await nodeHttp2("tls-1.3-h2");
  await curl("tls-curl");
  await opensslKeyUpdate("tls-openssl-keyupdate");
  await go("tls-go-1.3");
  await go("tls-go-1.3-hrr", ["-hrr"]);
  console.log(`node ${process.version} (OpenSSL ${process.versions.openssl})`);
  console.log(opensslVersion());
  console.log(firstLine(GO, ["version"]));
  console.log(curlVersion());
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
