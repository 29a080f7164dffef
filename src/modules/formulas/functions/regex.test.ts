import { describe, expect, it } from 'vitest';
import { compilePattern, regexExtract, regexTest } from './regex.js';

describe('regex fast path', () => {
  it('runs simple patterns on V8 with RE2’s results', () => {
    const cases: Array<[string, string]> = [
      ['@([a-z.]+)', 'user1@example.org'],
      ['^[A-Z]{2}-[0-9]+$', 'AB-12'],
      ['^[A-Z]{2}-[0-9]+$', 'xy-12'],
      ['(\\d+)-x', 'abc 42-x'],
      ['colou?r', 'my color'],
      ['é+', 'caféé'],
    ];
    for (const [source, text] of cases) {
      const pattern = compilePattern(source);
      expect(pattern.js, source).not.toBeNull();
      const m = pattern.re2.re2().findSubmatch(text);
      expect(regexExtract(text, pattern), source).toBe(m ? (m[1] ?? m[0] ?? '') : '');
      expect(regexTest(text, pattern), source).toBe(pattern.re2.matcher(text).find());
    }
  });

  it('keeps backtracking-prone patterns and those V8 reads otherwise on RE2', () => {
    for (const source of ['((a+))+$', '(a|a)+$', 'a*a*a*b', 'a+b+', '(ab)*', 'a.b', '\\s+', '(?i)abc', '[[:alpha:]]+', 'x{1,50}', '(a)\\1']) {
      let js: RegExp | null = null;
      try {
        js = compilePattern(source).js;
      } catch {
        // (invalid in RE2: an error value, never V8)
      }
      expect(js, source).toBeNull();
    }
  });

  it('answers a nested-quantifier attack on a long cell in linear time', () => {
    expect(regexTest(`${'a'.repeat(5000)}!`, compilePattern('((a+))+$'))).toBe(false);
  });
});
