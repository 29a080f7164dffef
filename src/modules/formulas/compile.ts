import { common, FUNCTIONS } from './functions/index.js';
import { FormulaSyntaxError, parseFormula, type Node } from './syntax.js';
import type { ResultType } from './values.js';

/** A column a formula may name: its key and the type of the values it gives. */
export interface ColumnRef {
  key: string;
  type: ResultType;
}

export interface CompiledFormula {
  source: string;
  ast: Node;
  resultType: ResultType;
  /** Keys of the columns the formula reads, in order of first use. */
  references: string[];
}

/**
 * Parse and check a formula against the columns it may name: unknown columns and functions and wrong
 * argument counts are refused with their position; the result type is inferred.
 */
export function compileFormula(source: string, resolve: (name: string) => ColumnRef | undefined): CompiledFormula {
  const ast = parseFormula(source);
  const references: string[] = [];
  const typeOf = (node: Node): ResultType => {
    switch (node.kind) {
      case 'number':
        return 'number';
      case 'string':
        return 'string';
      case 'bool':
        return 'bool';
      case 'column': {
        const column = resolve(node.name);
        if (!column) throw new FormulaSyntaxError(node.pos, `column ${node.name} not found`);
        node.key = column.key;
        if (!references.includes(column.key)) references.push(column.key);
        return column.type;
      }
      case 'unary':
        typeOf(node.operand);
        return 'number';
      case 'binary': {
        const [l, r] = [typeOf(node.left), typeOf(node.right)];
        return binaryType(node.op, l, r);
      }
      case 'call': {
        const def = FUNCTIONS.get(node.name);
        if (!def) throw new FormulaSyntaxError(node.pos, `unknown function ${node.name}`);
        if (node.args.length < def.min || node.args.length > def.max) {
          const wanted = def.min === def.max ? `${def.min}` : def.max >= 255 ? `at least ${def.min}` : `${def.min} to ${def.max}`;
          throw new FormulaSyntaxError(node.pos, `function ${node.name} takes ${wanted} argument${wanted === '1' ? '' : 's'}, not ${node.args.length}`);
        }
        const types = node.args.map(typeOf);
        return typeof def.result === 'function' ? def.result(types) : def.result;
      }
    }
  };
  const resultType = typeOf(ast);
  return { source, ast, resultType, references };
}

export function binaryType(op: string, l: ResultType, r: ResultType): ResultType {
  switch (op) {
    case '&':
      return 'string';
    case '+':
      return (l === 'date') !== (r === 'date') ? 'date' : 'number';
    case '-':
      return l === 'date' && r !== 'date' ? 'date' : 'number';
    case '*':
    case '/':
    case '%':
    case '^':
      return 'number';
    default:
      return 'bool';
  }
}

export { common };
