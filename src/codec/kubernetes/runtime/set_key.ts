/**
 * {@linkcode setKey}: a key of a JSON object set as `JSON.parse` sets it. Internal.
 *
 * @module
 */

/** Sets `key` of a map object as `JSON.parse` would: `__proto__` becomes an own property, not the prototype. */
export function setKey(map: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(map, key, { value, writable: true, enumerable: true, configurable: true });
  } else map[key] = value;
}
