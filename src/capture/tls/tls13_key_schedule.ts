/**
 * The parts of the TLS 1.3 key schedule (RFC 8446 §7) a decryptor needs when the traffic secrets are logged:
 * HKDF-Expand-Label for a secret's record key and IV, and the next secret of a KeyUpdate. Internal.
 *
 * @module
 */
import { expand } from "@noble/hashes/hkdf.js";
import { sha256, sha384 } from "@noble/hashes/sha2.js";
import type { CHash } from "@noble/hashes/utils.js";
import type { TlsCipherSuite } from "./cipher_suites.ts";

/** The noble hash of a suite's `hash`. */
export function hashOf(suite: TlsCipherSuite): CHash {
  return suite.hash === "SHA-384" ? sha384 : sha256;
}

const LABEL_PREFIX = new TextEncoder().encode("tls13 ");

/** HKDF-Expand-Label(secret, label, context, length) (RFC 8446 §7.1) with the suite's hash. */
export function hkdfExpandLabel(
  suite: TlsCipherSuite,
  secret: Uint8Array,
  label: string,
  context: Uint8Array,
  length: number,
): Uint8Array {
  const name = new TextEncoder().encode(label);
  // struct { uint16 length; opaque label<7..255> = "tls13 " + Label; opaque context<0..255>; } HkdfLabel
  const info = new Uint8Array(2 + 1 + LABEL_PREFIX.length + name.length + 1 + context.length);
  info[0] = length >>> 8;
  info[1] = length & 0xff;
  info[2] = LABEL_PREFIX.length + name.length;
  info.set(LABEL_PREFIX, 3);
  info.set(name, 3 + LABEL_PREFIX.length);
  info[3 + LABEL_PREFIX.length + name.length] = context.length;
  info.set(context, 4 + LABEL_PREFIX.length + name.length);
  return expand(hashOf(suite), secret, info, length);
}

/** The record key and IV of a traffic secret (RFC 8446 §7.3): `key` of the suite's length, a 12-byte `iv`. */
export function trafficKeys(suite: TlsCipherSuite, secret: Uint8Array): { key: Uint8Array; iv: Uint8Array } {
  const empty = new Uint8Array(0);
  return {
    key: hkdfExpandLabel(suite, secret, "key", empty, suite.keyBytes),
    iv: hkdfExpandLabel(suite, secret, "iv", empty, 12),
  };
}

/** The traffic secret after a KeyUpdate (RFC 8446 §7.2): HKDF-Expand-Label(secret, "traffic upd", "", Hash.length). */
export function nextTrafficSecret(suite: TlsCipherSuite, secret: Uint8Array): Uint8Array {
  return hkdfExpandLabel(suite, secret, "traffic upd", new Uint8Array(0), hashOf(suite).outputLen);
}
