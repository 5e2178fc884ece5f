/**
 * {@linkcode UnitPlan}: how the capture-file decoder reads one unit of a file (the pcap file header, a pcap record, a
 * pcapng block), as the format's reader ({@linkcode CaptureFormatReader}) lays it out from the unit's head. Internal.
 *
 * @module
 */
import type { CaptureRecord } from "../records.ts";

/**
 * The layout of the unit being read: a head of fixed length the format reads first, then `data` bytes handed to the
 * reader whole (a packet's captured bytes, a block's secrets or options), then `rest` bytes skipped (padding, options
 * not read, a pcapng block's trailing length). Filled in by {@linkcode CaptureFormatReader.plan}; one object, reused
 * from unit to unit.
 */
export class UnitPlan {
  /** The head's length in bytes. */
  head = 0;
  /** The bytes after the head to hand to {@linkcode CaptureFormatReader.complete}. */
  data = 0;
  /** The bytes after the data, skipped. */
  rest = 0;
  /** The unit's whole length (head, data and rest). */
  length = 0;
  /** Whether the unit's last 4 bytes must repeat `length` (a pcapng block's trailing length). */
  trailer = false;
  /** The byte order of the trailing length. */
  littleEndian = true;
  /** What the unit is, for error messages: `"pcap record"`, `"Enhanced Packet Block"`, ... */
  name = "";
}

/** What a capture format (pcap, pcapng) tells the decoder, unit by unit. */
export interface CaptureFormatReader {
  /** The bytes the decoder gathers first of each unit after the first, before asking {@linkcode plan}. */
  readonly unitHead: number;
  /** What its units are, for error messages: `"pcap record"`, `"pcapng block"`. */
  readonly unitName: string;
  /**
   * Reads the head of the unit at file offset `offset` (its first `headLength` bytes, at `at` in `bytes`: `unitHead`
   * of them, or as many as the last call asked for) and fills in `plan`. Returns false when it needs a longer head:
   * `plan.head` then says how long. Changes no state of its own until it returns true. Throws a `DecodeError` for a
   * bad or too large unit.
   */
  plan(bytes: Uint8Array, at: number, headLength: number, offset: number, plan: UnitPlan): boolean;
  /**
   * The unit at `offset` has been read: `data` holds its `plan.data` bytes after the head (a view of the input, or a
   * copy of its own). Emits its record, if it is one.
   */
  complete(data: Uint8Array, offset: number, emit: (record: CaptureRecord) => void): void;
}
