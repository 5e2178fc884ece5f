/**
 * The recorded etcd watch session in fixtures/ (scripts/record-etcd-fixture.ts; see the "etcd watch" section of
 * fixtures/README.md): the Watch stream found in the recorded HTTP/2 bytes by the library (decodeHttp2Exchanges, the
 * request :path) and decoded must equal what etcdctl printed. Needs no etcd.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { EtcdWatchDecoderStream, type EtcdWatchResponse, GrpcMessageDecoderStream, kubernetesValue } from "../wire.ts";
import { drain, splitAt, streamOf } from "./_util.ts";
import { decodeRecordedWatch, EXPECTED_EVENTS, printedResponses, recordedWatchBody } from "./peers/etcd_session.ts";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const load = async () => ({
  clientToServer: new Uint8Array(await readFile(fixture("etcd-watch.c2s.bin"))),
  serverToClient: new Uint8Array(await readFile(fixture("etcd-watch.s2c.bin"))),
  expected: (await readFile(fixture("etcd-watch.expected.ndjson"), "utf8")).trim().split("\n").map((l) =>
    JSON.parse(l)
  ),
});

test("etcd fixture: the recorded Watch stream decodes to exactly what etcdctl -w json printed", async () => {
  const { clientToServer, serverToClient, expected } = await load();
  // decodeRecordedWatch throws unless the client's requests hold exactly one /etcdserverpb.Watch/Watch stream.
  const responses = await decodeRecordedWatch({ clientToServer, serverToClient });
  assert.ok(responses[0].created);
  assert.deepEqual(printedResponses(responses), expected);
  const events = responses.flatMap((r) => r.events);
  assert.equal(events.length, EXPECTED_EVENTS);
  const formats = events.map((e) => kubernetesValue(e.kv)?.format ?? "-").join(" ");
  assert.equal(formats, "- - - json protobuf - - - -");
});

test("etcd fixture: any split of the Watch stream's bytes decodes the same", async () => {
  const { clientToServer, serverToClient, expected } = await load();
  const { body, encoding } = await recordedWatchBody({ clientToServer, serverToClient });
  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 1, max: body.length - 1 }), { maxLength: 40 }), async (cuts) => {
      const { values, error } = await drain(
        streamOf(splitAt(body, cuts)).pipeThrough(new GrpcMessageDecoderStream({ encoding })).pipeThrough(
          new EtcdWatchDecoderStream(),
        ),
      );
      assert.equal(error, undefined);
      assert.deepEqual(printedResponses(values as EtcdWatchResponse[]), expected);
    }),
    { numRuns: 50 },
  );
});
