/// <reference lib="dom" />
/**
 * The capture viewer's list of events under the timeline: time, resource, type, name, connection; a row per event that
 * the filter lets through, up to a limit.
 *
 * @module
 */
import type { ViewEvent } from "./capture_view.ts";
import { element } from "./element.ts";
import { relativeSeconds } from "./timeline.ts";

/** Rows drawn at most (a filter narrows the list to the rest). */
const MAX_ROWS = 2000;

/** The table of events: `tbody` is redrawn by {@linkcode EventTable.show}. */
export class EventTable {
  readonly #body: HTMLTableSectionElement;
  readonly #more: HTMLElement;
  readonly #start: number;
  readonly #onSelect: (event: ViewEvent) => void;
  readonly #rows = new Map<number, HTMLTableRowElement>();
  #selected: number | undefined;

  /** A table drawing into `body`, saying in `more` how many rows were left out; times are from `start` (ms). */
  constructor(body: HTMLTableSectionElement, more: HTMLElement, start: number, onSelect: (event: ViewEvent) => void) {
    this.#body = body;
    this.#more = more;
    this.#start = start;
    this.#onSelect = onSelect;
  }

  /** Draws a row for each of `events` (up to the limit). */
  show(events: readonly ViewEvent[]): void {
    this.#rows.clear();
    const rows = events.slice(0, MAX_ROWS).map((event) => {
      const row = element(
        "tr",
        { dataset: { index: String(event.index) } },
        element("td", { title: new Date(event.ms).toISOString() }, relativeSeconds(event.ms, this.#start)),
        element("td", { title: event.lane }, event.lane),
        element("td", { className: "type", dataset: { type: event.type } }, event.type),
        element("td", { title: event.name ?? "" }, event.name ?? ""),
        element("td", {}, String(event.item.connection)),
      );
      if (event.index === this.#selected) row.classList.add("selected");
      row.addEventListener("click", () => this.#onSelect(event));
      this.#rows.set(event.index, row);
      return row;
    });
    this.#body.replaceChildren(...rows);
    this.#more.textContent = events.length > MAX_ROWS
      ? `The first ${MAX_ROWS} of ${events.length} events are listed: filter to see others.`
      : "";
  }

  /** Marks `event`'s row as the selected one. */
  select(event: ViewEvent): void {
    if (this.#selected !== undefined) this.#rows.get(this.#selected)?.classList.remove("selected");
    this.#selected = event.index;
    this.#rows.get(event.index)?.classList.add("selected");
  }
}
