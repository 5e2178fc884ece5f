/**
 * {@linkcode GrpcMessageDecoderStream}: the bytes of a gRPC stream's DATA (its HTTP/2 body) to its messages.
 *
 * @module
 */
import { concatBytes } from "../bytes.ts";
import { DecodeError } from "../errors.ts";
import { DecoderStream } from "../streams/decoder_stream.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../limits.ts";
import { FrameSplitter } from "./frame_splitter.ts";

/**
 * One gRPC message.
 *
 * @example
 * ```ts
 * import { encodeGrpcMessages, type GrpcMessage, GrpcMessageDecoderStream } from "watchwire/wire";
 *
 * const wire = await encodeGrpcMessages([Uint8Array.of(1, 2, 3), Uint8Array.of(4)]);
 * const messages: ReadableStream<GrpcMessage> = new Blob([wire]).stream().pipeThrough(new GrpcMessageDecoderStream());
 * for await (const message of messages) {
 *   console.log(message.offset, message.compressed, message.data.length); // 0 false 3, then 8 false 1
 * }
 * ```
 */
export interface GrpcMessage {
  /** Whether `data` is still compressed (only with `decompress: false`; decompressed messages say `false`). */
  compressed: boolean;
  /** The message bytes (a serialized protobuf, usually). */
  data: Uint8Array;
  /** Input offset of the message's 5-byte prefix. */
  offset: number;
}

/**
 * Options of {@linkcode GrpcMessageDecoderStream}.
 *
 * @example
 * ```ts
 * import { encodeGrpcMessages, type GrpcMessageDecoderOptions, GrpcMessageDecoderStream } from "watchwire/wire";
 *
 * const wire = await encodeGrpcMessages([new TextEncoder().encode("hello")], { compress: true });
 * // As the peer's `grpc-encoding: gzip` header says; kept compressed, e.g. to record the stream as received.
 * const options: GrpcMessageDecoderOptions = { encoding: "gzip", decompress: false, maxEventBytes: 1 << 20 };
 * for await (const message of new Blob([wire]).stream().pipeThrough(new GrpcMessageDecoderStream(options))) {
 *   console.log(message.compressed, message.data[0], message.data[1]); // true 31 139
 * }
 * ```
 */
export interface GrpcMessageDecoderOptions {
  /**
   * The largest event (one NDJSON line, one length-prefixed frame, one gRPC message) accepted, in bytes: here a
   * message, both as received and once decompressed. Default `DEFAULT_MAX_EVENT_BYTES` (16 MiB).
   */
  maxEventBytes?: number;
  /**
   * The message encoding the peer declared in its `grpc-encoding` header. Default `"identity"`, under which a message
   * flagged as compressed is `MESSAGE_INVALID`.
   */
  encoding?: "identity" | "gzip";
  /**
   * Whether to decompress messages flagged as compressed (default `true`). With `false` they are passed on as received,
   * with `compressed: true` (e.g. to record or forward them).
   */
  decompress?: boolean;
}

interface Pending {
  data: Uint8Array;
  flag: number;
  offset: number;
}

/**
 * Decodes gRPC's length-prefixed message framing: each message is a 1-byte compressed flag (0 or 1), a 4-byte
 * big-endian length and that many bytes.
 *
 * - A message within one input chunk is passed on as a `subarray` view of that chunk (no copy); one that spans chunks
 *   is copied once into a buffer of exactly its length.
 * - A flag other than 0 or 1 is `MESSAGE_INVALID` as soon as it arrives, and so is the flag 1 when `encoding` is
 *   `"identity"` (gRPC requires a peer that compresses to declare its encoding).
 * - A length over `maxEventBytes` is `MESSAGE_TOO_LARGE` as soon as its prefix has arrived, before anything is
 *   allocated or more input is read.
 * - With `encoding: "gzip"`, a compressed message is decompressed (the runtime's `DecompressionStream`, one per
 *   message) and passed on with `compressed: false`; output beyond `maxEventBytes` is `MESSAGE_TOO_LARGE`, corrupt
 *   data `DECOMPRESSION_FAILED`.
 * - Input that ends inside a prefix or a message is `TRUNCATED`.
 *
 * Every error's `offset` is the input offset of the offending message's prefix, and every message before it has been
 * delivered. The stream's status is not in its DATA: read it from the trailers with `parseGrpcStatus`.
 *
 * @example
 * ```ts
 * import { encodeGrpcMessages, GrpcMessageDecoderStream } from "watchwire/wire";
 *
 * const hello = new TextEncoder().encode("hello");
 * const wire = await encodeGrpcMessages([hello, hello], { compress: true });
 * const messages = new Blob([wire]).stream().pipeThrough(new GrpcMessageDecoderStream({ encoding: "gzip" }));
 * for await (const { data, offset } of messages) console.log(offset, new TextDecoder().decode(data)); // 0 hello ...
 * ```
 */
export class GrpcMessageDecoderStream extends DecoderStream<Uint8Array, GrpcMessage> {
  constructor(options: GrpcMessageDecoderOptions = {}) {
    const encoding = options.encoding ?? "identity";
    if (encoding !== "identity" && encoding !== "gzip") {
      throw new RangeError(`unsupported grpc-encoding ${JSON.stringify(encoding)}`);
    }
    const decompress = encoding === "gzip" && options.decompress !== false;
    const splitter = new FrameSplitter({
      flagged: true,
      maxEventBytes: options.maxEventBytes,
      checkFlag(flag, offset) {
        if (flag > 1) {
          throw new DecodeError("MESSAGE_INVALID", offset, `compressed flag is ${flag}, not 0 or 1`);
        }
        if (flag === 1 && encoding === "identity") {
          throw new DecodeError(
            "MESSAGE_INVALID",
            offset,
            'message is flagged as compressed but the encoding is "identity" (no grpc-encoding declared)',
          );
        }
      },
    });
    const max = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;

    /** Decompresses and emits `pending` in order (the messages of one input chunk from the first compressed one). */
    const deliver = async (pending: Pending[], emit: (message: GrpcMessage) => void): Promise<void> => {
      for (const { data, flag, offset } of pending) {
        emit({ compressed: false, data: flag === 1 ? await gunzipMessage(data, max, offset) : data, offset });
      }
    };

    super({
      push(chunk, emit) {
        // Messages are passed on at once until one needs decompressing; it and those after it wait for it, in order.
        let pending: Pending[] | undefined;
        try {
          splitter.push(chunk, (data, flag, offset) => {
            if (pending === undefined && (flag === 0 || !decompress)) emit({ compressed: flag === 1, data, offset });
            else (pending ??= []).push({ data, flag, offset });
          });
        } catch (error) {
          // A framing fault after a compressed message: that message (or its own fault) comes first.
          if (pending === undefined) throw error;
          return deliver(pending, emit).then(() => Promise.reject(error));
        }
        if (pending !== undefined) return deliver(pending, emit);
      },
      finish() {
        splitter.finish();
      },
    });
  }
}

/**
 * Decompresses one gzip message with the runtime's `DecompressionStream`, reading its output as it comes and stopping
 * once it passes `max` bytes. Errors are placed at `offset`, the message's prefix.
 */
async function gunzipMessage(data: Uint8Array, max: number, offset: number): Promise<Uint8Array> {
  if (data.length === 0) {
    throw new DecodeError("DECOMPRESSION_FAILED", offset, "gzip: compressed message is empty");
  }
  let native: DecompressionStream;
  try {
    native = new DecompressionStream("gzip");
  } catch (cause) {
    throw new DecodeError("ENCODING_UNSUPPORTED", offset, "gzip: no DecompressionStream in this runtime", { cause });
  }
  const writer = native.writable.getWriter();
  const reader = native.readable.getReader();
  // Written while the output is read: the native stream applies backpressure to its input.
  // Typed for ArrayBuffer-backed views; a SharedArrayBuffer one is refused at run time and reported as a fault.
  const written = writer.write(data as Uint8Array<ArrayBuffer>).then(() => writer.close());
  written.catch(() => {});
  const pieces: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > max) {
        reader.cancel().catch(() => {});
        writer.abort().catch(() => {});
        throw new DecodeError(
          "MESSAGE_TOO_LARGE",
          offset,
          `message decompresses to more than maxEventBytes (${max} bytes)`,
        );
      }
      pieces.push(value);
    }
    await written;
  } catch (cause) {
    if (cause instanceof DecodeError) throw cause;
    const message = cause instanceof Error ? cause.message : String(cause);
    throw new DecodeError("DECOMPRESSION_FAILED", offset, `gzip: ${message}`, { cause });
  }
  return concatBytes(pieces, total);
}
