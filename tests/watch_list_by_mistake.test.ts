/**
 * A list's answer given to decodeWatchResponse (the URL without `watch=true`): a JSON List and a protobuf List (`k8s\0`
 * envelope around a v1 PodList) fail with a DecodeError that says a list was given and that watch=true was left out,
 * whatever the chunking of the body. No server: the bodies are built here (the protobuf one by hand, tests/_protobuf.ts,
 * and checked to be a PodList by the library's own object decoder).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DecodeError, decodeWatchResponse } from "../mod.ts";
import { builtinDecoders, decodeKubernetesProtobufObject } from "../kubernetes.ts";
import { envelope, len } from "./_protobuf.ts";
import { assertSplitInvariant, drain, utf8 } from "./_util.ts";

const PODS = [
  { name: "web-0", resourceVersion: "41", image: "nginx:1.27" },
  { name: "web-1", resourceVersion: "42", image: "nginx:1.27" },
];

/** A v1 PodList in JSON as kube-apiserver answers a list request (compact, one line). */
const JSON_LIST = utf8(
  JSON.stringify({
    kind: "PodList",
    apiVersion: "v1",
    metadata: { resourceVersion: "43" },
    items: PODS.map((p) => ({
      metadata: { name: p.name, namespace: "default", resourceVersion: p.resourceVersion },
      spec: { containers: [{ name: "web", image: p.image }] },
      status: { phase: "Pending" },
    })),
  }) + "\n",
);

/**
 * The same PodList in protobuf: `k8s\0` + runtime.Unknown {typeMeta, raw = PodList {metadata = 1 (ListMeta:
 * resourceVersion = 2), items = 2 (Pod: metadata = 1 (ObjectMeta: name = 1, namespace = 3, resourceVersion = 6),
 * spec = 2 (PodSpec: containers = 2 (Container: name = 1, image = 2)), status = 3 (PodStatus: phase = 1))}}, with the
 * empty contentEncoding (3) and contentType (4) kube-apiserver writes.
 */
const PROTOBUF_LIST = Uint8Array.from(
  envelope("v1", "PodList", [
    ...len(1, len(2, "43")),
    ...PODS.flatMap((p) =>
      len(2, [
        ...len(1, [...len(1, p.name), ...len(3, "default"), ...len(6, p.resourceVersion)]),
        ...len(2, len(2, [...len(1, "web"), ...len(2, p.image)])),
        ...len(3, len(1, "Pending")),
      ])
    ),
  ], [...len(3, ""), ...len(4, "")]),
);

const CASES = [
  {
    format: "JSON",
    contentType: "application/json",
    body: JSON_LIST,
    code: "EVENT_INVALID",
    message: /^the body is a PodList \(a list's answer\), not a stream of watch events: was watch=true left out/,
  },
  {
    format: "protobuf",
    contentType: "application/vnd.kubernetes.protobuf",
    body: PROTOBUF_LIST,
    code: "MESSAGE_INVALID",
    message: /the body is a single object \(k8s\\0 envelope; a list's answer\?\).*was watch=true left out of the URL\?/,
  },
] as const;

/** What the test reads of a PodList. */
type PodListView = {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string };
  items: {
    metadata: { name: string; resourceVersion: string };
    spec: { containers: { image: string }[] };
    status: { phase: string };
  }[];
};

test("watch list by mistake: the bodies built here are PodLists of the two Pods", () => {
  const json = JSON.parse(new TextDecoder().decode(JSON_LIST)) as PodListView;
  const protobuf = decodeKubernetesProtobufObject(PROTOBUF_LIST, {
    decoders: builtinDecoders,
  }) as unknown as PodListView;
  for (const list of [json, protobuf]) {
    assert.equal(list.kind, "PodList");
    assert.equal(list.apiVersion, "v1");
    assert.equal(list.metadata.resourceVersion, "43");
    assert.deepEqual(
      list.items.map((pod) => [
        pod.metadata.name,
        pod.metadata.resourceVersion,
        pod.spec.containers[0].image,
        pod.status.phase,
      ]),
      PODS.map((p) => [p.name, p.resourceVersion, p.image, "Pending"]),
    );
  }
});

for (const c of CASES) {
  test(`watch list by mistake: decodeWatchResponse given a ${c.format} List says a list was given, without watch=true`, async () => {
    const response = new Response(c.body.slice(), { headers: { "content-type": c.contentType } });
    const { values, error } = await drain(decodeWatchResponse(response));
    assert.deepEqual(values, [], "no event is made up from a list");
    assert.ok(error instanceof DecodeError, String(error));
    assert.equal(error.code, c.code);
    assert.equal(error.offset, 0, "the fault is at the body's start");
    assert.match(error.message, c.message);
  });

  test(`watch list by mistake: the ${c.format} List's error is the same however the body is cut`, async () => {
    const decode = (source: ReadableStream<Uint8Array>) =>
      decodeWatchResponse(new Response(source, { headers: { "content-type": c.contentType } }));
    const { values, error } = await assertSplitInvariant(c.body, decode, { runs: 50 });
    assert.deepEqual(values, []);
    assert.ok(error instanceof DecodeError && c.message.test(error.message), String(error));
  });
}

test("watch list by mistake: an empty List whose items are null (as Go writes a nil slice) says so too", async () => {
  const body = utf8('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":null}\n');
  const response = new Response(body.slice(), { headers: { "content-type": "application/json" } });
  const { values, error } = await drain(decodeWatchResponse(response));
  assert.deepEqual(values, []);
  assert.ok(error instanceof DecodeError, String(error));
  assert.match(error.message, /the body is a PodList \(a list's answer\).*watch=true left out/);
});

test("watch list by mistake: a pretty-printed List (?pretty=true, or curl's) says so however the body is cut", async () => {
  const list = JSON.parse(new TextDecoder().decode(JSON_LIST)) as unknown;
  const decode = (source: ReadableStream<Uint8Array>) =>
    decodeWatchResponse(new Response(source, { headers: { "content-type": "application/json" } }));
  const pattern = /one JSON document over several lines \(pretty-printed; a list's answer\?\).*watch=true left out/;
  for (const lineBreak of ["\n", "\r\n"]) {
    const body = utf8(JSON.stringify(list, null, 2).replaceAll("\n", lineBreak) + lineBreak);
    const { values, error } = await assertSplitInvariant(body, decode, { runs: 50 });
    assert.deepEqual(values, []);
    assert.ok(error instanceof DecodeError, String(error));
    assert.equal(error.code, "JSON_INVALID");
    assert.equal(error.offset, 0);
    assert.match(error.message, pattern);
  }
  // A body whose first line is some other bad JSON keeps the plain message.
  const { error } = await drain(decode(new Blob(["{oops\n"]).stream()));
  assert.ok(error instanceof DecodeError && error.message.startsWith("line is not valid JSON"), String(error));
});
