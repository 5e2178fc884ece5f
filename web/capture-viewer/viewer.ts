/// <reference lib="dom" />
/**
 * The capture viewer's page: a capture file (pcap, pcapng) and a key log, dropped or picked (or, with
 * `?capture=URL&keylog=URL`, fetched), decoded in the browser by `decodeCapture` of watchwire/capture, and shown as a
 * timeline of events per resource with a filter, the list of events, the object of the event picked as JSON, the
 * problems and gaps, and the summary.
 *
 * When done, `<body data-state="done">` (`"failed"` if the files could not be read); with `?report=URL`, the page
 * then POSTs a {@linkcode CaptureViewReport} of what it drew to URL (scripts/capture-viewer-check.ts reads it).
 * `?mode=metadata` starts in protobuf metadata mode, `?filter=TEXT` with that filter.
 *
 * Bundled with the library as published by scripts/build-capture-viewer.mjs; no eval, no inline script or style.
 *
 * @module
 */
import type { KubernetesProtobufOptions } from "watchwire";
import { decodeCapture } from "watchwire/capture";
import { builtinDecoders } from "watchwire/kubernetes";
import { type CaptureViewReport, captureViewReport } from "./capture_report.ts";
import { type CaptureView, collectCaptureView, describeError, type ViewEvent } from "./capture_view.ts";
import { element } from "./element.ts";
import { eventFilter } from "./event_filter.ts";
import { EventTable } from "./event_table.ts";
import { objectJsonText } from "./object_json.ts";
import { relativeSeconds, Timeline } from "./timeline.ts";

/** A capture to read: a file's or a URL's. */
interface CaptureSource {
  readonly name: string;
  open(): Promise<ReadableStream<Uint8Array>>;
}

/** What is drawn: the view and its parts, for the filter and the selection. */
interface Shown {
  readonly view: CaptureView;
  readonly timeline: Timeline;
  readonly table: EventTable;
  readonly protobuf: KubernetesProtobufOptions;
}

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const page = {
  status: byId("status"),
  result: byId("result"),
  summary: byId("summary"),
  connections: byId<HTMLUListElement>("connections"),
  filter: byId<HTMLInputElement>("filter"),
  filterCount: byId("filter-count"),
  legend: byId<HTMLUListElement>("legend"),
  timeline: byId("timeline"),
  events: byId<HTMLTableElement>("events"),
  eventsMore: byId("events-more"),
  objectWhere: byId("object-where"),
  object: byId("object"),
  problems: byId<HTMLUListElement>("problems"),
  gaps: byId<HTMLUListElement>("gaps"),
  noProblems: byId("no-problems"),
  captureInput: byId<HTMLInputElement>("capture-input"),
  keyLogInput: byId<HTMLInputElement>("keylog-input"),
  metadataMode: byId<HTMLInputElement>("metadata-mode"),
  dropOverlay: byId("drop-overlay"),
};

/** Connections listed in the summary at most. */
const MAX_CONNECTIONS_LISTED = 200;
/** The event types in the legend's order; others (gRPC messages) come after. */
const TYPE_ORDER = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "PUT", "DELETE"];

let capture: CaptureSource | undefined;
/** What the Content-Security-Policy refused, if the page is served with one: reported with `?report=URL`. */
const cspViolations: string[] = [];
document.addEventListener("securitypolicyviolation", (e) => {
  cspViolations.push(`${e.effectiveDirective}: ${e.blockedURI || "(inline)"} at ${e.sourceFile}:${e.lineNumber}`);
});
let keyLog: { name: string; text: string } | undefined;
let shown: Shown | undefined;
let running: AbortController | undefined;

function setState(state: "idle" | "decoding" | "done" | "failed", status: string): void {
  document.body.dataset.state = state;
  page.status.textContent = status;
}

/** Decodes the current capture with the current key log, and shows it. */
async function decodeAndShow(): Promise<CaptureView | undefined> {
  if (capture === undefined) return undefined;
  running?.abort();
  const controller = new AbortController();
  running = controller;
  const source = capture;
  const keys = keyLog === undefined ? "no key log" : `key log ${keyLog.name}`;
  setState("decoding", `Decoding ${source.name} (${keys})…`);
  const protobuf: KubernetesProtobufOptions = {
    decoders: builtinDecoders,
    mode: page.metadataMode.checked ? "metadata" : "full",
  };
  const items = decodeCapture(await source.open(), { keyLog: keyLog?.text, protobuf });
  const view = await collectCaptureView(
    items,
    (soFar) => {
      page.status.textContent = `Decoding ${source.name} (${keys}): ${soFar.events.length} events so far…`;
    },
    controller.signal,
  );
  if (controller.signal.aborted) return undefined;
  show(view, protobuf);
  const done = view.error === undefined ? "decoded" : "read up to a fault";
  setState("done", `${source.name} (${keys}): ${done}.`);
  return view;
}

function show(view: CaptureView, protobuf: KubernetesProtobufOptions): void {
  page.result.hidden = false;
  showSummary(view);
  showProblems(view);
  page.legend.replaceChildren(
    ...[...new Set(view.events.map((e) => e.type))]
      .sort((a, b) => typeOrder(a) - typeOrder(b) || a.localeCompare(b))
      .map((type) => element("li", { dataset: { type } }, element("span", { className: "swatch" }), type)),
  );
  const select = (event: ViewEvent) => selectEvent(event);
  const timeline = new Timeline(page.timeline, view, select);
  const table = new EventTable(page.events.tBodies[0], page.eventsMore, view.start, select);
  shown = { view, timeline, table, protobuf };
  applyFilter();
  page.object.textContent = "";
  page.objectWhere.textContent = view.events.length === 0 ? "No watch events in this capture." : "Click an event.";
  if (view.events.length > 0) selectEvent(view.events[0]);
}

const typeOrder = (type: string) => {
  const i = TYPE_ORDER.indexOf(type);
  return i < 0 ? TYPE_ORDER.length : i;
};

function showSummary(view: CaptureView): void {
  const s = view.summary;
  const parts: string[] = [];
  if (s !== undefined) {
    const skipped = Object.entries(s.skipped).filter(([, n]) => n > 0).map(([why, n]) => `${n} ${why}`);
    parts.push(
      `${plural(s.packets, "packet")}${skipped.length > 0 ? ` (skipped: ${skipped.join(", ")})` : ""}, ` +
        `${plural(s.connections, "connection")}, ${plural(s.responses, "response")}, ${plural(s.events, "event")}, ` +
        `${plural(s.gaps, "gap")}.`,
    );
  } else {
    parts.push(
      `${plural(view.connections.size, "connection")}, ${plural(view.events.length, "event")} before the fault.`,
    );
  }
  if (!Number.isNaN(view.start)) {
    parts.push(`From ${new Date(view.start).toISOString()}, over ${((view.end - view.start) / 1000).toFixed(3)} s.`);
  }
  page.summary.textContent = parts.join(" ");
  const listed = [...view.connections.values()].slice(0, MAX_CONNECTIONS_LISTED).map((c) => {
    const o = c.opened;
    const tls = c.tls === undefined
      ? o.transport === "tls" ? ", TLS (handshake not seen)" : ", in the clear"
      : `, TLS ${c.tls.version} ${c.tls.cipherSuite}${c.tls.alpn === undefined ? "" : `, ALPN ${c.tls.alpn}`}`;
    const responses = c.responses.map((r) =>
      `${r.method ?? "?"} ${r.path ?? "?"} (HTTP/${r.http}, ${r.status ?? "?"}${r.watch ? ", watch" : ""})`
    );
    const end = c.closed === undefined ? "" : `; closed (${c.closed.reason})`;
    const unknown = c.unknownProtocol ? "; neither HTTP/1.1 nor HTTP/2: skipped" : "";
    return element(
      "li",
      {},
      `#${o.connection} ${o.client}:${o.clientPort} → ${o.server}:${o.serverPort}${tls}` +
        `${responses.length > 0 ? `: ${responses.join("; ")}` : ""}${end}${unknown}`,
    );
  });
  if (view.connections.size > MAX_CONNECTIONS_LISTED) {
    listed.push(element("li", {}, `and ${view.connections.size - MAX_CONNECTIONS_LISTED} more connections`));
  }
  page.connections.replaceChildren(...listed);
}

function showProblems(view: CaptureView): void {
  page.problems.replaceChildren(
    ...view.problems.map((p) => element("li", { className: "problem" }, p.message)),
    ...(view.error === undefined ? [] : [element("li", { className: "error" }, `The capture file: ${view.error}`)]),
  );
  page.gaps.replaceChildren(
    ...view.gaps.map((g) =>
      element(
        "li",
        { className: "gap" },
        `connection ${g.connection}: ${g.length} bytes of the ${g.direction}'s missing from the capture at its byte ` +
          `${g.streamOffset} (${relativeSeconds(captureMs(g.time), view.start)})`,
      )
    ),
  );
  page.noProblems.hidden = view.problems.length + view.gaps.length > 0 || view.error !== undefined;
}

const captureMs = (time: { seconds: number; nanoseconds: number }) => time.seconds * 1000 + time.nanoseconds / 1e6;

/** Shows only the events the filter's words let through (event_filter.ts). */
function applyFilter(): void {
  if (shown === undefined) return;
  const all = shown.view.events;
  const keep = eventFilter(page.filter.value);
  const count = shown.timeline.filter(keep);
  const listed = all.filter(keep);
  shown.table.show(listed);
  page.filterCount.textContent = listed.length === all.length
    ? plural(all.length, "event")
    : `${count} of ${plural(all.length, "event")}`;
}

/** `1 event`, `2 events`. */
const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

function selectEvent(event: ViewEvent): void {
  if (shown === undefined) return;
  shown.timeline.select(event);
  shown.table.select(event);
  const { item } = event;
  page.objectWhere.textContent = `${event.type}${event.name === undefined ? "" : ` ${event.name}`}: ` +
    `${new Date(event.ms).toISOString()} (${relativeSeconds(event.ms, shown.view.start)}), connection ` +
    `${item.connection}, stream ${item.stream}${item.path === undefined ? "" : `, ${item.method ?? "?"} ${item.path}`}`;
  try {
    page.object.textContent = objectJsonText(item, shown.protobuf);
  } catch (error) {
    page.object.textContent = `(could not be shown: ${describeError(error)})`;
  }
}

/** What the page drew, for `?report=URL`. */
function reportOf(name: string, view: CaptureView): CaptureViewReport {
  const report = captureViewReport(name, view);
  if (shown !== undefined) {
    for (const [lane, markers] of shown.timeline.markersPerLane()) {
      const entry = report.lanes[lane];
      if (entry !== undefined) entry.markers = markers;
    }
  }
  report.problems = [...page.problems.querySelectorAll("li.problem")].map((li) => li.textContent ?? "");
  report.gaps = page.gaps.querySelectorAll("li.gap").length;
  report.cspViolations = [...cspViolations];
  report.filter = page.filter.value;
  report.visibleMarkers = page.timeline.querySelectorAll(".marker:not([hidden])").length;
  report.listedRows = page.events.tBodies[0].rows.length;
  if (view.events.length > 0) {
    try {
      const object = JSON.parse(page.object.textContent ?? "") as { metadata?: { name?: unknown } } | null;
      report.firstObject = object;
      report.firstObjectName = typeof object?.metadata?.name === "string" ? object.metadata.name : null;
    } catch {
      report.firstObject = page.object.textContent;
    }
  }
  return report;
}

// Files: picked, or dropped anywhere on the page (the capture told from the key log by its first bytes).

const CAPTURE_MAGICS = [0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1, 0x0a0d0d0a];

async function isCaptureFile(file: Blob): Promise<boolean> {
  const head = new Uint8Array(await file.slice(0, 4).arrayBuffer());
  return head.length === 4 && CAPTURE_MAGICS.includes(new DataView(head.buffer).getUint32(0));
}

const fileSource = (file: File): CaptureSource => ({ name: file.name, open: () => Promise.resolve(file.stream()) });

async function useFiles(files: readonly File[]): Promise<void> {
  let changed = false;
  for (const file of files) {
    if (await isCaptureFile(file)) capture = fileSource(file);
    else keyLog = { name: file.name, text: await file.text() };
    changed = true;
  }
  if (!changed) return;
  if (capture === undefined) setState("idle", `Key log ${keyLog?.name} read: now the capture.`);
  else await run(decodeAndShow());
}

/** Runs a decoding, showing a failure to read the files as the page's state. */
async function run<T>(task: Promise<T>): Promise<T | undefined> {
  try {
    return await task;
  } catch (error) {
    setState("failed", `Could not read the capture: ${describeError(error)}`);
    return undefined;
  }
}

page.captureInput.addEventListener("change", () => {
  const file = page.captureInput.files?.[0];
  if (file === undefined) return;
  capture = fileSource(file);
  void run(decodeAndShow());
});
page.keyLogInput.addEventListener("change", async () => {
  const file = page.keyLogInput.files?.[0];
  if (file === undefined) return;
  await useFiles([file]);
});
page.metadataMode.addEventListener("change", () => void run(decodeAndShow()));
page.filter.addEventListener("input", applyFilter);

let dragDepth = 0;
document.addEventListener("dragenter", (e) => {
  e.preventDefault();
  dragDepth++;
  page.dropOverlay.hidden = false;
});
document.addEventListener("dragleave", () => {
  if (--dragDepth <= 0) {
    dragDepth = 0;
    page.dropOverlay.hidden = true;
  }
});
document.addEventListener("dragover", (e) => e.preventDefault());
document.addEventListener("drop", (e) => {
  e.preventDefault();
  dragDepth = 0;
  page.dropOverlay.hidden = true;
  void useFiles([...(e.dataTransfer?.files ?? [])]);
});

// `?capture=URL&keylog=URL[&report=URL][&mode=metadata]`: the files fetched rather than dropped.

async function fetchOk(url: string): Promise<Response> {
  const response = await fetch(url);
  if (!response.ok || response.body === null) throw new Error(`${url}: HTTP ${response.status}`);
  return response;
}

async function fromQuery(params: URLSearchParams): Promise<void> {
  const captureUrl = params.get("capture");
  if (captureUrl === null) {
    setState("idle", "No capture yet.");
    return;
  }
  const keyLogUrl = params.get("keylog");
  const reportUrl = params.get("report");
  const name = (url: string) => new URL(url, location.href).pathname.split("/").pop() ?? url;
  page.metadataMode.checked = params.get("mode") === "metadata";
  page.filter.value = params.get("filter") ?? "";
  let view: CaptureView | undefined;
  let failure: string | undefined;
  try {
    if (keyLogUrl !== null) keyLog = { name: name(keyLogUrl), text: await (await fetchOk(keyLogUrl)).text() };
    capture = { name: name(captureUrl), open: async () => (await fetchOk(captureUrl)).body! };
    view = await decodeAndShow();
  } catch (error) {
    failure = describeError(error);
    setState("failed", `Could not read the capture: ${failure}`);
  }
  if (reportUrl === null) return;
  const body = view === undefined
    ? { error: failure ?? "not decoded", cspViolations }
    : reportOf(name(captureUrl), view);
  await fetch(reportUrl, { method: "POST", body: JSON.stringify(body) });
}

void fromQuery(new URLSearchParams(location.search));
