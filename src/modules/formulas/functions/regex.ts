import { RE2JS } from 're2js';
import { FormulaValueError } from '../values.js';
import { spend } from '../budget.js';

const MAX_PATTERN = 200;
/** Text a regular expression runs over: linear time (RE2), but still in proportion to the text. */
const MAX_REGEX_INPUT = 10_000;
/** Compiled patterns kept, least recently used dropped first (compiling costs far more than matching a short text). */
const PATTERN_CACHE_SIZE = 500;
/**
 * Text short enough for the fast path: JavaScript's RegExp backtracks, so only patterns whose worst case
 * is at most quadratic in the text (below) run there, and only over texts this short (256² steps × 20).
 */
const FAST_INPUT = 256;

export interface Pattern {
  re2: RE2JS;
  /** The same pattern for V8's engine, when it is safe there (`fastRegExp`); else null. */
  js: RegExp | null;
  /** RE2's program size: its cost per character of text. */
  size: number;
}

const patterns = new Map<string, Pattern>();

/** Escapes that mean the same in RE2 and in a `u` RegExp. */
const SAME_ESCAPES = new Set('dDwWbBnt.\\/-[](){}*+?^$|');

/**
 * `pattern` as a RegExp when V8 runs it in at most quadratic time and with RE2's meaning: no group
 * quantified, at most one unbounded quantifier and one bounded one up to {…,20}, no `(?…)`, no `.`
 * outside a class (RE2's `.` matches `\r`, V8's does not), no POSIX classes, only escapes both read
 * alike. Anything else stays on RE2 alone.
 */
function fastRegExp(pattern: string): RegExp | null {
  let unbounded = 0;
  let bounded = 0;
  let inClass = false;
  let previous = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[++i];
      if (next === undefined || !SAME_ESCAPES.has(next)) return null;
      previous = '\\';
      continue;
    }
    if (inClass) {
      if (c === '[') return null; // ([:alpha:] and nested classes)
      if (c === ']') inClass = false;
      previous = c;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '.' || (c === '(' && pattern[i + 1] === '?')) return null;
    else if (c === '*' || c === '+' || c === '?' || c === '{') {
      if (previous === ')' || previous === '*' || previous === '+' || previous === '?' || previous === '}') return null;
      if (c === '{') {
        const m = /^\{(\d{1,2})(,(\d{0,2}))?\}/.exec(pattern.slice(i));
        if (!m) return null;
        if (m[2] !== undefined && m[3] === '') unbounded++;
        else if (Number(m[3] ?? m[1]) > 20) return null;
        else bounded++;
        i += m[0].length - 1;
        previous = '}';
        continue;
      }
      if (c === '?') bounded++;
      else unbounded++;
    }
    previous = c;
  }
  if (inClass || unbounded > 1 || bounded > 1) return null;
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return null;
  }
}

/**
 * A user's pattern, compiled by RE2JS (a port of RE2): matching takes time linear in the text whatever
 * the pattern (`(a+)+$`, `a*a*a*b`), which JavaScript's backtracking RegExp cannot promise. RE2 syntax
 * has no backreferences or lookaround; such a pattern is invalid here (an error value). Simple patterns
 * over short texts run on V8's engine instead (`fastRegExp`), several times faster.
 */
export function compilePattern(source: string): Pattern {
  let compiled = patterns.get(source);
  if (compiled) {
    // (Most recently used last: the first in the map is the one to drop.)
    patterns.delete(source);
    patterns.set(source, compiled);
    return compiled;
  }
  if (source.length > MAX_PATTERN) throw new FormulaValueError(`pattern longer than ${MAX_PATTERN} characters`);
  let re2: RE2JS;
  try {
    re2 = RE2JS.compile(source);
  } catch {
    throw new FormulaValueError('invalid regular expression');
  }
  compiled = { re2, js: fastRegExp(source), size: re2.programSize() };
  if (patterns.size >= PATTERN_CACHE_SIZE) patterns.delete(patterns.keys().next().value!);
  patterns.set(source, compiled);
  return compiled;
}

/** The text a compiled pattern runs over, its matching cost spent from the evaluation's budget. */
function regexInput(text: string, pattern: Pattern): string {
  if (text.length > MAX_REGEX_INPUT) throw new FormulaValueError(`text longer than ${MAX_REGEX_INPUT} characters for a regular expression`);
  spend(text.length * pattern.size);
  return text;
}

/** Whether `pattern` matches somewhere in `text`. */
export function regexTest(text: string, pattern: Pattern): boolean {
  const input = regexInput(text, pattern);
  if (pattern.js && input.length <= FAST_INPUT) return pattern.js.test(input);
  return pattern.re2.matcher(input).find();
}

/** The first match's first group (else the whole match); '' without a match. */
export function regexExtract(text: string, pattern: Pattern): string {
  const input = regexInput(text, pattern);
  // (RE2: one pass that records the groups; a Matcher finds the match, then runs again for its groups.)
  const m: ArrayLike<string | null | undefined> | null =
    pattern.js && input.length <= FAST_INPUT ? pattern.js.exec(input) : pattern.re2.re2().findSubmatch(input);
  if (!m) return '';
  return m[1] ?? m[0] ?? '';
}
