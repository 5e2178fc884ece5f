/**
 * {@linkcode GunzipStream}: a gzip body (RFC 1952), possibly several concatenated members, to its decompressed bytes.
 *
 * @module
 */
import { describe, hex32 } from "../describe_byte.ts";
import { DecodeError } from "../errors.ts";
import { DecoderStream, type DecoderStreamOptions } from "../streams/decoder_stream.ts";
import { crc32, crc32Byte } from "./crc32.ts";
import { Inflater } from "./inflate.ts";

/**
 * Options of {@linkcode GunzipStream}.
 *
 * @example
 * ```ts
 * import { GunzipStream, type GunzipStreamOptions } from "watchwire/wire";
 *
 * const options: GunzipStreamOptions = { native: true }; // the runtime's DecompressionStream where it can
 * const gzipped = new Blob(["hello"]).stream().pipeThrough(new CompressionStream("gzip"));
 * console.log(await new Response(gzipped.pipeThrough(new GunzipStream(options))).text()); // hello
 * ```
 */
export interface GunzipStreamOptions extends DecoderStreamOptions {
  /**
   * Use the runtime's `DecompressionStream("gzip")` where it decodes multi-member input with zero padding correctly
   * (checked once per process: Node's does). Default `false`: watchwire's own decoder, in every runtime. The native one
   * gives less: a fault's offset is only as exact as the input it had been handed by then, and when the input fails (a
   * connection cut off, a framing fault in the body around it), Node's keeps back part of what the input so far decodes
   * to, so events decoded before the fault can be lost. Node's zlib also stops at the first zero byte after a member
   * and ignores whatever follows it, where watchwire's decoder requires zeros to the end.
   */
  native?: boolean;
}

/**
 * Decompresses a gzip body (RFC 1952): one or more concatenated gzip members (as `cat a.gz b.gz` makes), optionally
 * followed by zero bytes of padding. The output is the members' data, one after the other.
 *
 * A built-in streaming inflater does the work in every runtime (the runtimes' own `DecompressionStream`s disagree:
 * Deno's stops after the first member, Bun's rejects zero padding; `native: true` uses it where it handles both),
 * verifying each member's CRC-32 and length and reporting the exact byte of a fault, after all output before it.
 * Corrupt data is `DECOMPRESSION_FAILED`, input that ends inside a member `TRUNCATED`; empty input decodes to
 * nothing. When the input stream itself fails, everything the bytes before the failure decode to is handed on first
 * (as zlib's `Z_SYNC_FLUSH` would give it), then the input's error.
 *
 * Output comes in pieces of at most 96 KiB; backpressure applies between input chunks, so one chunk's output (a
 * chunk of a decompression bomb included) is queued whole.
 *
 * @example
 * ```ts
 * import { GunzipStream } from "watchwire/wire";
 *
 * const gzip = (s: string) => new Response(new Blob([s]).stream().pipeThrough(new CompressionStream("gzip"))).blob();
 * const body = new Blob([await gzip('{"a":1}\n'), await gzip('{"b":2}\n')]).stream();
 * console.log(await new Response(body.pipeThrough(new GunzipStream())).text()); // {"a":1}\n{"b":2}\n
 * ```
 */
export class GunzipStream extends DecoderStream<Uint8Array, Uint8Array> {
  constructor(options: GunzipStreamOptions = {}) {
    let engine: Engine | undefined;
    const choose = async (emit: (output: Uint8Array) => void): Promise<Engine> => {
      const native = options.native === true && await nativeGunzipWorks();
      engine ??= native ? new NativeEngine(emit) : new OwnEngine();
      return engine;
    };
    super({
      async push(chunk, emit) {
        await (engine ?? await choose(emit)).push(chunk, emit);
      },
      async finish(emit) {
        await (engine ?? await choose(emit)).finish();
      },
      async salvage() {
        await engine?.salvage();
      },
      failed(reason) {
        engine?.cancel(reason);
      },
    }, options);
  }
}

interface Engine {
  push(chunk: Uint8Array, emit: (output: Uint8Array) => void): Promise<void> | void;
  finish(): Promise<void> | void;
  /** The input failed: hands on the output of the input accepted so far (see `StreamDecoder.salvage`). */
  salvage(): Promise<void> | void;
  cancel(reason: unknown): void;
}

/** The built-in decoder. */
class OwnEngine implements Engine {
  readonly #decoder = new GunzipDecoder();

  push(chunk: Uint8Array, emit: (output: Uint8Array) => void): void {
    this.#decoder.push(chunk, emit);
  }

  finish(): void {
    this.#decoder.finish();
  }

  salvage(): void {} // it emits as it decodes: nothing waits

  cancel(): void {}
}

/** The runtime's `DecompressionStream`, its output pumped into ours, its errors mapped to {@linkcode DecodeError}. */
class NativeEngine implements Engine {
  readonly #writer: WritableStreamDefaultWriter<BufferSource>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #pump: Promise<void>;
  /** Input bytes handed to the native stream without complaint. */
  #accepted = 0;
  /** Set once our stream has failed or been cancelled: the native stream is being torn down. */
  #stopped = false;

  constructor(emit: (output: Uint8Array) => void) {
    const native = new DecompressionStream("gzip");
    this.#writer = native.writable.getWriter();
    const reader = native.readable.getReader();
    this.#reader = reader;
    this.#pump = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || this.#stopped) return;
        emit(value);
      }
    })();
    // Its failure is reported through the writer as well; this only keeps it from counting as unhandled.
    this.#pump.catch(() => {});
    this.#writer.closed.catch(() => {});
  }

  async push(chunk: Uint8Array): Promise<void> {
    if (chunk.length === 0) return;
    try {
      // Typed for ArrayBuffer-backed views; a SharedArrayBuffer one is refused at run time and reported as a fault.
      await this.#writer.write(chunk as Uint8Array<ArrayBuffer>);
    } catch (cause) {
      if (this.#stopped) return;
      await this.#fail("DECOMPRESSION_FAILED", cause);
    }
    this.#accepted += chunk.length;
  }

  async finish(): Promise<void> {
    if (this.#accepted === 0) {
      // Empty input is an empty body here, while native streams call it a truncated member.
      this.cancel(undefined);
      return;
    }
    await this.#end(true);
  }

  /**
   * Ends the native stream's input so that it hands on what the input accepted so far decodes to, as far as it does
   * (Node's keeps back part of it: see {@linkcode GunzipStreamOptions.native}). That it then ends inside a member is
   * the input's failure, not a fault of this stage; a fault it finds in the data before that is one, and is thrown.
   */
  async salvage(): Promise<void> {
    if (!this.#stopped && this.#accepted > 0) await this.#end(false);
  }

  /** Closes the native stream's input and waits for all its output; `truncation`: whether ending inside a member is a fault. */
  async #end(truncation: boolean): Promise<void> {
    try {
      await this.#writer.close();
      await this.#pump;
    } catch (cause) {
      if (this.#stopped) return;
      const early = endedEarly(cause);
      if (early && !truncation) return;
      await this.#fail(early ? "TRUNCATED" : "DECOMPRESSION_FAILED", cause);
    }
  }

  cancel(reason: unknown): void {
    this.#stopped = true;
    // Not awaited: an abort waits for the write in flight, which may wait for output nobody reads any more.
    this.#writer.abort(reason).catch(() => {});
    this.#reader.cancel(reason).catch(() => {});
  }

  /** Reports a native fault once its output so far is out; its offset is the input handed over by then. */
  async #fail(code: "DECOMPRESSION_FAILED" | "TRUNCATED", cause: unknown): Promise<never> {
    await Promise.allSettled([this.#pump]);
    const message = cause instanceof Error ? cause.message : String(cause);
    throw new DecodeError(code, this.#accepted, `gzip: ${message}`, { cause });
  }
}

/**
 * Whether a native error at the end of input says the input ended inside a member: zlib's Z_BUF_ERROR (Node), its
 * "unexpected end of file" message (Node, Bun). Native streams may report any fault only at the end, so the time alone
 * does not tell.
 */
function endedEarly(cause: unknown): boolean {
  if (typeof cause !== "object" || cause === null) return false;
  const { code, message } = cause as { code?: unknown; message?: unknown };
  return code === "Z_BUF_ERROR" || (typeof message === "string" && /unexpected end|truncated/i.test(message));
}

// Three members ("a", empty, "b") and two bytes of zero padding, as a body may be. Deno's native stream fails on the
// second member, Bun's on the padding.
const PROBE = Uint8Array.of(
  ...[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x4b, 0x04, 0x00, 0x43, 0xbe, 0xb7, 0xe8, 1, 0, 0, 0],
  ...[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0],
  ...[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x4b, 0x02, 0x00, 0xf9, 0xef, 0xbe, 0x71, 1, 0, 0, 0],
  ...[0, 0],
);

let nativeWorks: Promise<boolean> | undefined;

/** Whether the runtime's `DecompressionStream("gzip")` decodes {@linkcode PROBE}; checked once, lazily. */
function nativeGunzipWorks(): Promise<boolean> {
  nativeWorks ??= (async () => {
    try {
      if (typeof DecompressionStream !== "function") return false;
      const source = new ReadableStream<BufferSource>({
        start(controller) {
          controller.enqueue(PROBE.slice());
          controller.close();
        },
      });
      const reader = source.pipeThrough(new DecompressionStream("gzip")).getReader();
      let text = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += String.fromCharCode(...value);
      }
      return text === "ab";
    } catch {
      return false;
    }
  })();
  return nativeWorks;
}

const enum State {
  Magic1,
  Magic2,
  Method,
  Flags,
  Fixed,
  ExtraLength,
  Extra,
  Name,
  Comment,
  HeaderCrc,
  Deflate,
  Trailer,
  Padding,
}

// Header flags (RFC 1952 §2.3.1); FTEXT is only a hint.
const FHCRC = 2;
const FEXTRA = 4;
const FNAME = 8;
const FCOMMENT = 16;
const RESERVED = 0xe0;

/** The gzip member format around the {@linkcode Inflater}, incrementally. */
class GunzipDecoder {
  readonly #inflater = new Inflater();
  #state = State.Magic1;
  /** Offset of the next input byte this decoder parses. */
  #offset = 0;
  #members = 0;
  #flags = 0;
  /** Bytes still to come of the current field, and the little-endian value read so far. */
  #remaining = 0;
  #value = 0;
  #fieldStart = 0;
  #headerCrc = 0;
  #crc = 0;
  #size = 0;
  #emit: (output: Uint8Array) => void = () => {};
  readonly #sink = (output: Uint8Array): void => {
    this.#crc = crc32(this.#crc, output);
    this.#size += output.length;
    this.#emit(output);
  };

  /** Decodes `chunk`, handing decompressed output to `emit`. */
  push(chunk: Uint8Array, emit: (output: Uint8Array) => void): void {
    this.#emit = emit;
    this.#feed(chunk);
  }

  /** Declares the end of input: throws a `TRUNCATED` {@linkcode DecodeError} if it ends inside a member. */
  finish(): void {
    if (this.#state === State.Magic1 || this.#state === State.Padding) return;
    const where = this.#state === State.Deflate
      ? "in the compressed data"
      : this.#state === State.Trailer
      ? "in the trailer"
      : "in the header";
    throw new DecodeError("TRUNCATED", this.#offset, `gzip member ${this.#members + 1} ended ${where}`);
  }

  #feed(bytes: Uint8Array): void {
    let i = 0;
    while (i < bytes.length) {
      if (this.#state === State.Deflate) {
        const stop = this.#inflater.push(bytes, i, this.#sink);
        this.#offset += stop - i;
        i = stop;
        if (!this.#inflater.done) return;
        // The inflater may have read a few bytes past the end of the compressed data: parse them first.
        const leftover = this.#inflater.takeLeftover();
        this.#offset -= leftover.length;
        this.#enter(State.Trailer, 8, this.#offset);
        this.#feed(leftover);
        continue;
      }
      this.#byte(bytes[i]);
      i++;
      this.#offset++;
    }
  }

  #byte(byte: number): void {
    if (this.#state < State.HeaderCrc) this.#headerCrc = crc32Byte(this.#headerCrc, byte);
    switch (this.#state) {
      case State.Magic1:
        if (byte === 0x1f) {
          this.#headerCrc = crc32Byte(0, byte);
          this.#state = State.Magic2;
        } else if (byte === 0 && this.#members > 0) {
          this.#state = State.Padding;
        } else {
          this.#fail(
            this.#members === 0 ? `not gzip data: ${describe(byte)}` : `${describe(byte)} after the last member`,
          );
        }
        return;
      case State.Magic2:
        if (byte !== 0x8b) this.#fail(`not gzip data: ${describe(byte)} after 0x1f`);
        this.#state = State.Method;
        return;
      case State.Method:
        if (byte !== 8) this.#fail(`compression method ${byte} is not deflate (8)`);
        this.#state = State.Flags;
        return;
      case State.Flags:
        if (byte & RESERVED) this.#fail(`reserved header flags set: 0x${byte.toString(16)}`);
        this.#flags = byte;
        this.#enter(State.Fixed, 6); // MTIME, XFL, OS
        return;
      case State.Fixed:
        if (--this.#remaining === 0) this.#next(State.Fixed);
        return;
      case State.ExtraLength:
        this.#value |= byte << (8 * (2 - this.#remaining));
        if (--this.#remaining > 0) return;
        if (this.#value === 0) this.#next(State.Extra);
        else this.#enter(State.Extra, this.#value);
        return;
      case State.Extra:
        if (--this.#remaining === 0) this.#next(State.Extra);
        return;
      case State.Name:
      case State.Comment:
        if (byte === 0) this.#next(this.#state);
        return;
      case State.HeaderCrc:
        this.#value |= byte << (8 * (2 - this.#remaining));
        if (--this.#remaining > 0) return;
        if (this.#value !== (this.#headerCrc & 0xffff)) this.#fail("header CRC mismatch", this.#fieldStart);
        this.#next(State.HeaderCrc);
        return;
      case State.Trailer: {
        const k = 8 - this.#remaining;
        this.#value = (this.#value | (byte << (8 * (k & 3)))) >>> 0;
        this.#remaining--;
        if (k === 3) {
          if (this.#value !== this.#crc) {
            this.#fail(
              `CRC-32 mismatch: data has ${hex32(this.#crc)}, trailer says ${hex32(this.#value)}`,
              this.#fieldStart,
            );
          }
          this.#value = 0;
        } else if (k === 7) {
          const size = this.#size % 0x1_0000_0000;
          if (this.#value !== size) {
            this.#fail(`length mismatch: data has ${size} bytes, trailer says ${this.#value}`, this.#fieldStart + 4);
          }
          this.#members++;
          this.#state = State.Magic1;
        }
        return;
      }
      case State.Padding:
        if (byte !== 0) this.#fail(`${describe(byte)} in the zero padding after the last member`);
        return;
      case State.Deflate:
        return; // fed to the inflater, never here
    }
  }

  /** Starts a field of `length` bytes at `start` (by default right after the current byte). */
  #enter(state: State, length: number, start = this.#offset + 1): void {
    this.#state = state;
    this.#remaining = length;
    this.#value = 0;
    this.#fieldStart = start;
  }

  /** Moves past the header part `done` (whose last byte is the current one) to the next one the flags call for. */
  #next(done: State): void {
    const flags = this.#flags;
    if (done < State.ExtraLength && flags & FEXTRA) this.#enter(State.ExtraLength, 2);
    else if (done < State.Name && flags & FNAME) this.#state = State.Name;
    else if (done < State.Comment && flags & FCOMMENT) this.#state = State.Comment;
    else if (done < State.HeaderCrc && flags & FHCRC) this.#enter(State.HeaderCrc, 2);
    else {
      this.#state = State.Deflate;
      this.#crc = 0;
      this.#size = 0;
      this.#inflater.reset(this.#offset + 1);
    }
  }

  #fail(detail: string, offset = this.#offset): never {
    throw new DecodeError("DECOMPRESSION_FAILED", offset, `gzip: ${detail}`);
  }
}
