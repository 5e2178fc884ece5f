/**
 * {@linkcode TcpReassemblerStream}: {@linkcode TcpReassembler} as a stream stage, TCP segments in, the byte streams of
 * each connection's directions out. Internal.
 *
 * @module
 */
import type { TcpSegment, TcpStreamEvent } from "../records.ts";
import { DecoderStream } from "../../streams/decoder_stream.ts";
import { TcpReassembler, type TcpReassemblerOptions } from "./tcp_reassembler.ts";

/**
 * TCP segments, in capture order, to `open`, `data`, `gap` and `close` events: each connection's two byte streams,
 * every byte once and in order, gaps where bytes were lost. See {@linkcode TcpReassembler}.
 */
export class TcpReassemblerStream extends DecoderStream<TcpSegment, TcpStreamEvent> {
  constructor(options: TcpReassemblerOptions = {}) {
    super(new TcpReassembler(options));
  }
}
