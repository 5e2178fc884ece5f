/**
 * {@linkcode list}: every object of a resource, by a paginated list, in JSON, protobuf or CBOR.
 *
 * @module
 */
import { decodeKubernetesProtobufList } from "../codec/kubernetes/decode_kubernetes_protobuf_list.ts";
import type { KubernetesProtobufOptions } from "../codec/kubernetes/protobuf_options.ts";
import { hasKubernetesProtobufMagic } from "../codec/kubernetes/envelope.ts";
import {
  decodeKubernetesCborObject,
  hasCborSelfDescribedTag,
} from "../codec/kubernetes/decode_kubernetes_cbor_object.ts";
import { parseMediaType } from "../codec/media_type.ts";
import { DecodeError } from "../errors.ts";
import type { KubernetesObject } from "../events.ts";
import type { ClusterConnection } from "./cluster_config.ts";
import { ClusterAccessError, describeCauses } from "./errors.ts";
import { type ListQuery, listUrl, type ResourceRef } from "./resource.ts";
import { responseError } from "./response_error.ts";
import { checkProtobufDecoders } from "./check_protobuf_decoders.ts";

/**
 * The Accept header of each wire format. Protobuf falls back to JSON for kinds that have no protobuf (CRDs); CBOR to
 * JSON where the server does not serve CBOR: kube-apiserver without its `CBORServingAndStorage` feature gate answers
 * `application/cbor, application/json` in JSON (and `application/cbor` alone with 406), with it in CBOR (a watch as
 * `application/cbor-seq`).
 */
export const ACCEPT = {
  json: "application/json",
  protobuf: "application/vnd.kubernetes.protobuf, application/json",
  cbor: "application/cbor, application/json",
} as const;

/**
 * Options of {@linkcode list}.
 *
 * @example
 * ```ts
 * import type { ListOptions } from "watchwire";
 *
 * // Pages of 500 in protobuf; a page silent for 30 s (no response, no byte of its body) fails the list (TIMEOUT).
 * const options: ListOptions = { format: "protobuf", pageSize: 500, labelSelector: "app=web", idleTimeoutMs: 30_000 };
 * console.log(options.format); // protobuf
 * ```
 */
export interface ListOptions extends Omit<ListQuery, "continue" | "limit"> {
  /**
   * The page size: at most this many objects per request, asked as the API's `limit` query parameter, each page after
   * the first by its `continue` token. Absent: one request for the whole list.
   */
  pageSize?: number;
  /**
   * The wire format asked for: `"json"` (the default), `"protobuf"` (JSON still, for kinds without protobuf) or
   * `"cbor"` (JSON still, from a server that does not serve CBOR: kube-apiserver serves it with its
   * `CBORServingAndStorage` feature gate on, built-in kinds and CRDs alike). Whatever is asked, each page is decoded
   * as its Content-Type says.
   */
  format?: "json" | "protobuf" | "cbor";
  /**
   * Options of the protobuf decoding: `decoders`, the kinds decoded (`createKubernetesDecoders([coreV1])`,
   * `builtinDecoders`), needed with `format: "protobuf"` unless `mode` is `"metadata"`; `mode`. See
   * {@linkcode KubernetesProtobufOptions}.
   */
  protobuf?: KubernetesProtobufOptions;
  /** Stops the list. */
  signal?: AbortSignal;
  /**
   * How often a list whose continue token expired (410) starts again from the first page; after that, one list
   * without `pageSize`, in one request (as client-go's pager does). Default 3.
   */
  restartsOnExpiredContinue?: number;
  /**
   * How often a page answered 429 or 5xx with a `Retry-After` header is asked again, after the seconds it says (30 at
   * most), as client-go's REST client does. Default 10.
   */
  maxRetries?: number;
  /**
   * Called as each page arrives, with its number of items (`items`) and the number so far (`total`); the next page
   * waits for its promise (a caller may pace the list). Not the watch loop's `onListProgress`, which is told the number
   * so far only and never waits: `resourceSource` calls that one from this.
   */
  onPage?(page: { items: number; total: number }): void | Promise<void>;
  /**
   * How long a page may keep silent, in milliseconds: the wait for its response (the status and headers), and each
   * wait for more of its body. A page silent for longer has its request aborted, and the list fails with a
   * `ClusterAccessError` `TIMEOUT` that names the page and the time (a stalled connection or server; the informer
   * lists again after its backoff). The name and meaning (no byte for this long) are those of the watch loop's
   * `idleTimeoutMs`, which the informer passes on to its lists. Default 60 000 (60 s): client-go sets no time limit
   * of its own on a list request, but kube-apiserver ends any request but a watch after its `--request-timeout`, 60 s
   * by default, so a page silent for longer is not coming. `Infinity` or 0: no limit.
   */
  idleTimeoutMs?: number;
}

/** The default of {@linkcode ListOptions.idleTimeoutMs}: kube-apiserver's default `--request-timeout`. */
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

/**
 * What {@linkcode list} returns: the items, and the list's resourceVersion (to watch from).
 *
 * @example
 * ```ts
 * import type { ListResult } from "watchwire";
 *
 * const result: ListResult = { apiVersion: "v1", kind: "PodList", resourceVersion: "42", items: [], pages: 1, restarts: 0 };
 * console.log(result.resourceVersion); // 42
 * ```
 */
export interface ListResult<T = KubernetesObject> {
  apiVersion: string;
  /** The list's kind, e.g. `ConfigMapList`. */
  kind: string;
  /** The resourceVersion the list was read at: a watch from it misses nothing and repeats nothing. */
  resourceVersion: string;
  /** Every object, each with its `apiVersion` and `kind` (which the server leaves out of a built-in list's items). */
  items: T[];
  /** How many requests it took. */
  pages: number;
  /** How often it started again after an expired continue token. */
  restarts: number;
}

type ListObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[] | null;
};

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/**
 * Whether a JSON body that did not parse is one cut short: nothing but whitespace, or a string or an object or array
 * still open at its end (a list is an object, so any part of one short of its end is). A body whose brackets close is
 * malformed rather than cut.
 */
function jsonCut(bytes: Uint8Array): boolean {
  let depth = 0;
  let inString = false;
  let any = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c) i++; // a backslash: the next byte is escaped
      else if (b === 0x22) inString = false;
      continue;
    }
    if (b === 0x22) inString = true;
    else if (b === 0x7b || b === 0x5b) depth++;
    else if (b === 0x7d || b === 0x5d) depth--;
    else if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
    any = true;
  }
  return !any || inString || depth > 0;
}

const MAGIC = [0x6b, 0x38, 0x73, 0];

/**
 * Whether a protobuf body (`k8s\0` + `runtime.Unknown`) is one cut short: the magic itself not whole, a field of the
 * envelope (its type, the list's own message `raw`) running past the end, or no `raw` at all (the server always
 * sends it, with the list's metadata in it, so a body without it ended before it). Only the envelope's fields are
 * walked: a cut lands in one of them, or between them.
 */
function protobufCut(bytes: Uint8Array): boolean {
  if (bytes.length < 4) return bytes.every((b, i) => b === MAGIC[i]);
  let at = 4;
  const varint = (): number | undefined => {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      if (at >= bytes.length) return undefined;
      const b = bytes[at++];
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
    return undefined;
  };
  let raw = false;
  while (at < bytes.length) {
    const tag = varint();
    if (tag === undefined) return true;
    if (Math.floor(tag / 8) === 2) raw = true;
    switch (tag % 8) {
      case 0:
        if (varint() === undefined) return true;
        break;
      case 1:
        at += 8;
        break;
      case 2: {
        const n = varint();
        if (n === undefined) return true;
        at += n;
        break;
      }
      case 5:
        at += 4;
        break;
      default:
        return false; // groups, or no wire type at all: malformed, not cut
    }
    if (at > bytes.length) return true;
  }
  return !raw;
}

/** How a page's request waits for the server, and gives up: see {@linkcode ListOptions.idleTimeoutMs}. */
class PageWatchdog {
  /** The request's signal: aborted by the caller's, and when the page is silent for too long. */
  readonly signal: AbortSignal;
  /** The error once the page was silent for too long (the request is then aborted with it). */
  expired: ClusterAccessError | undefined;
  /** Bytes of the body read so far. */
  bytes = 0;
  /** Whether the response (its status and headers) came. */
  answered = false;
  /** Called when the page was silent for too long (a body read in progress is cancelled: a fetch may ignore its signal). */
  onExpiry: (() => void) | undefined;
  readonly #own = new AbortController();
  readonly #caller: AbortSignal | undefined;
  readonly #follow = () => this.#own.abort(this.#caller!.reason);
  readonly #idleTimeoutMs: number;
  readonly #where: string;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #last = Date.now();
  #expiredPromise: Promise<never> | undefined;
  #reject: ((error: unknown) => void) | undefined;

  constructor(idleTimeoutMs: number, caller: AbortSignal | undefined, where: string) {
    this.#caller = caller;
    this.#idleTimeoutMs = idleTimeoutMs;
    this.#where = where;
    this.signal = this.#own.signal;
    if (caller?.aborted) this.#own.abort(caller.reason);
    else caller?.addEventListener("abort", this.#follow, { once: true });
    // One timer for the page, not one per chunk: when it fires, it looks at when the last byte came, and is set again
    // for the rest of the time if one came since.
    if (Number.isFinite(idleTimeoutMs) && idleTimeoutMs > 0) this.#timer = setTimeout(this.#check, idleTimeoutMs);
  }

  #check = (): void => {
    const waited = Date.now() - this.#last;
    if (waited < this.#idleTimeoutMs) {
      this.#timer = setTimeout(this.#check, this.#idleTimeoutMs - waited);
      return;
    }
    this.#timer = undefined;
    this.expired = new ClusterAccessError(
      "TIMEOUT",
      this.answered
        ? `${this.#where}: no byte of the response body for ${this.#idleTimeoutMs} ms (idleTimeoutMs), after ` +
          `${this.bytes} bytes: the request was aborted`
        : `${this.#where}: no response for ${this.#idleTimeoutMs} ms (idleTimeoutMs): the request was aborted`,
    );
    this.#own.abort(this.expired);
    this.#reject?.(this.expired);
    this.onExpiry?.();
  };

  /** Something came: the silence counts from now. */
  heard(): void {
    this.#last = Date.now();
  }

  /** `promise`, or the timeout error if the page is silent for too long first (a fetch may ignore its signal). */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.#timer === undefined && this.expired === undefined) return promise;
    this.#expiredPromise ??= new Promise<never>((_, reject) => {
      if (this.expired !== undefined) reject(this.expired);
      else this.#reject = reject;
    });
    return Promise.race([promise, this.#expiredPromise]);
  }

  /** The page is read, or failed: no more timer, no listener on the caller's signal. */
  done(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#caller?.removeEventListener("abort", this.#follow);
  }
}

async function readPage(
  connection: ClusterConnection,
  url: URL,
  options: ListOptions,
  what: string,
  page: number,
  retries: number,
): Promise<{ expired: boolean; page?: ListObject }> {
  const headers = await connection.headers();
  headers.set("accept", ACCEPT[options.format ?? "json"]);
  /** The page, for errors about it: its number, and its URL with its continue token. */
  const where = `${what}, page ${page} (${url})`;
  const watchdog = new PageWatchdog(options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, options.signal, where);
  try {
    let response: Response;
    try {
      response = await watchdog.race(connection.fetch(url, { headers, signal: watchdog.signal }));
    } catch (e) {
      if (watchdog.expired) throw watchdog.expired;
      // An abort stays one; connectCluster's fetch has typed its failure already (CLOSED, REQUEST_FAILED, ...).
      if (options.signal?.aborted || e instanceof ClusterAccessError) throw e;
      throw new ClusterAccessError(
        "REQUEST_FAILED",
        `${what}: ${url.origin} could not be reached: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
    watchdog.answered = true;
    watchdog.heard();
    if (response.headers.has("retry-after") && (response.status === 429 || response.status >= 500) && retries > 0) {
      // client-go's rule: an answer with Retry-After is tried again after that many seconds, a few times.
      const seconds = Number(response.headers.get("retry-after"));
      await response.body?.cancel();
      watchdog.done();
      await sleep(Math.min(Number.isFinite(seconds) && seconds >= 0 ? seconds : 1, 30) * 1000, options.signal);
      return await readPage(connection, url, options, what, page, retries - 1);
    }
    if (response.status === 410 && url.searchParams.has("continue")) {
      await response.body?.cancel();
      return { expired: true };
    }
    // The Status in the body is read within the page's time as well.
    if (!response.ok) throw await watchdog.race(responseError(response, what));
    let bytes: Uint8Array;
    try {
      bytes = await readBody(response, watchdog);
    } catch (e) {
      const name = (e as { name?: unknown } | null)?.name;
      if (watchdog.expired) throw watchdog.expired;
      if (options.signal?.aborted || e instanceof ClusterAccessError || name === "AbortError") throw e;
      // As watch() says it: one error in every runtime (undici's `terminated`, Deno's and Bun's own words as the cause).
      throw new ClusterAccessError(
        "CONNECTION_LOST",
        `${where}: the connection was lost after ${watchdog.bytes} bytes of the response body (${describeCauses(e)})`,
        { cause: e },
      );
    }
    return {
      expired: false,
      page: decodePage(bytes, response.headers.get("content-type"), options, what, where),
    };
  } finally {
    watchdog.done();
  }
}

/** A response's body, read to its end, each chunk heard by the watchdog. */
async function readBody(response: Response, watchdog: PageWatchdog): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array(0);
  const reader = response.body.getReader();
  // A fetch may not end a body read on its signal: a cancel does (the read then ends as done).
  watchdog.onExpiry = () => reader.cancel(watchdog.expired).catch(() => {});
  const chunks: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (watchdog.expired) throw watchdog.expired;
    if (done) break;
    chunks.push(value);
    watchdog.bytes += value.length;
    watchdog.heard();
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(watchdog.bytes);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/**
 * A list page's body, decoded (protobuf by its magic, CBOR by its Content-Type or its self-described tag, JSON
 * otherwise). A body cut short (its connection ended inside it, cleanly: the last chunk, END_STREAM, a close) is
 * `CONNECTION_LOST`, saying where it ended; a body malformed otherwise throws as its decoder does.
 */
function decodePage(
  bytes: Uint8Array,
  contentType: string | null,
  options: ListOptions,
  what: string,
  where: string,
): ListObject {
  const cut = (why: string, cause?: unknown) =>
    new ClusterAccessError(
      "CONNECTION_LOST",
      `${where}: the response body ended after ${bytes.length} bytes, inside the list (${why}): the connection was ` +
        "cut, or the answer truncated",
      cause === undefined ? {} : { cause },
    );
  let page: ListObject;
  if (hasKubernetesProtobufMagic(bytes)) {
    // A List whose kind the decoders know decodes in full, its items whole (so a metadata-only informer's list sync
    // holds whole objects where it can); one they do not know (metadata mode without decoders), item by item, each
    // in the options' mode.
    try {
      page = decodeKubernetesProtobufList(bytes, options.protobuf) as ListObject;
    } catch (e) {
      if (protobufCut(bytes)) throw cut(describeCauses(e), e);
      throw e;
    }
    // A cut between the envelope's fields decodes: as a list without its message (no metadata, no items).
    if (protobufCut(bytes)) throw cut("protobuf: the envelope ends before the list's message");
  } else if (parseMediaType(contentType).essence === "application/cbor" || hasCborSelfDescribedTag(bytes)) {
    if (bytes.length === 0) throw cut("CBOR: no data item");
    try {
      page = decodeKubernetesCborObject<ListObject>(bytes);
    } catch (e) {
      if (e instanceof DecodeError && e.code === "TRUNCATED") throw cut(describeCauses(e), e);
      throw e;
    }
  } else {
    try {
      page = JSON.parse(new TextDecoder().decode(bytes)) as ListObject;
    } catch (e) {
      // A protobuf body cut inside its 4-byte magic is no protobuf yet.
      if (jsonCut(bytes) || (bytes.length < 4 && protobufCut(bytes))) throw cut(describeCauses(e), e);
      throw e;
    }
  }
  // Protobuf cannot tell an empty list from none: the server's JSON says [] for both.
  if (page !== null && typeof page === "object" && (page.items === undefined || page.items === null)) page.items = [];
  if (page === null || typeof page !== "object" || !Array.isArray(page.items)) {
    throw new ClusterAccessError("STATUS", `${what}: the answer is not a list (kind ${JSON.stringify(page?.kind)})`);
  }
  return page;
}

/**
 * Lists every object of a resource: page by page (`pageSize` objects a page, then each `continue` token), in JSON,
 * protobuf or CBOR. A continue token that expired (410, when etcd compacted the list's revision) starts the list
 * again. A failed request is a `ClusterAccessError` with the server's Status message (`UNAUTHORIZED` for a 401,
 * `FORBIDDEN` for a 403). A page whose body breaks off is `CONNECTION_LOST`, in every runtime alike, naming the page
 * (its number and URL, with its continue token) and the bytes read: the body failed (the connection reset; the
 * runtime's own error its `cause`), or ended cleanly inside the list (a cut JSON, protobuf or CBOR body; the decoder's
 * error its `cause`). A page silent for longer than `idleTimeoutMs` (60 s by default: no response, or no byte of its
 * body) has its request aborted and is `TIMEOUT`. An abort of `signal` stays one. `format: "protobuf"` needs
 * `protobuf.decoders` (the kinds to decode) unless `protobuf.mode` is `"metadata"`: without them the list rejects at
 * once with a `USAGE` error.
 *
 * @example
 * ```ts
 * import { list, type ClusterConnection } from "watchwire";
 *
 * // A connection whose fetch answers from memory: two pages of ConfigMaps.
 * const pages = [
 *   { kind: "ConfigMapList", apiVersion: "v1", metadata: { resourceVersion: "7", continue: "next" }, items: [{ metadata: { name: "a" } }] },
 *   { kind: "ConfigMapList", apiVersion: "v1", metadata: { resourceVersion: "7" }, items: [{ metadata: { name: "b" } }] },
 * ];
 * const connection: ClusterConnection = {
 *   server: "https://127.0.0.1:6443",
 *   headers: async () => new Headers(),
 *   fetch: async (input) => Response.json(pages[new URL(String(input)).searchParams.has("continue") ? 1 : 0]),
 *   close: async () => {},
 * };
 * const result = await list(connection, { version: "v1", resource: "configmaps" }, { pageSize: 1 });
 * console.log(result.items.map((o) => o.metadata?.name), result.items[0].kind, result.resourceVersion); // [ "a", "b" ] ConfigMap 7
 * ```
 */
export async function list<T = KubernetesObject>(
  connection: ClusterConnection,
  ref: ResourceRef,
  options: ListOptions = {},
): Promise<ListResult<T>> {
  const {
    format: _f,
    protobuf: _p,
    signal: _s,
    maxRetries: _m,
    idleTimeoutMs: _i,
    restartsOnExpiredContinue = 3,
    pageSize,
    onPage,
    ...query
  } = options;
  const what = `list ${ref.group ? `${ref.resource}.${ref.group}` : ref.resource}${
    ref.namespace === undefined ? "" : ` in namespace ${ref.namespace}`
  }`;
  checkProtobufDecoders(what, options.format, options.protobuf);
  let restarts = 0;
  let pages = 0;
  /** False once the list restarted too often: then one request for the whole list. */
  let paged = true;
  restart: for (;;) {
    const items: unknown[] = [];
    let first: ListObject | undefined;
    let continueToken: string | undefined;
    let page = 0;
    do {
      const url = listUrl(connection.server, ref, {
        ...query,
        limit: paged ? pageSize : undefined,
        continue: continueToken,
      });
      // A continued page is read at the first page's resourceVersion: the query's own would be refused with it.
      if (continueToken !== undefined) {
        url.searchParams.delete("resourceVersion");
        url.searchParams.delete("resourceVersionMatch");
      }
      const read = await readPage(connection, url, options, what, ++page, options.maxRetries ?? 10);
      pages++;
      if (read.expired || read.page === undefined) {
        restarts++;
        if (restarts > restartsOnExpiredContinue) paged = false;
        continue restart;
      }
      first ??= read.page;
      items.push(...read.page.items!);
      await onPage?.({ items: read.page.items!.length, total: items.length });
      continueToken = read.page.metadata?.continue || undefined;
    } while (continueToken !== undefined);
    const apiVersion = first!.apiVersion ?? (ref.group ? `${ref.group}/${ref.version}` : ref.version);
    const listKind = first!.kind ?? "List";
    const itemKind = listKind.endsWith("List") ? listKind.slice(0, -4) : undefined;
    for (const item of items as KubernetesObject[]) {
      // The server leaves a built-in list's items without apiVersion and kind; a watch event's object has them.
      if (item.apiVersion === undefined) item.apiVersion = apiVersion;
      if (item.kind === undefined && itemKind !== undefined) item.kind = itemKind;
    }
    return {
      apiVersion,
      kind: listKind,
      resourceVersion: first!.metadata?.resourceVersion ?? "",
      items: items as T[],
      pages,
      restarts,
    };
  }
}
