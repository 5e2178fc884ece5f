/**
 * The TLS cipher suites the decryptor supports (AEAD suites of TLS 1.2 and 1.3) and the names of common ones it does
 * not, for its messages. Internal.
 *
 * @module
 */

/** A TLS version the decryptor reads. */
export type TlsVersion = "1.2" | "1.3";

/** A cipher suite the decryptor can decrypt. */
export interface TlsCipherSuite {
  /** The IANA code point, e.g. 0x1301. */
  readonly id: number;
  /** The IANA name, e.g. `TLS_AES_128_GCM_SHA256`. */
  readonly name: string;
  /** The TLS version it belongs to. */
  readonly version: TlsVersion;
  /** The record protection. */
  readonly aead: "AES-GCM" | "CHACHA20-POLY1305";
  /** The key length in bytes (16 or 32). */
  readonly keyBytes: number;
  /** The hash of the key schedule (TLS 1.3) or the PRF (TLS 1.2). */
  readonly hash: "SHA-256" | "SHA-384";
}

const suite = (
  id: number,
  name: string,
  version: TlsVersion,
  aead: TlsCipherSuite["aead"],
  keyBytes: number,
  hash: TlsCipherSuite["hash"],
): TlsCipherSuite => ({ id, name, version, aead, keyBytes, hash });

/** The supported suites by code point. Every TLS 1.2 AEAD suite derives its keys alike, whatever its key exchange. */
const SUPPORTED: ReadonlyMap<number, TlsCipherSuite> = new Map(
  [
    suite(0x1301, "TLS_AES_128_GCM_SHA256", "1.3", "AES-GCM", 16, "SHA-256"),
    suite(0x1302, "TLS_AES_256_GCM_SHA384", "1.3", "AES-GCM", 32, "SHA-384"),
    suite(0x1303, "TLS_CHACHA20_POLY1305_SHA256", "1.3", "CHACHA20-POLY1305", 32, "SHA-256"),
    suite(0xc02b, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "1.2", "AES-GCM", 16, "SHA-256"),
    suite(0xc02c, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "1.2", "AES-GCM", 32, "SHA-384"),
    suite(0xc02f, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "1.2", "AES-GCM", 16, "SHA-256"),
    suite(0xc030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "1.2", "AES-GCM", 32, "SHA-384"),
    suite(0xcca8, "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "1.2", "CHACHA20-POLY1305", 32, "SHA-256"),
    suite(0xcca9, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "1.2", "CHACHA20-POLY1305", 32, "SHA-256"),
    suite(0xccaa, "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "1.2", "CHACHA20-POLY1305", 32, "SHA-256"),
    suite(0x009c, "TLS_RSA_WITH_AES_128_GCM_SHA256", "1.2", "AES-GCM", 16, "SHA-256"),
    suite(0x009d, "TLS_RSA_WITH_AES_256_GCM_SHA384", "1.2", "AES-GCM", 32, "SHA-384"),
    suite(0x009e, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "1.2", "AES-GCM", 16, "SHA-256"),
    suite(0x009f, "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", "1.2", "AES-GCM", 32, "SHA-384"),
  ].map((s) => [s.id, s]),
);

/** Names of suites met in practice that the decryptor does not support (CBC, CCM), for its messages. */
const UNSUPPORTED_NAMES: ReadonlyMap<number, string> = new Map([
  [0x1304, "TLS_AES_128_CCM_SHA256"],
  [0x1305, "TLS_AES_128_CCM_8_SHA256"],
  [0x002f, "TLS_RSA_WITH_AES_128_CBC_SHA"],
  [0x0035, "TLS_RSA_WITH_AES_256_CBC_SHA"],
  [0x003c, "TLS_RSA_WITH_AES_128_CBC_SHA256"],
  [0x003d, "TLS_RSA_WITH_AES_256_CBC_SHA256"],
  [0x000a, "TLS_RSA_WITH_3DES_EDE_CBC_SHA"],
  [0xc009, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"],
  [0xc00a, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA"],
  [0xc013, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"],
  [0xc014, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA"],
  [0xc023, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256"],
  [0xc024, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384"],
  [0xc027, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256"],
  [0xc028, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"],
  [0xc0ac, "TLS_ECDHE_ECDSA_WITH_AES_128_CCM"],
  [0xc0ad, "TLS_ECDHE_ECDSA_WITH_AES_256_CCM"],
  [0xc09c, "TLS_RSA_WITH_AES_128_CCM"],
  [0xc09d, "TLS_RSA_WITH_AES_256_CCM"],
]);

/** The supported suite with code point `id`, or undefined. */
export function supportedCipherSuite(id: number): TlsCipherSuite | undefined {
  return SUPPORTED.get(id);
}

/** A suite's name for messages: its IANA name where known, else its code point (`cipher suite 0x1304`). */
export function cipherSuiteName(id: number): string {
  return SUPPORTED.get(id)?.name ?? UNSUPPORTED_NAMES.get(id) ?? `cipher suite 0x${id.toString(16).padStart(4, "0")}`;
}
