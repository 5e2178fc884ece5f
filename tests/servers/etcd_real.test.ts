/**
 * A real etcd (Debian's etcd-server and etcd-client): etcdctl watches through the recording proxy while keys are put
 * and deleted; the recorded HTTP/2 bytes of each watch, decoded by the library, must give exactly what etcdctl printed.
 * Without etcd this test fails and names the install command.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { kubernetesValue } from "../../wire.ts";
import {
  BIG_VALUE,
  decodeRecordedWatch,
  EXPECTED_EVENTS,
  K8S_PROTO,
  plainOutputOf,
  printedResponses,
  printsCancelReason,
  runEtcdSession,
} from "../peers/etcd_session.ts";

test("etcd (real): etcdctl watch output equals the decoded recorded Watch stream", async () => {
  const session = await runEtcdSession();

  const json = await decodeRecordedWatch(session.jsonConnection);
  assert.ok(json[0].created, "the first response answers the create request");
  const printed = session.jsonOutput.trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(printedResponses(json, printsCancelReason(session.versions.etcdctl)), printed);
  const events = json.flatMap((r) => r.events);
  assert.equal(events.length, EXPECTED_EVENTS);
  // The large value came in more than one DATA frame; it is whole.
  const big = events.find((e) => new TextDecoder().decode(e.kv.key) === "/k/big" && e.type === "PUT");
  assert.equal(big?.kv.value.length, BIG_VALUE.length);
  // prev_kv: the second put of /k/a carries the first one's value.
  assert.equal(new TextDecoder().decode(events[1].prevKv?.value), "hello");
  // Kubernetes-stored values are recognised.
  const byKey = (key: string) => events.find((e) => new TextDecoder().decode(e.kv.key) === key && e.type === "PUT")!;
  assert.deepEqual(kubernetesValue(byKey("/k/proto").kv), { format: "protobuf", bytes: K8S_PROTO });
  assert.equal(kubernetesValue(byKey("/k/pod").kv)?.format, "json");
  assert.equal(kubernetesValue(byKey("/k/a").kv), undefined);

  const plain = await decodeRecordedWatch(session.plainConnection);
  assert.equal(plain.flatMap((r) => r.events).length, EXPECTED_EVENTS);
  assert.deepEqual(Array.from(plainOutputOf(plain)), Array.from(session.plainOutput));
});
