/**
 * What the decryptor reads of the handshake's hellos (RFC 8446 §4.1.2-4.1.4, §4.3.1; RFC 5246 §7.4.1): the client
 * random and server name of a ClientHello, the random, version, suite and ALPN protocol of a ServerHello (or a
 * HelloRetryRequest), the ALPN protocol of EncryptedExtensions. Internal.
 *
 * @module
 */
import { ByteCursor } from "./byte_cursor.ts";

/** What a ClientHello says. */
export interface ClientHelloInfo {
  /** The 32-byte client random: the key log's key. */
  readonly random: Uint8Array;
  /** The host name of its server_name extension (SNI), if any. */
  readonly serverName: string | undefined;
  /** Whether it offers 0-RTT data (the early_data extension). */
  readonly offersEarlyData: boolean;
}

/** What a ServerHello (or a HelloRetryRequest, which is one with a special random) says. */
export interface ServerHelloInfo {
  readonly random: Uint8Array;
  /** The negotiated version: the supported_versions extension's (TLS 1.3) or else the legacy_version field. */
  readonly version: number;
  readonly cipherSuite: number;
  /** The protocol of its ALPN extension (TLS 1.2), if any. */
  readonly alpn: string | undefined;
  /** Whether it is a HelloRetryRequest (RFC 8446 §4.1.3). */
  readonly helloRetry: boolean;
}

/** What EncryptedExtensions say. */
export interface EncryptedExtensionsInfo {
  readonly alpn: string | undefined;
  /** Whether the server accepted 0-RTT data. */
  readonly acceptsEarlyData: boolean;
}

const SERVER_NAME = 0;
const ALPN = 16;
const EARLY_DATA = 42;
const SUPPORTED_VERSIONS = 43;

/** SHA-256("HelloRetryRequest"): the random of a HelloRetryRequest. */
const HELLO_RETRY_RANDOM = Uint8Array.from(
  "cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c".match(/../g)!,
  (hex) => parseInt(hex, 16),
);

/** Reads a ClientHello's body; `fail` throws with the fault's description. */
export function readClientHello(body: Uint8Array, fail: (detail: string) => never): ClientHelloInfo {
  const c = new ByteCursor(body, "the ClientHello", fail);
  c.u16("legacy_version");
  const random = c.bytes(32, "random").slice();
  c.vector(1, "legacy_session_id");
  c.vector(2, "cipher_suites");
  c.vector(1, "legacy_compression_methods");
  let serverName: string | undefined;
  let offersEarlyData = false;
  for (const [type, data] of extensions(c, fail)) {
    if (type === SERVER_NAME) serverName = readServerName(data);
    else if (type === EARLY_DATA) offersEarlyData = true;
  }
  return { random, serverName, offersEarlyData };
}

/** Reads a ServerHello's body. */
export function readServerHello(body: Uint8Array, fail: (detail: string) => never): ServerHelloInfo {
  const c = new ByteCursor(body, "the ServerHello", fail);
  let version = c.u16("legacy_version");
  const random = c.bytes(32, "random").slice();
  c.vector(1, "legacy_session_id");
  const cipherSuite = c.u16("cipher_suite");
  if (c.u8("legacy_compression_method") !== 0) fail("the ServerHello selects compression");
  let alpn: string | undefined;
  for (const [type, data] of extensions(c, fail)) {
    if (type === SUPPORTED_VERSIONS) {
      version = data.u16("selected_version");
      data.end();
    } else if (type === ALPN) {
      alpn = readAlpn(data);
    }
  }
  const helloRetry = random.every((b, i) => b === HELLO_RETRY_RANDOM[i]);
  return { random, version, cipherSuite, alpn, helloRetry };
}

/** Reads EncryptedExtensions' body. */
export function readEncryptedExtensions(body: Uint8Array, fail: (detail: string) => never): EncryptedExtensionsInfo {
  const c = new ByteCursor(body, "the EncryptedExtensions", fail);
  let alpn: string | undefined;
  let acceptsEarlyData = false;
  for (const [type, data] of extensions(c, fail, true)) {
    if (type === ALPN) alpn = readAlpn(data);
    else if (type === EARLY_DATA) acceptsEarlyData = true;
  }
  return { alpn, acceptsEarlyData };
}

/**
 * The extensions vector that ends a message, as [type, data] pairs. A hello may lack it (an old TLS 1.2 hello: no
 * extensions) unless `required`.
 */
function* extensions(
  c: ByteCursor,
  fail: (detail: string) => never,
  required = false,
): Generator<[number, ByteCursor]> {
  if (c.remaining === 0 && !required) return;
  const list = c.vector(2, "extensions");
  c.end();
  const seen = new Set<number>();
  while (list.remaining > 0) {
    const type = list.u16("extension type");
    if (seen.has(type)) fail(`extension ${type} appears twice`);
    seen.add(type);
    yield [type, list.vector(2, `extension ${type}`)];
  }
}

/** The host_name of a server_name extension (RFC 6066 §3). */
function readServerName(data: ByteCursor): string | undefined {
  const list = data.vector(2, "server_name_list");
  while (list.remaining > 0) {
    const nameType = list.u8("name_type");
    const name = list.vector(2, "host_name");
    if (nameType === 0) return new TextDecoder().decode(name.bytes(name.remaining, "host_name"));
  }
  return undefined;
}

/** The one protocol a server's ALPN extension selects (RFC 7301 §3.1). */
function readAlpn(data: ByteCursor): string {
  const list = data.vector(2, "protocol_name_list");
  const name = list.vector(1, "protocol name");
  list.end();
  data.end();
  return new TextDecoder().decode(name.bytes(name.remaining, "protocol name"));
}
