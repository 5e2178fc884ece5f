/// <reference lib="dom" />
/**
 * The capture viewer's timeline: one lane per resource, each event a marker placed by its capture time and coloured
 * by its type (viewer.css), with an axis of times relative to the capture's start.
 *
 * @module
 */
import type { CaptureView, ViewEvent } from "./capture_view.ts";
import { element } from "./element.ts";

/** Markers drawn per lane at most: past that, the lane says how many more there are (the table lists them all). */
const MAX_MARKERS_PER_LANE = 5000;
const TICKS = 5;

/** Seconds from `start`, for an axis label or a tooltip. */
export function relativeSeconds(ms: number, start: number): string {
  return `+${((ms - start) / 1000).toFixed(3)} s`;
}

/** The timeline of a {@linkcode CaptureView}, drawn into a container. */
export class Timeline {
  readonly #markers = new Map<number, HTMLButtonElement>();
  readonly #lanes = new Map<string, { row: HTMLElement; count: HTMLElement; events: ViewEvent[]; more: string }>();
  #selected: HTMLElement | undefined;

  /** Draws `view`'s events into `container` (emptied first); `onSelect` is called with the event a click picks. */
  constructor(container: HTMLElement, view: CaptureView, onSelect: (event: ViewEvent) => void) {
    const span = view.end - view.start;
    // A little room at both ends, so that the first and last markers are whole.
    const place = (ms: number) => span > 0 ? 1 + 98 * (ms - view.start) / span : 50;
    const axis = element("div", { className: "track" });
    for (let i = 0; i < TICKS; i++) {
      const ms = view.start + (span > 0 ? span * i / (TICKS - 1) : 0);
      const tick = element("span", { className: "tick" }, relativeSeconds(ms, view.start));
      tick.style.left = `${place(ms)}%`;
      axis.append(tick);
    }
    const rows: HTMLElement[] = [
      element("div", { className: "axis" }, element("div", { className: "lane-label" }), axis),
    ];
    for (const [lane, events] of view.lanes) {
      const track = element("div", { className: "track" });
      for (const event of events.slice(0, MAX_MARKERS_PER_LANE)) {
        const label = `${event.type} ${event.name ?? ""} at ${relativeSeconds(event.ms, view.start)} ` +
          `(connection ${event.item.connection})`;
        const marker = element("button", {
          type: "button",
          className: "marker",
          title: label,
          dataset: { type: event.type, index: String(event.index) },
        });
        marker.setAttribute("aria-label", label);
        marker.style.left = `${place(event.ms)}%`;
        marker.addEventListener("click", () => onSelect(event));
        this.#markers.set(event.index, marker);
        track.append(marker);
      }
      const more = events.length > MAX_MARKERS_PER_LANE ? ` (the first ${MAX_MARKERS_PER_LANE} drawn)` : "";
      const count = element("span", { className: "count" }, `${events.length}${more}`);
      const row = element(
        "div",
        { className: "lane", dataset: { lane } },
        element("div", { className: "lane-label", title: lane }, lane, count),
        track,
      );
      this.#lanes.set(lane, { row, count, events, more });
      rows.push(row);
    }
    container.replaceChildren(...rows);
  }

  /** How many markers are drawn, per lane. */
  markersPerLane(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [lane, { row }] of this.#lanes) counts.set(lane, row.querySelectorAll(".marker").length);
    return counts;
  }

  /** Shows only the events `keep` accepts (a lane with none is hidden); returns how many are shown. */
  filter(keep: (event: ViewEvent) => boolean): number {
    let shown = 0;
    for (const { row, count, events, more } of this.#lanes.values()) {
      let inLane = 0;
      for (const event of events) {
        const visible = keep(event);
        if (visible) inLane++;
        const marker = this.#markers.get(event.index);
        if (marker !== undefined) marker.hidden = !visible;
      }
      row.hidden = inLane === 0;
      count.textContent = `${inLane === events.length ? "" : `${inLane} of `}${events.length}${more}`;
      shown += inLane;
    }
    return shown;
  }

  /** Marks `event`'s marker as the selected one. */
  select(event: ViewEvent): void {
    this.#selected?.classList.remove("selected");
    this.#selected = this.#markers.get(event.index);
    this.#selected?.classList.add("selected");
  }
}
