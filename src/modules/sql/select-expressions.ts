/**
 * Arithmetic and formula functions as select items and ORDER BY / GROUP BY terms. The value is computed
 * by SQL (compiled by `expressions.ts` over the allow-list); the result column is named by the
 * expression's text, as the original names computed columns (`abs(A - B)`), unless aliased.
 */
import { compileExpression } from './expressions.js';
import type { Node } from './parser.js';
import { functionName, type Operand, type PredicateScope } from './predicates.js';
import { sqlError } from './sql-error.js';
import { constantOf } from './values.js';

/** A node this module computes: an arithmetic expression or a function call (not an aggregate). */
export function isExpression(node: Node): boolean {
  return node.type === 'binary_expr' || node.type === 'function';
}

/** Compile `node` to an operand; columns (and in grouped queries aggregates) resolve through `scope`. */
export function expressionOperand(node: Node, scope: PredicateScope): Operand {
  const side = (n: Node): { constant: import('./values.js').Scalar } | { operand: Operand } => {
    const constant = constantOf(n, scope.bindings);
    if (constant !== undefined) return { constant };
    if (n.type === 'column_ref' || n.type === 'aggr_func') {
      const operand = scope.operand(n);
      if (operand.type === 'opaque') throw sqlError(`${operand.label} cannot be used in an expression.`);
      return { operand };
    }
    const inner = compileExpression(n, scope, side);
    if (inner) return { operand: inner };
    throw unsupported(n);
  };
  const operand = compileExpression(node, scope, side);
  if (!operand) throw unsupported(node);
  return operand;
}

function unsupported(node: Node): Error {
  if (node.type === 'function') return sqlError(`Function ${functionName(node)} is not supported.`);
  if (node.ast !== undefined || node.type === 'select') return sqlError('Subqueries are not supported.');
  if (node.type === 'binary_expr') return sqlError(`Operator ${String(node.operator)} is not supported in expressions.`);
  return sqlError('Unsupported expression.');
}

/** The response value of a computed number or text: '' is empty (null), as for cells. */
export function decodeExpression(type: Operand['type']): (raw: unknown) => unknown {
  if (type === 'number') return (raw) => (raw === null || raw === undefined ? null : Number(raw) + 0); // + 0: no -0 (JSON has none)
  return (raw) => (raw === null || raw === undefined || raw === '' ? null : raw);
}

/** The `metadata` entry of a computed column. */
export function expressionMetadata(key: string, type: Operand['type']): Record<string, unknown> {
  return { key, name: key, type: type === 'number' ? 'number' : 'text', data: null };
}

/** Whether an aggregate occurs anywhere in the expression (then the query is grouped). */
export function containsAggregate(root: Node): boolean {
  const stack: unknown[] = [root];
  let seen = 0;
  while (stack.length > 0 && seen++ < 10_000) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    const n = node as Node;
    if (n.type === 'aggr_func') return true;
    stack.push(n.left, n.right, ...(((n.args as { value?: unknown } | undefined)?.value as unknown[] | undefined) ?? []));
  }
  return false;
}

/** Structural identity of an expression (positions left out), so `GROUP BY abs(A-B)` matches `abs(A - B)`. */
export function expressionShape(node: Node): string {
  return JSON.stringify(node, (key, value: unknown) => (key === 'loc' ? undefined : value));
}
