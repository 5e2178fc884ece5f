// @ts-self-types="./free-port.d.mts"
// A free loopback port, for the real peers the tests and scripts start (etcd, workerd): one shared helper in plain JS so
// that both TypeScript tests and .mjs scripts can import it.
import { createServer } from "node:net";

/** A port free on 127.0.0.1 now: the system picks it for a listener that is closed at once. */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(undefined));
  });
  const { port } = server.address();
  await new Promise((resolve) => server.close(() => resolve(undefined)));
  return port;
}
