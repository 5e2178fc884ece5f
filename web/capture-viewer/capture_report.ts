/**
 * The summary of a capture view that the page POSTs to `?report=URL` when it is done, and that
 * scripts/capture-viewer-check.ts computes from Node's decoding of the same file to compare. No DOM.
 *
 * @module
 */
import type { CaptureItem } from "watchwire/capture";
import type { CaptureView } from "./capture_view.ts";

/** One lane of the timeline: its events, by type, and (from the page) how many markers it drew. */
export interface LaneReport {
  events: number;
  types: Record<string, number>;
  markers?: number;
}

/** What the page rendered of a capture. */
export interface CaptureViewReport {
  /** The capture's name (its file's or URL's last part). */
  capture: string;
  /** Per lane (resource), in the order of their first event. */
  lanes: Record<string, LaneReport>;
  events: number;
  /** The problems' messages (the page: those it listed). */
  problems: string[];
  gaps: number;
  summary: Extract<CaptureItem, { kind: "summary" }> | null;
  /** Why the capture could not be read to its end, if it could not. */
  error: string | null;
  /** The first event's object's `metadata.name` (the page: as the object panel shows it once that event is picked). */
  firstObjectName: string | null;
  /** The first event's object as the page's object panel shows it (JSON parsed), if there is an event. */
  firstObject?: unknown;
  /** What the page's Content-Security-Policy refused (the page fills it in). */
  cspViolations: string[];
  /** The filter's text, and (from the page) the markers it leaves visible and the rows listed. */
  filter: string;
  visibleMarkers?: number;
  listedRows?: number;
}

/** The report of `view`; the page fills in `markers` and `firstObjectName` from what it drew. */
export function captureViewReport(capture: string, view: CaptureView): CaptureViewReport {
  const lanes: Record<string, LaneReport> = {};
  for (const [lane, events] of view.lanes) {
    const types: Record<string, number> = {};
    for (const event of events) types[event.type] = (types[event.type] ?? 0) + 1;
    lanes[lane] = { events: events.length, types };
  }
  return {
    capture,
    lanes,
    events: view.events.length,
    problems: view.problems.map((p) => p.message),
    gaps: view.gaps.length,
    summary: view.summary ?? null,
    error: view.error ?? null,
    firstObjectName: null,
    cspViolations: [],
    filter: "",
  };
}
