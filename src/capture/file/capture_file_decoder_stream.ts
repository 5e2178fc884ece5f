/**
 * {@linkcode CaptureFileDecoderStream}: a pcap or pcapng capture file's bytes to its records, as a stream stage.
 * Internal.
 *
 * @module
 */
import { DecoderStream } from "../../streams/decoder_stream.ts";
import type { CaptureRecord } from "../records.ts";
import { CaptureFileDecoder, type CaptureFileDecoderOptions } from "./capture_file_decoder.ts";

/**
 * The bytes of a pcap or pcapng file to its `CaptureRecord`s (packets, decryption secrets), in file order, as
 * {@linkcode CaptureFileDecoder} decodes them: any chunking, bounded memory, and on a fault every record before it,
 * then a `DecodeError` at the file offset of the record at fault.
 */
export class CaptureFileDecoderStream extends DecoderStream<Uint8Array, CaptureRecord> {
  constructor(options: CaptureFileDecoderOptions = {}) {
    super(new CaptureFileDecoder(options));
  }
}
