/// <reference lib="dom" />
/**
 * `element("li", { className: "x" }, "text", child)`: a DOM element with properties and children, for the capture
 * viewer's plain-DOM rendering (text goes in as text nodes, never as HTML).
 *
 * @module
 */

/** A new `tag` element with `properties` assigned and `children` (strings as text) appended. */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  properties: Partial<HTMLElementTagNameMap[K]> & { dataset?: Record<string, string> } = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const { dataset, ...rest } = properties;
  const node = Object.assign(document.createElement(tag), rest);
  if (dataset !== undefined) Object.assign(node.dataset, dataset);
  node.append(...children);
  return node;
}
