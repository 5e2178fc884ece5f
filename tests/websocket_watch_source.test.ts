/**
 * The WebSocket watch source (`webSocketWatch`, `webSocketOpener`, `transport: "websocket"`) over stand-in WebSocket
 * classes this file defines (no network): what each handshake mode asks for, events of text and binary messages, the
 * ends of a watch (a clean close, a lost connection, an abort, a cancel), limits and faults, and a refused handshake
 * looked into over plain HTTP. The real kube-apiserver is in tests/servers/websocket_real.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ClusterAccessError } from "../src/cluster/errors.ts";
import type { ClusterConnection } from "../src/cluster/cluster_config.ts";
import { resourceSource } from "../src/cluster/resource_source.ts";
import {
  type WebSocketConstructorLike,
  type WebSocketHandshake,
  type WebSocketLike,
  type WebSocketOpener,
  webSocketOpener,
  webSocketWatch,
} from "../src/cluster/websocket_watch.ts";
import { DecodeError } from "../src/errors.ts";
import type { WatchEvent } from "../src/events.ts";
import { watcher } from "../src/watch/watcher.ts";
import { drain, within } from "./_util.ts";

// ---------------------------------------------------------------------------------------------------------------
// Stand-ins

type Step =
  | { open: true }
  | { message: string | ArrayBuffer | Blob }
  | { error: string }
  | { close: number; wasClean?: boolean; reason?: string };

/** A WebSocket that plays `steps` (each in a task of its own) once constructed, and records what it was asked. */
class ScriptedSocket extends EventTarget implements WebSocketLike {
  static script: Step[] = [];
  static made: ScriptedSocket[] = [];
  binaryType = "blob";
  readyState = 0;
  closed: (number | undefined)[] = [];
  constructor(readonly url: string, readonly init?: unknown) {
    super();
    ScriptedSocket.made.push(this);
    const steps = [...ScriptedSocket.script];
    const next = () => {
      const step = steps.shift();
      if (step === undefined || this.readyState === 3) return;
      if ("open" in step) {
        this.readyState = 1;
        this.dispatchEvent(new Event("open"));
      } else if ("message" in step) {
        this.dispatchEvent(new MessageEvent("message", { data: step.message }));
      } else if ("error" in step) {
        this.dispatchEvent(Object.assign(new Event("error"), { message: step.error }));
      } else {
        this.readyState = 3;
        this.dispatchEvent(
          Object.assign(new Event("close"), {
            code: step.close,
            reason: step.reason ?? "",
            wasClean: step.wasClean ?? true,
          }),
        );
      }
      setTimeout(next, 1);
    };
    setTimeout(next, 1);
  }
  close(code?: number): void {
    this.closed.push(code);
    this.readyState = 3;
  }
}

function play(...steps: Step[]): WebSocketOpener {
  ScriptedSocket.script = steps;
  ScriptedSocket.made = [];
  return webSocketOpener({ WebSocket: ScriptedSocket, handshake: "headers" });
}

/** A connection to a server that answers every fetch with `answer` (a plain HTTP request), its requests recorded. */
function connection(
  answer: (url: URL) => Response = () => new Response(null, { status: 500 }),
  headers: Record<string, string> = { authorization: "Bearer abc" },
): ClusterConnection & { requests: { url: URL; headers: Headers }[] } {
  const requests: { url: URL; headers: Headers }[] = [];
  return {
    requests,
    server: "https://127.0.0.1:6443",
    headers: () => Promise.resolve(new Headers(headers)),
    fetch: (input, init) => {
      const url = new URL(String(input));
      requests.push({ url, headers: new Headers(init?.headers) });
      return Promise.resolve(answer(url));
    },
    close: () => Promise.resolve(),
  };
}

const CONFIGMAPS = { version: "v1", resource: "configmaps", namespace: "default" };

const json = (type: string, name: string, rv: string) =>
  JSON.stringify({ type, object: { kind: "ConfigMap", apiVersion: "v1", metadata: { name, resourceVersion: rv } } }) +
  "\n";

/** A protobuf watch event (no length prefix): ERROR with a Status of code 410, built by hand. */
function protobufStatusEvent(): ArrayBuffer {
  const envelope = [0x6b, 0x38, 0x73, 0, 0x0a, 12, 0x0a, 2, 0x76, 0x31, 0x12, 6, 0x53, 0x74, 0x61, 0x74, 0x75, 0x73];
  envelope.push(0x12, 3, 0x30, 0x9a, 0x03);
  const frame = [0x0a, 5, 0x45, 0x52, 0x52, 0x4f, 0x52, 0x12, envelope.length + 2, 0x0a, envelope.length, ...envelope];
  return Uint8Array.from(frame).buffer;
}

// ---------------------------------------------------------------------------------------------------------------
// Handshakes

test("websocket source: headers mode asks for the watch URL over wss: with Accept, Origin and the credentials", async () => {
  const c = connection();
  const events = await webSocketWatch(c, CONFIGMAPS, {
    resourceVersion: "7",
    allowWatchBookmarks: true,
    format: "protobuf",
    protobuf: { mode: "metadata" },
    openWebSocket: play({ open: true }, { close: 1000 }),
  });
  await drain(events);
  const [socket] = ScriptedSocket.made;
  assert.equal(
    socket.url,
    "wss://127.0.0.1:6443/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=7&allowWatchBookmarks=true",
  );
  const init = socket.init as { protocols: string[]; headers: Headers };
  assert.deepEqual(init.protocols, []);
  assert.deepEqual(Object.fromEntries(init.headers), {
    accept: "application/vnd.kubernetes.protobuf, application/json",
    authorization: "Bearer abc",
    origin: "https://127.0.0.1:6443",
  });
  assert.equal(socket.binaryType, "arraybuffer");
});

test("websocket source: init members (a dispatcher, a Deno client, Bun's tls) go into the WebSocket init", async () => {
  ScriptedSocket.script = [];
  ScriptedSocket.made = [];
  const open = webSocketOpener({ WebSocket: ScriptedSocket, handshake: "headers", init: { tls: { ca: "pem" } } });
  const headers = new Headers({ authorization: "Bearer x" });
  await open("wss://h/x", { headers, protocols: ["p"], fetch });
  assert.deepEqual(ScriptedSocket.made[0].init, { tls: { ca: "pem" }, protocols: ["p"], headers });
});

test("websocket source: subprotocol mode (browsers) carries a bearer token as a subprotocol, and refuses the rest", async () => {
  ScriptedSocket.script = [];
  ScriptedSocket.made = [];
  const open = webSocketOpener({ WebSocket: ScriptedSocket, handshake: "subprotocol" });
  const ask = (headers: Record<string, string>) =>
    open("wss://h/x", { headers: new Headers(headers), protocols: [], fetch });
  // A token with characters base64 writes as + and /: base64url has - and _, and no padding.
  await ask({ authorization: "Bearer ~~~>", accept: "application/json", origin: "https://h" });
  assert.deepEqual(ScriptedSocket.made[0].init, ["base64url.bearer.authorization.k8s.io.fn5-Pg", "v4.channel.k8s.io"]);
  await ask({});
  assert.deepEqual(ScriptedSocket.made[1].init, []);
  const refusedHeaders: Record<string, string>[] = [
    { authorization: "Basic YTpi" },
    { authorization: "Bearer t", "impersonate-user": "jane" },
  ];
  for (const headers of refusedHeaders) {
    await assert.rejects(
      async () => await ask(headers),
      (e) => e instanceof ClusterAccessError && e.code === "UNSUPPORTED" && /cannot carry/.test(e.message),
    );
  }
  const other = webSocketOpener({ WebSocket: ScriptedSocket, handshake: "subprotocol", companionProtocol: "x.k8s.io" });
  await other("wss://h/x", { headers: new Headers({ authorization: "Bearer t" }), protocols: [], fetch });
  assert.deepEqual(ScriptedSocket.made[2].init, ["base64url.bearer.authorization.k8s.io.dA", "x.k8s.io"]);
});

test("websocket source: subprotocol mode first fetches each wss: server's origin once, no-cors (Chromium)", async () => {
  const g = globalThis as { fetch: typeof fetch };
  const saved = g.fetch;
  const fetched: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  g.fetch = async (input, init) => {
    fetched.push(`${input} ${init?.mode}`);
    await held;
    return new Response("opaque");
  };
  try {
    ScriptedSocket.script = [];
    ScriptedSocket.made = [];
    const open = webSocketOpener({
      WebSocket: ScriptedSocket,
      handshake: "subprotocol",
      settleClientCertificate: true,
    });
    const ask = (url: string) =>
      open(url, { headers: new Headers({ authorization: "Bearer t" }), protocols: [], fetch: () => Promise.reject() });
    // Two WebSockets to one server at once: one fetch, and neither opens before it is answered.
    const both = Promise.all([ask("wss://settle.test:6443/a"), ask("wss://settle.test:6443/b")]);
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(ScriptedSocket.made.length, 0);
    release();
    await both;
    await ask("wss://settle.test:6443/c");
    await ask("wss://other.test/x");
    await ask("ws://plain.test/x");
    assert.deepEqual(fetched, ["https://settle.test:6443/ no-cors", "https://other.test/ no-cors"]);
    assert.equal(ScriptedSocket.made.length, 5);
    // Off outside browsers unless asked for.
    await webSocketOpener({ WebSocket: ScriptedSocket, handshake: "subprotocol" })("wss://elsewhere.test/x", {
      headers: new Headers({ authorization: "Bearer t" }),
      protocols: [],
      fetch: () => Promise.reject(),
    });
    assert.equal(fetched.length, 2);
  } finally {
    g.fetch = saved;
  }
});

test("websocket source: no WebSocket class (Node 20) is an UNSUPPORTED error that says what to pass", async () => {
  const g = globalThis as { WebSocket?: unknown };
  const saved = g.WebSocket;
  g.WebSocket = undefined;
  try {
    await assert.rejects(
      webSocketWatch(connection(), CONFIGMAPS, { openWebSocket: webSocketOpener({ handshake: "headers" }) }),
      (e) => e instanceof ClusterAccessError && e.code === "UNSUPPORTED" && /undici/.test(e.message),
    );
  } finally {
    g.WebSocket = saved;
  }
});

test("websocket source: fetch mode (Workers) upgrades the connection's fetch and accepts its response's WebSocket", async () => {
  const accepted: string[] = [];
  const socket = Object.assign(new EventTarget(), {
    binaryType: "blob",
    readyState: 1,
    accept: () => accepted.push("accept"),
    close: () => {},
  });
  let asked: { url: string; headers: Headers } | undefined;
  const fetch101 = (input: string | URL | Request, init?: RequestInit) => {
    asked = { url: String(input), headers: new Headers(init?.headers) };
    return Promise.resolve({ status: 101, statusText: "Switching Protocols", body: null, webSocket: socket } as never);
  };
  const c = { ...connection(), fetch: fetch101 };
  const events = await webSocketWatch(c, CONFIGMAPS, { openWebSocket: webSocketOpener({ handshake: "fetch" }) });
  assert.equal(asked?.url, "https://127.0.0.1:6443/api/v1/namespaces/default/configmaps?watch=true");
  assert.equal(asked?.headers.get("upgrade"), "websocket");
  assert.equal(asked?.headers.get("origin"), "https://127.0.0.1:6443");
  assert.deepEqual(accepted, ["accept"]);
  // Open already: no open event comes, and none is waited for.
  socket.dispatchEvent(new MessageEvent("message", { data: json("ADDED", "a", "8") }));
  socket.dispatchEvent(Object.assign(new Event("close"), { code: 1000, reason: "", wasClean: true }));
  const { values, error } = await within(drain(events), 2000);
  assert.equal(error, undefined);
  assert.deepEqual(values.map((e) => e.type), ["ADDED"]);
});

// ---------------------------------------------------------------------------------------------------------------
// Events and ends

test("websocket source: text messages are JSON events, binary ones protobuf events; a close 1000 ends the stream", async () => {
  const events = await webSocketWatch(connection(), CONFIGMAPS, {
    openWebSocket: play(
      { open: true },
      { message: json("ADDED", "a", "8") },
      { message: json("MODIFIED", "a", "9") },
      { message: protobufStatusEvent() },
      { message: json("DELETED", "a", "10") },
      { close: 1000 },
    ),
  });
  const { values, error } = await within(drain(events), 2000);
  assert.equal(error, undefined);
  assert.deepEqual(values.map((e) => e.type), ["ADDED", "MODIFIED", "ERROR", "DELETED"]);
  const status = (values[2] as WatchEvent & { type: "ERROR" }).object;
  assert.equal(status.code, 410);
  assert.equal(values[1].object.metadata?.resourceVersion, "9");
});

test("websocket source: a connection lost (1006) fails the stream after the events before it", async () => {
  const events = await webSocketWatch(connection(), CONFIGMAPS, {
    openWebSocket: play(
      { open: true },
      { message: json("ADDED", "a", "8") },
      { error: "connection reset" },
      { close: 1006, wasClean: false },
    ),
  });
  const { values, error } = await within(drain(events), 2000);
  assert.deepEqual(values.map((e) => e.type), ["ADDED"]);
  assert.ok(error instanceof ClusterAccessError);
  assert.equal(error.code, "CONNECTION_LOST");
  assert.match(error.message, /code 1006.*after 1 messages.*connection reset/);
});

test("websocket source: a close with a code of trouble (1011) fails the stream; 1001 ends it", async () => {
  const failed = await drain(
    await webSocketWatch(connection(), CONFIGMAPS, {
      openWebSocket: play({ open: true }, { close: 1011, reason: "internal error" }),
    }),
  );
  assert.ok(failed.error instanceof ClusterAccessError && /1011 \(internal error\)/.test(failed.error.message));
  const ended = await drain(
    await webSocketWatch(connection(), CONFIGMAPS, { openWebSocket: play({ open: true }, { close: 1001 }) }),
  );
  assert.equal(ended.error, undefined);
  // Firefox calls the server's close 1000 not clean when the server closes the connection right after its close frame
  // (kube-apiserver does): the watch's end all the same.
  const firefox = await drain(
    await webSocketWatch(connection(), CONFIGMAPS, {
      openWebSocket: play({ open: true }, { message: json("ADDED", "a", "8") }, { close: 1000, wasClean: false }),
    }),
  );
  assert.deepEqual([firefox.values.length, firefox.error], [1, undefined]);
});

test("websocket source: a message that does not decode fails with a DecodeError naming the message", async () => {
  const events = await webSocketWatch(connection(), CONFIGMAPS, {
    openWebSocket: play({ open: true }, { message: json("ADDED", "a", "8") }, { message: "{oops" }, { close: 1000 }),
  });
  const { values, error } = await within(drain(events), 2000);
  assert.equal(values.length, 1);
  assert.ok(error instanceof DecodeError);
  assert.equal(error.code, "JSON_INVALID");
  assert.match(String(error.context), /^message 2 of the watch configmaps over WebSocket/);
  assert.equal(ScriptedSocket.made[0].closed[0], 1000);
});

test("websocket source: maxEventBytes bounds each message, counted in UTF-8 bytes", async () => {
  for (
    const [message, code] of [
      ['"ééééé"', "MESSAGE_TOO_LARGE"], // 7 UTF-16 units, 12 bytes
      ['"éé"', "EVENT_INVALID"], // 6 bytes: within the limit, then not an event
      [new Uint8Array(11).buffer, "MESSAGE_TOO_LARGE"],
    ] as const
  ) {
    const events = await webSocketWatch(connection(), CONFIGMAPS, {
      maxEventBytes: 10,
      openWebSocket: play({ open: true }, { message }, { close: 1000 }),
    });
    const { error } = await within(drain(events), 2000);
    assert.ok(error instanceof DecodeError, String(error));
    assert.equal(error.code, code);
  }
});

test("websocket source: a message as a Blob (binaryType not honoured) is a fault, not a hang", async () => {
  const events = await webSocketWatch(connection(), CONFIGMAPS, {
    openWebSocket: play({ open: true }, { message: new Blob(["x"]) }, { close: 1000 }),
  });
  const { error } = await within(drain(events), 2000);
  assert.ok(error instanceof DecodeError && error.code === "MESSAGE_INVALID" && /Blob/.test(error.message));
});

test("websocket source: the signal and a cancel close the WebSocket", async () => {
  const stop = new AbortController();
  const events = await webSocketWatch(connection(), CONFIGMAPS, {
    signal: stop.signal,
    openWebSocket: play({ open: true }, { message: json("ADDED", "a", "8") }),
  });
  const reader = events.getReader();
  assert.equal((await reader.read()).value?.type, "ADDED");
  stop.abort(new Error("stopped"));
  await assert.rejects(reader.read(), /stopped/);
  assert.deepEqual(ScriptedSocket.made[0].closed, [1000]);

  const cancelled = await webSocketWatch(connection(), CONFIGMAPS, { openWebSocket: play({ open: true }) });
  await cancelled.cancel();
  assert.deepEqual(ScriptedSocket.made[0].closed, [1000]);

  const before = new AbortController();
  before.abort(new Error("early"));
  await assert.rejects(
    webSocketWatch(connection(), CONFIGMAPS, { signal: before.signal, openWebSocket: play({ open: true }) }),
    /early/,
  );
});

// ---------------------------------------------------------------------------------------------------------------
// Refused handshakes

const refused = () =>
  play({ error: "Received network error or non-101 status code." }, { close: 1006, wasClean: false });

test("websocket source: a refused handshake is asked again over plain HTTP: its Status is the one ERROR event", async () => {
  const c = connection(() =>
    Response.json(
      { kind: "Status", apiVersion: "v1", status: "Failure", reason: "Forbidden", code: 403, message: "no" },
      { status: 403 },
    )
  );
  const events = await webSocketWatch(c, CONFIGMAPS, { resourceVersion: "5", openWebSocket: refused() });
  const { values, error } = await within(drain(events), 2000);
  assert.equal(error, undefined);
  assert.equal(values.length, 1);
  assert.equal(values[0].type, "ERROR");
  assert.equal((values[0] as WatchEvent & { type: "ERROR" }).object.code, 403);
  assert.equal(
    c.requests[0].url.href,
    "https://127.0.0.1:6443/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=5",
  );
  assert.equal(c.requests[0].headers.get("origin"), null);
  assert.equal(c.requests[0].headers.get("accept"), "application/json");
});

test("websocket source: a 429 with Retry-After gives its seconds in the Status", async () => {
  const c = connection(() => new Response("too many", { status: 429, headers: { "retry-after": "3" } }));
  const { values } = await drain(await webSocketWatch(c, CONFIGMAPS, { openWebSocket: refused() }));
  const status = (values[0] as WatchEvent & { type: "ERROR" }).object;
  assert.equal(status.code, 429);
  assert.equal(status.details?.retryAfterSeconds, 3);
});

test("websocket source: a handshake refused where plain HTTP is accepted says what differs", async () => {
  let cancelled = false;
  const c = connection(() =>
    new Response(new ReadableStream({ cancel: () => void (cancelled = true) }), { status: 200 })
  );
  await assert.rejects(
    webSocketWatch(c, CONFIGMAPS, { openWebSocket: refused() }),
    (e) =>
      e instanceof ClusterAccessError && e.code === "REQUEST_FAILED" && /plain HTTP was answered 200/.test(e.message) &&
      /certificate/.test(e.message) && /Origin/.test(e.message),
  );
  assert.ok(cancelled);
  // An opener that throws is looked into the same way.
  const throwing: WebSocketOpener = () => {
    throw new TypeError("bad URL");
  };
  await assert.rejects(
    webSocketWatch(connection(() => new Response("", { status: 200 })), CONFIGMAPS, { openWebSocket: throwing }),
    (e) => e instanceof ClusterAccessError && /bad URL/.test(e.message),
  );
  // And when plain HTTP cannot be reached either: the WebSocket's failure.
  const down = { ...connection(), fetch: () => Promise.reject(new TypeError("fetch failed")) };
  await assert.rejects(
    webSocketWatch(down, CONFIGMAPS, { openWebSocket: refused() }),
    (e) => e instanceof ClusterAccessError && /handshake failed \(Received network error/.test(e.message),
  );
});

// ---------------------------------------------------------------------------------------------------------------
// As a transport of the watch loop

test('websocket source: resourceSource with transport "websocket" lists over HTTP and watches over WebSocket', async () => {
  const c = connection((url) => {
    assert.equal(url.searchParams.get("watch"), null, "only lists go over plain HTTP");
    return Response.json({
      kind: "ConfigMapList",
      apiVersion: "v1",
      metadata: { resourceVersion: "7" },
      items: [{ metadata: { name: "a", namespace: "default", resourceVersion: "7" } }],
    });
  });
  const handshakes: WebSocketHandshake[] = [];
  const open = play({ open: true }, { message: json("MODIFIED", "a", "8") });
  const openWebSocket: WebSocketOpener = (url, handshake) => {
    handshakes.push(handshake);
    return open(url, handshake);
  };
  const source = resourceSource(c, CONFIGMAPS, { transport: "websocket", openWebSocket });
  const stop = new AbortController();
  const seen: string[] = [];
  for await (const event of watcher(source, { initialSync: "list", signal: stop.signal })) {
    seen.push(event.type === "Apply" ? `Apply ${event.resourceVersion}` : event.type);
    if (event.type === "Apply") stop.abort();
  }
  assert.deepEqual(seen, ["Init", "InitApply", "InitDone", "Apply 8"]);
  const url = new URL(ScriptedSocket.made[0].url);
  assert.equal(url.protocol, "wss:");
  assert.equal(url.searchParams.get("resourceVersion"), "7");
  assert.equal(url.searchParams.get("allowWatchBookmarks"), "true");
  assert.ok(Number(url.searchParams.get("timeoutSeconds")) >= 300);
  assert.equal(handshakes.length, 1);
  assert.deepEqual(ScriptedSocket.made[0].closed, [1000]);
});

test("websocket source: WebSocketConstructorLike takes the runtime's global WebSocket where there is one", () => {
  const constructor: WebSocketConstructorLike | undefined = (globalThis as { WebSocket?: WebSocketConstructorLike })
    .WebSocket;
  assert.ok(constructor === undefined || typeof constructor === "function");
});
