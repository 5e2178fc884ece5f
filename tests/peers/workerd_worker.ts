/**
 * The Worker that tests/workerd.test.ts runs in workerd, Cloudflare Workers' own runtime, bundled with watchwire by
 * esbuild. It uses only what a Worker has: `fetch`, Web Streams, `Response.json`. Requests:
 *
 * - `/codegen`: whether `eval` and `new Function` work here (a Worker forbids both: each gives its error's text).
 * - `/pair?origin=O&name=N`: fetches the refgen stream pair N (`O/streams/N.pb` and `O/streams/N.json`) and decodes
 *   each with `decodeWatchResponse`, the protobuf stream in full and in metadata mode; answers with what it got:
 *   the events, the error that ended a stream if any, and, for each object metadata mode kept as bytes, its
 *   apiVersion, kind, metadata and `decode()`.
 * - `/live?origin=O&name=N`: watches `O/live/N` (a watch the server answers one event at a time, each only after
 *   this Worker has fetched `O/ack?n=K` for the K events it has so far) and answers with the events: it can only end
 *   if every event is delivered as soon as its bytes arrive, not when the response ends.
 *
 * @module
 */
import { DecodeError, decodeWatchResponse, KubernetesProtobufObject, type WatchEvent } from "../../mod.ts";

/** How a decoded stream ended: the error that ended it (name and, for a DecodeError, its code), if any. */
interface Ended {
  error?: { name: string; code?: string };
}

function ended(error: unknown): Ended {
  return { error: error instanceof DecodeError ? { name: error.name, code: error.code } : { name: String(error) } };
}

/** An event of metadata mode as plain data: an object kept as bytes becomes what it offers. */
function metadataView(event: WatchEvent<unknown>): unknown {
  const object = (event as { object?: unknown }).object;
  if (!(object instanceof KubernetesProtobufObject)) return event;
  const { apiVersion, kind, metadata } = object;
  return { type: event.type, kept: { apiVersion, kind, metadata, decoded: object.decode() } };
}

async function decode(url: string, mode: "full" | "metadata"): Promise<Ended & { type: string; events: unknown[] }> {
  const response = await fetch(url);
  const type = response.headers.get("content-type") ?? "";
  const events: unknown[] = [];
  try {
    for await (const event of decodeWatchResponse(response, { protobuf: { mode } })) {
      events.push(mode === "metadata" ? metadataView(event) : event);
    }
  } catch (error) {
    return { type, events, ...ended(error) };
  }
  return { type, events };
}

function codegen(): { eval: string; Function: string } {
  const attempt = (f: () => unknown): string => {
    try {
      f();
      return "allowed";
    } catch (error) {
      return String(error);
    }
  };
  // Indirect eval: what a bundler cannot rewrite.
  const indirectEval = globalThis.eval;
  return { eval: attempt(() => indirectEval("1")), Function: attempt(() => new Function("return 1")()) };
}

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const origin = url.searchParams.get("origin") ?? "";
    const name = url.searchParams.get("name") ?? "";
    if (url.pathname === "/codegen") return Response.json(codegen());
    if (url.pathname === "/pair") {
      const base = `${origin}/streams/${encodeURIComponent(name)}`;
      return Response.json({
        json: await decode(`${base}.json`, "full"),
        full: await decode(`${base}.pb`, "full"),
        metadata: await decode(`${base}.pb`, "metadata"),
      });
    }
    if (url.pathname === "/live") {
      const response = await fetch(`${origin}/live/${encodeURIComponent(name)}`);
      const events: unknown[] = [];
      try {
        for await (const event of decodeWatchResponse(response)) {
          events.push(event);
          await (await fetch(`${origin}/ack?n=${events.length}`)).arrayBuffer();
        }
      } catch (error) {
        return Response.json({ events, ...ended(error) });
      }
      return Response.json({ events });
    }
    return new Response("not found", { status: 404 });
  },
};
