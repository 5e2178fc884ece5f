/**
 * Finds array and object literals in the code of a decoder's functions, for the tests that check a decoder makes
 * what it returns without them: literals carry V8 allocation sites, which V8 pretenures once most of their objects
 * survive (a kept initial list), and decoders that fill objects field by field then run slower for the rest of the
 * process (src/codec/value_constructors.ts). Code inside a function is indented; comments are skipped.
 * Kept with that mechanism: bench/RESULTS.md §11 ("What each optimisation mechanism buys"), decoding after a sync.
 */

const arrayLiteral = /(?:[=(,:?]|\breturn|=>)\s*\[/;
const objectLiteral = /(?:[=(,:?]|\breturn|=>)\s*\{\s*[\w"$]+\s*[:,}]/;

/** The lines of `text` (a module named `name`) inside functions that make an array or object literal. */
export function literalLines(name: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    if (!/^\s/.test(line) || /^\s*(\*|\/\/)/.test(line)) return;
    if (isLiteralLine(line)) found.push(`${name}:${i + 1}: ${line.trim()}`);
  });
  return found;
}

/** Whether a line of code makes an array or object literal (as the patterns see it). */
export function isLiteralLine(line: string): boolean {
  return arrayLiteral.test(line) || objectLiteral.test(line);
}
