import { describe, expect, it } from 'vitest';
import { FormulaSyntaxError } from './syntax.js';
import { FormulaDate } from './values.js';
import { resultType, run } from './test-support.js';

/** The original's operand functions (its operators as calls) and constants. */
describe('operand functions and constants', () => {
  it.each([
    ['add(1, 2)', 3],
    ['add({D}, 1)', '2024-02-01T00:00:00+00:00'],
    ['subtract(5, 4)', 1],
    ['subtract({D}, date(2024, 1, 1))', 30],
    ['multiply(3, 4)', 12],
    ['divide(5, 2)', 2.5],
    ['divide(5, 0)', null],
    ['greater(2, 3)', false],
    ['lessthan(2, 3)', true],
    ['greatereq(3, 3)', true],
    ['lessthaneq(4, 3)', false],
    ['equal("a", "a")', true],
    ['unequal(1, 1)', false],
    ['ADD(multiply(2, 3), 1)', 7],
    ['round(pi, 4)', 3.1416],
    ['round(e + 1, 8)', 3.71828183],
    ['equal({E}, 0)', true],
  ])('%s = %j', (formula, expected) => {
    expect(run(formula, { E: null, D: dateCell() })).toEqual(expected);
  });

  it('infers the operators\' types', () => {
    expect(resultType('add(1, 2)')).toBe('number');
    expect(resultType('greater(1, 2)')).toBe('bool');
    expect(resultType('add({D}, 1)', { D: 'date' })).toBe('date');
  });

  it('refuses a wrong number of arguments at the call', () => {
    expect(() => run('1 + add(1)')).toThrow(FormulaSyntaxError);
    expect(() => run('1 + add(1)')).toThrow(/function add takes 2 arguments/);
    expect(() => run('pie')).toThrow(/unknown name 'pie'/);
  });
});

function dateCell() {
  return new FormulaDate(Date.UTC(2024, 0, 31));
}
