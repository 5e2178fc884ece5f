/**
 * The HPACK decoder (RFC 7541): one HTTP/2 connection's header blocks, after CONTINUATION reassembly, to header lists.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import { DynamicTable, ENTRY_OVERHEAD } from "./dynamic_table.ts";
import { decodeHuffman, maxDecodedLength } from "./huffman.ts";
import { latin1 } from "./latin1.ts";
import { STATIC_NAMES, STATIC_TABLE_LENGTH, STATIC_VALUES } from "./static_table.ts";

/**
 * A decoded header field: name and value as strings with one character per octet (latin1, see
 * {@linkcode HpackDecoder}).
 *
 * @example
 * ```ts
 * import { HpackDecoder } from "watchwire/wire";
 * import type { HeaderField } from "watchwire/wire";
 *
 * // ":method: GET", ":path: /" as HPACK indexed fields (static table entries 2 and 4).
 * const fields: HeaderField[] = new HpackDecoder().decode(Uint8Array.of(0x82, 0x84));
 * for (const [name, value] of fields) console.log(name, value); // :method GET, then :path /
 * ```
 */
export type HeaderField = [name: string, value: string];

/**
 * A decoded header block with the fields that were sent as "never indexed" literals.
 *
 * @example
 * ```ts
 * import { HpackDecoder } from "watchwire/wire";
 * import type { DecodedHeaderBlock } from "watchwire/wire";
 *
 * // ":method: GET" (indexed), then "authorization: secret" as a literal never indexed (static name entry 23).
 * const bytes = Uint8Array.of(0x82, 0x1f, 0x08, 6, ...new TextEncoder().encode("secret"));
 * const block: DecodedHeaderBlock = new HpackDecoder().decodeBlock(bytes);
 * const sensitive = block.neverIndexed.map((i) => block.fields[i][0]);
 * console.log(block.fields.length, sensitive.join()); // 2 authorization
 * ```
 */
export interface DecodedHeaderBlock {
  /** The header list, in order. */
  fields: HeaderField[];
  /**
   * Positions in `fields` of the fields sent as literals never indexed (RFC 7541 §6.2.3): sensitive values (e.g.
   * `authorization`) that an intermediary re-encoding them must also send never indexed. Ascending.
   */
  neverIndexed: number[];
}

/**
 * Options of {@linkcode HpackDecoder}.
 *
 * @example
 * ```ts
 * import { HpackDecoder } from "watchwire/wire";
 * import type { HpackDecoderOptions } from "watchwire/wire";
 *
 * // A peer that announced SETTINGS_HEADER_TABLE_SIZE = 0: no dynamic table at all.
 * const options: HpackDecoderOptions = { maxTableSize: 0, maxHeaderListSize: 16384, maxStringLength: 4096 };
 * const decoder = new HpackDecoder(options);
 * // "x: 1" as a literal with incremental indexing: decoded, but there is no room to keep it.
 * console.log(decoder.decode(Uint8Array.of(0x40, 1, 0x78, 1, 0x31)).length, decoder.tableSize); // 1 0
 * ```
 */
export interface HpackDecoderOptions {
  /** SETTINGS_HEADER_TABLE_SIZE in force at the start of the connection (the initial dynamic table size). Default 4096. */
  maxTableSize?: number;
  /**
   * Largest decoded header list accepted, counted as RFC 9113 §6.5.2 counts SETTINGS_MAX_HEADER_LIST_SIZE: the sum
   * over the fields of name octets + value octets + 32. Default 65536.
   */
  maxHeaderListSize?: number;
  /** Longest string literal accepted, in octets, both as sent and after Huffman decoding. Default: no limit of its own. */
  maxStringLength?: number;
}

/** Largest integer accepted in an HPACK integer representation (RFC 7541 §5.1 leaves the limit to implementations). */
const MAX_INTEGER = 0x7fffffff;
/** At most 5 continuation octets: 35 bits, enough for {@linkcode MAX_INTEGER}. */
const MAX_CONTINUATION_OCTETS = 5;
/** Largest value of an HTTP/2 SETTINGS parameter. */
const MAX_SETTING = 0xffffffff;

// Scratch space for Huffman decoding, shared by all decoders (decoding is synchronous), grown on demand.
let scratch = new Uint8Array(4096);

function checkSize(what: string, n: number, max: number): number {
  if (!(n >= 0 && n <= max && (Number.isInteger(n) || n === Infinity))) {
    throw new RangeError(`${what} must be an integer from 0 to ${max}`);
  }
  return n;
}

/**
 * Decodes the header blocks of one direction of an HTTP/2 connection (RFC 7541). One decoder per connection and
 * direction: it keeps the dynamic table between blocks, so blocks must be decoded in the order they were sent.
 *
 * Names and values are returned as JavaScript strings with one character per octet (latin1): HTTP/2 field values are
 * octets, not text, and this mapping is lossless (`charCodeAt(i)` is octet `i`), keeps `length` equal to the octet
 * count HPACK sizes count, and is what a UTF-8 decoding would give for the ASCII fields that make up nearly all
 * traffic. Re-encode a value with octets `0x80`-`0xff` (e.g. `TextDecoder` over
 * `Uint8Array.from(value, (c) => c.charCodeAt(0))`) if it is known to be UTF-8. Names are not validated or lowercased
 * here: that is the HTTP/2 layer's job (RFC 9113 §8.2).
 *
 * Every malformed block throws {@linkcode DecodeError} `HPACK_INVALID` (`HEADER_TOO_LARGE` for a header list beyond
 * `maxHeaderListSize`), with the offset of the octet at fault. Such an error is a connection error of type
 * COMPRESSION_ERROR in HTTP/2: the decoder's state is undefined afterwards and the connection must be closed.
 *
 * @example
 * ```ts
 * import { HpackDecoder } from "watchwire/wire";
 *
 * const hex = (s: string) => Uint8Array.from(s.match(/../g)!, (h) => parseInt(h, 16));
 * const decoder = new HpackDecoder();
 * // RFC 7541 C.4.1 and C.4.2: the second request refers to the dynamic table entry the first one added.
 * console.log(decoder.decode(hex("828684418cf1e3c2e5f23a6ba0ab90f4ff")));
 * // [ [ ":method", "GET" ], [ ":scheme", "http" ], [ ":path", "/" ], [ ":authority", "www.example.com" ] ]
 * console.log(decoder.decode(hex("828684be5886a8eb10649cbf")));
 * // [ ..., [ ":authority", "www.example.com" ], [ "cache-control", "no-cache" ] ]
 * console.log(decoder.tableSize); // 110
 * ```
 */
export class HpackDecoder {
  readonly #table: DynamicTable;
  readonly #maxHeaderListSize: number;
  readonly #maxStringLength: number;
  /** `maxTableSize`, as changed since: the SETTINGS_HEADER_TABLE_SIZE in force, the most an update may set. */
  #maxTableSize: number;
  /** The smallest SETTINGS_HEADER_TABLE_SIZE in force since the last block (RFC 7541 §4.2). */
  #lowestMax: number;
  /** Where the last integer or string read ended (a second return value). */
  #at = 0;

  constructor(options: HpackDecoderOptions = {}) {
    const maxTableSize = checkSize("maxTableSize", options.maxTableSize ?? 4096, MAX_SETTING);
    this.#maxHeaderListSize = checkSize("maxHeaderListSize", options.maxHeaderListSize ?? 65536, Infinity);
    this.#maxStringLength = checkSize("maxStringLength", options.maxStringLength ?? Infinity, Infinity);
    this.#maxTableSize = maxTableSize;
    this.#lowestMax = maxTableSize;
    this.#table = new DynamicTable(maxTableSize);
  }

  /** The dynamic table's current size in octets (32 + name + value per entry). */
  get tableSize(): number {
    return this.#table.size;
  }

  /** The dynamic table's maximum size in force (set by the last dynamic table size update, or initially the setting). */
  get tableMaxSize(): number {
    return this.#table.maxSize;
  }

  /** The dynamic table's entries, newest (index 62) first. */
  tableEntries(): HeaderField[] {
    return this.#table.entries();
  }

  /**
   * The protocol maximum of the dynamic table changed (an acknowledged SETTINGS_HEADER_TABLE_SIZE). The next block may
   * start with a dynamic table size update up to `maxTableSize`; if it (or a smaller value set since the last block)
   * is below the table's current maximum size, the block must start with one at most that value (RFC 7541 §4.2).
   */
  setMaxTableSize(maxTableSize: number): void {
    checkSize("the maximum table size", maxTableSize, MAX_SETTING);
    this.#maxTableSize = maxTableSize;
    if (maxTableSize < this.#lowestMax) this.#lowestMax = maxTableSize;
  }

  /**
   * Decodes one complete header block (the HEADERS or PUSH_PROMISE fragment and its CONTINUATIONs), updating the
   * dynamic table. `offset` is the block's offset in a larger input; it is added to every {@linkcode DecodeError}'s
   * offset.
   */
  decode(block: Uint8Array, offset = 0): HeaderField[] {
    return this.#decode(block, offset, undefined);
  }

  /** As {@linkcode HpackDecoder.decode}, and also reports which fields were sent as never indexed (sensitive). */
  decodeBlock(block: Uint8Array, offset = 0): DecodedHeaderBlock {
    const neverIndexed: number[] = [];
    const fields = this.#decode(block, offset, neverIndexed);
    return { fields, neverIndexed };
  }

  #decode(block: Uint8Array, offset: number, neverIndexed: number[] | undefined): HeaderField[] {
    const table = this.#table;
    const end = block.length;
    const maxHeaderListSize = this.#maxHeaderListSize;
    const fields: HeaderField[] = [];
    let i = 0;

    // Dynamic table size updates, only at the start of a block (RFC 7541 §4.2, §6.3).
    let required = this.#lowestMax < table.maxSize ? this.#lowestMax : -1;
    this.#lowestMax = this.#maxTableSize;
    while (i < end && (block[i] & 0xe0) === 0x20) {
      const size = this.#integer(block, i, 0x1f, offset);
      if (size > this.#maxTableSize) {
        throw new DecodeError(
          "HPACK_INVALID",
          offset + i,
          `dynamic table size update to ${size} exceeds the maximum in force (${this.#maxTableSize})`,
        );
      }
      table.setMaxSize(size);
      if (size <= required) required = -1;
      i = this.#at;
    }
    if (required >= 0) {
      throw new DecodeError(
        "HPACK_INVALID",
        offset + i,
        `the header block must start with a dynamic table size update to at most ${required} (the maximum was lowered)`,
      );
    }

    let listSize = 0;
    while (i < end) {
      const start = i;
      const first = block[i];
      let name: string;
      let value: string;
      if (first >= 0x80) {
        // Indexed header field (§6.1).
        let index = first & 0x7f;
        if (index === 0x7f) {
          index = this.#integer(block, i, 0x7f, offset);
          i = this.#at;
        } else {
          i++;
        }
        if (index <= STATIC_TABLE_LENGTH) {
          if (index === 0) throw new DecodeError("HPACK_INVALID", offset + start, "index 0 in an indexed header field");
          name = STATIC_NAMES[index];
          value = STATIC_VALUES[index];
        } else {
          const d = index - STATIC_TABLE_LENGTH - 1;
          if (d >= table.length) throw this.#badIndex(index, offset + start);
          name = table.name(d);
          value = table.value(d);
        }
        listSize += ENTRY_OVERHEAD + name.length + value.length;
        if (listSize > maxHeaderListSize) throw this.#tooLarge(offset + start);
        fields.push([name, value]);
        continue;
      }

      // Literal header field (§6.2): with incremental indexing (01), or without indexing (0000) / never indexed (0001).
      let mask: number;
      if (first >= 0x40) {
        mask = 0x3f;
      } else if (first >= 0x20) {
        throw new DecodeError(
          "HPACK_INVALID",
          offset + i,
          "dynamic table size update after a header field (allowed only at the start of a block)",
        );
      } else {
        mask = 0x0f;
      }
      let index = first & mask;
      if (index === mask) {
        index = this.#integer(block, i, mask, offset);
        i = this.#at;
      } else {
        i++;
      }
      if (index === 0) {
        name = this.#string(block, i, offset, maxHeaderListSize - listSize - ENTRY_OVERHEAD, start);
        i = this.#at;
      } else if (index <= STATIC_TABLE_LENGTH) {
        name = STATIC_NAMES[index];
      } else {
        const d = index - STATIC_TABLE_LENGTH - 1;
        if (d >= table.length) throw this.#badIndex(index, offset + start);
        name = table.name(d);
      }
      value = this.#string(block, i, offset, maxHeaderListSize - listSize - ENTRY_OVERHEAD - name.length, start);
      i = this.#at;
      listSize += ENTRY_OVERHEAD + name.length + value.length;
      if (mask === 0x3f) table.add(name, value);
      else if (first >= 0x10 && neverIndexed !== undefined) neverIndexed.push(fields.length);
      fields.push([name, value]);
    }
    return fields;
  }

  /**
   * Reads the integer (RFC 7541 §5.1) whose prefix (`mask` bits) is in `block[i]`; sets `#at` past it. The caller
   * has handled a prefix below `mask`, except for size updates, handled here too.
   */
  #integer(block: Uint8Array, i: number, mask: number, offset: number): number {
    let value = block[i] & mask;
    let k = i + 1;
    if (value === mask) {
      let scale = 1;
      for (let n = 0;; n++) {
        if (n === MAX_CONTINUATION_OCTETS) {
          throw new DecodeError(
            "HPACK_INVALID",
            offset + k,
            `integer with more than ${MAX_CONTINUATION_OCTETS} continuation octets`,
          );
        }
        if (k >= block.length) {
          throw new DecodeError("HPACK_INVALID", offset + k, "header block ends inside an integer");
        }
        const octet = block[k++];
        value += (octet & 0x7f) * scale;
        if (value > MAX_INTEGER) {
          throw new DecodeError("HPACK_INVALID", offset + k - 1, `integer exceeds ${MAX_INTEGER}`);
        }
        if (octet < 0x80) break;
        scale *= 128;
      }
    }
    this.#at = k;
    return value;
  }

  /**
   * Reads the string literal (RFC 7541 §5.2) starting at `block[i]`; sets `#at` past it. `budget` is what the header
   * list may still take for it (a longer string: `HEADER_TOO_LARGE` at `fieldStart`), checked before the string is
   * made.
   */
  #string(block: Uint8Array, i: number, offset: number, budget: number, fieldStart: number): string {
    const end = block.length;
    if (i >= end) throw new DecodeError("HPACK_INVALID", offset + i, "header block ends where a string literal starts");
    const huffman = block[i] >= 0x80;
    let length = block[i] & 0x7f;
    let from = i + 1;
    if (length === 0x7f) {
      length = this.#integer(block, i, 0x7f, offset);
      from = this.#at;
    }
    if (length > end - from) {
      throw new DecodeError(
        "HPACK_INVALID",
        offset + i,
        `string literal of ${length} octets, but the header block has ${end - from} left`,
      );
    }
    if (length > this.#maxStringLength) {
      throw new DecodeError(
        "HPACK_INVALID",
        offset + i,
        `string literal of ${length} octets exceeds the limit of ${this.#maxStringLength}`,
      );
    }
    const to = from + length;
    this.#at = to;
    if (!huffman) {
      if (length > budget) throw this.#tooLarge(offset + fieldStart);
      return latin1(block, from, to);
    }
    const room = maxDecodedLength(length);
    if (scratch.length < room) scratch = new Uint8Array(Math.max(room, scratch.length * 2));
    const n = decodeHuffman(block, from, to, scratch, offset);
    if (n > this.#maxStringLength) {
      throw new DecodeError(
        "HPACK_INVALID",
        offset + i,
        `Huffman-coded string literal decodes to ${n} octets, beyond the limit of ${this.#maxStringLength}`,
      );
    }
    if (n > budget) throw this.#tooLarge(offset + fieldStart);
    return latin1(scratch, 0, n);
  }

  #badIndex(index: number, at: number): DecodeError {
    const dynamic = this.#table.length;
    return new DecodeError(
      "HPACK_INVALID",
      at,
      `index ${index} beyond the tables (static 1-${STATIC_TABLE_LENGTH}, dynamic ${
        dynamic === 0 ? "empty" : `${STATIC_TABLE_LENGTH + 1}-${STATIC_TABLE_LENGTH + dynamic}`
      })`,
    );
  }

  #tooLarge(at: number): DecodeError {
    return new DecodeError(
      "HEADER_TOO_LARGE",
      at,
      `header list exceeds ${this.#maxHeaderListSize} octets (name + value + 32 per field)`,
    );
  }
}
