import { describe, expect, it } from 'vitest';
import { FormulaSyntaxError, parseFormula } from './syntax.js';
import { resultType, run } from './test-support.js';

function errorOf(formula: string, columns: string[] = ['A']): { position: number; message: string } {
  try {
    run(formula, Object.fromEntries(columns.map((c) => [c, 1])));
  } catch (e) {
    if (e instanceof FormulaSyntaxError) return { position: e.position + 1, message: e.message };
    throw e;
  }
  throw new Error(`no error for ${formula}`);
}

describe('formula syntax', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 ^ 3 ^ 2', 512],
    ['-2 ^ 2', 4],
    ['7 % 3', 1],
    ['-7 % 3', 2],
    ['1 + 2 & "x"', '3x'],
    ['1 + 1 = 2', true],
    ['3 <> 3', false],
    ['3 != 4', true],
    ['2 >= 3', false],
    ['"a" < "b"', true],
    ['"it""s"', 'it"s'],
    ["'single'", 'single'],
    ['"back\\"slash"', 'back"slash'],
    ['TRUE', true],
    ['1.5e2', 150],
    ['.5 + .5', 1],
    ['{A} * 10', 10],
    ['SUM(1, 2)', 3],
  ])('%s → %j', (formula, expected) => {
    expect(run(formula, { A: 1 })).toEqual(expected);
  });

  it.each([
    ['1 +', 4, 'unexpected end of formula'],
    ['{Nope} + 1', 1, 'column Nope not found'],
    ['nosuch(1)', 1, 'unknown function nosuch'],
    ['abs(1, 2)', 1, 'function abs takes 1 argument, not 2'],
    ['round()', 1, 'function round takes 1 to 2 arguments, not 0'],
    ['sum()', 1, 'function sum takes at least 1 arguments, not 0'],
    ['1 + (2', 7, "expected ')' but found end of formula"],
    ['"open', 1, 'unterminated string'],
    ['{A', 1, "unterminated column reference, missing '}'"],
    ['1 $ 2', 3, "unexpected character '$'"],
    ['1 2', 3, 'unexpected number 2'],
    ['A + 1', 1, "unknown name 'A' (column names go in braces: {A})"],
    ['', 1, 'empty formula'],
    ['{ } + 1', 1, 'empty column reference'],
  ])('refuses %j at position %i', (formula, position, reason) => {
    expect(errorOf(formula)).toEqual({ position, message: `${reason} at position ${position}` });
  });

  it('bounds length and nesting', () => {
    expect(() => parseFormula('1+'.repeat(6000) + '1')).toThrow(/longer than 10000/);
    expect(() => parseFormula('('.repeat(150) + '1' + ')'.repeat(150))).toThrow(/nested deeper than 100/);
    // Long flat chains build deep trees: 500 operators evaluate, more are refused before they could overflow.
    expect(run('1+'.repeat(500) + '1')).toBe(501);
    expect(() => parseFormula('1+'.repeat(501) + '1')).toThrow(/more than 500 operators in a row/);
    expect(() => parseFormula('2^'.repeat(3000) + '2')).toThrow(/nested deeper than 100/);
    expect(() => parseFormula('-'.repeat(3000) + '2')).toThrow(/nested deeper than 100/);
  });

  it.each([
    ['1 + 1', {}, 'number'],
    ['"a" & 1', {}, 'string'],
    ['{D} + 1', { D: 'date' }, 'date'],
    ['{D} - {D}', { D: 'date' }, 'number'],
    ['{D} - 3', { D: 'date' }, 'date'],
    ['{A} > 1', { A: 'number' }, 'bool'],
    ['if({A} > 1, "x", "y")', { A: 'number' }, 'string'],
    ['if({A} > 1, 1, 2)', { A: 'number' }, 'number'],
    ['if({A} > 1, 1, "y")', { A: 'number' }, 'string'],
    ['dateAdd({D}, 1)', { D: 'date' }, 'date'],
    ['ifs(true, today(), false, now())', {}, 'date'],
    ['switch(1, 1, "a", "b")', {}, 'string'],
    ['{L}', { L: 'array' }, 'array'],
  ] as const)('infers the type of %s', (formula, types, expected) => {
    expect(resultType(formula, types)).toBe(expected);
  });
});
