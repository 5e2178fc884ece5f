/**
 * Media types (RFC 9110 §8.3.1) as watch bodies name them: `application/json;stream=watch`.
 *
 * @module
 */

/**
 * A parsed media type: lower-case `type/subtype` and its parameters (names lower-cased, values unquoted).
 *
 * @example
 * ```ts
 * import { type MediaType, parseMediaType } from "watchwire/wire";
 *
 * const mediaType: MediaType = parseMediaType("Application/JSON; Stream=watch");
 * console.log(mediaType.essence, mediaType.parameters.stream); // application/json watch
 * ```
 */
export interface MediaType {
  essence: string;
  parameters: Record<string, string>;
}

/**
 * Parses a `Content-Type` value; `null` or an empty value gives an empty essence.
 *
 * @example
 * ```ts
 * import { parseMediaType } from "watchwire/wire";
 *
 * console.log(parseMediaType('application/vnd.kubernetes.protobuf; stream="watch"'));
 * // { essence: "application/vnd.kubernetes.protobuf", parameters: { stream: "watch" } }
 * ```
 */
export function parseMediaType(value: string | null): MediaType {
  const parameters: Record<string, string> = {};
  if (value === null) return { essence: "", parameters };
  const [essence, ...rest] = value.split(";");
  for (const part of rest) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    let v = part.slice(eq + 1).trim();
    if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, "$1");
    if (name !== "" && !(name in parameters)) parameters[name] = v;
  }
  return { essence: essence.trim().toLowerCase(), parameters };
}
