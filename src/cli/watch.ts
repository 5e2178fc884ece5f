/**
 * `watchwire watch RESOURCE`: an informer of one resource of a cluster, its changes printed live as `kubectl get -w`
 * prints them (a table, or JSON watch events), progress of the initial sync on stderr, and the informer's state kept
 * in a file (`--state FILE`) to resume from. Runtime-free: the host (`bin/node.ts`, `bin/deno.ts`) gives it files
 * and the interrupt signal. Internal; `runCli` runs it.
 *
 * @module
 */
import type { ClusterConnection } from "../cluster/cluster_config.ts";
import { connectCluster } from "../cluster/connection/connect_cluster.ts";
import { loadKubeconfig } from "../cluster/kubeconfig/load_kubeconfig.ts";
import type { ResourceRef } from "../cluster/resource.ts";
import { DEFAULT_PAGE_SIZE, resourceSource, type ResourceSourceOptions } from "../cluster/resource_source.ts";
import type { KubernetesObject, WatchEvent } from "../events.ts";
import { type DeletedFinalStateUnknown, Informer, type InformerState } from "../watch/informer.ts";
import { decodeInformerState, encodeInformerState } from "../watch/informer_state.ts";
import type { ListWatchSource } from "../watch/list_watch_source.ts";
import { INITIAL_EVENTS_END } from "../watch/watcher.ts";
import { builtinDecoders } from "../codec/kubernetes/generated/all.ts";
import { type FoundResource, resolveResource } from "./resource_arg.ts";

/** What `watch` needs of its host beyond the decoding command's (all optional; see `CliHost`). */
export interface WatchHost {
  stdout(text: string): Promise<void> | void;
  stderr(text: string): Promise<void> | void;
  stdoutIsTerminal: boolean;
  readFile?(path: string): Promise<Uint8Array | undefined>;
  writeFile?(path: string, bytes: Uint8Array): Promise<void>;
  onInterrupt?(handler: () => void): () => void;
  connect?(options: { kubeconfig?: string; context?: string }): Promise<ClusterConnection>;
}

/** A usage error of `watch`: its message, then the one-line hint. */
export class WatchUsageError extends Error {}

/** The one-line hint after a usage error of `watch`. */
export const WATCH_USAGE_HINT = "Usage: watchwire watch [OPTION]... RESOURCE  (watchwire --help for the options)\n";

interface WatchOptions {
  resource: string;
  kubeconfig: string | undefined;
  context: string | undefined;
  namespace: string | undefined;
  allNamespaces: boolean;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  format: "json" | "protobuf" | "cbor" | undefined;
  /** How the watches travel: plain HTTP (the default) or a WebSocket (`--transport websocket`). */
  transport: "http" | "websocket";
  /** Protobuf objects decoded in full, or only their metadata (`--mode metadata`, or `--metadata-only`). */
  mode: "full" | "metadata";
  output: "table" | "ndjson";
  state: string | undefined;
}

/** The options of `watch` (the arguments after the word `watch`). Throws a {@linkcode WatchUsageError}. */
export function parseWatchArgs(args: string[], stdoutIsTerminal: boolean): WatchOptions | "help" {
  const options: WatchOptions = {
    resource: "",
    kubeconfig: undefined,
    context: undefined,
    namespace: undefined,
    allNamespaces: false,
    labelSelector: undefined,
    fieldSelector: undefined,
    format: undefined,
    transport: "http",
    mode: "full",
    output: stdoutIsTerminal ? "table" : "ndjson",
    state: undefined,
  };
  const resources: string[] = [];
  /** How the mode was asked for, for the usage error that names it. */
  let modeArg = "--mode metadata";
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const value = () => {
      if (eq !== -1) return arg.slice(eq + 1);
      if (i + 1 >= args.length) throw new WatchUsageError(`${name} needs a value`);
      return args[++i];
    };
    switch (name) {
      case "-h":
      case "--help":
        return "help";
      case "--kubeconfig":
        options.kubeconfig = value();
        break;
      case "--context":
        options.context = value();
        break;
      case "-n":
      case "--namespace":
        options.namespace = value();
        break;
      case "-A":
      case "--all-namespaces":
        options.allNamespaces = true;
        break;
      case "-l":
      case "--selector":
        options.labelSelector = value();
        break;
      case "--field-selector":
        options.fieldSelector = value();
        break;
      case "--transport": {
        const v = value();
        if (v !== "http" && v !== "websocket") {
          throw new WatchUsageError(`--transport must be http or websocket, not ${JSON.stringify(v)}`);
        }
        options.transport = v;
        break;
      }
      case "--format": {
        const v = value();
        if (v !== "json" && v !== "protobuf" && v !== "cbor") {
          throw new WatchUsageError(`--format must be json, protobuf or cbor, not ${JSON.stringify(v)}`);
        }
        options.format = v;
        break;
      }
      case "--mode": {
        const v = value();
        if (v !== "full" && v !== "metadata") {
          throw new WatchUsageError(`--mode must be full or metadata, not ${JSON.stringify(v)}`);
        }
        options.mode = v;
        modeArg = "--mode metadata";
        break;
      }
      case "--metadata-only":
        // The shorthand of `--mode metadata`.
        options.mode = "metadata";
        modeArg = "--metadata-only";
        break;
      case "-o":
      case "--output": {
        const v = value();
        // `--output state FILE`, as issue 36 spelt it: the same as `--state FILE`.
        if (v === "state") {
          options.state = value();
          break;
        }
        if (v !== "ndjson" && v !== "table") {
          throw new WatchUsageError(`--output must be ndjson, table or state FILE, not ${JSON.stringify(v)}`);
        }
        options.output = v;
        break;
      }
      case "--state":
        options.state = value();
        break;
      default:
        if (arg.startsWith("-")) throw new WatchUsageError(`unknown option ${JSON.stringify(arg)}`);
        resources.push(arg);
    }
  }
  if (resources.length === 0) throw new WatchUsageError("no RESOURCE given (e.g. pods, deployments.apps)");
  if (resources.length > 1) throw new WatchUsageError(`one RESOURCE only, not ${resources.join(" ")}`);
  if (options.allNamespaces && options.namespace !== undefined) {
    throw new WatchUsageError("-n NAMESPACE and -A (all namespaces) exclude each other");
  }
  if (options.mode === "metadata" && (options.format === "json" || options.format === "cbor")) {
    throw new WatchUsageError(`${modeArg} needs --format protobuf (the default)`);
  }
  options.resource = resources[0];
  return options;
}

/** kubectl's age: `45s`, `3m20s`, `15m`, `5h10m`, `20h`, `3d4h`, `120d`, `2y10d`, `9y`. */
export function humanAge(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  const with_ = (big: number, bigUnit: string, small: number, smallUnit: string) =>
    small === 0 ? `${big}${bigUnit}` : `${big}${bigUnit}${small}${smallUnit}`;
  if (minutes < 10) return with_(minutes, "m", seconds % 60, "s");
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return with_(hours, "h", minutes % 60, "m");
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return with_(days, "d", hours % 24, "h");
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return with_(years, "y", days % 365, "d");
  return `${years}y`;
}

/** A table row: each cell but the last padded to its column's width, and at least three spaces. */
function cells(values: string[], widths: readonly number[]): string {
  return values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(Math.max(widths[i], v.length + 3)))).join("")
    .trimEnd();
}

/**
 * What a state file holds must be of the resource and namespace watched: a state of pods resumed as configmaps, or of
 * another namespace, would keep objects that no watch from its resourceVersion ever corrects. (Selectors cannot be
 * told from the objects: a state file is for one command line.)
 */
function checkStateFits(state: InformerState, found: FoundResource, namespace: string | undefined, file: string): void {
  const apiVersion = found.group === "" ? found.version : `${found.group}/${found.version}`;
  for (const object of state.objects) {
    if (object.kind !== undefined && object.kind !== found.kind) {
      throw new Error(`${file} holds the state of ${object.kind} objects, not of ${found.kind} (${apiVersion})`);
    }
    const where = object.metadata?.namespace;
    if (namespace !== undefined && where !== undefined && where !== namespace) {
      throw new Error(`${file} holds objects of namespace ${where}, not of ${namespace}`);
    }
  }
}

/** Counts the objects of initial syncs as they arrive: a list's pages, or a streaming list's ADDED events. */
function countingSource<T>(source: ListWatchSource<T>, onSync: () => void, onObjects: (n: number) => void) {
  const counted: ListWatchSource<T> = {
    list: (request) => {
      onSync();
      return source.list({
        ...request,
        onListProgress: (n) => {
          onObjects(n);
          request.onListProgress?.(n);
        },
      });
    },
    watch: async (request) => {
      if (request.sendInitialEvents) onSync();
      const stream = await source.watch(request);
      if (!request.sendInitialEvents) return stream;
      let count = 0;
      let initial = true;
      return stream.pipeThrough(
        new TransformStream<WatchEvent<T>, WatchEvent<T>>({
          transform(event, controller) {
            if (initial) {
              if (event.type === "ADDED") onObjects(++count);
              const annotations = (event.object as KubernetesObject).metadata?.annotations;
              if (event.type === "BOOKMARK" && annotations?.[INITIAL_EVENTS_END] === "true") initial = false;
            }
            controller.enqueue(event);
          },
        }),
      );
    },
  };
  return counted;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Objects between two progress lines of an initial sync (a list's page size); a line at least every second too. */
const PROGRESS_EVERY = DEFAULT_PAGE_SIZE;
const PROGRESS_MS = 1000;

/** Runs `watch` until interrupted; the exit status. */
export async function runWatch(options: WatchOptions, host: WatchHost): Promise<number> {
  if (options.state !== undefined && (host.readFile === undefined || host.writeFile === undefined)) {
    await host.stderr("watchwire: --state needs a host that reads and writes files\n");
    return 2;
  }
  let connection: ClusterConnection;
  let found: FoundResource;
  let resume: InformerState | undefined;
  try {
    connection = host.connect
      ? await host.connect({
        ...(options.kubeconfig === undefined ? {} : { kubeconfig: options.kubeconfig }),
        ...(options.context === undefined ? {} : { context: options.context }),
      })
      : await connectCluster(
        await loadKubeconfig({
          ...(options.kubeconfig === undefined ? {} : { path: options.kubeconfig }),
          ...(options.context === undefined ? {} : { context: options.context }),
        }),
      );
  } catch (error) {
    await host.stderr(`watchwire: ${message(error)}\n`);
    return 1;
  }
  let namespace: string | undefined;
  try {
    found = await resolveResource(connection, options.resource);
    if (!found.verbs.includes("watch") || !found.verbs.includes("list")) {
      throw new Error(`${found.resource} cannot be listed and watched (its verbs: ${found.verbs.join(", ")})`);
    }
    namespace = !found.namespaced || options.allNamespaces
      ? undefined
      : options.namespace ?? connection.namespace ?? "default";
    if (options.state !== undefined) {
      const bytes = await host.readFile!(options.state);
      if (bytes !== undefined) {
        try {
          resume = await decodeInformerState(bytes);
        } catch (error) {
          throw new Error(`${options.state} is not a watchwire state file: ${message(error)}`);
        }
        checkStateFits(resume, found, namespace, options.state);
      }
    }
  } catch (error) {
    await connection.close();
    await host.stderr(`watchwire: ${message(error)}\n`);
    return 1;
  }

  const ref: ResourceRef = { group: found.group, version: found.version, resource: found.resource };
  if (namespace !== undefined) ref.namespace = namespace;
  const what = found.group === "" ? found.resource : `${found.resource}.${found.group}`;
  // Every built-in kind decodes (a kind the decoders do not know prints as its metadata).
  const sourceOptions: ResourceSourceOptions = {
    format: options.format ?? "protobuf",
    protobuf: { decoders: builtinDecoders, mode: options.mode },
  };
  if (options.transport === "websocket") sourceOptions.transport = "websocket";
  if (options.labelSelector !== undefined) sourceOptions.labelSelector = options.labelSelector;
  if (options.fieldSelector !== undefined) sourceOptions.fieldSelector = options.fieldSelector;

  const stderr = (text: string) => void Promise.resolve(host.stderr(text)).catch(() => {});
  let syncStarted = 0;
  let lastProgress = 0;
  let expiredSeen = 0;
  let syncsSeen = 0;
  const informer: Informer = new Informer(
    countingSource(
      resourceSource(connection, ref, sourceOptions),
      () => {
        syncStarted = lastProgress = Date.now();
        if (informer.stats.expired > expiredSeen) {
          expiredSeen = informer.stats.expired;
          stderr(
            `watchwire: resourceVersion ${informer.resourceVersion} is gone from the server: listing ${what} again\n`,
          );
        }
      },
      (n) => {
        const now = Date.now();
        if (n % PROGRESS_EVERY === 0 || now - lastProgress >= PROGRESS_MS) {
          lastProgress = now;
          stderr(`watchwire: syncing ${what}: ${n} objects so far\n`);
        }
      },
    ),
    {
      ...(resume === undefined ? {} : { resume }),
      onError: (error) => stderr(`watchwire: ${message(error)}\n`),
    },
  );

  const saveState = async () => {
    if (options.state === undefined || !informer.hasSynced) return;
    try {
      await host.writeFile!(options.state, await encodeInformerState(informer.snapshot()));
    } catch (error) {
      stderr(`watchwire: cannot write ${options.state}: ${message(error)}\n`);
    }
  };

  const namespaceColumn = found.namespaced && namespace === undefined;
  const widths = namespaceColumn ? [11, 24, 40, 18] : [11, 40, 18];
  let headed = options.output !== "table";
  const print = async (type: "ADDED" | "MODIFIED" | "DELETED", object: KubernetesObject) => {
    let line: string;
    if (options.output === "ndjson") {
      line = JSON.stringify({ type, object });
    } else {
      const metadata = object.metadata ?? {};
      const created = metadata.creationTimestamp ? Date.parse(metadata.creationTimestamp) : NaN;
      const age = Number.isNaN(created) ? "<unknown>" : humanAge(Date.now() - created);
      const row = [type, metadata.name ?? "", metadata.resourceVersion ?? "", age];
      if (namespaceColumn) row.splice(1, 0, metadata.namespace ?? "");
      line = cells(row, widths);
      if (!headed) {
        headed = true;
        const heading = ["EVENT", "NAME", "RESOURCEVERSION", "AGE"];
        if (namespaceColumn) heading.splice(1, 0, "NAMESPACE");
        line = `${cells(heading, widths)}\n${line}`;
      }
    }
    await host.stdout(line + "\n");
  };
  informer.addHandlers({
    add: (object) => print("ADDED", object),
    update: (_old, object) => print("MODIFIED", object),
    delete: (object) =>
      print("DELETED", "finalStateUnknown" in object ? (object as DeletedFinalStateUnknown).object : object),
    checkpoint: async (resourceVersion) => {
      if (informer.stats.initialSyncs > syncsSeen) {
        syncsSeen = informer.stats.initialSyncs;
        const seconds = ((Date.now() - syncStarted) / 1000).toFixed(1);
        stderr(
          `watchwire: synced ${informer.store.size} ${what} at resourceVersion ${resourceVersion} in ${seconds} s\n`,
        );
      }
      await saveState();
    },
  }, { replay: false });

  if (resume !== undefined) {
    stderr(
      `watchwire: resumed ${informer.store.size} ${what} at resourceVersion ${resume.resourceVersion} from ${options.state}\n`,
    );
  }
  const removeInterrupt = host.onInterrupt?.(() => informer.stop());
  try {
    await informer.start();
  } finally {
    removeInterrupt?.();
    await saveState();
    await connection.close();
  }
  const saved = options.state !== undefined && informer.hasSynced ? `; state written to ${options.state}` : "";
  await host.stderr(`watchwire: stopped at resourceVersion ${informer.resourceVersion || "-"}${saved}\n`);
  return 0;
}
