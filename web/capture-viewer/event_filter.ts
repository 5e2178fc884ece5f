/**
 * The capture viewer's filter: the words typed, each of which an event's resource, name or type must hold (case
 * aside). No DOM: scripts/capture-viewer-check.ts counts what a filter should let through with it.
 *
 * @module
 */
import type { ViewEvent } from "./capture_view.ts";

/**
 * The test of filter text `text` (an empty text lets everything through).
 *
 * @example
 * ```ts
 * import { eventFilter } from "./event_filter.ts";
 *
 * const keep = eventFilter("default modified");
 * console.log(keep({ lane: "pods in default", name: "web", type: "MODIFIED" })); // true
 * console.log(keep({ lane: "pods in default", name: "web", type: "ADDED" })); // false
 * ```
 */
export function eventFilter(text: string): (event: Pick<ViewEvent, "lane" | "name" | "type">) => boolean {
  const words = text.toLowerCase().split(/\s+/).filter((w) => w !== "");
  if (words.length === 0) return () => true;
  return (e) => {
    const haystack = `${e.lane} ${e.name ?? ""} ${e.type}`.toLowerCase();
    return words.every((w) => haystack.includes(w));
  };
}
