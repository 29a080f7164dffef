/**
 * The shape of a JSON text, bounded before it is parsed (issue #24): `JSON.parse` builds an object of a
 * million keys in seconds (V8's dictionary objects), so a body is refused by a linear scan first — keys
 * per object, nesting depth and string length — and a refused body costs about what reading it costs.
 * The scan only counts; it does not validate (an invalid text is left to `JSON.parse` and refused there).
 */
export interface JsonShapeLimits {
  /** Keys in one object (BODY_MAX_OBJECT_KEYS). */
  maxObjectKeys: number;
  /** Objects and arrays inside one another. */
  maxDepth: number;
  /** Characters of one string (key or value), as written (escapes count as written). */
  maxStringChars: number;
}

export const DEFAULT_JSON_SHAPE: JsonShapeLimits = { maxObjectKeys: 10_000, maxDepth: 64, maxStringChars: 8 * 1024 * 1024 };

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;

/** Why `text` is over the limits, or null when it is within them (or not JSON at all). */
export function jsonShapeRefusal(text: string, limits: JsonShapeLimits): string | null {
  // Per open container: the keys seen so far in an object, -1 for an array.
  const open: number[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = closingQuote(text, i);
      if (end < 0) return null;
      if (end - i - 1 > limits.maxStringChars) return `Request body has a string longer than ${limits.maxStringChars} characters.`;
      i = end + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      open.push(c === OPEN_OBJECT ? 0 : -1);
      if (open.length > limits.maxDepth) return `Request body is nested deeper than ${limits.maxDepth} levels.`;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      open.pop();
    } else if (c === COLON && open.length > 0) {
      // Outside strings a colon only ends a key.
      const keys = ++open[open.length - 1]!;
      if (keys > limits.maxObjectKeys) return `Request body has an object with more than ${limits.maxObjectKeys} keys (BODY_MAX_OBJECT_KEYS).`;
    }
    i++;
  }
  return null;
}

/** Index of the quote closing the string opened at `start`, or -1. Each backslash run is looked at once. */
function closingQuote(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let before = quote - 1;
    while (before > start && text.charCodeAt(before) === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote;
    from = quote + 1;
  }
}
