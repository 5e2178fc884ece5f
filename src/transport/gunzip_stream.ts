/**
 * {@linkcode GunzipStream}: a gzip body (RFC 1952), possibly several concatenated members, to its decompressed bytes.
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import { crc32, crc32Byte } from "./crc32.ts";
import { describe } from "./describe_byte.ts";
import { Inflater } from "./inflate.ts";

/** Options of {@linkcode GunzipStream}. */
export interface GunzipStreamOptions {
  /**
   * Use the runtime's `DecompressionStream("gzip")` where it decodes multi-member input with zero padding correctly
   * (checked once per process). Default `true`; `false` always uses watchwire's own decoder, which reports faults
   * with exact offsets and delivers all output before a fault.
   */
  native?: boolean;
}

/**
 * Decompresses a gzip body (RFC 1952): one or more concatenated gzip members (as `cat a.gz b.gz` makes), optionally
 * followed by zero bytes of padding. The output is the members' data, one after the other.
 *
 * Where the runtime's `DecompressionStream("gzip")` handles such input (Node, Bun) it does the work; elsewhere (Deno,
 * whose native stream stops at the first member) a built-in streaming inflater does, verifying each member's CRC-32
 * and length. Corrupt data is a `DECOMPRESSION_FAILED` {@linkcode DecodeError}, input that ends inside a member
 * `TRUNCATED`; empty input decodes to nothing.
 *
 * @example
 * ```ts
 * import { GunzipStream } from "watchwire";
 *
 * const gzip = (s: string) => new Response(new Blob([s]).stream().pipeThrough(new CompressionStream("gzip"))).bytes();
 * const body = new Blob([await gzip('{"a":1}\n'), await gzip('{"b":2}\n')]).stream();
 * console.log(await new Response(body.pipeThrough(new GunzipStream())).text()); // {"a":1}\n{"b":2}\n
 * ```
 */
export class GunzipStream extends TransformStream<Uint8Array, Uint8Array> {
  constructor(options: GunzipStreamOptions = {}) {
    let engine: Engine | undefined;
    const choose = async (controller: TransformStreamDefaultController<Uint8Array>): Promise<Engine> => {
      const native = options.native !== false && await nativeGunzipWorks();
      engine ??= native ? new NativeEngine(controller) : new OwnEngine(controller);
      return engine;
    };
    // `cancel` (called when the readable side is cancelled) is newer than some runtimes' type definitions.
    const transformer: Transformer<Uint8Array, Uint8Array> & { cancel(reason: unknown): Promise<void> } = {
      transform(chunk, controller) {
        if (engine !== undefined) return engine.transform(chunk);
        return choose(controller).then((e) => e.transform(chunk));
      },
      flush(controller) {
        if (engine !== undefined) return engine.flush();
        return choose(controller).then((e) => e.flush());
      },
      async cancel(reason: unknown) {
        await engine?.cancel(reason);
      },
    };
    super(transformer);
  }
}

interface Engine {
  transform(chunk: Uint8Array): Promise<void> | void;
  flush(): Promise<void> | void;
  cancel(reason: unknown): Promise<void> | void;
}

/**
 * Throws `error` once the readable side has handed on everything queued: erroring a stream discards its queue, and
 * the output before a fault must reach the reader first. Polls, since a transformer is not told when the reader reads.
 */
async function failAfterDrain(controller: TransformStreamDefaultController<Uint8Array>, error: unknown): Promise<never> {
  for (let wait = 0; (controller.desiredSize ?? 0) < 0; wait = Math.min(wait * 2 || 1, 50)) {
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  throw error;
}

/** The built-in decoder. */
class OwnEngine implements Engine {
  readonly #decoder = new GunzipDecoder();
  readonly #controller: TransformStreamDefaultController<Uint8Array>;
  readonly #emit: (output: Uint8Array) => void;

  constructor(controller: TransformStreamDefaultController<Uint8Array>) {
    this.#controller = controller;
    this.#emit = (output) => controller.enqueue(output);
  }

  transform(chunk: Uint8Array): Promise<void> | void {
    try {
      this.#decoder.push(chunk, this.#emit);
    } catch (error) {
      return failAfterDrain(this.#controller, error);
    }
  }

  flush(): Promise<void> | void {
    try {
      this.#decoder.finish();
    } catch (error) {
      return failAfterDrain(this.#controller, error);
    }
  }

  cancel(): void {}
}

/** The runtime's `DecompressionStream`, its output pumped into ours, its errors mapped to {@linkcode DecodeError}. */
class NativeEngine implements Engine {
  readonly #controller: TransformStreamDefaultController<Uint8Array>;
  readonly #writer: WritableStreamDefaultWriter<BufferSource>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #pump: Promise<void>;
  /** Input bytes the native stream has accepted without complaint: a fault lies at or after this offset. */
  #accepted = 0;

  constructor(controller: TransformStreamDefaultController<Uint8Array>) {
    this.#controller = controller;
    const native = new DecompressionStream("gzip");
    this.#writer = native.writable.getWriter();
    const reader = native.readable.getReader();
    this.#reader = reader;
    this.#pump = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        controller.enqueue(value);
      }
    })();
    // Its failure is reported through the writer as well; this only keeps it from counting as unhandled.
    this.#pump.catch(() => {});
    this.#writer.closed.catch(() => {});
  }

  async transform(chunk: Uint8Array): Promise<void> {
    if (chunk.length === 0) return;
    try {
      // Typed for ArrayBuffer-backed views; a SharedArrayBuffer one is refused at run time and reported as a fault.
      await this.#writer.write(chunk as Uint8Array<ArrayBuffer>);
    } catch (cause) {
      await this.#fail("DECOMPRESSION_FAILED", cause);
    }
    this.#accepted += chunk.length;
  }

  async flush(): Promise<void> {
    if (this.#accepted === 0) {
      // Empty input is an empty body here, while native streams call it a truncated member.
      await this.cancel(undefined);
      return;
    }
    try {
      await this.#writer.close();
      await this.#pump;
    } catch (cause) {
      // Everything was accepted; what fails at the end is an unfinished member.
      await this.#fail("TRUNCATED", cause);
    }
  }

  async cancel(reason: unknown): Promise<void> {
    await Promise.allSettled([this.#writer.abort(reason), this.#reader.cancel(reason)]);
  }

  async #fail(code: "DECOMPRESSION_FAILED" | "TRUNCATED", cause: unknown): Promise<never> {
    await Promise.allSettled([this.#pump]);
    const message = cause instanceof Error ? cause.message : String(cause);
    const error = new DecodeError(code, this.#accepted, `gzip: ${message}`, { cause });
    return failAfterDrain(this.#controller, error);
  }
}

// Three members ("a", empty, "b") and two bytes of zero padding: what a body may hold and Deno's native stream
// cannot decode.
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
          this.#fail(this.#members === 0 ? `not gzip data: ${describe(byte)}` : `${describe(byte)} after the last member`);
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
            this.#fail(`CRC-32 mismatch: data has ${hex(this.#crc)}, trailer says ${hex(this.#value)}`, this.#fieldStart);
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

function hex(n: number): string {
  return `0x${n.toString(16).padStart(8, "0")}`;
}
