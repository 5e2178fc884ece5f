/**
 * {@linkcode ChunkExtensionChecker}: the grammar of HTTP/1.1 chunk extensions, checked byte by byte. Internal.
 *
 * @module
 */
import { describe } from "../describe_byte.ts";
import { isControl, isWhitespace, TOKEN } from "./field_line.ts";

const SEMICOLON = 0x3b;
const EQUALS = 0x3d;
const DQUOTE = 0x22;
const BACKSLASH = 0x5c;

const enum Ext {
  /** After `;`: optional whitespace, then a name. */
  NameStart,
  Name,
  /** Whitespace after a name: `=` or `;` must follow. */
  NameSpace,
  /** After `=`: optional whitespace, then a token or a quoted string. */
  ValueStart,
  Token,
  Quoted,
  /** After a backslash inside a quoted string. */
  QuotedPair,
  /** After the closing quote. */
  AfterQuote,
  /** Whitespace after a value: `;` must follow. */
  ValueSpace,
}

/**
 * Checks the chunk extensions of one chunk-size line against RFC 9112 §7.1.1, from the byte after the first `;` to
 * the byte before the line's CR (the caller handles CR and LF):
 *
 * ```
 * chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
 * chunk-ext-name = token;  chunk-ext-val = token / quoted-string
 * ```
 *
 * Nothing is kept: watchwire has no use for extensions, but a strict decoder must not pass malformed ones, which
 * other parsers may read differently (and so disagree on where a chunk's data starts). Whitespace is BWS only where
 * the grammar has it: before and after `;` and `=`, not at the end of the line.
 */
export class ChunkExtensionChecker {
  #state = Ext.NameStart;

  /** Starts a new line's extensions (just after its first `;`). */
  reset(): void {
    this.#state = Ext.NameStart;
  }

  /** Takes the next byte (not CR or LF); returns what is wrong with it, or undefined if it fits. */
  step(b: number): string | undefined {
    switch (this.#state) {
      case Ext.NameStart:
        if (TOKEN[b] === 1) this.#state = Ext.Name;
        else if (!isWhitespace(b)) return `expected a chunk extension name, found ${describe(b)}`;
        return undefined;
      case Ext.Name:
        if (TOKEN[b] === 1 || this.#afterName(b)) return undefined;
        return `unexpected ${describe(b)} in a chunk extension name`;
      case Ext.NameSpace:
        if (this.#afterName(b)) return undefined;
        return `expected '=' or ';' after a chunk extension name, found ${describe(b)}`;
      case Ext.ValueStart:
        if (TOKEN[b] === 1) this.#state = Ext.Token;
        else if (b === DQUOTE) this.#state = Ext.Quoted;
        else if (!isWhitespace(b)) {
          return `expected a chunk extension value (token or quoted string), found ${describe(b)}`;
        }
        return undefined;
      case Ext.Token:
        if (TOKEN[b] === 1 || this.#afterValue(b)) return undefined;
        return `unexpected ${describe(b)} in a chunk extension value`;
      case Ext.Quoted:
        // qdtext: HTAB, SP, VCHAR but '"' and '\', obs-text.
        if (b === DQUOTE) this.#state = Ext.AfterQuote;
        else if (b === BACKSLASH) this.#state = Ext.QuotedPair;
        else if (isControl(b)) return `control ${describe(b)} in a quoted string`;
        return undefined;
      case Ext.QuotedPair:
        if (isControl(b)) return `control ${describe(b)} escaped in a quoted string`;
        this.#state = Ext.Quoted;
        return undefined;
      case Ext.AfterQuote:
      case Ext.ValueSpace:
        if (this.#afterValue(b)) return undefined;
        return `expected ';' after a chunk extension value, found ${describe(b)}`;
    }
  }

  /** What is wrong with ending the line here (at its CR), or undefined if the extensions are complete. */
  end(): string | undefined {
    switch (this.#state) {
      case Ext.Name:
      case Ext.Token:
      case Ext.AfterQuote:
        return undefined;
      case Ext.NameStart:
        return "a chunk extension without a name";
      case Ext.ValueStart:
        return "a chunk extension's '=' without a value";
      case Ext.Quoted:
      case Ext.QuotedPair:
        return "a quoted string in a chunk extension is not closed";
      case Ext.NameSpace:
      case Ext.ValueSpace:
        return "whitespace at the end of a chunk-size line";
    }
  }

  /** After a name (or whitespace after it): takes `=`, `;` or whitespace; false for anything else. */
  #afterName(b: number): boolean {
    if (b === EQUALS) this.#state = Ext.ValueStart;
    else if (b === SEMICOLON) this.#state = Ext.NameStart;
    else if (isWhitespace(b)) this.#state = Ext.NameSpace;
    else return false;
    return true;
  }

  /** After a value (or whitespace after it): takes `;` or whitespace; false for anything else. */
  #afterValue(b: number): boolean {
    if (b === SEMICOLON) this.#state = Ext.NameStart;
    else if (isWhitespace(b)) this.#state = Ext.ValueSpace;
    else return false;
    return true;
  }
}
