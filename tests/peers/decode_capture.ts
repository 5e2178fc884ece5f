/**
 * The whole capture pipeline used by the real-peer and fixture tests: server-to-client bytes of a connection ->
 * {@linkcode Http1ResponseDecoderStream} -> `decodeWatchResponse(response.toResponse())` for every response -> one
 * stream of events, each tagged with the response it came from.
 */
import { decodeWatchResponse, type WatchEvent } from "../../mod.ts";
import { Http1ResponseDecoderStream } from "../../capture.ts";

/** One decoded event of a capture: which response (0-based, on the connection) and that response's status. */
export interface CapturedEvent {
  response: number;
  status: number;
  event: WatchEvent;
}

/**
 * Decodes every response of `source` (the bytes a server sent on one connection, or several connections' bytes one
 * after the other) into its watch events, in order. It reads as a consumer naturally would: the next response only
 * once the previous one's events are all read, with no read of the response stream pending meanwhile (so a body that
 * spans many input chunks checks that the decoder keeps feeding it while its response sits read but unfinished).
 */
export function decodeCapture(source: ReadableStream<Uint8Array>): ReadableStream<CapturedEvent> {
  const responses = source.pipeThrough(new Http1ResponseDecoderStream()).getReader();
  let current: { response: number; status: number; events: ReadableStreamDefaultReader<WatchEvent> } | undefined;
  return new ReadableStream<CapturedEvent>({
    async pull(controller) {
      for (;;) {
        if (current === undefined) {
          const next = await responses.read();
          if (next.done) {
            controller.close();
            return;
          }
          const response = next.value;
          current = {
            response: response.index,
            status: response.status,
            events: decodeWatchResponse(response.toResponse()).getReader(),
          };
        }
        const { done, value } = await current.events.read();
        if (done) {
          current = undefined;
          continue;
        }
        controller.enqueue({ response: current.response, status: current.status, event: value });
        return;
      }
    },
    async cancel(reason) {
      await current?.events.cancel(reason).catch(() => {});
      await responses.cancel(reason).catch(() => {});
    },
  }, { highWaterMark: 0 });
}

/**
 * A stream that hands out `chunks` one per pull. (Enqueueing tens of thousands of chunks up front, as `streamOf` does,
 * makes Node's web-stream queue quadratic: a bytewise split of a 77 KB capture then takes seconds in the queue alone.)
 */
export function lazyStream(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(chunks[i++]);
      else controller.close();
    },
  }, { highWaterMark: 0 });
}

/** All events of the capture delivered as `chunks`; rejects with the error the pipeline failed with. */
export async function decodeCaptureBytes(chunks: Uint8Array[]): Promise<CapturedEvent[]> {
  const out: CapturedEvent[] = [];
  const reader = decodeCapture(lazyStream(chunks)).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}
