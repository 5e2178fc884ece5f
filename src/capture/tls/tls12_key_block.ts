/**
 * The TLS 1.2 key block (RFC 5246 §6.3) of an AEAD suite from a logged master secret: the PRF (§5, P_SHA256 or
 * P_SHA384, a composition of HMAC calls) expanded into each side's write key and IV. Internal.
 *
 * @module
 */
import { hmac } from "@noble/hashes/hmac.js";
import type { TlsCipherSuite } from "./cipher_suites.ts";
import { hashOf } from "./tls13_key_schedule.ts";

/** Each side's record key and IV (the salt of AES-GCM, 4 bytes; the whole nonce mask of ChaCha20-Poly1305, 12). */
export interface Tls12KeyBlock {
  readonly clientKey: Uint8Array;
  readonly serverKey: Uint8Array;
  readonly clientIv: Uint8Array;
  readonly serverIv: Uint8Array;
}

/** PRF(secret, label, seed) of TLS 1.2 with the suite's hash, `length` bytes. */
export function tls12Prf(
  suite: TlsCipherSuite,
  secret: Uint8Array,
  label: string,
  seed: Uint8Array,
  length: number,
): Uint8Array {
  const hash = hashOf(suite);
  const labelBytes = new TextEncoder().encode(label);
  const labelAndSeed = new Uint8Array(labelBytes.length + seed.length);
  labelAndSeed.set(labelBytes);
  labelAndSeed.set(seed, labelBytes.length);
  // P_hash(secret, seed) = HMAC(secret, A(1) + seed) + HMAC(secret, A(2) + seed) + ...; A(0) = seed, A(i) = HMAC(A(i-1)).
  const out = new Uint8Array(length);
  let a = labelAndSeed;
  for (let at = 0; at < length;) {
    a = hmac(hash, secret, a);
    const block = hmac.create(hash, secret).update(a).update(labelAndSeed).digest();
    out.set(block.subarray(0, Math.min(block.length, length - at)), at);
    at += block.length;
  }
  return out;
}

/** The key block of an AEAD suite (no MAC keys): key_expansion over server_random + client_random. */
export function tls12KeyBlock(
  suite: TlsCipherSuite,
  masterSecret: Uint8Array,
  clientRandom: Uint8Array,
  serverRandom: Uint8Array,
): Tls12KeyBlock {
  const ivBytes = suite.aead === "AES-GCM" ? 4 : 12;
  const seed = new Uint8Array(64);
  seed.set(serverRandom);
  seed.set(clientRandom, 32);
  const block = tls12Prf(suite, masterSecret, "key expansion", seed, 2 * suite.keyBytes + 2 * ivBytes);
  const k = suite.keyBytes;
  return {
    clientKey: block.subarray(0, k),
    serverKey: block.subarray(k, 2 * k),
    clientIv: block.subarray(2 * k, 2 * k + ivBytes),
    serverIv: block.subarray(2 * k + ivBytes, 2 * k + 2 * ivBytes),
  };
}
