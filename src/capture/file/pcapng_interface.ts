/**
 * {@linkcode pcapngInterfaceOf}: an interface of a pcapng section, from its Interface Description Block. Internal.
 *
 * @module
 */
import { DecodeError } from "../../errors.ts";
import { readUint16, readUint32 } from "./read_uint.ts";
import { TimestampUnits } from "./timestamp_units.ts";

/** An interface of a pcapng section: what its packets are and how its timestamps count. */
export interface PcapngInterface {
  /** The LINKTYPE_* number of its packets. */
  readonly linkType: number;
  /** Its snapshot length (0: none). */
  readonly snapLength: number;
  /** Its timestamps' unit and offset. */
  readonly units: TimestampUnits;
}

/** `opt_endofopt`, `if_tsresol` and `if_tsoffset`: the option codes read here. */
const END_OF_OPTIONS = 0;
const IF_TSRESOL = 9;
const IF_TSOFFSET = 14;

/**
 * The interface an Interface Description Block at `blockOffset` describes: its link type, snapshot length, and the
 * `if_tsresol` (default: microseconds) and `if_tsoffset` (default: 0) of its `options` (the block's bytes after its
 * fixed fields, without the trailing length). Other options are skipped. Throws `CAPTURE_INVALID` for an option that
 * overruns the block or one of those two whose length is wrong.
 */
export function pcapngInterfaceOf(
  linkType: number,
  snapLength: number,
  options: Uint8Array,
  littleEndian: boolean,
  blockOffset: number,
): PcapngInterface {
  let resolution = 6;
  let offsetSeconds = 0;
  for (let at = 0; at + 4 <= options.length;) {
    const code = readUint16(options, at, littleEndian);
    const length = readUint16(options, at + 2, littleEndian);
    if (code === END_OF_OPTIONS) break;
    const value = at + 4;
    if (value + length > options.length) {
      throw new DecodeError(
        "CAPTURE_INVALID",
        blockOffset,
        `Interface Description Block option ${code} of ${length} bytes overruns the block`,
      );
    }
    if (code === IF_TSRESOL || code === IF_TSOFFSET) {
      const expected = code === IF_TSRESOL ? 1 : 8;
      if (length !== expected) {
        throw new DecodeError(
          "CAPTURE_INVALID",
          blockOffset,
          `Interface Description Block option ${code === IF_TSRESOL ? "if_tsresol" : "if_tsoffset"} is ${length} ` +
            `bytes long, not ${expected}`,
        );
      }
      if (code === IF_TSRESOL) {
        resolution = options[value];
      } else {
        // A signed 64-bit count of seconds: exact up to 2^53, far beyond any real offset.
        const high = readUint32(options, value + (littleEndian ? 4 : 0), littleEndian) | 0;
        const low = readUint32(options, value + (littleEndian ? 0 : 4), littleEndian);
        offsetSeconds = high * 0x1_0000_0000 + low;
      }
    }
    at = value + ((length + 3) & ~3);
  }
  return { linkType, snapLength, units: new TimestampUnits(resolution, offsetSeconds) };
}
