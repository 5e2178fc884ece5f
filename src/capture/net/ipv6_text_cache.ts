/**
 * {@linkcode Ipv6TextCache}: the text of the IPv6 addresses seen last, so that a connection's packets do not write
 * the same address again and again. Internal.
 *
 * @module
 */
import { ipv6Text } from "./address_text.ts";

/** How many addresses it remembers: both ends of a couple of connections. */
const ENTRIES = 4;

/**
 * {@linkcode ipv6Text} with a memory of the last few addresses written: an address among them (the 16 bytes compared)
 * gets the same string again. Writing an IPv6 address takes far longer than comparing 16 bytes, and a capture's
 * packets mostly belong to a few connections. (IPv4's dotted text is cheap enough to write each time.)
 */
export class Ipv6TextCache {
  readonly #bytes = new Uint8Array(16 * ENTRIES);
  readonly #texts: string[] = [];
  #next = 0;

  /** The RFC 5952 text of the IPv6 address in the 16 bytes of `data` at `at`. */
  text(data: Uint8Array, at: number): string {
    const bytes = this.#bytes;
    entries: for (let entry = 0; entry < this.#texts.length; entry++) {
      const base = entry * 16;
      // From the last byte: addresses of one network differ there more often than in their prefix.
      for (let i = 15; i >= 0; i--) if (bytes[base + i] !== data[at + i]) continue entries;
      return this.#texts[entry];
    }
    const text = ipv6Text(data, at);
    const base = this.#next * 16;
    for (let i = 0; i < 16; i++) bytes[base + i] = data[at + i];
    this.#texts[this.#next] = text;
    this.#next = (this.#next + 1) % ENTRIES;
    return text;
  }
}
