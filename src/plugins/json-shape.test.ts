import { describe, expect, it } from 'vitest';
import { DEFAULT_JSON_SHAPE, jsonShapeRefusal } from './json-shape.js';

const limits = { maxObjectKeys: 3, maxDepth: 3, maxStringChars: 5 };
const keys = (n: number) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));

describe('jsonShapeRefusal', () => {
  it('admits texts within the limits, whatever strings contain', () => {
    for (const text of [keys(3), '[[[1]]]', '{"a":"::{{"}', '"abcde"', '{"a":"\\\\","b":"\\""}', '[1,2,3,4,5,6,7,8]', '', 'not json', '{"a":"unterminated']) {
      expect(jsonShapeRefusal(text, limits), text).toBeNull();
    }
  });

  it('refuses too many keys in one object (not across objects), too deep, too long a string', () => {
    expect(jsonShapeRefusal(keys(4), limits)).toContain('more than 3 keys (BODY_MAX_OBJECT_KEYS)');
    expect(jsonShapeRefusal(`[${keys(3)},${keys(3)}]`, limits)).toBeNull();
    expect(jsonShapeRefusal('[[[[1]]]]', limits)).toContain('deeper than 3 levels');
    expect(jsonShapeRefusal('{"a":{"b":{"c":1}}}', limits)).toBeNull();
    expect(jsonShapeRefusal('"abcdef"', limits)).toContain('longer than 5 characters');
    expect(jsonShapeRefusal('{"abcdef":1}', limits)).toContain('longer than 5 characters');
    // An escaped quote does not end the string.
    expect(jsonShapeRefusal('"a\\"bcdefg"', limits)).toContain('longer than 5 characters');
  });

  it('agrees with JSON.parse on what is a string (escapes, backslash runs)', () => {
    const value = { 'a"b': ['x\\', '\\"', ':{[', 'y'.repeat(4)], c: { d: '\\\\' } };
    expect(jsonShapeRefusal(JSON.stringify(value), { ...DEFAULT_JSON_SHAPE, maxObjectKeys: 2 })).toBeNull();
    expect(jsonShapeRefusal(JSON.stringify({ ...value, e: 1 }), { ...DEFAULT_JSON_SHAPE, maxObjectKeys: 2 })).toContain('more than 2 keys');
  });
});
