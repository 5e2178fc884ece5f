/**
 * The test API of node_http_server.ts as a fetch handler (`Request` to `Response`), for servers that take one:
 * `Deno.serve` and `Bun.serve`. The watch body is a `ReadableStream` that yields one event per chunk, pausing after
 * every third like the node:http server; the list, the 410 and the 404 have a fixed body (so a Content-Length).
 * There is no gzip variant here.
 */
import { API_HEADERS, route, statusBody } from "./node_http_server.ts";
import { delayAfter, listOf, ndjsonLines, watchEvents, type WatchResource } from "./watch_events.ts";

const encoder = new TextEncoder();

function watchBody(resource: WatchResource): ReadableStream<Uint8Array> {
  const lines = ndjsonLines(watchEvents(resource));
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i >= lines.length) {
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(lines[i]));
      const delay = delayAfter(i++);
      if (delay > 0) await new Promise<void>((resolve) => setTimeout(resolve, delay));
    },
  }, { highWaterMark: 0 });
}

/** Answers a request of the test API. */
export function handleWatchRequest(request: Request): Response {
  const url = new URL(request.url);
  const target = url.pathname + url.search;
  const r = request.method === "GET" ? route(target) : undefined;
  const headers = { ...API_HEADERS, "Content-Type": "application/json" };
  if (r === undefined || r.expired) {
    const code = r === undefined ? 404 : 410;
    return new Response(statusBody(code, target), { status: code, headers });
  }
  if (!r.watch) return new Response(JSON.stringify(listOf(r.resource)), { status: 200, headers });
  return new Response(watchBody(r.resource), { status: 200, headers });
}
