/**
 * What the capture viewer shows of a capture, gathered from the items `decodeCapture` yields: the events in lanes by
 * resource, the connections, the problems and gaps, the summary, and the time the capture spans. No DOM:
 * scripts/capture-viewer-check.ts gathers Node's decoding of the same file with it, to compare with the page's.
 *
 * @module
 */
import type { CaptureItem, CaptureTime } from "watchwire/capture";
import { laneOfEtcdKey, resourceOfPath } from "./resource_lane.ts";

/** An item that the timeline shows as an event. */
export type TimelineItem = Extract<CaptureItem, { kind: "event" | "etcd" | "grpc" }>;

/** One event of the timeline. */
export interface ViewEvent {
  /** Its place among all the capture's events (from 0). */
  readonly index: number;
  /** The lane (resource) it belongs to: see resource_lane.ts. */
  readonly lane: string;
  /** `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`; `PUT`, `DELETE` (etcd); `MESSAGE` (another gRPC call). */
  readonly type: string;
  /** The object's name (an etcd event: its key; `ERROR`: the Status's code and reason), if it has one. */
  readonly name: string | undefined;
  /** Its capture time in milliseconds since the epoch. */
  readonly ms: number;
  /** The item itself. */
  readonly item: TimelineItem;
}

/** A connection of the capture, as its items told it. */
export interface ViewConnection {
  readonly opened: Extract<CaptureItem, { kind: "connection" }>;
  tls: Extract<CaptureItem, { kind: "tls" }> | undefined;
  readonly responses: Extract<CaptureItem, { kind: "response" }>[];
  closed: Extract<CaptureItem, { kind: "close" }> | undefined;
  /** Whether its bytes were neither HTTP/1.1 nor HTTP/2. */
  unknownProtocol: boolean;
}

/** Everything the viewer shows of one capture. */
export interface CaptureView {
  readonly events: ViewEvent[];
  /** The lanes in order of their first event, each with its events in capture order. */
  readonly lanes: Map<string, ViewEvent[]>;
  readonly connections: Map<number, ViewConnection>;
  readonly problems: Extract<CaptureItem, { kind: "problem" }>[];
  readonly gaps: Extract<CaptureItem, { kind: "gap" }>[];
  summary: Extract<CaptureItem, { kind: "summary" }> | undefined;
  /** Why the capture could not be read to its end (a malformed file), if it could not. */
  error: string | undefined;
  /** The first and last capture time of any item, in milliseconds since the epoch (`NaN` before any). */
  start: number;
  end: number;
}

/** A capture time in milliseconds since the epoch. */
export function captureTimeMs(time: CaptureTime): number {
  return time.seconds * 1000 + time.nanoseconds / 1e6;
}

/** An empty view, filled in by {@linkcode addCaptureItem}. */
export function emptyCaptureView(): CaptureView {
  return {
    events: [],
    lanes: new Map(),
    connections: new Map(),
    problems: [],
    gaps: [],
    summary: undefined,
    error: undefined,
    start: NaN,
    end: NaN,
  };
}

const keyText = new TextDecoder();

/** Adds one item of `decodeCapture` to `view`. */
export function addCaptureItem(view: CaptureView, item: CaptureItem): void {
  if ("time" in item) {
    const ms = captureTimeMs(item.time);
    if (!(ms >= view.start)) view.start = ms;
    if (!(ms <= view.end)) view.end = ms;
  }
  switch (item.kind) {
    case "connection":
      view.connections.set(item.connection, {
        opened: item,
        tls: undefined,
        responses: [],
        closed: undefined,
        unknownProtocol: false,
      });
      return;
    case "tls": {
      const c = view.connections.get(item.connection);
      if (c !== undefined) c.tls = item;
      return;
    }
    case "response":
      view.connections.get(item.connection)?.responses.push(item);
      return;
    case "close": {
      const c = view.connections.get(item.connection);
      if (c !== undefined) c.closed = item;
      return;
    }
    case "unknown-protocol": {
      const c = view.connections.get(item.connection);
      if (c !== undefined) c.unknownProtocol = true;
      return;
    }
    case "problem":
      view.problems.push(item);
      return;
    case "gap":
      view.gaps.push(item);
      return;
    case "summary":
      view.summary = item;
      return;
    case "event":
    case "etcd":
    case "grpc": {
      let lane: string;
      let type: string;
      let name: string | undefined;
      if (item.kind === "event") {
        lane = resourceOfPath(item.path);
        type = item.event.type;
        name = kubernetesName(item.event.object);
      } else if (item.kind === "etcd") {
        name = keyText.decode(item.event.kv.key);
        lane = laneOfEtcdKey(name);
        type = item.event.type;
      } else {
        lane = `gRPC ${item.path ?? "(request not in the capture)"}`;
        type = "MESSAGE";
      }
      const event: ViewEvent = { index: view.events.length, lane, type, name, ms: captureTimeMs(item.time), item };
      view.events.push(event);
      const events = view.lanes.get(lane);
      if (events === undefined) view.lanes.set(lane, [event]);
      else events.push(event);
      return;
    }
  }
}

/**
 * Reads all of `items` into a view; `onProgress` is called now and then with the view so far. A stream that fails (a
 * malformed capture file) leaves what came before the fault, and the fault in `error`; once `signal` is aborted, the
 * stream is cancelled and the view is what came before.
 */
export async function collectCaptureView(
  items: ReadableStream<CaptureItem>,
  onProgress?: (view: CaptureView) => void,
  signal?: AbortSignal,
): Promise<CaptureView> {
  const view = emptyCaptureView();
  let count = 0;
  try {
    for await (const item of items) {
      if (signal?.aborted) break;
      addCaptureItem(view, item);
      if (onProgress !== undefined && ++count % 256 === 0) onProgress(view);
    }
  } catch (error) {
    view.error = describeError(error);
  }
  return view;
}

/** An error's message, with a `DecodeError`'s code. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? `${error.message} [${code}]` : error.message;
}

/** The name of a watch event's object: `metadata.name`, or for a `Status` its code and reason. */
function kubernetesName(object: unknown): string | undefined {
  if (object === null || typeof object !== "object") return undefined;
  const o = object as { kind?: unknown; metadata?: { name?: unknown }; code?: unknown; reason?: unknown };
  if (typeof o.metadata?.name === "string") return o.metadata.name;
  if (o.kind === "Status") return [o.code, o.reason].filter((p) => p !== undefined && p !== "").join(" ") || undefined;
  return undefined;
}
