/**
 * Records a real etcd watch session into fixtures/ (needs Debian's etcd-server and etcd-client): etcd on loopback,
 * `etcdctl watch --prefix /k -w json --prev-kv --rev=<next>` through the loopback recording proxy while another
 * etcdctl puts and deletes keys (see tests/peers/etcd_session.ts), then writes
 *
 *   fixtures/etcd-watch.c2s.bin          the client-to-server bytes of the watch's HTTP/2 connection
 *   fixtures/etcd-watch.s2c.bin          the server-to-client bytes of that connection
 *   fixtures/etcd-watch.expected.ndjson  what etcdctl printed (its own output, never the decoder's)
 *
 * and prints `etcd --version` and `etcdctl version` for fixtures/README.md (its "etcd watch" section).
 *
 *   node --import tsx scripts/record-etcd-fixture.ts
 */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { runEtcdSession } from "../tests/peers/etcd_session.ts";

const fixtures = fileURLToPath(new URL("../fixtures/", import.meta.url));
const session = await runEtcdSession();
await writeFile(`${fixtures}etcd-watch.c2s.bin`, session.jsonConnection.clientToServer);
await writeFile(`${fixtures}etcd-watch.s2c.bin`, session.jsonConnection.serverToClient);
await writeFile(`${fixtures}etcd-watch.expected.ndjson`, session.jsonOutput);
console.log(session.versions.etcd);
console.log(session.versions.etcdctl);
console.log(
  `wrote etcd-watch.{c2s,s2c}.bin (${session.jsonConnection.clientToServer.length} + ` +
    `${session.jsonConnection.serverToClient.length} bytes) and etcd-watch.expected.ndjson`,
);
