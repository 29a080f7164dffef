import { describe, expect, it } from 'vitest';
import { run } from '../test-support.js';

const ROW = { N: 5, E: null, T: 'yes', Z: 0, L: [] as string[] };

describe('logical functions', () => {
  it.each([
    ['if({N} > 3, "big", "small")', 'big'],
    ['if({N} > 9, "big")', null],
    ['if({E}, 1, 2)', 2],
    ['if({T}, 1, 2)', 1],
    ['if(true, 1, 1 / 0)', 1],
    ['if(false, 1 / 0, 2)', 2],
    ['ifs({N} > 9, "a", {N} > 3, "b")', 'b'],
    ['ifs({N} > 9, "a", {N} > 7, "b")', null],
    ['switch({N}, 1, "one", 5, "five", "other")', 'five'],
    ['switch({N}, 1, "one", "other")', 'other'],
    ['switch({N}, 1, "one", 2, "two")', null],
    ['switch({E}, "", "blank", "set")', 'blank'],
    ['and({N}, {T})', true],
    ['and({N}, {Z})', false],
    ['or({Z}, {E})', false],
    ['or({Z}, {N})', true],
    ['not({E})', true],
    ['not({N})', false],
    ['xor(true, true)', false],
    ['xor(true, false, false)', true],
    ['xor(true, true, true)', true],
    ['isblank({E})', true],
    ['isblank({L})', true],
    ['isblank({Z})', false],
    ['isblank("")', true],
    ['true() = TRUE', true],
    ['{E} = 0', true],
    ['{E} = ""', true],
    ['{T} = "yes"', true],
    ['{T} = "Yes"', false],
    ['"10" = 10', true],
    ['"abc" > 10', true],
  ])('%s → %j', (formula, expected) => {
    expect(run(formula, ROW)).toEqual(expected);
  });
});
