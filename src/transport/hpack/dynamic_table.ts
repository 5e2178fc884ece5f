/**
 * The HPACK dynamic table (RFC 7541 §2.3.2, §4): a FIFO of header fields, newest first, bounded by a size in octets.
 *
 * @module
 */

/** What one entry costs against the table's maximum size besides its name and value octets (RFC 7541 §4.1). */
export const ENTRY_OVERHEAD = 32;

/**
 * The dynamic table of one HPACK decoding context, as a ring buffer that grows by doubling (never beyond what the
 * maximum size allows: `maxSize / 32` entries).
 *
 * Names and values are strings with one character per octet (latin1), so an entry's size is
 * `32 + name.length + value.length`.
 */
export class DynamicTable {
  #names: string[];
  #values: string[];
  #mask: number;
  /** Slot of the newest entry. */
  #newest = -1;
  #length = 0;
  #size = 0;
  #maxSize: number;

  constructor(maxSize: number) {
    this.#maxSize = maxSize;
    this.#names = new Array<string>(16).fill("");
    this.#values = new Array<string>(16).fill("");
    this.#mask = 15;
  }

  /** Number of entries. */
  get length(): number {
    return this.#length;
  }

  /** Current size in octets: the sum of 32 + name + value over the entries. */
  get size(): number {
    return this.#size;
  }

  /** The maximum size in force (the last dynamic table size update, or the initial setting). */
  get maxSize(): number {
    return this.#maxSize;
  }

  /** Name of entry `i`, 0 being the newest. `i` must be below {@linkcode DynamicTable.length}. */
  name(i: number): string {
    return this.#names[(this.#newest - i) & this.#mask];
  }

  /** Value of entry `i`, 0 being the newest. `i` must be below {@linkcode DynamicTable.length}. */
  value(i: number): string {
    return this.#values[(this.#newest - i) & this.#mask];
  }

  /**
   * Inserts a field as the newest entry, first evicting the oldest entries until it fits. A field larger than the
   * maximum size empties the table and is not inserted (RFC 7541 §4.4).
   */
  add(name: string, value: string): void {
    const entrySize = ENTRY_OVERHEAD + name.length + value.length;
    if (entrySize > this.#maxSize) {
      this.#evictTo(0);
      return;
    }
    this.#evictTo(this.#maxSize - entrySize);
    if (this.#length === this.#names.length) this.#grow();
    const slot = (this.#newest + 1) & this.#mask;
    this.#names[slot] = name;
    this.#values[slot] = value;
    this.#newest = slot;
    this.#length++;
    this.#size += entrySize;
  }

  /** Applies a new maximum size (a dynamic table size update), evicting the oldest entries until the table fits. */
  setMaxSize(maxSize: number): void {
    this.#maxSize = maxSize;
    this.#evictTo(maxSize);
  }

  /** The entries, newest first (for tests and diagnostics). */
  entries(): Array<[name: string, value: string]> {
    const out: Array<[string, string]> = [];
    for (let i = 0; i < this.#length; i++) out.push([this.name(i), this.value(i)]);
    return out;
  }

  /** Evicts the oldest entries until the size is at most `limit`. */
  #evictTo(limit: number): void {
    while (this.#size > limit) {
      const slot = (this.#newest - this.#length + 1) & this.#mask;
      this.#size -= ENTRY_OVERHEAD + this.#names[slot].length + this.#values[slot].length;
      this.#names[slot] = ""; // release the strings
      this.#values[slot] = "";
      this.#length--;
    }
    if (this.#length === 0) this.#newest = -1;
  }

  #grow(): void {
    const capacity = this.#names.length * 2;
    const names = new Array<string>(capacity).fill("");
    const values = new Array<string>(capacity).fill("");
    for (let i = 0; i < this.#length; i++) {
      // oldest first, into slots 0..length-1
      const k = this.#length - 1 - i;
      names[i] = this.name(k);
      values[i] = this.value(k);
    }
    this.#names = names;
    this.#values = values;
    this.#mask = capacity - 1;
    this.#newest = this.#length - 1;
  }
}
