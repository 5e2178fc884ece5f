/**
 * TLS decryption with a key log (issue 38): the recorded connections in fixtures/captures/tls-* (made by
 * scripts/make-tls-fixtures.mjs with node:tls, node:http2, curl, openssl s_client and Go's crypto/tls) decrypt to
 * exactly the plaintext the peers wrote, in any chunking and interleaving of their two directions; missing, wrong or
 * partial keys, damaged records, captures that start mid-connection, cut short or with lost bytes end in problem
 * events, never in garbage. Damaged inputs are built by the tests from the recorded bytes, as each test says.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { decodeHttp2Exchanges } from "../capture.ts";
import type { TcpDirection } from "../src/capture/records.ts";
import { KeyLog } from "../src/capture/tls/key_log.ts";
import { RecordProtection } from "../src/capture/tls/record_protection.ts";
import { supportedCipherSuite } from "../src/capture/tls/cipher_suites.ts";
import { nextTrafficSecret, trafficKeys } from "../src/capture/tls/tls13_key_schedule.ts";
import {
  TlsConnectionDecryptor,
  type TlsConnectionDecryptorOptions,
} from "../src/capture/tls/tls_connection_decryptor.ts";
import {
  TlsConnectionDecryptorStream,
  type TlsConnectionInput,
} from "../src/capture/tls/tls_connection_decryptor_stream.ts";
import type { TlsEvent, TlsHandshakeEvent, TlsProblemEvent } from "../src/capture/tls/tls_events.ts";
import { bytewise, concat, cutsFor, drain, fromHex, splitAt, streamOf, text } from "./_util.ts";

const captures = new URL("../fixtures/captures/", import.meta.url);

interface Fixture {
  name: string;
  c2s: Uint8Array;
  s2c: Uint8Array;
  keys: string;
  expected: {
    producer: string;
    version: string;
    cipherSuite: string;
    alpn: string;
    serverName: string;
    helloRetry: boolean;
    clientPlaintext: Uint8Array;
    serverPlaintext: Uint8Array;
  };
}

function load(name: string): Fixture {
  const file = (suffix: string) => new URL(`${name}${suffix}`, captures);
  const json = JSON.parse(readFileSync(file(".expected.json"), "utf8"));
  const base64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  return {
    name,
    c2s: new Uint8Array(readFileSync(file(".c2s.bin"))),
    s2c: new Uint8Array(readFileSync(file(".s2c.bin"))),
    keys: readFileSync(file(".keys.txt"), "utf8"),
    expected: {
      ...json,
      clientPlaintext: base64(json.clientPlaintext),
      serverPlaintext: base64(json.serverPlaintext),
    },
  };
}

/** The fixtures that decrypt (every suite of both versions, h2, curl, OpenSSL's KeyUpdates, Go with and without HRR). */
const DECRYPTABLE = [
  "tls-1.2-aes128gcm",
  "tls-1.2-aes256gcm",
  "tls-1.2-chacha20",
  "tls-1.3-aes128gcm",
  "tls-1.3-aes256gcm",
  "tls-1.3-chacha20",
  "tls-1.3-h2",
  "tls-curl",
  "tls-openssl-keyupdate",
  "tls-go-1.3",
  "tls-go-1.3-hrr",
];

/** Both directions, client first then server, each in one chunk. */
const whole = (f: Fixture): TlsConnectionInput[] => [
  { direction: "client", bytes: f.c2s },
  { direction: "server", bytes: f.s2c },
];

async function decrypt(
  inputs: TlsConnectionInput[],
  keys: string | KeyLog,
  options: TlsConnectionDecryptorOptions = {},
): Promise<TlsEvent[]> {
  const keyLog = typeof keys === "string" ? new KeyLog(keys) : keys;
  const { values, error } = await drain(
    streamOf(inputs).pipeThrough(new TlsConnectionDecryptorStream(keyLog, options)),
  );
  assert.equal(error, undefined, "problems are events, not errors");
  return values;
}

const plaintext = (events: TlsEvent[], direction: TcpDirection) =>
  concat(events.flatMap((e) => e.kind === "data" && e.direction === direction ? [e.bytes] : []));
const problems = (events: TlsEvent[]) => events.filter((e): e is TlsProblemEvent => e.kind === "problem");
const handshakes = (events: TlsEvent[]) => events.filter((e): e is TlsHandshakeEvent => e.kind === "handshake");
const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** What one direction sees, comparable across runs: its data and alerts, and the problems that end it. */
function directionView(events: TlsEvent[], direction: TcpDirection): string[] {
  return events.flatMap((e) => {
    if (e.kind === "data" && e.direction === direction) return [`data@${e.recordOffset}:${hex(e.bytes)}`];
    if (e.kind === "alert" && e.direction === direction) return [`alert@${e.recordOffset}:${e.level}:${e.name}`];
    if (e.kind === "problem" && (e.direction === direction || e.direction === undefined)) {
      return [`problem:${e.direction}:${e.reason}:${e.message}`];
    }
    return [];
  });
}

/** The records of one direction's bytes, parsed by the test itself: [offset, content type, fragment length]. */
function records(bytes: Uint8Array): [number, number, number][] {
  const out: [number, number, number][] = [];
  for (let at = 0; at < bytes.length;) {
    const length = (bytes[at + 3] << 8) | bytes[at + 4];
    out.push([at, bytes[at], length]);
    at += 5 + length;
  }
  return out;
}

/** Application-data records (content type 23) of one direction: [offset, fragment length]. */
const protectedRecords = (bytes: Uint8Array) => records(bytes).filter(([, type]) => type === 23);

test("tls: every recorded connection decrypts to exactly the plaintext its peers wrote; version, suite, ALPN, SNI", async () => {
  for (const name of DECRYPTABLE) {
    const f = load(name);
    const events = await decrypt(whole(f), f.keys);
    assert.deepEqual(problems(events), [], name);
    const [handshake, ...more] = handshakes(events);
    assert.equal(more.length, 0, `${name}: one handshake event`);
    assert.deepEqual(
      {
        version: handshake.version,
        cipherSuite: handshake.cipherSuite,
        alpn: handshake.alpn,
        serverName: handshake.serverName,
        helloRetry: handshake.helloRetry,
      },
      {
        version: f.expected.version,
        cipherSuite: f.expected.cipherSuite,
        alpn: f.expected.alpn,
        serverName: f.expected.serverName,
        helloRetry: f.expected.helloRetry,
      },
      `${name} (${f.expected.producer})`,
    );
    assert.ok(
      events.findIndex((e) => e.kind === "data") > events.indexOf(handshake),
      `${name}: the handshake comes before the data`,
    );
    assert.deepEqual(plaintext(events, "client"), f.expected.clientPlaintext, `${name}: client plaintext`);
    assert.deepEqual(plaintext(events, "server"), f.expected.serverPlaintext, `${name}: server plaintext`);
    const alerts = events.flatMap((e) => e.kind === "alert" ? [`${e.direction}:${e.level}:${e.name}`] : []);
    assert.deepEqual(alerts.sort(), ["client:warning:close_notify", "server:warning:close_notify"], name);
  }
});

test("tls: a HelloRetryRequest (Go) is followed to the second ServerHello; the large TLS 1.3 record is whole", async () => {
  const hrr = load("tls-go-1.3-hrr");
  const events = await decrypt(whole(hrr), hrr.keys);
  assert.equal(handshakes(events)[0].helloRetry, true);
  // The server's bytes start with two handshake records in plaintext: the HelloRetryRequest and the ServerHello.
  assert.deepEqual(records(hrr.s2c).filter(([, type]) => type === 22).length, 2);
  const big = load("tls-1.3-aes128gcm");
  const bigEvents = await decrypt(whole(big), big.keys);
  const sizes = bigEvents.flatMap((e) => e.kind === "data" && e.direction === "server" ? [e.bytes.length] : []);
  assert.ok(sizes.includes(16384), `a full 16 KiB record among ${sizes}`);
});

test("tls: the HTTP/2 connection (ALPN h2) decrypts into bytes watchwire's HTTP/2 decoder reads", async () => {
  const f = load("tls-1.3-h2");
  const events = await decrypt(whole(f), f.keys);
  assert.equal(handshakes(events)[0].alpn, "h2");
  const { values: exchanges, error } = await drain(
    decodeHttp2Exchanges(streamOf([plaintext(events, "server")]), streamOf([plaintext(events, "client")])),
  );
  assert.equal(error, undefined);
  assert.equal(exchanges.length, 1);
  assert.equal(exchanges[0].request?.path, "/watchwire/h2");
  const body = await exchanges[0].response.toResponse().text();
  assert.ok(body.startsWith("watchwire over h2: /watchwire/h2\n"), body);
});

test("tls: OpenSSL's KeyUpdates (both sides) are followed; the next secrets are those OpenSSL logged", async () => {
  const f = load("tls-openssl-keyupdate");
  const events = await decrypt(whole(f), f.keys);
  assert.deepEqual(problems(events), []);
  assert.equal(text(plaintext(events, "client")), "x-client one\nx-client two\nx-client three\n");
  // OpenSSL 3.0 also logs each updated secret, as *_TRAFFIC_SECRET_N lines (not read by KeyLog): an independent
  // check of "traffic upd", and the proof that the capture holds two client updates and one server update.
  const logged = (label: string) =>
    f.keys.split("\n").filter((l) => l.startsWith(`${label} `)).map((l) => fromHex(l.split(" ")[2]));
  const suite = supportedCipherSuite(0x1302)!;
  for (const side of ["CLIENT", "SERVER"]) {
    const updates = logged(`${side}_TRAFFIC_SECRET_N`);
    assert.equal(updates.length, side === "CLIENT" ? 2 : 1);
    let secret = logged(`${side}_TRAFFIC_SECRET_0`)[0];
    for (const update of updates) {
      secret = nextTrafficSecret(suite, secret);
      assert.deepEqual(secret, update, `${side}: HKDF-Expand-Label(secret, "traffic upd")`);
    }
  }
  // The client's last record does not open under CLIENT_TRAFFIC_SECRET_0: it needed the updates.
  const [offset, , length] = protectedRecords(f.c2s).at(-1)!;
  const { key, iv } = trafficKeys(suite, logged("CLIENT_TRAFFIC_SECRET_0")[0]);
  const stale = new RecordProtection(suite, key, iv);
  assert.equal(await stale.open(23, 0x0303, f.c2s.subarray(offset + 5, offset + 5 + length)), undefined);
});

/** The two directions cut at `clientCuts` / `serverCuts` and interleaved as `order` says (true: the client's next). */
function interleave(f: Fixture, clientCuts: number[], serverCuts: number[], order: boolean[]): TlsConnectionInput[] {
  const client = splitAt(f.c2s, clientCuts);
  const server = splitAt(f.s2c, serverCuts);
  const out: TlsConnectionInput[] = [];
  let k = 0;
  while (client.length > 0 || server.length > 0) {
    const fromClient = server.length === 0 || (client.length > 0 && (order[k++ % Math.max(1, order.length)] ?? true));
    out.push(
      fromClient ? { direction: "client", bytes: client.shift()! } : { direction: "server", bytes: server.shift()! },
    );
  }
  return out;
}

test("tls: split invariance: any chunking and interleaving of the two directions gives each direction the same events", async () => {
  for (
    const name of [
      "tls-1.2-chacha20",
      "tls-1.3-aes256gcm",
      "tls-go-1.3-hrr",
      "tls-openssl-keyupdate",
      "tls-1.3-aes128gcm",
    ]
  ) {
    const f = load(name);
    const reference = await decrypt(whole(f), f.keys);
    const expected = { client: directionView(reference, "client"), server: directionView(reference, "server") };
    const handshake = handshakes(reference)[0];
    await fc.assert(
      fc.asyncProperty(
        cutsFor(f.c2s.length),
        cutsFor(f.s2c.length),
        fc.array(fc.boolean(), { maxLength: 40 }),
        async (clientCuts, serverCuts, order) => {
          const events = await decrypt(interleave(f, clientCuts, serverCuts, order), f.keys);
          assert.deepEqual(directionView(events, "client"), expected.client);
          assert.deepEqual(directionView(events, "server"), expected.server);
          assert.deepEqual(handshakes(events), [handshake]);
          assert.ok(events.findIndex((e) => e.kind === "data") > events.indexOf(handshakes(events)[0]));
        },
      ),
      { numRuns: name === "tls-1.3-aes128gcm" ? 10 : 25 },
    );
  }
});

test("tls: byte by byte, the directions alternating or one after the other", async () => {
  const f = load("tls-openssl-keyupdate");
  const reference = await decrypt(whole(f), f.keys);
  const client = bytewise(f.c2s).map((bytes): TlsConnectionInput => ({ direction: "client", bytes }));
  const server = bytewise(f.s2c).map((bytes): TlsConnectionInput => ({ direction: "server", bytes }));
  const alternating = client.flatMap((c, i) => [c, ...(server[i] ? [server[i]] : [])]).concat(
    server.slice(client.length),
  );
  for (const inputs of [alternating, [...server, ...client], [...client, ...server]]) {
    const events = await decrypt(inputs, f.keys);
    for (const direction of ["client", "server"] as const) {
      assert.deepEqual(directionView(events, direction), directionView(reference, direction));
    }
  }
});

test("tls: no key for the client random: a problem naming it, for TLS 1.2 and 1.3, and nothing else", async () => {
  for (const name of ["tls-1.2-aes128gcm", "tls-1.3-chacha20"]) {
    const f = load(name);
    const reference = await decrypt(whole(f), f.keys);
    const clientRandom = handshakes(reference)[0].clientRandom;
    const other = load(name === "tls-1.2-aes128gcm" ? "tls-1.2-chacha20" : "tls-1.3-aes256gcm").keys;
    for (const keys of ["", other, "# nothing here\n"]) {
      const events = await decrypt(whole(f), keys);
      assert.equal(events.length, 1, `${name}: only the problem`);
      const [problem] = problems(events);
      assert.equal(problem.reason, "no-key");
      assert.equal(problem.direction, undefined, "the whole connection");
      assert.ok(problem.message.includes(clientRandom), problem.message);
      assert.equal(problem.error.code, "TLS_INVALID");
    }
    // The same problem at the same place whichever direction comes first.
    const serverFirst = await decrypt([...whole(f)].reverse(), "");
    assert.deepEqual(serverFirst.map((e) => e.kind === "problem" && e.message), [
      problems(await decrypt(whole(f), ""))[0].message,
    ]);
  }
});

/** `keys` with each secret of the listed labels changed in one bit. */
function damageKeys(keys: string, labels: string[]): string {
  return keys.split("\n").map((line) => {
    const [label, random, secret] = line.split(" ");
    if (!labels.includes(label)) return line;
    const flipped = (parseInt(secret[0], 16) ^ 1).toString(16);
    return `${label} ${random} ${flipped}${secret.slice(1)}`;
  }).join("\n");
}

test("tls: wrong keys: authentication problems, and no garbage", async () => {
  const tls12 = load("tls-1.2-chacha20");
  const events12 = await decrypt(whole(tls12), damageKeys(tls12.keys, ["CLIENT_RANDOM"]));
  assert.equal(plaintext(events12, "client").length + plaintext(events12, "server").length, 0);
  // TLS 1.2: the handshake is told (from the hellos); each direction's Finished then fails.
  assert.equal(handshakes(events12).length, 1);
  assert.deepEqual(problems(events12).map((p) => [p.direction, p.reason]).sort(), [
    ["client", "authentication"],
    ["server", "authentication"],
  ]);
  const tls13 = load("tls-1.3-aes128gcm");
  const allWrong = damageKeys(tls13.keys, [
    "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
    "SERVER_HANDSHAKE_TRAFFIC_SECRET",
    "CLIENT_TRAFFIC_SECRET_0",
    "SERVER_TRAFFIC_SECRET_0",
  ]);
  const events13 = await decrypt(whole(tls13), allWrong);
  // TLS 1.3: the EncryptedExtensions do not open, so there is no handshake event; the connection ends.
  assert.deepEqual(events13.map((e) => e.kind), ["problem"]);
  const [problem] = problems(events13);
  assert.equal(problem.reason, "authentication");
  assert.equal(problem.direction, undefined);
  assert.equal(problem.error.offset, protectedRecords(tls13.s2c)[0][0], "at the server's first protected record");
  assert.match(problem.message, /fails authentication/);
  // Only the client's application secret wrong: the server's data all decrypts; the client's stops at its first.
  const clientWrong = await decrypt(whole(tls13), damageKeys(tls13.keys, ["CLIENT_TRAFFIC_SECRET_0"]));
  assert.deepEqual(plaintext(clientWrong, "server"), tls13.expected.serverPlaintext);
  assert.equal(plaintext(clientWrong, "client").length, 0);
  const [clientProblem] = problems(clientWrong);
  assert.equal(clientProblem.direction, "client");
  assert.equal(clientProblem.reason, "authentication");
  // The client's protected records: its Finished (handshake keys, opens), then the request (application keys).
  assert.equal(clientProblem.error.offset, protectedRecords(tls13.c2s)[1][0]);
});

test("tls: a damaged ciphertext byte: the data before it, then a problem at that record's offset", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 1, max: 255 }), async (pick, xor) => {
      const f = load("tls-1.3-aes128gcm");
      const server = protectedRecords(f.s2c);
      // The server's protected records from its first application data on (after EE, certificate, verify, Finished).
      const candidates = server.slice(4);
      const [offset, length] = [candidates[pick % candidates.length][0], candidates[pick % candidates.length][2]];
      const damaged = f.s2c.slice();
      damaged[offset + 5 + (pick % length)] ^= xor;
      const events = await decrypt(
        [{ direction: "client", bytes: f.c2s }, { direction: "server", bytes: damaged }],
        f.keys,
      );
      const [problem, ...more] = problems(events);
      assert.equal(more.length, 0);
      assert.equal(problem.reason, "authentication");
      assert.equal(problem.direction, "server");
      assert.equal(problem.error.offset, offset);
      assert.ok(problem.message.includes(`at byte ${offset} (in the server-to-client bytes)`), problem.message);
      // Everything the server sent before that record, exactly; nothing after; the client unharmed.
      const before = events.filter((e) => e.kind === "data" && e.direction === "server");
      assert.ok(before.every((e) => e.kind === "data" && e.recordOffset < offset));
      const got = plaintext(events, "server");
      assert.deepEqual(got, f.expected.serverPlaintext.subarray(0, got.length));
      assert.deepEqual(plaintext(events, "client"), f.expected.clientPlaintext);
    }),
    { numRuns: 15 },
  );
});

test("tls: a capture that starts mid-connection: a problem, and nothing decrypted", async () => {
  const f = load("tls-1.3-chacha20");
  const c = records(f.c2s);
  const s = records(f.s2c);
  // Starting at a later record in each direction, or inside a record.
  for (const [clientFrom, serverFrom] of [[c[3][0], s[4][0]], [c[2][0] + 7, s[2][0] + 3], [1, 0]]) {
    const inputs: TlsConnectionInput[] = [
      { direction: "client", bytes: f.c2s.subarray(clientFrom) },
      { direction: "server", bytes: f.s2c.subarray(serverFrom) },
    ];
    const events = await decrypt(inputs, f.keys);
    assert.deepEqual(events.map((e) => e.kind), ["problem"], `from ${clientFrom}/${serverFrom}`);
    const [problem] = problems(events);
    assert.equal(problem.reason, "no-handshake");
    assert.equal(problem.direction, undefined);
    assert.match(problem.message, /mid-connection/);
  }
  // Roles swapped: the "client" starts with a ServerHello.
  const swapped = await decrypt([{ direction: "client", bytes: f.s2c }, { direction: "server", bytes: f.c2s }], f.keys);
  assert.match(problems(swapped)[0].message, /swapped/);
  // Plain HTTP is no TLS at all.
  const http = await decrypt([{ direction: "client", bytes: new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n") }], "");
  assert.equal(problems(http)[0].reason, "no-handshake");
});

test("tls: an unsupported cipher suite (Node's TLS 1.2 CBC connection) is named", async () => {
  const f = load("tls-1.2-cbc");
  const events = await decrypt(whole(f), f.keys);
  assert.deepEqual(events.map((e) => e.kind), ["problem"]);
  const [problem] = problems(events);
  assert.equal(problem.reason, "unsupported");
  assert.match(problem.message, /TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA/);
});

test("tls: maxTlsRecordBytes: a longer record is a problem at once, after the data before it", async () => {
  const f = load("tls-1.3-aes128gcm");
  const [offset, , length] = protectedRecords(f.s2c).find(([, , n]) => n > 16384)!;
  const events = await decrypt(whole(f), f.keys, { maxTlsRecordBytes: 8192 });
  const [problem] = problems(events);
  assert.equal(problem.reason, "too-large");
  assert.equal(problem.error.code, "MESSAGE_TOO_LARGE");
  assert.equal(problem.error.offset, offset);
  assert.match(problem.message, new RegExp(`TLS record of ${length} bytes is longer than maxTlsRecordBytes \\(8192`));
  assert.equal(problem.direction, "server");
  assert.equal(plaintext(events, "server").length, 0, "the response starts in that record: none of it");
  assert.deepEqual(plaintext(events, "client"), f.expected.clientPlaintext, "the client's direction goes on");
  // A header announcing 64 KiB: the problem comes with the header, without waiting for (or allocating) the body.
  const decryptor = new TlsConnectionDecryptor(new KeyLog());
  const seen: TlsEvent[] = [];
  await decryptor.push("client", Uint8Array.of(0x16, 0x03, 0x01, 0xff, 0xff), (e) => seen.push(e));
  assert.equal(problems(seen)[0]?.reason, "too-large");
  assert.throws(() => new TlsConnectionDecryptor(new KeyLog(), { maxTlsRecordBytes: -1 }), RangeError);
});

test("tls: bytes that end inside a record, records that wait in vain, lost bytes, too much waiting", async () => {
  const f = load("tls-1.2-aes128gcm");
  // The server's bytes cut inside its last record (its close_notify).
  const s = records(f.s2c);
  const [cutRecord] = s.at(-1)!;
  const cut = await decrypt([{ direction: "client", bytes: f.c2s }, {
    direction: "server",
    bytes: f.s2c.subarray(0, cutRecord + 9),
  }], f.keys);
  const truncated = problems(cut).find((p) => p.direction === "server")!;
  assert.equal(truncated.reason, "truncated");
  assert.equal(truncated.error.code, "TRUNCATED");
  assert.equal(truncated.error.offset, cutRecord);
  assert.deepEqual(plaintext(cut, "server"), f.expected.serverPlaintext, "the response is in the records before");
  // Only the client's bytes: its records after the ClientHello wait for the server's hello, which never comes.
  const alone = await decrypt([{ direction: "client", bytes: f.c2s }], f.keys);
  assert.deepEqual(problems(alone).map((p) => p.reason), ["incomplete"]);
  assert.match(problems(alone)[0].message, /ServerHello is not in the capture/);
  // Lost bytes in the server's direction: what came before is read, then a problem.
  const at = s[3][0];
  const lost = await decrypt([
    { direction: "client", bytes: f.c2s },
    { direction: "server", bytes: f.s2c.subarray(0, at) },
    { direction: "server", gap: 100 },
    { direction: "server", bytes: f.s2c.subarray(at + 100) },
  ], f.keys);
  const gap = problems(lost).find((p) => p.direction === "server")!;
  assert.equal(gap.reason, "lost-bytes");
  assert.equal(gap.error.offset, at);
  assert.deepEqual(plaintext(lost, "client"), f.expected.clientPlaintext);
  // Client bytes first, with little room to wait: too much waits for the server's hello.
  const waiting = await decrypt([...whole(f)], f.keys, { maxPendingBytes: 64 });
  assert.deepEqual(problems(waiting).map((p) => [p.reason, p.direction]), [["too-large", undefined]]);
  const roomy = await decrypt([...whole(f)], f.keys, { maxPendingBytes: f.c2s.length });
  assert.deepEqual(problems(roomy), []);
});

/**
 * The record at `index` of `bytes` re-framed by the test into records of at most `size` bytes of its fragment (the
 * same content type and version): allowed for plaintext handshake records, which no record protection covers.
 */
function reframe(bytes: Uint8Array, index: number, size: number): Uint8Array {
  const [offset, type, length] = records(bytes)[index];
  const fragment = bytes.subarray(offset + 5, offset + 5 + length);
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < fragment.length; at += size) {
    const piece = fragment.subarray(at, at + size);
    pieces.push(
      Uint8Array.of(type, bytes[offset + 1], bytes[offset + 2], piece.length >> 8, piece.length & 255),
      piece,
    );
  }
  return concat([bytes.subarray(0, offset), ...pieces, bytes.subarray(offset + 5 + length)]);
}

test("tls: handshake messages split over several records (re-framed by the test) are reassembled", async () => {
  for (const name of ["tls-go-1.3", "tls-1.2-aes256gcm"]) {
    const f = load(name);
    // The ClientHello over records of 50 bytes, the server's first record (its ServerHello) over records of 7.
    const c2s = reframe(f.c2s, 0, 50);
    const s2c = reframe(f.s2c, 0, 7);
    assert.ok(records(c2s).length > records(f.c2s).length + 2 && records(s2c).length > records(f.s2c).length + 9);
    const events = await decrypt([{ direction: "client", bytes: c2s }, { direction: "server", bytes: s2c }], f.keys);
    assert.deepEqual(problems(events), [], name);
    assert.equal(handshakes(events)[0].serverName, "watchwire.test");
    assert.deepEqual(plaintext(events, "client"), f.expected.clientPlaintext, name);
    assert.deepEqual(plaintext(events, "server"), f.expected.serverPlaintext, name);
  }
});

test("tls: maxHandshakeMessageBytes: a longer hello is a problem before it is buffered", async () => {
  const f = load("tls-go-1.3"); // a ClientHello of more than 1 KiB (a post-quantum key share)
  const [, , length] = records(f.c2s)[0];
  const events = await decrypt(whole(f), f.keys, { maxHandshakeMessageBytes: 1024 });
  assert.deepEqual(events.map((e) => e.kind), ["problem"]);
  const [problem] = problems(events);
  assert.equal(problem.reason, "too-large");
  assert.equal(problem.error.code, "MESSAGE_TOO_LARGE");
  assert.match(problem.message, new RegExp(`of ${length - 4} bytes is longer than maxHandshakeMessageBytes`));
});

test("tls: keys added to the key log after the capture began still serve (until both hellos are read)", async () => {
  const f = load("tls-1.3-aes256gcm");
  const keyLog = new KeyLog();
  const decryptor = new TlsConnectionDecryptor(keyLog);
  const events: TlsEvent[] = [];
  await decryptor.push("client", f.c2s, (e) => events.push(e));
  keyLog.add(new TextEncoder().encode(f.keys)); // as a pcapng Decryption Secrets Block's bytes
  await decryptor.push("server", f.s2c, (e) => events.push(e));
  await decryptor.end((e) => events.push(e));
  assert.deepEqual(problems(events), []);
  assert.deepEqual(plaintext(events, "server"), f.expected.serverPlaintext);
});

test("tls: calls not awaited one by one are still taken in order", async () => {
  const f = load("tls-1.2-aes256gcm");
  const decryptor = new TlsConnectionDecryptor(new KeyLog(f.keys));
  const events: TlsEvent[] = [];
  const emit = (e: TlsEvent) => events.push(e);
  await Promise.all([
    ...splitAt(f.c2s, [10, 200]).map((bytes) => decryptor.push("client", bytes, emit)),
    ...splitAt(f.s2c, [3, 1000, 2000]).map((bytes) => decryptor.push("server", bytes, emit)),
    decryptor.end(emit),
  ]);
  assert.deepEqual(plaintext(events, "server"), f.expected.serverPlaintext);
  assert.deepEqual(plaintext(events, "client"), f.expected.clientPlaintext);
});

test("key log: NSS lines by client random; comments, blanks, CRLF, unused labels skipped; bad lines counted", () => {
  const random = "ab".repeat(32);
  const log = new KeyLog();
  const result = log.add(
    [
      "# SSL/TLS secrets log file",
      "",
      `CLIENT_RANDOM ${random.toUpperCase()} ${"11".repeat(48)}`,
      `CLIENT_HANDSHAKE_TRAFFIC_SECRET ${random} ${"22".repeat(32)}\r`,
      `SERVER_TRAFFIC_SECRET_0\t${random}\t${"33".repeat(48)}`,
      `EXPORTER_SECRET ${random} ${"44".repeat(32)}`,
      `CLIENT_EARLY_TRAFFIC_SECRET ${random} ${"55".repeat(32)}`,
      `CLIENT_RANDOM ${random} ${"66".repeat(47)}`, // a master secret of 47 bytes
      `CLIENT_RANDOM ${random.slice(2)} ${"66".repeat(48)}`, // a short client random
      `SERVER_HANDSHAKE_TRAFFIC_SECRET ${random} zz${"77".repeat(31)}`, // not hex
      `CLIENT_TRAFFIC_SECRET_0 ${random}`, // no secret
      "random words",
    ].join("\n"),
  );
  assert.deepEqual(result, { added: 3, ignored: 2, bad: 5 });
  assert.equal(log.badLines, 5);
  assert.equal(log.ignoredLines, 2);
  assert.equal(log.size, 1);
  const secrets = log.secretsFor(fromHex(random))!;
  assert.deepEqual(secrets.masterSecret, new Uint8Array(48).fill(0x11));
  assert.deepEqual(secrets.clientHandshakeTrafficSecret, new Uint8Array(32).fill(0x22));
  assert.deepEqual(secrets.serverTrafficSecret0, new Uint8Array(48).fill(0x33));
  assert.equal(secrets.serverHandshakeTrafficSecret, undefined);
  assert.equal(log.secretsFor(new Uint8Array(32)), undefined);
  // Added to later: a secret logged again replaces the earlier one.
  log.add(`CLIENT_RANDOM ${random} ${"88".repeat(48)}`);
  assert.deepEqual(log.secretsFor(fromHex(random))!.masterSecret, new Uint8Array(48).fill(0x88));
});
