/**
 * {@linkcode MsgpackEventWriter}: watch events to the frames of a watchwire msgpack event stream (see `format.ts` for
 * the format). Internal.
 *
 * @module
 */
import type { DecodeError } from "../../errors.ts";
import { NpmPackage } from "../../npm_package.ts";
import type { KubernetesObject, WatchEvent } from "../../events.ts";
import type { StreamDecoder } from "../../streams/decoder_stream.ts";
import { toWatchEvent } from "../watch_event_decoder_stream.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../../limits.ts";
import { checkLimit, headerFrame } from "./msgpack_event_reader.ts";
import { toWire } from "./json_values.ts";
import { denoMsgpackrBuild, InOrder, type MsgpackPacker, MSGPACKR_VERSION, type PackrModule } from "./msgpackr.ts";

/** msgpackr's main build, for its `Packr` (in Deno, without its permissions, its portable build: `msgpackr/pack`). */
export const msgpackrPackr: NpmPackage<PackrModule> = new NpmPackage<PackrModule>({
  specifier: "msgpackr",
  version: MSGPACKR_VERSION,
  importBare: () => import("msgpackr"),
  denoSpecifier: denoMsgpackrBuild("msgpackr/pack"),
});

/**
 * Record shapes one stream keeps (msgpackr's `maxOwnStructures`). Kubernetes objects have many shapes (a Pod has
 * dozens, and label sets and managedFields add one-off ones); with msgpackr's default of 32 the table cycles every
 * few events and each shape is defined again and again, which makes a stream larger and slower to decode. Beyond the
 * first 32, ids take two bytes; past the last, the oldest shape's id is reused (and redefined). A decoder's table is
 * bounded by what two-byte ids can address, whoever wrote the stream.
 */
const RECORD_SHAPES = 4096;

/**
 * A new msgpackr encoder for one stream (msgpackr must have loaded: `msgpackrPackr.load()`). Fresh options every
 * time: msgpackr keeps its record table in them.
 */
export function newPackr(): MsgpackPacker {
  const msgpackr = msgpackrPackr.loaded;
  if (msgpackr === undefined) throw new Error("msgpackr has not loaded: await msgpackrPackr.load() first");
  return new msgpackr.Packr({ sequential: true, useRecords: true, maxOwnStructures: RECORD_SHAPES });
}

/** Options of {@linkcode MsgpackEventWriter}. */
export interface MsgpackEventWriterOptions {
  /** The largest event (here: one encoded event) written, in bytes; a longer one is an error. Default 16 MiB. */
  maxEventBytes?: number | undefined;
}

/**
 * Watch events to the frames of a stream (the header first). msgpackr loads when a writer first encodes: until it has
 * loaded (once per process), `push` and `finish` return a promise (await it before the next call).
 */
export class MsgpackEventWriter<T = KubernetesObject> implements StreamDecoder<WatchEvent<T>, Uint8Array> {
  #packr: MsgpackPacker | undefined;
  readonly #max: number;
  #started = false;
  readonly #calls: InOrder<PackrModule> = new InOrder(msgpackrPackr);

  constructor(options: MsgpackEventWriterOptions = {}) {
    this.#max = checkLimit(options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES);
  }

  push(event: WatchEvent<T>, emit: (bytes: Uint8Array) => void): void | Promise<void> {
    return this.#calls.run((msgpackr) => this.#write(msgpackr, event, emit));
  }

  finish(emit: (bytes: Uint8Array) => void): void | Promise<void> {
    return this.#calls.after(() => {
      if (!this.#started) {
        this.#started = true;
        emit(headerFrame());
      }
    });
  }

  #write(msgpackr: PackrModule, event: WatchEvent<T>, emit: (bytes: Uint8Array) => void): void {
    if (!this.#started) {
      this.#started = true;
      emit(headerFrame());
    }
    const value = toWire(event, checkEvent);
    this.#packr ??= newPackr();
    // Four bytes reserved before the value for its length: the frame is written without a copy.
    const packed = this.#packr.pack(value, msgpackr.RESERVE_START_SPACE | 4);
    const length = packed.length - 4;
    if (length > this.#max) {
      throw new RangeError(`an event encoded to ${length} bytes, over maxEventBytes (${this.#max} bytes)`);
    }
    packed[0] = length >>> 24;
    packed[1] = (length >>> 16) & 0xff;
    packed[2] = (length >>> 8) & 0xff;
    packed[3] = length & 0xff;
    // A plain Uint8Array view (msgpackr gives a Node Buffer where there is one) of bytes msgpackr never writes again.
    emit(new Uint8Array(packed.buffer, packed.byteOffset, packed.length));
  }
}

/** The encoder accepts what its decoder would: a watch event. */
function checkEvent(value: unknown): void {
  try {
    toWatchEvent(value);
  } catch (error) {
    throw new TypeError(`not a watch event: ${(error as DecodeError).detail ?? error}`);
  }
}
