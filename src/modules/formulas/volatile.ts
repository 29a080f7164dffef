import { parseFormula, type Node } from './syntax.js';

/** Functions whose value moves with the clock, not with the row's cells. */
const VOLATILE = new Set(['now', 'today']);

/** True when the formula calls now() or today() (its stored value goes stale as time passes). */
export function isVolatileFormula(text: unknown): boolean {
  if (typeof text !== 'string' || !/now|today/i.test(text)) return false;
  let root: Node;
  try {
    root = parseFormula(text);
  } catch {
    return false;
  }
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.kind === 'call') {
      if (VOLATILE.has(node.name.toLowerCase())) return true;
      stack.push(...node.args);
    } else if (node.kind === 'unary') stack.push(node.operand);
    else if (node.kind === 'binary') stack.push(node.left, node.right);
  }
  return false;
}
