/**
 * {@linkcode readHttp2CaptureExchanges}: both directions of a captured HTTP/2 connection to its exchanges, going on
 * after gaps in either direction. Internal.
 *
 * @module
 */
import { CaptureGap, type CaptureResumption } from "../capture_gap.ts";
import type { TcpDirection } from "../records.ts";
import { DecoderStream } from "../../streams/decoder_stream.ts";
import { Http2ConnectionDecoderStream, type Http2Message } from "../../transport/http2/connection_decoder_stream.ts";
import type { Http2Exchange, Http2Request } from "../../transport/http2/exchanges.ts";
import { Http2FrameResync } from "./http2_frame_resync.ts";
import { SettingsQueue } from "../../transport/http2/settings_queue.ts";

/** What {@linkcode readHttp2CaptureExchanges} hands on, and asks. */
export interface Http2CaptureHandlers {
  /** A stream's response (with its request, when the client's bytes held it). */
  exchange(exchange: Http2Exchange): void;
  /**
   * A stream open when the server's bytes had a gap goes on after it: its message from the resumption on (no headers;
   * its body the DATA after the gap). Its body must be read or cancelled.
   */
  continued(message: Http2Message): void;
  /**
   * Offered each request's body as soon as its header block is decoded: `true` takes it (to be read or cancelled),
   * as `Http2ExchangeOptions.takeRequestBody`.
   */
  takeRequestBody(streamId: number, request: Http2Request, body: ReadableStream<Uint8Array>): boolean;
  /** The reader of `gap.direction` reached the gap: resolves once what came before it has been handed on. */
  reached(gap: CaptureGap): Promise<void>;
  /** Decoding of a direction resumed at a frame: the skipped bytes are the resumption's and those before the frame. */
  resumed(direction: TcpDirection, resumption: CaptureResumption, skippedBytes: number): void;
  /** Decoding of a direction does not go on after a gap, for `why`. */
  notResumed(direction: TcpDirection, why: string): void;
}

/**
 * Decodes both directions of a captured HTTP/2 connection (as `decodeHttp2Exchanges`, with `"detect"` for both
 * prefaces and each peer's SETTINGS applied to the other) and, where a direction fails with a {@linkcode CaptureGap},
 * goes on with the bytes after it:
 *
 * - The bytes after the gap are cut to the first plausible frame ({@linkcode Http2FrameResync}: the streams open before
 *   the gap are known, new ones must be client-initiated above them) and decoded by a decoder that starts there, as
 *   mid-connection: its HPACK dynamic table starts empty, so a header block that needs entries sent before (or in) the
 *   gap is reported on its stream (`headerError`) and never decoded wrongly; one that adds its own entries decodes.
 * - Server side: a stream open before the gap goes on (`continued`); a new one is an exchange.
 * - Client side: requests after the gap pair with their responses; a response whose request was lost comes without.
 *   A response waits for its request until the client's bytes show a later stream (ids only grow) or end.
 *
 * Resolves once the server's bytes have ended (or will not resume); a fault of the HTTP/2 framing rejects it, after
 * the exchanges before it.
 */
export async function readHttp2CaptureExchanges(
  serverToClient: ReadableStream<Uint8Array>,
  clientToServer: ReadableStream<Uint8Array>,
  handlers: Http2CaptureHandlers,
): Promise<void> {
  const clientSettings = new SettingsQueue();
  const serverSettings = new SettingsQueue();
  const requests = new Map<number, Http2Request>();
  let clientHighest = 0;
  let clientDone = false;
  let clientFailure: { reason: unknown } | undefined;
  const wakers = new Set<() => void>();
  const changed = () => new Promise<void>((resolve) => wakers.add(resolve));
  const wakeAll = () => {
    for (const wake of wakers) wake();
    wakers.clear();
  };

  const requestFor = async (id: number): Promise<Http2Request | undefined> => {
    while (!requests.has(id) && !clientDone && clientHighest < id) await changed();
    if (clientFailure !== undefined) throw clientFailure.reason;
    const request = requests.get(id);
    requests.delete(id);
    return request;
  };

  const client = readDirection(
    "client",
    clientToServer,
    clientSettings,
    serverSettings,
    handlers,
    (message, resumed) => {
      clientHighest = Math.max(clientHighest, message.streamId);
      let taken = false;
      if (message.headers !== undefined && !resumed) {
        const headers = message.headers;
        const field = (name: string) => headers.find(([n]) => n === name)?.[1];
        const request = { method: field(":method"), path: field(":path"), authority: field(":authority"), headers };
        requests.set(message.streamId, request);
        taken = handlers.takeRequestBody(message.streamId, request, message.body);
      }
      if (!taken) message.body.cancel().catch(() => {});
      wakeAll();
      return Promise.resolve();
    },
  ).then(
    () => {},
    (error) => void (clientFailure = { reason: error }),
  ).finally(() => {
    clientDone = true;
    wakeAll();
  });

  await readDirection("server", serverToClient, serverSettings, clientSettings, handlers, async (message, resumed) => {
    if (resumed) {
      handlers.continued(message);
      return;
    }
    const request = await requestFor(message.streamId);
    handlers.exchange(
      request === undefined
        ? { streamId: message.streamId, response: message }
        : { streamId: message.streamId, request, response: message },
    );
  });
  // A client fault still counts once every response has been handed on.
  await client;
  if (clientFailure !== undefined) throw clientFailure.reason;
}

/**
 * Reads one direction across its gaps, handing each message to `take` (`resumed`: of a stream open before the last
 * gap, seen again after it; such a message of a stream that had ended is dropped). Resolves at the direction's end.
 */
async function readDirection(
  direction: TcpDirection,
  first: ReadableStream<Uint8Array>,
  sink: SettingsQueue,
  peer: SettingsQueue,
  handlers: Http2CaptureHandlers,
  take: (message: Http2Message, resumed: boolean) => Promise<void>,
): Promise<void> {
  const open = new Set<number>();
  let highest = 0;
  let continuing = new Set<number>();
  let before = 0; // the highest stream id before the last gap
  let input = first;
  let resumption: CaptureResumption | undefined;
  for (;;) {
    const decoder = resumption === undefined
      ? new Http2ConnectionDecoderStream({ preface: "detect", peerSettings: peer, settingsSink: sink })
      : new Http2ConnectionDecoderStream({ preface: "none" });
    const messages = input.pipeThrough(decoder).getReader();
    let gap: CaptureGap;
    try {
      for (;;) {
        const { done, value: message } = await messages.read();
        if (done) return;
        const id = message.streamId;
        highest = Math.max(highest, id);
        const resumed = continuing.delete(id);
        if (!resumed && id <= before) {
          message.body.cancel().catch(() => {}); // a stream that had ended before the gap
          continue;
        }
        open.add(id);
        void message.end.then((end) => {
          if (!(end.reason === "connection-end" && end.error instanceof CaptureGap)) open.delete(id);
        });
        await take(message, resumed);
      }
    } catch (error) {
      if (!(error instanceof CaptureGap)) throw error;
      gap = error;
    }
    await handlers.reached(gap);
    resumption = await gap.resumed;
    if (resumption === undefined) return;
    continuing = new Set(open);
    open.clear();
    before = highest;
    const from = resumption;
    let skipped: number | undefined;
    const resync = new Http2FrameResync({
      // The receiver's SETTINGS_MAX_FRAME_SIZE, as its last SETTINGS before the gap said.
      maxFrameSize: peer.maxFrameSize,
      openStreams: continuing,
      highestStreamId: highest,
      found(bytes) {
        skipped = bytes;
        handlers.resumed(direction, from, from.skippedBytes + bytes);
      },
    });
    // Said once the resumed bytes end without a frame found.
    input = notify(from.stream.pipeThrough(new DecoderStream(resync)), () => {
      if (skipped === undefined && resync.received > 0) {
        handlers.notResumed(direction, `no HTTP/2 frame found in the ${resync.received} bytes after the gap`);
      }
    });
  }
}

/** `stream`, with `ended` told when it ends (not when it fails or is cancelled). */
function notify(stream: ReadableStream<Uint8Array>, ended: () => void): ReadableStream<Uint8Array> {
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      flush: ended,
    }),
  );
}
