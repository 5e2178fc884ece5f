/**
 * {@linkcode removeContentCoding}: a response body with its gzip or deflate `Content-Encoding` removed, as `fetch`
 * gives it.
 *
 * @module
 */
import type { DecoderStreamOptions } from "../streams/decoder_stream.ts";
import { type FieldList, fieldValues } from "./field_line.ts";
import { GunzipStream } from "../compression/gunzip_stream.ts";
import { InflateStream } from "../compression/inflate_stream.ts";

/**
 * A body and the content coding removed from it (`"gzip"`, `"deflate"`), or `undefined` when none was.
 *
 * @example
 * ```ts
 * import { type ContentDecodedBody, removeContentCoding } from "watchwire/wire";
 *
 * const deflated = new Blob(["{}\n"]).stream().pipeThrough(new CompressionStream("deflate"));
 * const result: ContentDecodedBody = removeContentCoding([["content-encoding", "deflate"]], deflated);
 * console.log(result.decoded, JSON.stringify(await new Response(result.body).text())); // deflate "{}\n"
 * const plain = removeContentCoding([["content-encoding", "br"]], new Blob(["x"]).stream());
 * console.log(plain.decoded); // undefined
 * ```
 */
export interface ContentDecodedBody {
  body: ReadableStream<Uint8Array>;
  decoded: "gzip" | "deflate" | undefined;
}

/**
 * Removes the content coding that `headers` (lower-cased names) declare from `body` when it is `gzip` (or `x-gzip`:
 * multi-member gzip too, through {@linkcode GunzipStream}) or `deflate` (zlib or raw DEFLATE, through
 * {@linkcode InflateStream}); any other coding, or several, leaves the body as it is (`decoded` undefined), as the
 * header then still says what it holds. `options` go to the decoding stage (`placeFault`: where its faults are, in a
 * larger input; their offsets count bytes of `body`).
 *
 * @example
 * ```ts
 * import { removeContentCoding } from "watchwire/wire";
 *
 * const gzipped = new Blob(["{}\n"]).stream().pipeThrough(new CompressionStream("gzip"));
 * const { body, decoded } = removeContentCoding([["content-encoding", "gzip"]], gzipped);
 * console.log(decoded, await new Response(body).text()); // gzip {}
 * ```
 */
export function removeContentCoding(
  headers: FieldList,
  body: ReadableStream<Uint8Array>,
  options: DecoderStreamOptions = {},
): ContentDecodedBody {
  const coding = contentCodingOf(headers);
  return coding === undefined
    ? { body, decoded: undefined }
    : { body: removeCoding(coding, body, options), decoded: coding };
}

/** The content coding `headers` declare, if it is one that {@linkcode removeContentCoding} removes. */
export function contentCodingOf(headers: FieldList): "gzip" | "deflate" | undefined {
  return removableCoding(fieldValues(headers, "content-encoding").join(","));
}

/** The coding a content or transfer coding's name (case-insensitive, `x-gzip` for `gzip`) says, if one we remove. */
export function removableCoding(name: string): "gzip" | "deflate" | undefined {
  const coding = name.trim().toLowerCase();
  return coding === "gzip" || coding === "x-gzip" ? "gzip" : coding === "deflate" ? "deflate" : undefined;
}

/** `body` with `coding` removed. */
export function removeCoding(
  coding: "gzip" | "deflate",
  body: ReadableStream<Uint8Array>,
  options: DecoderStreamOptions = {},
): ReadableStream<Uint8Array> {
  return body.pipeThrough(coding === "gzip" ? new GunzipStream(options) : new InflateStream(options));
}
