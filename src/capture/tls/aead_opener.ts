/**
 * {@linkcode openerFor}: authenticated decryption for a record key: AES-GCM by WebCrypto, ChaCha20-Poly1305 (which
 * WebCrypto lacks) by `@noble/ciphers`. Internal.
 *
 * @module
 */
import { chacha20poly1305 } from "@noble/ciphers/chacha.js";
import type { TlsCipherSuite } from "./cipher_suites.ts";

/** Authenticated decryption under one key. */
export interface AeadOpener {
  /** The plaintext of `sealed` (ciphertext then the 16-byte tag), or undefined if it fails authentication. */
  open(nonce: Uint8Array, additionalData: Uint8Array, sealed: Uint8Array): Promise<Uint8Array | undefined>;
}

/** The opener of `suite`'s AEAD under `key`. */
export function openerFor(suite: TlsCipherSuite, key: Uint8Array): AeadOpener {
  return suite.aead === "AES-GCM" ? new WebCryptoAesGcm(key) : new NobleChaCha20Poly1305(key);
}

class WebCryptoAesGcm implements AeadOpener {
  readonly #key: Promise<CryptoKey>;

  constructor(key: Uint8Array) {
    this.#key = crypto.subtle.importKey("raw", key as Uint8Array<ArrayBuffer>, "AES-GCM", false, ["decrypt"]);
  }

  async open(nonce: Uint8Array, additionalData: Uint8Array, sealed: Uint8Array): Promise<Uint8Array | undefined> {
    const key = await this.#key;
    try {
      const params = {
        name: "AES-GCM",
        iv: nonce as Uint8Array<ArrayBuffer>,
        additionalData: additionalData as Uint8Array<ArrayBuffer>,
        tagLength: 128,
      };
      return new Uint8Array(await crypto.subtle.decrypt(params, key, sealed as Uint8Array<ArrayBuffer>));
    } catch {
      return undefined; // OperationError: the tag does not match
    }
  }
}

class NobleChaCha20Poly1305 implements AeadOpener {
  readonly #key: Uint8Array;

  constructor(key: Uint8Array) {
    this.#key = key;
  }

  open(nonce: Uint8Array, additionalData: Uint8Array, sealed: Uint8Array): Promise<Uint8Array | undefined> {
    try {
      return Promise.resolve(chacha20poly1305(this.#key, nonce, additionalData).decrypt(sealed));
    } catch {
      return Promise.resolve(undefined); // the tag does not match
    }
  }
}
