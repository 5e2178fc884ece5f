/**
 * {@linkcode KeyLog}: the secrets of an NSS key log (the `SSLKEYLOGFILE` format browsers, curl, OpenSSL, Go and Node
 * write), by client random, for decrypting captured TLS connections. Internal.
 *
 * @module
 */

/** What a key log holds for one connection (one client random). Each secret as logged. */
export interface TlsSecrets {
  /** TLS 1.2: `CLIENT_RANDOM`, the 48-byte master secret. */
  readonly masterSecret?: Uint8Array;
  /** TLS 1.3: `CLIENT_HANDSHAKE_TRAFFIC_SECRET`. */
  readonly clientHandshakeTrafficSecret?: Uint8Array;
  /** TLS 1.3: `SERVER_HANDSHAKE_TRAFFIC_SECRET`. */
  readonly serverHandshakeTrafficSecret?: Uint8Array;
  /** TLS 1.3: `CLIENT_TRAFFIC_SECRET_0`, the client's first application traffic secret. */
  readonly clientTrafficSecret0?: Uint8Array;
  /** TLS 1.3: `SERVER_TRAFFIC_SECRET_0`. */
  readonly serverTrafficSecret0?: Uint8Array;
}

/** How the lines of one {@linkcode KeyLog.add} call were taken. */
export interface KeyLogAddResult {
  /** Lines whose secret was stored. */
  readonly added: number;
  /** Well-formed lines of labels the decryptor does not use (`EXPORTER_SECRET`, `EARLY_*`, unknown labels). */
  readonly ignored: number;
  /** Malformed lines (a wrong number of fields, bad hex, a wrong length), skipped. */
  readonly bad: number;
}

type SecretField = keyof TlsSecrets;

/** The labels stored, with the length(s) their secret may have. */
const LABELS: ReadonlyMap<string, { field: SecretField; lengths: readonly number[] }> = new Map([
  ["CLIENT_RANDOM", { field: "masterSecret", lengths: [48] }],
  ["CLIENT_HANDSHAKE_TRAFFIC_SECRET", { field: "clientHandshakeTrafficSecret", lengths: [32, 48] }],
  ["SERVER_HANDSHAKE_TRAFFIC_SECRET", { field: "serverHandshakeTrafficSecret", lengths: [32, 48] }],
  ["CLIENT_TRAFFIC_SECRET_0", { field: "clientTrafficSecret0", lengths: [32, 48] }],
  ["SERVER_TRAFFIC_SECRET_0", { field: "serverTrafficSecret0", lengths: [32, 48] }],
]);

const CLIENT_RANDOM_HEX = 64;

/**
 * The secrets of NSS key logs, looked up by client random. Lines are added at any time ({@linkcode KeyLog.add}: a key
 * log file, or the secrets of a pcapng Decryption Secrets Block): `CLIENT_RANDOM` for TLS 1.2 and the four traffic
 * secrets of TLS 1.3. Comments (`#`), blank lines and labels not used (`EXPORTER_SECRET`, `EARLY_*`, ...) are
 * skipped; malformed lines are counted in {@linkcode KeyLog.badLines} and skipped, never thrown. A secret logged again
 * for the same client random replaces the earlier one.
 */
export class KeyLog {
  readonly #byClientRandom = new Map<string, { -readonly [K in SecretField]?: Uint8Array }>();
  #badLines = 0;
  #ignoredLines = 0;

  /** A key log holding the lines of `text`, if given. */
  constructor(text?: string | Uint8Array) {
    if (text !== undefined) this.add(text);
  }

  /** Adds the lines of `text` (UTF-8 bytes or a string; LF or CRLF line ends). */
  add(text: string | Uint8Array): KeyLogAddResult {
    const lines = (typeof text === "string" ? text : new TextDecoder().decode(text)).split("\n");
    let added = 0;
    let ignored = 0;
    let bad = 0;
    for (const raw of lines) {
      const line = raw.trim();
      if (line === "" || line.startsWith("#")) continue;
      const fields = line.split(/[ \t]+/);
      const label = LABELS.get(fields[0]);
      if (label === undefined) {
        if (fields.length >= 2 && /^[A-Z0-9_]+$/.test(fields[0])) ignored++;
        else bad++;
        continue;
      }
      const secret = fields.length === 3 && fields[1].length === CLIENT_RANDOM_HEX && isHex(fields[1])
        ? hexToBytes(fields[2])
        : undefined;
      if (secret === undefined || !label.lengths.includes(secret.length)) {
        bad++;
        continue;
      }
      const key = fields[1].toLowerCase();
      let entry = this.#byClientRandom.get(key);
      if (entry === undefined) this.#byClientRandom.set(key, entry = {});
      entry[label.field] = secret;
      added++;
    }
    this.#badLines += bad;
    this.#ignoredLines += ignored;
    return { added, ignored, bad };
  }

  /** The secrets logged for the connection whose ClientHello carried `clientRandom` (32 bytes), or undefined. */
  secretsFor(clientRandom: Uint8Array): TlsSecrets | undefined {
    return this.#byClientRandom.get(bytesToHex(clientRandom));
  }

  /** How many connections (client randoms) have secrets. */
  get size(): number {
    return this.#byClientRandom.size;
  }

  /** Malformed lines skipped so far. */
  get badLines(): number {
    return this.#badLines;
  }

  /** Well-formed lines of labels not used, skipped so far. */
  get ignoredLines(): number {
    return this.#ignoredLines;
  }
}

/** Lower-case hex of `bytes` (a client random in messages and lookups). */
export function bytesToHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

function isHex(text: string): boolean {
  return /^[0-9a-fA-F]*$/.test(text);
}

/** The bytes `hex` spells, or undefined if it is not an even number of hex digits. */
function hexToBytes(hex: string): Uint8Array | undefined {
  if (hex.length % 2 !== 0 || !isHex(hex)) return undefined;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
