/**
 * The pieces of the informer chaos runs that tests/servers/informer_chaos.test.ts and
 * bench/informer_chaos_compare.ts share: the fault chances and schedule of the proxy (tests/peers/fault_proxy.ts), the
 * watch loop's small timings, and the seeded Mutator of ConfigMaps. No test runner here (no `node:test`): the
 * benchmark imports it too.
 */
import type { ClusterConnection } from "../../src/cluster/cluster_config.ts";
import { objectUrl, resourcePath, type ResourceRef } from "../../src/cluster/resource.ts";
import type { BackoffOptions } from "../../src/watch/backoff.ts";
import type { KubernetesObject } from "../../src/events.ts";
import { type FaultName, type FaultSchedule, seededRandom } from "../peers/fault_proxy.ts";
import { apiRequest } from "./_api.ts";

export type ConfigMap = KubernetesObject & {
  metadata: { name: string; namespace: string; resourceVersion: string; labels?: Record<string, string> };
  data?: Record<string, string>;
};

/** The watch loop's timings, small for a test: the schedule the waits are checked against. */
export const BACKOFF = { initialMs: 50, maxMs: 800, resetAfterMs: 3000 };
export const IDLE_TIMEOUT_MS = 2500;
/** The chance of each fault per request. */
export const CHANCES: Partial<Record<FaultName, number>> = {
  cut: 0.18,
  reset: 0.1,
  stall: 0.1,
  truncate: 0.05,
  status429: 0.07,
  status500: 0.07,
  gone: 0.08,
  goaway: 0.06,
  rstStream: 0.06,
};
export const RETRY_AFTER_SECONDS = 1;

/** The proxy's fault schedule of a seed. */
export function chaosSchedule(seed: number): FaultSchedule {
  return {
    seed: (seed ^ 0x5bd1e995) >>> 0,
    chances: CHANCES,
    // A list (page) fault starts the whole list again: fewer of them, or a list would hardly ever end.
    scale: { list: 0.3 },
    afterBytes: [0, 1000],
    stallMs: [200, 3500],
    retryAfterSeconds: RETRY_AFTER_SECONDS,
  };
}

/**
 * The informer's options of a seed beside its source's (format, initial sync, selector): small pages, watches of 1 to
 * 3 s (seeded), the idle timeout and the backoff schedule above (its jitter seeded).
 */
export function chaosInformerTimings(seed: number): {
  pageSize: number;
  timeoutSeconds: () => number;
  idleTimeoutMs: number;
  backoff: BackoffOptions;
} {
  const timeouts = seededRandom((seed ^ 0x27d4eb2d) >>> 0);
  return {
    pageSize: 8,
    timeoutSeconds: () => 1 + Math.floor(timeouts() * 3),
    idleTimeoutMs: IDLE_TIMEOUT_MS,
    backoff: { ...BACKOFF, random: seededRandom((seed ^ 0x165667b1) >>> 0) },
  };
}

export const keyOf = (o: KubernetesObject): string => `${o.metadata?.namespace}/${o.metadata?.name}`;

/** Random text of a random size: mostly small, sometimes several TLS records, now and then beyond the BMP. */
export function randomText(random: () => number): string {
  const roll = random();
  const size = roll < 0.7 ? Math.floor(random() * 200) : roll < 0.95 ? 200 + Math.floor(random() * 3000) : 20_000;
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 -_.:/";
  let text = "";
  for (let i = 0; i < size; i++) text += alphabet[Math.floor(random() * alphabet.length)];
  return random() < 0.2 ? `${text} ü ß 𝄞 "quoted" \\ \u2028` : text;
}

/**
 * The mutations of a run, to the server directly: creates (a name deleted before comes back now and then, a new
 * object), updates of the data, relabels (out of the informer's selection, and back in) and deletes.
 */
export class Mutator {
  readonly #c: ClusterConnection;
  readonly #random: () => number;
  readonly #namespaces: string[];
  readonly #label: Record<string, string>;
  /** The objects there are, as the server last answered. */
  readonly live = new Map<string, ConfigMap>();
  readonly #gone: { namespace: string; name: string }[] = [];
  #names = 0;
  done = 0;

  constructor(c: ClusterConnection, random: () => number, namespaces: string[], label: Record<string, string>) {
    this.#c = c;
    this.#random = random;
    this.#namespaces = namespaces;
    this.#label = label;
  }

  #send(method: string, url: URL, body?: unknown): Promise<ConfigMap> {
    return apiRequest<ConfigMap>(this.#c, method, url, body);
  }

  #ref(namespace: string): ResourceRef {
    return { version: "v1", resource: "configmaps", namespace };
  }

  #pick<T>(items: T[]): T {
    return items[Math.floor(this.#random() * items.length)];
  }

  async create(): Promise<void> {
    const again = this.#gone.length > 0 && this.#random() < 0.3;
    const { namespace, name } = again
      ? this.#gone.splice(Math.floor(this.#random() * this.#gone.length), 1)[0]
      : { namespace: this.#pick(this.#namespaces), name: `cm-${this.#names++}` };
    const labels = this.#random() < 0.9 ? { ...this.#label } : { other: "yes" };
    const object = await this.#send("POST", new URL(resourcePath(this.#ref(namespace)), this.#c.server), {
      metadata: { name, labels },
      data: { text: randomText(this.#random) },
    });
    this.live.set(keyOf(object), object);
  }

  async #replace(object: ConfigMap): Promise<void> {
    const { namespace, name } = object.metadata;
    const replaced = await this.#send("PUT", objectUrl(this.#c.server, this.#ref(namespace), name), object);
    this.live.set(keyOf(replaced), replaced);
  }

  async step(): Promise<void> {
    this.done++;
    const roll = this.#random();
    const objects = [...this.live.values()];
    if (objects.length < 3 || (roll < 0.3 && objects.length < 30)) return await this.create();
    const object = this.#pick(objects);
    if (roll < 0.65) {
      return await this.#replace({ ...object, data: { text: randomText(this.#random), step: String(this.done) } });
    }
    if (roll < 0.75) {
      const labels = object.metadata.labels?.["watchwire-chaos"] === undefined ? { ...this.#label } : {};
      return await this.#replace({ ...object, metadata: { ...object.metadata, labels } });
    }
    const { namespace, name } = object.metadata;
    await this.#send("DELETE", objectUrl(this.#c.server, this.#ref(namespace), name));
    this.live.delete(keyOf(object));
    this.#gone.push({ namespace, name });
  }
}

/**
 * A run's mutations: `mutations` steps of `mutator` (and more while `more()` says so), a short pause after some of
 * them; then the proxy's faults go on a second more, and stop, so that the informer can settle.
 */
export async function mutateThenEndFaults(
  mutator: Mutator,
  random: () => number,
  proxy: { schedule(schedule: null): Promise<void> },
  mutations: number,
  more: () => Promise<boolean> = () => Promise.resolve(false),
): Promise<void> {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  for (let i = 0; i < mutations || await more(); i++) {
    await mutator.step();
    if (random() < 0.45) await sleep(50 + Math.floor(random() * 350));
  }
  await sleep(1000);
  await proxy.schedule(null);
}
