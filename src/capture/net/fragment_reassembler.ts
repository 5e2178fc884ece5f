/**
 * {@linkcode FragmentReassembler}: the payloads of IPv4 and IPv6 fragments put back together into their datagram's,
 * within limits on what it holds. Internal.
 *
 * @module
 */

/** The default of `maxFragmentedBytes`: an IPv4 or IPv6 datagram's largest payload (64 KiB), plus room for overlaps. */
export const DEFAULT_MAX_FRAGMENTED_BYTES = 72 * 1024;
/** The default of `maxPendingFragments`: datagrams waiting for fragments at once. */
export const DEFAULT_MAX_PENDING_FRAGMENTS = 1024;
/** The default of `fragmentTimeoutSeconds`, as RFC 8200's reassembly timeout (Linux waits 30 s). */
export const DEFAULT_FRAGMENT_TIMEOUT_SECONDS = 60;

/** Limits of {@linkcode FragmentReassembler}. */
export interface FragmentReassemblerOptions {
  /**
   * The most bytes of fragment payload held for one datagram (overlapping copies counted): past it, the datagram is
   * given up. Default {@linkcode DEFAULT_MAX_FRAGMENTED_BYTES}.
   */
  maxFragmentedBytes?: number;
  /**
   * The most datagrams waiting for fragments at once: one more gives up the one waiting longest. 0 turns reassembly
   * off (every fragment is dropped). Default {@linkcode DEFAULT_MAX_PENDING_FRAGMENTS}.
   */
  maxPendingFragments?: number;
  /**
   * Capture-time seconds after its first fragment that a datagram may wait: a fragment that comes later with its key
   * (the 16-bit IPv4 identification comes round again) starts a new datagram, the old one given up. Default
   * {@linkcode DEFAULT_FRAGMENT_TIMEOUT_SECONDS}.
   */
  fragmentTimeoutSeconds?: number;
}

/**
 * Told when a datagram is given up: how many of its fragments are discarded, where the first was (its record's byte
 * offset in the capture file, and its IP header's in the packet), and why.
 */
export type FragmentsDropped = (fragments: number, fileOffset: number, packetOffset: number, detail: string) => void;

/** What {@linkcode FragmentReassembler.add} made of a fragment. */
export type FragmentOutcome =
  /** The datagram's whole payload: this fragment completed it. */
  | Uint8Array
  /** Kept: the datagram waits for more. */
  | "waiting"
  /** Given up with its datagram (reported to the `dropped` callback). */
  | "dropped"
  /** Not kept: it contradicts the fragments before it (a second, different end; bytes past the end). */
  | "conflict";

interface Piece {
  readonly offset: number;
  readonly bytes: Uint8Array;
  /** The order it came in. */
  readonly arrival: number;
}

interface PendingDatagram {
  /** In order of offset (equal offsets in arrival order). */
  readonly pieces: Piece[];
  /** The first `prefixCount` pieces cover every byte from 0 to `prefixEnd`, and the next starts past it. */
  prefixCount: number;
  prefixEnd: number;
  heldBytes: number;
  /** The farthest end of a piece. */
  farthest: number;
  /** The payload's end, once the last fragment has come (else -1). */
  end: number;
  /** Capture time, record offset and IP header offset of the first fragment. */
  readonly seconds: number;
  readonly fileOffset: number;
  readonly packetOffset: number;
}

/** A non-negative integer option, checked: a RangeError otherwise. */
function count(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`${name} must be an integer of 0 or more, not ${value}`);
  }
  return value;
}

/**
 * Reassembles fragmented datagrams, each by a key its caller makes (source, destination, protocol, identification),
 * from fragments in any order. Where fragments overlap, the byte that came first wins. Fragment payloads are copied,
 * so what it holds is bounded by its limits, not by the buffers the packets are views of.
 */
export class FragmentReassembler {
  readonly #datagrams = new Map<string, PendingDatagram>();
  readonly #maxFragmentedBytes: number;
  readonly #maxPendingFragments: number;
  readonly #fragmentTimeoutSeconds: number;
  readonly #dropped: FragmentsDropped;
  #fragments = 0;

  constructor(options: FragmentReassemblerOptions, dropped: FragmentsDropped) {
    this.#maxFragmentedBytes = count("maxFragmentedBytes", options.maxFragmentedBytes, DEFAULT_MAX_FRAGMENTED_BYTES);
    this.#maxPendingFragments = count(
      "maxPendingFragments",
      options.maxPendingFragments,
      DEFAULT_MAX_PENDING_FRAGMENTS,
    );
    const fragmentTimeoutSeconds = options.fragmentTimeoutSeconds ?? DEFAULT_FRAGMENT_TIMEOUT_SECONDS;
    if (!(fragmentTimeoutSeconds >= 0)) {
      throw new RangeError(`fragmentTimeoutSeconds must be 0 or more, not ${fragmentTimeoutSeconds}`);
    }
    this.#fragmentTimeoutSeconds = fragmentTimeoutSeconds;
    this.#dropped = dropped;
  }

  /** Fragments held now, waiting for the rest of their datagram. */
  get pendingFragments(): number {
    return this.#fragments;
  }

  /**
   * Adds the fragment of datagram `key` whose payload `bytes` goes at `offset` of the datagram's (`last`: no more
   * fragments follow it), captured at `seconds`, its record at `fileOffset` in the file and its IP header at
   * `packetOffset` in the packet.
   */
  add(
    key: string,
    offset: number,
    bytes: Uint8Array,
    last: boolean,
    seconds: number,
    fileOffset: number,
    packetOffset: number,
  ): FragmentOutcome {
    let datagram = this.#datagrams.get(key);
    if (datagram !== undefined && seconds - datagram.seconds > this.#fragmentTimeoutSeconds) {
      this.#drop(key, datagram, 0, `datagram not completed within ${this.#fragmentTimeoutSeconds} s`);
      datagram = undefined;
    }
    if (datagram === undefined) {
      if (this.#maxPendingFragments === 0) {
        this.#dropped(1, fileOffset, packetOffset, "fragment not reassembled (maxPendingFragments is 0)");
        return "dropped";
      }
      if (this.#datagrams.size >= this.#maxPendingFragments) {
        const [oldestKey, oldest] = this.#datagrams.entries().next().value!;
        const detail = `datagram given up for a newer one (maxPendingFragments ${this.#maxPendingFragments})`;
        this.#drop(oldestKey, oldest, 0, detail);
      }
      datagram = {
        pieces: [],
        prefixCount: 0,
        prefixEnd: 0,
        heldBytes: 0,
        farthest: 0,
        end: -1,
        seconds,
        fileOffset,
        packetOffset,
      };
      this.#datagrams.set(key, datagram);
    }
    const end = offset + bytes.length;
    const conflicts = last
      ? (datagram.end !== -1 && end !== datagram.end) || end < datagram.farthest
      : datagram.end !== -1 && end > datagram.end;
    if (conflicts) return "conflict";
    if (datagram.heldBytes + bytes.length > this.#maxFragmentedBytes) {
      this.#drop(key, datagram, 1, `datagram's fragments over maxFragmentedBytes (${this.#maxFragmentedBytes})`);
      return "dropped";
    }
    insert(datagram, { offset, bytes: bytes.slice(), arrival: datagram.pieces.length });
    datagram.heldBytes += bytes.length;
    datagram.farthest = Math.max(datagram.farthest, end);
    if (last) datagram.end = end;
    this.#fragments++;
    if (datagram.end === -1 || datagram.prefixEnd < datagram.end) return "waiting";
    this.#datagrams.delete(key);
    this.#fragments -= datagram.pieces.length;
    const payload = new Uint8Array(datagram.end);
    // Latest first, so that where pieces overlap the earliest is written last and wins.
    const latestFirst = datagram.pieces.slice().sort((a, b) => b.arrival - a.arrival);
    for (const piece of latestFirst) payload.set(piece.bytes, piece.offset);
    return payload;
  }

  /** Gives up every datagram still waiting (the capture has ended), reporting each with `detail`. */
  dropAll(detail: string): void {
    for (const [key, datagram] of this.#datagrams) this.#drop(key, datagram, 0, detail);
  }

  #drop(key: string, datagram: PendingDatagram, more: number, detail: string): void {
    this.#datagrams.delete(key);
    this.#fragments -= datagram.pieces.length;
    this.#dropped(datagram.pieces.length + more, datagram.fileOffset, datagram.packetOffset, detail);
  }
}

/** Puts `piece` in its place among the datagram's pieces, and extends the covered prefix as far as it now goes. */
function insert(datagram: PendingDatagram, piece: Piece): void {
  const pieces = datagram.pieces;
  let low = 0;
  let high = pieces.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (pieces[middle].offset <= piece.offset) low = middle + 1;
    else high = middle;
  }
  pieces.splice(low, 0, piece);
  // A piece placed among the prefix's starts within it (its offset is at most a prefix piece's).
  if (low < datagram.prefixCount) {
    datagram.prefixCount++;
    datagram.prefixEnd = Math.max(datagram.prefixEnd, piece.offset + piece.bytes.length);
  }
  while (datagram.prefixCount < pieces.length && pieces[datagram.prefixCount].offset <= datagram.prefixEnd) {
    const next = pieces[datagram.prefixCount++];
    datagram.prefixEnd = Math.max(datagram.prefixEnd, next.offset + next.bytes.length);
  }
}
