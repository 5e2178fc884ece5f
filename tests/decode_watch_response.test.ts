import { test } from "node:test";
import assert from "node:assert/strict";
import { DecodeError, decodeWatchResponse, type WatchBodyCodec } from "../mod.ts";
import { parseMediaType } from "../wire.ts";
import { drain, streamOf, utf8 } from "./_util.ts";

const line = JSON.stringify({ type: "ADDED", object: { kind: "Pod", metadata: { name: "a", resourceVersion: "1" } } }) +
  "\n";

test("decodeWatchResponse: JSON by Content-Type, with or without stream=watch, or none", async () => {
  for (
    const type of [
      "application/json",
      "application/json;stream=watch",
      'Application/JSON; charset=utf-8; stream="watch"',
      null,
    ]
  ) {
    const headers: Record<string, string> = type === null ? {} : { "content-type": type };
    const response = new Response(line, { headers });
    if (type === null) response.headers.delete("content-type"); // a string body would default to text/plain
    const { values, error } = await drain(decodeWatchResponse(response));
    assert.equal(error, undefined, String(type));
    assert.equal(values.length, 1);
  }
});

test("decodeWatchResponse: an unknown Content-Type fails with CONTENT_TYPE_UNSUPPORTED", async () => {
  const response = new Response("\x00\x00\x00\x05hello", {
    headers: { "content-type": "application/yaml" },
  });
  const { values, error } = await drain(decodeWatchResponse(response));
  assert.equal(values.length, 0);
  assert.ok(error instanceof DecodeError && error.code === "CONTENT_TYPE_UNSUPPORTED");
});

test("decodeWatchResponse: codecs plug in by media type", async () => {
  const seen: string[] = [];
  const codec: WatchBodyCodec = (body, mediaType) => {
    seen.push(mediaType.parameters.stream);
    return body.pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          for (const name of new TextDecoder().decode(chunk).split(",")) {
            controller.enqueue({ type: "DELETED", object: { metadata: { name } } });
          }
        },
      }),
    );
  };
  const response = new Response("x,y", { headers: { "content-type": "text/csv; stream=watch" } });
  const { values } = await drain(decodeWatchResponse(response, { codecs: { "text/csv": codec } }));
  assert.deepEqual(values.map((e) => e.type === "DELETED" && e.object.metadata?.name), ["x", "y"]);
  assert.deepEqual(seen, ["watch"]);
});

test("decodeWatchResponse: a non-2xx response is one ERROR event with its Status", async () => {
  const status = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: "too old",
    reason: "Expired",
    code: 410,
  };
  let { values } = await drain(decodeWatchResponse(new Response(JSON.stringify(status), { status: 410 })));
  assert.deepEqual(values, [{ type: "ERROR", object: status }]);
  ({ values } = await drain(
    decodeWatchResponse(new Response("upstream connect error", { status: 503, statusText: "Service Unavailable" })),
  ));
  assert.equal(values.length, 1);
  const event = values[0];
  assert.ok(event.type === "ERROR");
  assert.equal(event.object.code, 503);
  assert.equal(event.object.reason, "ServiceUnavailable");
  assert.equal(event.object.message, "upstream connect error");
});

test("decodeWatchResponse: a non-2xx response whose body fails is an error, not a made-up Status", async () => {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(utf8('{"kind":"Status","code":4'));
      controller.error(new DecodeError("TRUNCATED", 25, "cut short"));
    },
  });
  const { values, error } = await drain(decodeWatchResponse(new Response(body, { status: 410 })));
  assert.equal(values.length, 0);
  assert.ok(error instanceof DecodeError && error.code === "TRUNCATED");
});

test("decodeWatchResponse: a non-2xx body is read up to maxEventBytes, the rest cancelled (an endless one too)", async () => {
  let cancelled = false;
  let pulled = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(utf8("0123456789"));
    },
    cancel() {
      cancelled = true;
    },
  });
  const { values, error } = await drain(
    decodeWatchResponse(new Response(endless, { status: 502, statusText: "Bad Gateway" }), { maxEventBytes: 25 }),
  );
  assert.equal(error, undefined);
  assert.equal(values.length, 1);
  const event = values[0];
  assert.ok(event.type === "ERROR");
  assert.deepEqual([event.object.code, event.object.reason], [502, "InternalError"]);
  assert.equal(event.object.message, "0123456789012345678901234");
  assert.ok(cancelled);
  assert.ok(pulled <= 5, `pulled ${pulled} reads`);
});

test("decodeWatchResponse: maxEventBytes is enforced", async () => {
  const response = new Response(streamOf([utf8(line)]), { headers: { "content-type": "application/json" } });
  const { error } = await drain(decodeWatchResponse(response, { maxEventBytes: 20 }));
  assert.ok(error instanceof DecodeError && error.code === "LINE_TOO_LONG");
});

test("parseMediaType", () => {
  assert.deepEqual(parseMediaType(' Application/Json ; Stream=watch ;charset="utf-8"'), {
    essence: "application/json",
    parameters: { stream: "watch", charset: "utf-8" },
  });
  assert.deepEqual(parseMediaType(null), { essence: "", parameters: {} });
});
