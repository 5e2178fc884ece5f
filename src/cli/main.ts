/**
 * The `watchwire` command, free of any runtime: arguments in, text out, an exit status back. The runtime adapters
 * (`bin/node.ts` for Node and Bun, `bin/deno.ts` for Deno) give it files, stdin and stdout. It decodes every
 * built-in kind of Kubernetes protobuf (`builtinDecoders`).
 *
 * @module
 */
import { type NdjsonDecoderOptions, NdjsonDecoderStream } from "../codec/ndjson_decoder_stream.ts";
import type { EtcdWatchResponse } from "../codec/etcd/watch_response.ts";
import { toWatchEvent } from "../codec/watch_event_decoder_stream.ts";
import { DecodeError } from "../errors.ts";
import type { WatchEvent } from "../events.ts";
import { DEFAULT_MAX_EVENT_BYTES } from "../limits.ts";
import type { Http1Response } from "../transport/http1_response_decoder_stream.ts";
import { decodeHttp1Exchanges } from "../transport/http1_exchanges.ts";
import { isInterim } from "../transport/http1_head.ts";
import { contentCodingOf } from "../transport/content_coding.ts";
import { Http2StreamError } from "../transport/http2/connection_decoder_stream.ts";
import { decodeHttp2Exchanges, type Http2Exchange } from "../transport/http2/exchanges.ts";
import {
  type DecodeWatchOptions,
  decodeWatchResponse,
  KUBERNETES_PROTOBUF_MEDIA_TYPE,
  type WatchBodyCodec,
} from "../watch/decode_watch_response.ts";
// The command decodes every built-in kind.
import { builtinDecoders } from "../codec/kubernetes/generated/all.ts";
import {
  etcdResponseNotes,
  etcdTableHeader,
  etcdWatchResponses,
  formatEtcdNdjson,
  formatEtcdTableRow,
  grpcEncoding,
  grpcStatusNote,
  isEtcdWatch,
  isGrpc,
  type Payload,
} from "./etcd.ts";
import { formatNdjson, formatTableRow, tableHeader } from "./format.ts";
import { peek } from "./peek.ts";
import { type CaptureOutput, decodeCaptureFile, isCaptureFile } from "./capture.ts";
import { type GrpcDecoders, loadProtoFiles } from "./proto_files.ts";
import { cliProtobufCodec, isProtobufWatch, type ListNote, PROTOBUF_WATCH_HEAD_BYTES } from "./protobuf.ts";
import { CBOR_WATCH_MEDIA_TYPE, cliCborCodec, isCborWatch } from "./cbor.ts";
import type { ClusterConnection } from "../cluster/cluster_config.ts";
import { parseWatchArgs, runWatch, WATCH_USAGE_HINT, WatchUsageError } from "./watch.ts";

/**
 * What the command needs from its runtime.
 *
 * @example
 * ```ts
 * import { type CliHost, runCli } from "watchwire/cli";
 *
 * const event = '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a"}}}\n';
 * let out = "", err = "";
 * const host: CliHost = {
 *   open: async (path) => path === "-" ? new Blob([event]).stream() : Promise.reject(new Error("no such file")),
 *   stdout: (text) => void (out += text),
 *   stderr: (text) => void (err += text),
 *   stdoutIsTerminal: false, // NDJSON output
 *   version: "1.0.0",
 * };
 * console.log(await runCli(["decode", "-"], host), out === event); // 0 true
 * console.log(await runCli(["decode", "pods.json"], host), err.trim()); // 2 watchwire: cannot read pods.json: no such file
 * ```
 */
export interface CliHost {
  /** The bytes of FILE; `"-"` is standard input. Throws if the file cannot be opened. */
  open(path: string): Promise<ReadableStream<Uint8Array>>;
  /** Writes to standard output (resolves when the text is taken: backpressure). */
  stdout(text: string): Promise<void> | void;
  /** Writes to standard error. */
  stderr(text: string): Promise<void> | void;
  /** Whether standard output is a terminal (then the default output is a table). */
  stdoutIsTerminal: boolean;
  /** The package version, for `--version`. */
  version: string;
  /** `watch --state FILE`: the file's bytes, or `undefined` if it does not exist. */
  readFile?(path: string): Promise<Uint8Array | undefined>;
  /** `watch --state FILE`: writes the file whole (a reader never sees part of it). */
  writeFile?(path: string, bytes: Uint8Array): Promise<void>;
  /**
   * `watch` runs until interrupted: calls `handler` on an interrupt (SIGINT, SIGTERM) and returns what stops doing so.
   * Without it, `watch` runs until the process ends.
   */
  onInterrupt?(handler: () => void): () => void;
  /**
   * How `watch` reaches the cluster: by default `loadKubeconfig({ path: kubeconfig, context })`, then
   * `connectCluster` (tests pass a fake cluster).
   */
  connect?(options: { kubeconfig?: string; context?: string }): Promise<ClusterConnection>;
}

/**
 * The help text of the `watchwire` command: what `--help` prints. A usage error prints its message and a one-line
 * hint instead (`Usage: watchwire decode [OPTION]... FILE...`, and that `--help` has the rest).
 *
 * @example
 * ```ts
 * import { runCli, USAGE } from "watchwire/cli";
 *
 * let help = "";
 * const status = await runCli(["--help"], {
 *   open: () => Promise.reject(new Error("no files here")),
 *   stdout: (text) => void (help += text),
 *   stderr: () => {},
 *   stdoutIsTerminal: false,
 *   version: "0.0.0",
 * });
 * console.log(status, help === USAGE, USAGE.startsWith("Usage: watchwire decode")); // 0 true true
 * ```
 */
export const USAGE = `Usage: watchwire decode [--output ndjson|table] [--payload kubernetes|etcd] [--content-type TYPE]
                       [--max-event-bytes N] [--request FILE] [--keylog FILE] [--connection N]
                       [--path TEXT] [--proto FILE]... [--proto-path DIR]... FILE...
       watchwire watch [--kubeconfig FILE] [--context NAME] [-n NAMESPACE | -A] [-l SELECTOR]
                       [--field-selector SELECTOR] [--format protobuf|json|cbor] [--transport http|websocket]
                       [--mode full|metadata] [--output table|ndjson] [--state FILE] RESOURCE

Decodes what a Kubernetes (or etcd) watch client received and prints its events.
FILE (or - for standard input) is a capture file (pcap or pcapng, as tcpdump or Wireshark write it:
every watch of every connection in it, TLS decrypted with --keylog or the file's own key log, each
event with its capture time and connection; tcpdump -w - | watchwire decode - prints them live), or
the raw server-to-client bytes of an HTTP/1.1 connection
(detected by its status line; chunked, Content-Length or close-delimited bodies, gzip, keep-alive),
the server-to-client bytes of an HTTP/2 connection (detected by a first SETTINGS frame or the client
preface; one watch per stream, in the order the streams started; gzip and deflate bodies decoded), or a
bare watch body (newline-delimited JSON, a Kubernetes protobuf watch: detected by its first frame, or a
Kubernetes CBOR watch: detected by its self-described CBOR tag).

  -o, --output ndjson|table   one Kubernetes JSON watch event per line (default when stdout is not a
                              terminal), or a table: type, kind, namespace/name, resourceVersion
  --content-type TYPE         the media type of a bare body (and of an HTTP/2 stream whose headers are
                              missing); default: application/vnd.kubernetes.protobuf;stream=watch when
                              the body starts as one (a 4-byte length, then a watch event's type),
                              application/cbor-seq when it starts with the self-described CBOR tag and a
                              map, else application/json
  --max-event-bytes N         largest event accepted (default ${DEFAULT_MAX_EVENT_BYTES})
  --request FILE              the client-to-server bytes of the same connection: HTTP/1.1 responses
                              and HTTP/2 streams are paired with their requests (table output shows
                              the method and target); an HTTP/1.1 response to HEAD has no body and a
                              2xx response to CONNECT starts a tunnel; an HTTP/2 stream whose :path
                              is /etcdserverpb.Watch/Watch is read as an etcd watch
  --keylog FILE               a capture's TLS key log (NSS format: SSLKEYLOGFILE, Node's --tls-keylog)
  --connection N              a capture's events of connection N only (repeatable; numbered from 1 in
                              the order connections first appear)
  --path TEXT                 a capture's events of requests whose path holds TEXT (e.g. /pods; the
                              old spelling --resource TEXT is taken too)
  --proto FILE, --proto-path DIR
                              .proto files (and where their imports are): a capture's gRPC calls they
                              define (other than etcd's Watch) print their response messages as JSON
  --payload kubernetes|etcd   kubernetes (default): watch bodies are Kubernetes JSON watches, except
                              etcd Watch calls known by their :path; etcd: every gRPC stream of an
                              HTTP/2 capture (and a bare FILE) is an etcd Watch response stream
  -h, --help                  this text
  -V, --version               the version

Kubernetes protobuf watches (Content-Type application/vnd.kubernetes.protobuf;stream=watch) print as
the same JSON watch events the API server's JSON would give; objects of kinds the built-in decoders do
not know print as {"kind","apiVersion","metadata"}. Kubernetes CBOR watches (Content-Type
application/cbor-seq, kube-apiserver's answer to Accept: application/cbor with its CBORServingAndStorage
feature gate on) print as the same JSON watch events too (each object's keys sorted: the server
shuffles them).

etcd watches: the gRPC messages (grpc-encoding identity or gzip) are decoded as etcdserverpb.
WatchResponses (fragmented ones joined). ndjson output prints one line per event in the shape of
etcdctl watch -w json's Events, with an explicit type: {"type":"PUT"|"DELETE","kv":{...},"prev_kv":{...}}
(key and value base64, zero fields omitted). Table output: TYPE, KEY (as text when it is UTF-8 without
spaces or control characters, else base64:<base64 of the key>), MOD_REVISION, VERSION, VALUE_BYTES (the
value's size). A gRPC status other than OK, a canceled watch and a compacted revision are noted on
stderr; they do not change the exit status.

Exit status: 0 when every input decoded, 1 on a decoding fault (the events before it are printed,
then one line on stderr naming the byte offset), 2 on a usage error or an unreadable FILE.

watchwire watch RESOURCE: an informer of RESOURCE in a cluster; prints its changes as they happen, as
kubectl get -w does, until interrupted (Ctrl-C). First every object (ADDED), once the initial sync is
whole; then each change. Progress of the initial sync and a line when it is synced go to stderr.
RESOURCE as kubectl names it: pods, pod, po, Pod, deployments.apps, deployments.v1.apps, widgets.example.com.

  --kubeconfig FILE           the kubeconfig (default: KUBECONFIG, else ~/.kube/config)
  --context NAME              its context (default: its current-context)
  -n, --namespace NAMESPACE   the namespace (default: the context's, else default)
  -A, --all-namespaces        every namespace
  -l, --selector SELECTOR     a label selector (app=web,tier!=db)
  --field-selector SELECTOR   a field selector (metadata.name=web)
  --format protobuf|json|cbor how objects travel (default protobuf; JSON for kinds without protobuf;
                              cbor: JSON from a server that does not serve CBOR)
  --transport http|websocket  how the watches travel (default http; lists are always plain HTTP)
  --mode full|metadata        protobuf objects decoded in full (default), or only kind, apiVersion and
                              metadata
  --metadata-only             the same as --mode metadata
  -o, --output table|ndjson   a table: EVENT, [NAMESPACE with -A,] NAME, RESOURCEVERSION, AGE (default when
                              stdout is a terminal), or one JSON watch event per line: ADDED, MODIFIED,
                              DELETED with the object (the last known one for an object that vanished while
                              the informer was away)
  --state FILE                (or --output state FILE) keep the informer's state (resourceVersion and
                              objects, msgpack) in FILE:
                              resume from it if it exists (no initial sync while the server still has its
                              resourceVersion: only the changes since are printed), write it at each
                              bookmark, after each initial sync and on exit

Exit status: 0 when interrupted (the state written), 1 if the cluster or RESOURCE cannot be reached or
the state file cannot be read, 2 on a usage error. Failures while watching are noted on stderr and
retried.
`;

/** The table heading of a capture's events. */
const CAPTURE_TABLE_HEADING = `${"TIME".padEnd(30)}  CONN  ${tableHeader()}`;

/** What follows a usage error's message on stderr: the command's form in one line, and where the rest is. */
const USAGE_HINT = "Usage: watchwire decode [OPTION]... FILE...  (watchwire --help for the options)\n";

interface Options {
  output: "ndjson" | "table";
  payload: Payload;
  /** `--content-type`; undefined: told from the body's first bytes. */
  contentType: string | undefined;
  maxEventBytes: number | undefined;
  request: string | undefined;
  /** `--keylog FILE`: the TLS key log of a capture. */
  keyLog: string | undefined;
  /** `--connection N` (repeatable): a capture's connections to print. */
  connections: number[];
  /** `--path TEXT` (or its old spelling `--resource TEXT`): a capture's requests to print, by their path. */
  path: string | undefined;
  /** `--proto FILE` (repeatable) and `--proto-path DIR` (repeatable): the `.proto` files of a capture's gRPC calls. */
  protoFiles: string[];
  protoPaths: string[];
  files: string[];
}

class UsageError extends Error {}

function parseArgs(args: string[], host: CliHost): Options | "help" | "version" {
  if (args.length === 0) throw new UsageError("no command given");
  if (args[0] === "-h" || args[0] === "--help" || args[0] === "help") return "help";
  if (args[0] === "-V" || args[0] === "--version") return "version";
  if (args[0] !== "decode") throw new UsageError(`unknown command ${JSON.stringify(args[0])}`);
  const options: Options = {
    output: host.stdoutIsTerminal ? "table" : "ndjson",
    payload: "kubernetes",
    contentType: undefined,
    maxEventBytes: undefined,
    request: undefined,
    keyLog: undefined,
    connections: [],
    path: undefined,
    protoFiles: [],
    protoPaths: [],
    files: [],
  };
  for (let i = 1; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const value = () => {
      if (eq !== -1) return arg.slice(eq + 1);
      if (i + 1 >= args.length) throw new UsageError(`${name} needs a value`);
      return args[++i];
    };
    switch (name) {
      case "-h":
      case "--help":
        return "help";
      case "-o":
      case "--output": {
        const v = value();
        if (v !== "ndjson" && v !== "table") {
          throw new UsageError(`--output must be ndjson or table, not ${JSON.stringify(v)}`);
        }
        options.output = v;
        break;
      }
      case "--payload": {
        const v = value();
        if (v !== "kubernetes" && v !== "etcd") {
          throw new UsageError(`--payload must be kubernetes or etcd, not ${JSON.stringify(v)}`);
        }
        options.payload = v;
        break;
      }
      case "--content-type":
        options.contentType = value();
        break;
      case "--max-event-bytes": {
        const v = Number(value());
        if (!Number.isSafeInteger(v) || v <= 0) throw new UsageError("--max-event-bytes must be a positive integer");
        options.maxEventBytes = v;
        break;
      }
      case "--request":
        options.request = value();
        break;
      case "--keylog":
        options.keyLog = value();
        break;
      case "--connection": {
        const v = Number(value());
        if (!Number.isSafeInteger(v) || v <= 0) throw new UsageError("--connection must be a positive integer");
        options.connections.push(v);
        break;
      }
      case "--path":
      case "--resource": // the old spelling
        options.path = value();
        break;
      case "--proto":
        options.protoFiles.push(value());
        break;
      case "--proto-path":
        options.protoPaths.push(value());
        break;
      default:
        if (arg.startsWith("-") && arg !== "-") throw new UsageError(`unknown option ${JSON.stringify(arg)}`);
        options.files.push(arg);
    }
  }
  if (options.files.length === 0) throw new UsageError("no FILE given (use - for standard input)");
  return options;
}

/**
 * Runs the command with `args` (without the program name) and returns the exit status.
 *
 * @example
 * ```ts
 * import { runCli } from "watchwire/cli";
 *
 * const out: string[] = [];
 * const status = await runCli(["decode", "-"], {
 *   open: async () => new Blob(['{"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"a"}}}\n']).stream(),
 *   stdout: (t) => void out.push(t),
 *   stderr: (t) => void out.push(t),
 *   stdoutIsTerminal: false,
 *   version: "0.0.0",
 * });
 * console.log(status, out.join("")); // 0 {"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"a"}}}
 * ```
 */
export async function runCli(args: string[], host: CliHost): Promise<number> {
  if (args[0] === "watch") {
    let watchOptions: ReturnType<typeof parseWatchArgs>;
    try {
      watchOptions = parseWatchArgs(args.slice(1), host.stdoutIsTerminal);
    } catch (error) {
      if (!(error instanceof WatchUsageError)) throw error;
      await host.stderr(`watchwire: ${error.message}\n${WATCH_USAGE_HINT}`);
      return 2;
    }
    if (watchOptions === "help") {
      await host.stdout(USAGE);
      return 0;
    }
    return await runWatch(watchOptions, host);
  }
  let options: Options | "help" | "version";
  try {
    options = parseArgs(args, host);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    await host.stderr(`watchwire: ${error.message}\n${USAGE_HINT}`);
    return 2;
  }
  if (options === "help") {
    await host.stdout(USAGE);
    return 0;
  }
  if (options === "version") {
    await host.stdout(`watchwire ${host.version}\n`);
    return 0;
  }
  const out = new OutputBuffer(host, options.output === "table" ? tableHeader() : undefined);
  const open = async (file: string) => {
    try {
      return await host.open(file);
    } catch (error) {
      await cannotRead(file, error, out);
      return undefined;
    }
  };
  let keyLog: string | undefined;
  if (options.keyLog !== undefined) {
    const stream = await open(options.keyLog);
    if (stream === undefined) return 2;
    keyLog = await new Response(stream).text();
  }
  let grpc: GrpcDecoders | undefined;
  if (options.protoFiles.length > 0) {
    const readText = async (path: string) => {
      try {
        return await new Response(await host.open(path)).text();
      } catch {
        return undefined;
      }
    };
    try {
      grpc = await loadProtoFiles(options.protoFiles, options.protoPaths, readText);
    } catch (error) {
      await out.note(`watchwire: --proto: ${error instanceof Error ? error.message : String(error)}`);
      return 2;
    }
  }
  for (const file of options.files) {
    const input = await open(file);
    if (input === undefined) return 2;
    let request: ReadableStream<Uint8Array> | undefined;
    if (options.request !== undefined) {
      request = await open(options.request);
      if (request === undefined) {
        await input.cancel().catch(() => {});
        return 2;
      }
    }
    const status = await decodeFile(file, input, options, out, request, keyLog, grpc);
    if (status !== 0) return status;
  }
  await out.flush();
  return 0;
}

/**
 * Collects output lines and writes them in blocks: one write per event would dominate the run time. The Kubernetes
 * table heading is written before the first line that is not an etcd watch's own (those have their own heading), or
 * at the first flush if nothing was written before.
 */
class OutputBuffer {
  #text = "";
  #heading: string | undefined;
  #written = false;
  constructor(readonly host: CliHost, heading?: string) {
    this.#heading = heading;
  }
  /** Adds a line; `etcd`: a line of an etcd watch, which does not need the Kubernetes heading. */
  line(text: string, etcd = false): Promise<void> | undefined {
    if (!etcd && this.#heading !== undefined) {
      this.#text += this.#heading + "\n";
      this.#heading = undefined;
    }
    this.#text += text + "\n";
    this.#written = true;
    return this.#text.length >= 65536 ? this.flush() : undefined;
  }
  async flush(): Promise<void> {
    if (!this.#written && this.#heading !== undefined) {
      this.#text += this.#heading + "\n";
      this.#heading = undefined;
      this.#written = true;
    }
    if (this.#text === "") return;
    const text = this.#text;
    this.#text = "";
    await this.host.stdout(text);
  }
  async note(text: string): Promise<void> {
    await this.flush();
    await this.host.stderr(text + "\n");
  }
}

function isList(value: unknown): value is { kind?: string; items: unknown[] } {
  return typeof value === "object" && value !== null && Array.isArray((value as { items?: unknown }).items) &&
    !("type" in value);
}

/** JSON watch bodies, except that a List (what the "list" of list-watch returns) is noted rather than a fault. */
function cliJsonCodec(options: Options): WatchBodyCodec {
  const lines: NdjsonDecoderOptions<WatchEvent<unknown> | ListNote> = {
    maxEventBytes: options.maxEventBytes,
    map: (value) =>
      isList(value) ? { type: "LIST", kind: value.kind ?? "List", count: value.items.length } : toWatchEvent(value),
  };
  return (body) => body.pipeThrough(new NdjsonDecoderStream(lines)) as ReadableStream<WatchEvent<unknown>>;
}

/** The decoding options of every watch body: JSON and protobuf codecs that note Lists rather than fail on them. */
function cliDecodeOptions(options: Options): DecodeWatchOptions {
  const json = cliJsonCodec(options);
  return {
    maxEventBytes: options.maxEventBytes,
    protobuf: { decoders: builtinDecoders },
    codecs: {
      "application/json": json,
      "": json,
      [KUBERNETES_PROTOBUF_MEDIA_TYPE]: cliProtobufCodec(options.maxEventBytes),
      [CBOR_WATCH_MEDIA_TYPE]: cliCborCodec(options.maxEventBytes),
      "application/cbor": cliCborCodec(options.maxEventBytes),
    },
  };
}

/**
 * The media type of a body without headers: `--content-type`, else protobuf or CBOR if it starts as a watch of
 * theirs, else JSON.
 */
function bareContentType(options: Options, head: Uint8Array): string {
  if (options.contentType !== undefined) return options.contentType;
  if (isProtobufWatch(head)) return `${KUBERNETES_PROTOBUF_MEDIA_TYPE};stream=watch`;
  return isCborWatch(head) ? CBOR_WATCH_MEDIA_TYPE : "application/json";
}

/** Notes on stderr that `file` cannot be read (it could not be opened, or its first read failed): exit status 2. */
async function cannotRead(file: string, error: unknown, out: OutputBuffer): Promise<2> {
  await out.flush();
  await out.host.stderr(`watchwire: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}\n`);
  return 2;
}

async function decodeFile(
  file: string,
  input: ReadableStream<Uint8Array>,
  options: Options,
  out: OutputBuffer,
  request: ReadableStream<Uint8Array> | undefined,
  keyLog?: string,
  grpc?: GrpcDecoders,
): Promise<number> {
  let peeked: Awaited<ReturnType<typeof peek>>;
  try {
    peeked = await peek(input, Math.max(24, PROTOBUF_WATCH_HEAD_BYTES));
  } catch (error) {
    // Nothing decoded yet: the file's bytes could not be read at all (a read error, not a fault in them).
    await request?.cancel().catch(() => {});
    return cannotRead(file, error, out);
  }
  const { head, stream } = peeked;
  if (isCaptureFile(head)) {
    await request?.cancel().catch(() => {});
    if (options.output === "table") out.line(CAPTURE_TABLE_HEADING, true);
    const lines: CaptureOutput = {
      line: (text) => out.line(text, true),
      note: (text) => out.note(text),
      flush: () => out.flush(),
    };
    return await decodeCaptureFile(file, stream, { ...options, keyLog, grpc }, lines);
  }
  let start = 0;
  while (start < head.length && (head[start] === 13 || head[start] === 10)) start++;
  const isHttp = new TextDecoder().decode(head.subarray(start, start + 7)) === "HTTP/1.";
  const decodeOptions = cliDecodeOptions(options);
  const print = options.output === "table" ? formatTableRow : formatNdjson;

  const emit = async (events: ReadableStream<WatchEvent<unknown>>, label: string) => {
    for await (const event of events) {
      if ((event as unknown as ListNote).type === "LIST") {
        const note = event as unknown as ListNote;
        await out.note(`watchwire: ${file}: ${label}is a ${note.kind} of ${note.count} items, not a watch`);
        continue;
      }
      const pending = out.line(print(event));
      if (pending !== undefined) await pending;
    }
  };

  if (isHttp2(head)) return await decodeHttp2File(file, stream, request, options, out, decodeOptions, print);
  if (!isHttp) await request?.cancel().catch(() => {});

  if (!isHttp && options.payload === "etcd") {
    try {
      await emitEtcd(
        etcdWatchResponses(stream, undefined, options.maxEventBytes),
        options,
        out,
        (note) => out.note(`watchwire: ${file}: ${note}`),
      );
      return 0;
    } catch (error) {
      return fault(file, error, out, (e) => `byte ${e.offset}: ${e.detail}`);
    }
  }

  if (!isHttp) {
    const response = new Response(stream, { headers: { "content-type": bareContentType(options, head) } });
    try {
      await emit(decodeWatchResponse(response, decodeOptions), "");
      return 0;
    } catch (error) {
      return fault(file, error, out, (e) => `byte ${e.offset}: ${e.detail}`);
    }
  }

  let current: Http1Response | undefined;
  try {
    // With the client's bytes, responses to HEAD and CONNECT are framed as such, and tables show each request.
    for await (const { request: req, response } of decodeHttp1Exchanges(stream, request)) {
      current = response;
      const label = `response ${response.index + 1} (${response.status}) `;
      if (options.output === "table" && req !== undefined && !isInterim(response.status)) {
        out.line(`${req.method} ${req.target} (response ${response.index + 1})`);
      }
      // 101 before the other 1xx, which are skipped: after it the connection speaks another protocol.
      if (response.framing === "upgrade") {
        const what = response.status === 101 ? "switched protocols" : "opened a tunnel (CONNECT)";
        await out.note(`watchwire: ${file}: ${label}${what}; the rest of the connection is not HTTP/1.1`);
        await response.body.cancel();
        continue;
      }
      if (response.status < 200) {
        await response.body.cancel();
        continue;
      }
      await emit(decodeWatchResponse(response.toResponse(), decodeOptions), label);
    }
    return 0;
  } catch (error) {
    return fault(file, error, out, (e) => {
      // A fault with a context is placed in the connection's bytes (the connection's own, or its content coding's).
      if (e.context !== undefined || current === undefined) {
        return `byte ${e.offset}: ${e.detail}${e.context ? ` (in the ${e.context})` : ""}`;
      }
      // A fault in a body: its offset counts body bytes; say where that is in the file too.
      const where = current.decoded === undefined ? current.inputOffsetOf(e.offset) : undefined;
      const body = `byte ${e.offset} of the ${current.decoded ? `${current.decoded}-decoded ` : ""}body of response ${
        current.index + 1
      }`;
      return where === undefined ? `${body}: ${e.detail}` : `byte ${where}: ${e.detail} (${body})`;
    });
  }
}

async function fault(
  file: string,
  error: unknown,
  out: OutputBuffer,
  describe: (e: DecodeError) => string,
): Promise<number> {
  if (!(error instanceof DecodeError)) {
    await out.note(`watchwire: ${file}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  await out.note(`watchwire: ${file}: ${describe(error)} [${error.code}]`);
  return 1;
}

/** Prints the events of etcd watch responses (the heading, in table output, is the caller's). */
async function emitEtcd(
  responses: ReadableStream<EtcdWatchResponse>,
  options: Options,
  out: OutputBuffer,
  note: (text: string) => Promise<void> | void,
): Promise<void> {
  const print = options.output === "table" ? formatEtcdTableRow : formatEtcdNdjson;
  if (options.output === "table") out.line(etcdTableHeader(), true);
  for await (const response of responses) {
    for (const event of response.events) {
      const pending = out.line(print(event), true);
      if (pending !== undefined) await pending;
    }
    for (const text of etcdResponseNotes(response)) await note(text);
  }
}

const PREFACE_START = "PRI * HTTP/2.0";

/** An HTTP/2 direction: the client preface, or a first frame header that is a SETTINGS frame on stream 0. */
function isHttp2(head: Uint8Array): boolean {
  if (new TextDecoder().decode(head.subarray(0, PREFACE_START.length)) === PREFACE_START) return true;
  if (head.length < 9) return false;
  const length = (head[0] << 16) | (head[1] << 8) | head[2];
  const streamId = ((head[5] & 0x7f) << 24) | (head[6] << 16) | (head[7] << 8) | head[8];
  return head[3] === 0x4 && streamId === 0 && length % 6 === 0 && (head[4] & 0x1 ? length === 0 : true);
}

type Print = (event: WatchEvent<unknown>) => string;

/** One stream's printed lines, produced while earlier streams are still printing (streams interleave). */
class Section {
  readonly lines: string[] = [];
  /** The stream is read as an etcd watch. */
  etcd = false;
  done = false;
  error: unknown;
  /** The body was content-decoded (gzip, deflate) before its events: their faults' offsets count decoded bytes. */
  decoded: string | undefined;
  /** The error is the connection's (its offset counts bytes of the file), not the body's. */
  connectionFault = false;
  notes: string[] = [];
  #wake: (() => void) | undefined;
  constructor(readonly exchange: Http2Exchange) {}
  push(line: string): void {
    this.lines.push(line);
    this.wakeUp();
  }
  wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
  changed(): Promise<void> {
    return new Promise((resolve) => (this.#wake = resolve));
  }
}

async function decodeHttp2File(
  file: string,
  stream: ReadableStream<Uint8Array>,
  request: ReadableStream<Uint8Array> | undefined,
  options: Options,
  out: OutputBuffer,
  decodeOptions: DecodeWatchOptions,
  print: Print,
): Promise<number> {
  const sections: Section[] = [];
  let listed = false;
  let connectionError: { reason: unknown } | undefined;
  let wakePrinter: (() => void) | undefined;
  const wake = () => {
    const w = wakePrinter;
    wakePrinter = undefined;
    w?.();
  };

  // Each stream's body is read as soon as the stream starts: a stream left unread would hold up the others.
  const read = async (section: Section) => {
    const { streamId, response } = section.exchange;
    try {
      if (section.etcd) {
        await readEtcd(section);
        section.done = true;
        section.wakeUp();
        return;
      }
      let source: Response;
      if (response.headers === undefined) {
        const why = response.headersMissing
          ? "were not captured"
          : `could not be decoded (${response.headerError?.detail})`;
        const { head, stream } = await peek(response.body, PROTOBUF_WATCH_HEAD_BYTES);
        const type = bareContentType(options, head);
        section.notes.push(`stream ${streamId}: its headers ${why}; the body is read as ${type}`);
        source = new Response(stream, { headers: { "content-type": type } });
      } else {
        source = response.toResponse();
        section.decoded = contentCodingOf(response.headers);
      }
      for await (const event of decodeWatchResponse(source, decodeOptions)) {
        if ((event as unknown as ListNote).type === "LIST") {
          const note = event as unknown as ListNote;
          section.notes.push(`stream ${streamId} is a ${note.kind} of ${note.count} items, not a watch`);
          section.wakeUp();
          continue;
        }
        section.push(print(event));
      }
    } catch (error) {
      section.error = error;
      if (error instanceof DecodeError && error.code === "CONTENT_TYPE_UNSUPPORTED" && isGrpc(response.headers)) {
        section.notes.push(
          `stream ${streamId} is a gRPC call: --payload etcd reads gRPC streams as etcd watches, as --request FILE does ` +
            "for those whose :path is /etcdserverpb.Watch/Watch",
        );
      }
      // The connection's fault reaches its open bodies too; it has already settled `end` by then.
      const end = await Promise.race([response.end, Promise.resolve(undefined)]);
      section.connectionFault = end !== undefined && end.error === error;
    }
    section.done = true;
    section.wakeUp();
  };
  const readEtcd = async (section: Section) => {
    const { streamId, response } = section.exchange;
    const etcdPrint = options.output === "table" ? formatEtcdTableRow : formatEtcdNdjson;
    for await (
      const watch of etcdWatchResponses(response.body, grpcEncoding(response.headers), options.maxEventBytes)
    ) {
      for (const event of watch.events) section.push(etcdPrint(event));
      const notes = etcdResponseNotes(watch);
      if (notes.length > 0) {
        for (const text of notes) section.notes.push(`stream ${streamId}: ${text}`);
        section.wakeUp();
      }
    }
    const status = grpcStatusNote(response.headers, await response.trailers);
    if (status !== undefined) section.notes.push(`stream ${streamId}: ${status}`);
  };
  void (async () => {
    try {
      for await (const exchange of decodeHttp2Exchanges(stream, request, { serverPreface: "detect" })) {
        const section = new Section(exchange);
        section.etcd = isEtcdWatch(exchange, options.payload);
        sections.push(section);
        void read(section);
        wake();
      }
    } catch (error) {
      connectionError = { reason: error };
    }
    listed = true;
    wake();
  })();

  const describe = (section: Section | undefined) => (e: DecodeError) => {
    // A fault with a context is placed in the connection's bytes (the connection's own, or its content coding's).
    if (section === undefined || section.connectionFault || e === connectionError?.reason || e.context !== undefined) {
      return `byte ${e.offset}: ${e.detail}${e.context ? ` (in the ${e.context})` : ""}`;
    }
    // A fault in a body: its offset counts body bytes; say where that is in the file too (as for HTTP/1.1).
    const { streamId, response } = section.exchange;
    const where = section.decoded === undefined ? response.inputOffsetOf(e.offset) : undefined;
    const body = `byte ${e.offset} of the ${
      section.decoded ? `${section.decoded}-decoded ` : ""
    }body of stream ${streamId}`;
    return where === undefined ? `${body}: ${e.detail}` : `byte ${where}: ${e.detail} (${body})`;
  };
  for (let k = 0;; k++) {
    while (k >= sections.length && !listed) await new Promise<void>((resolve) => (wakePrinter = resolve));
    if (k >= sections.length) break;
    const section = sections[k];
    const { request: req, streamId } = section.exchange;
    if (options.output === "table" && req !== undefined) {
      out.line(`${req.method ?? "?"} ${req.path ?? "?"} (stream ${streamId})`, section.etcd);
    }
    if (options.output === "table" && section.etcd) out.line(etcdTableHeader(), true);
    let noted = 0;
    for (;;) {
      while (noted < section.notes.length) await out.note(`watchwire: ${file}: ${section.notes[noted++]}`);
      while (section.lines.length > 0) {
        const pending = out.line(section.lines.shift()!, section.etcd);
        if (pending !== undefined) await pending;
      }
      if (section.done) break;
      await section.changed();
    }
    while (noted < section.notes.length) await out.note(`watchwire: ${file}: ${section.notes[noted++]}`);
    const error = section.error;
    if (error instanceof Http2StreamError) {
      await out.note(`watchwire: ${file}: ${error.message}`);
    } else if (error !== undefined) {
      return fault(file, error, out, describe(section));
    }
  }
  if (connectionError !== undefined) return fault(file, connectionError.reason, out, describe(undefined));
  return 0;
}
