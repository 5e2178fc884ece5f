/**
 * How the CLI prints events: Kubernetes' own JSON watch event lines, or a table for people.
 *
 * @module
 */
import type { WatchEvent } from "../events.ts";

/** One event as the Kubernetes JSON watch shape `{"type":...,"object":...}` on one line. */
export function formatNdjson(event: WatchEvent<unknown>): string {
  return JSON.stringify({ type: event.type, object: event.object });
}

const WIDTHS = [9, 22, 48] as const;

/** The table's heading row. */
export function tableHeader(): string {
  return row(["TYPE", "KIND", "NAMESPACE/NAME", "RESOURCEVERSION"]);
}

/** One event as a table row: type, kind, namespace/name, resourceVersion. */
export function formatTableRow(event: WatchEvent<unknown>): string {
  const object = (event.object ?? {}) as {
    kind?: string;
    code?: number;
    reason?: string;
    message?: string;
    metadata?: { name?: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string> };
  };
  const meta = object.metadata ?? {};
  let name: string;
  let version = meta.resourceVersion ?? "";
  if (event.type === "ERROR") {
    name = [object.code, object.reason, object.message].filter((p) => p !== undefined && p !== "").join(" ");
  } else if (event.type === "BOOKMARK") {
    name = "-";
    if (meta.annotations?.["k8s.io/initial-events-end"] === "true") version += " (initial-events-end)";
  } else {
    name = meta.namespace ? `${meta.namespace}/${meta.name ?? ""}` : meta.name ?? "";
  }
  return row([event.type, object.kind ?? "", name, version]);
}

function row(cells: string[]): string {
  let line = "";
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i].replace(/[\r\n\t]+/g, " ");
    line += i < WIDTHS.length ? cell.padEnd(WIDTHS[i]) + " " : cell;
  }
  return line.trimEnd();
}
