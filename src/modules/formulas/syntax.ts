/**
 * The formula language's syntax: a tokenizer and a recursive-descent parser producing an AST whose nodes
 * carry their 0-based position in the source, so every error can point at a character.
 *
 * Precedence, lowest first: comparisons (= <> != > >= < <=), `&`, `+ -`, `* / %`, `^` (right), unary `- +`.
 */

export const MAX_FORMULA_LENGTH = 10_000;
const MAX_DEPTH = 100;
/** Operators in one chain (`a + b + …` builds a tree that deep; evaluation recurses through it). */
const MAX_CHAIN = 500;

export class FormulaSyntaxError extends Error {
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {
    super(`${reason} at position ${position + 1}`);
    this.name = 'FormulaSyntaxError';
  }
}

export type BinaryOp = '+' | '-' | '*' | '/' | '%' | '^' | '&' | '=' | '<>' | '>' | '>=' | '<' | '<=';

export type Node =
  | { kind: 'number'; value: number; pos: number }
  | { kind: 'string'; value: string; pos: number }
  | { kind: 'bool'; value: boolean; pos: number }
  /** `key` is set by compileFormula once the name is resolved. */
  | { kind: 'column'; name: string; pos: number; key?: string }
  | { kind: 'call'; name: string; args: Node[]; pos: number }
  | { kind: 'unary'; op: '-' | '+'; operand: Node; pos: number }
  | { kind: 'binary'; op: BinaryOp; left: Node; right: Node; pos: number };

/** The original's constants (bare names). */
const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E };

/** The original's "operands": functions that are its operators. */
const OPERAND_FUNCTIONS: Record<string, BinaryOp> = {
  add: '+',
  subtract: '-',
  multiply: '*',
  divide: '/',
  greater: '>',
  lessthan: '<',
  greatereq: '>=',
  lessthaneq: '<=',
  equal: '=',
  unequal: '<>',
};

type Token =
  | { type: 'number'; value: number; pos: number }
  | { type: 'string'; value: string; pos: number }
  | { type: 'column'; value: string; pos: number }
  | { type: 'name'; value: string; pos: number }
  | { type: 'op'; value: string; pos: number }
  | { type: 'end'; pos: number };

const OPERATORS = ['<>', '!=', '>=', '<=', '+', '-', '*', '/', '%', '^', '&', '=', '>', '<', '(', ')', ','];

export function tokenize(source: string): Token[] {
  if (source.length > MAX_FORMULA_LENGTH) throw new FormulaSyntaxError(MAX_FORMULA_LENGTH, `formula longer than ${MAX_FORMULA_LENGTH} characters`);
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (/[0-9.]/.test(c)) {
      const m = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/.exec(source.slice(i));
      if (!m) throw new FormulaSyntaxError(i, `unexpected character '${c}'`);
      tokens.push({ type: 'number', value: Number(m[0]), pos: start });
      i += m[0].length;
    } else if (c === '"' || c === "'") {
      let text = '';
      i++;
      for (;;) {
        if (i >= source.length) throw new FormulaSyntaxError(start, 'unterminated string');
        const d = source[i]!;
        if (d === '\\' && i + 1 < source.length) {
          text += source[i + 1];
          i += 2;
        } else if (d === c) {
          // A doubled quote inside a string is one quote (spreadsheet style).
          if (source[i + 1] === c) {
            text += c;
            i += 2;
          } else {
            i++;
            break;
          }
        } else {
          text += d;
          i++;
        }
      }
      tokens.push({ type: 'string', value: text, pos: start });
    } else if (c === '{') {
      const end = source.indexOf('}', i);
      if (end < 0) throw new FormulaSyntaxError(start, "unterminated column reference, missing '}'");
      const name = source.slice(i + 1, end).trim();
      if (name === '') throw new FormulaSyntaxError(start, 'empty column reference');
      tokens.push({ type: 'column', value: name, pos: start });
      i = end + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))!;
      tokens.push({ type: 'name', value: m[0], pos: start });
      i += m[0].length;
    } else {
      const op = OPERATORS.find((o) => source.startsWith(o, i));
      if (!op) throw new FormulaSyntaxError(i, `unexpected character '${c}'`);
      tokens.push({ type: 'op', value: op === '!=' ? '<>' : op, pos: start });
      i += op.length;
    }
  }
  tokens.push({ type: 'end', pos: source.length });
  return tokens;
}

const LEVELS: ReadonlyArray<readonly string[]> = [['=', '<>', '>', '>=', '<', '<='], ['&'], ['+', '-'], ['*', '/', '%']];

class Parser {
  private index = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private isOp(value: string): boolean {
    const t = this.peek();
    return t.type === 'op' && t.value === value;
  }

  private expectOp(value: string): void {
    const t = this.peek();
    if (!this.isOp(value)) throw new FormulaSyntaxError(t.pos, `expected '${value}' but found ${describe(t)}`);
    this.index++;
  }

  parseAll(): Node {
    if (this.peek().type === 'end') throw new FormulaSyntaxError(0, 'empty formula');
    const node = this.level(0);
    const t = this.peek();
    if (t.type !== 'end') throw new FormulaSyntaxError(t.pos, `unexpected ${describe(t)}`);
    return node;
  }

  private level(n: number): Node {
    if (n === LEVELS.length) return this.power();
    let left = this.level(n + 1);
    for (let chain = 1; ; chain++) {
      const t = this.peek();
      if (t.type !== 'op' || !LEVELS[n]!.includes(t.value)) return left;
      if (chain > MAX_CHAIN) throw new FormulaSyntaxError(t.pos, `more than ${MAX_CHAIN} operators in a row (use sum or concatenate)`);
      this.index++;
      const right = this.level(n + 1);
      left = { kind: 'binary', op: t.value as BinaryOp, left, right, pos: t.pos };
    }
  }

  private power(): Node {
    const base = this.unary();
    const t = this.peek();
    if (t.type === 'op' && t.value === '^') {
      this.index++;
      return this.nested(() => ({ kind: 'binary', op: '^', left: base, right: this.power(), pos: t.pos }), t.pos);
    }
    return base;
  }

  private unary(): Node {
    const t = this.peek();
    if (t.type === 'op' && (t.value === '-' || t.value === '+')) {
      this.index++;
      return this.nested(() => ({ kind: 'unary', op: t.value as '-' | '+', operand: this.unary(), pos: t.pos }), t.pos);
    }
    return this.primary();
  }

  private nested(build: () => Node, pos: number): Node {
    if (++this.depth > MAX_DEPTH) throw new FormulaSyntaxError(pos, `formula nested deeper than ${MAX_DEPTH}`);
    try {
      return build();
    } finally {
      this.depth--;
    }
  }

  private primary(): Node {
    const t = this.peek();
    switch (t.type) {
      case 'number':
        this.index++;
        return { kind: 'number', value: t.value, pos: t.pos };
      case 'string':
        this.index++;
        return { kind: 'string', value: t.value, pos: t.pos };
      case 'column':
        this.index++;
        return { kind: 'column', name: t.value, pos: t.pos };
      case 'name':
        return this.nameOrCall(t);
      case 'op':
        if (t.value === '(') {
          this.index++;
          const inner = this.nested(() => this.level(0), t.pos);
          this.expectOp(')');
          return inner;
        }
        throw new FormulaSyntaxError(t.pos, `unexpected ${describe(t)}`);
      case 'end':
        throw new FormulaSyntaxError(t.pos, 'unexpected end of formula');
    }
  }

  private nameOrCall(t: Extract<Token, { type: 'name' }>): Node {
    this.index++;
    if (!this.isOp('(')) {
      const lower = t.value.toLowerCase();
      if (lower === 'true' || lower === 'false') return { kind: 'bool', value: lower === 'true', pos: t.pos };
      if (lower in CONSTANTS) return { kind: 'number', value: CONSTANTS[lower]!, pos: t.pos };
      throw new FormulaSyntaxError(t.pos, `unknown name '${t.value}' (column names go in braces: {${t.value}})`);
    }
    this.index++;
    return this.nested(() => {
      const args: Node[] = [];
      if (!this.isOp(')')) {
        for (;;) {
          args.push(this.level(0));
          if (!this.isOp(',')) break;
          this.index++;
        }
      }
      this.expectOp(')');
      const name = t.value.toLowerCase();
      const op = OPERAND_FUNCTIONS[name];
      if (op) {
        // The original's operand functions are its operators spelled as calls: add(1, 2) is 1 + 2.
        if (args.length !== 2) throw new FormulaSyntaxError(t.pos, `function ${name} takes 2 arguments`);
        return { kind: 'binary', op, left: args[0]!, right: args[1]!, pos: t.pos };
      }
      return { kind: 'call', name, args, pos: t.pos };
    }, t.pos);
  }
}

function describe(t: Token): string {
  switch (t.type) {
    case 'end':
      return 'end of formula';
    case 'string':
      return 'a string';
    case 'number':
      return `number ${t.value}`;
    case 'column':
      return `{${t.value}}`;
    default:
      return `'${t.value}'`;
  }
}

export function parseFormula(source: string): Node {
  return new Parser(tokenize(source)).parseAll();
}
