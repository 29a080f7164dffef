import { createRequire } from 'node:module';
import { markIlike, withoutIlike } from './ilike.js';
import { sqlError, SqlError } from './sql-error.js';

/** A node of node-sql-parser's AST. Only the shapes the compiler allow-lists are ever read. */
export type Node = Record<string, unknown>;

export interface ParsedStatement {
  ast: Node;
  /** The `?` placeholders in the order they appear in the text, so `parameters[i]` binds `placeholders[i]`. */
  placeholders: Node[];
  /** The statement text, for keys named after expressions (`COUNT(*)`). */
  text: string;
}

/** Longer statements are refused before parsing (the parser is linear, but 1 MB is plenty for a query). */
export const MAX_SQL_LENGTH = 1_000_000;

// node-sql-parser ships CommonJS bundles; the MySQL grammar matches the original's dialect (backticks, LIMIT m, n).
// Loaded on the first statement: the grammar is large and the start does not need it.
type SqlParser = { astify(sql: string, options?: Record<string, unknown>): unknown };
let parserInstance: SqlParser | null = null;
function sqlParser(): SqlParser {
  if (parserInstance) return parserInstance;
  const { Parser } = createRequire(import.meta.url)('node-sql-parser/build/mysql') as { Parser: new () => SqlParser };
  return (parserInstance = new Parser());
}

export function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parse exactly one statement; syntax errors, stacked statements and oversized input become SqlError. */
export function parseStatement(text: string): ParsedStatement {
  if (text.trim() === '') throw sqlError('sql is empty.');
  if (text.length > MAX_SQL_LENGTH) throw sqlError(`sql is longer than ${MAX_SQL_LENGTH} characters.`);
  let result: unknown;
  try {
    result = sqlParser().astify(withoutIlike(text), PARSE_OPTIONS);
  } catch (error) {
    throw syntaxError(error, text);
  }
  return statementOf(result, text);
}

/** The options parseStatement gives the parser (a SQL thread parses with the same ones). */
export const PARSE_OPTIONS = { database: 'mysql', parseOptions: { includeLocations: true } };

/** The statement from the parser's output (parsed here or on a SQL thread). */
export function statementOf(result: unknown, text: string): ParsedStatement {
  const statements = (Array.isArray(result) ? result : [result]).filter(isNode);
  if (statements.length === 0) throw sqlError('sql is empty.');
  if (statements.length > 1) throw sqlError('Only one statement per request is allowed.');
  const ast = statements[0]!;
  markIlike(ast, text);
  return { ast, placeholders: collectPlaceholders(ast), text };
}

export function syntaxError(error: unknown, text: string): SqlError {
  if (error instanceof RangeError) return sqlError('sql is nested too deeply.');
  const location = (error as { location?: { start?: { offset?: number; line?: number; column?: number } } }).location?.start;
  if (location && typeof location.offset === 'number') {
    const near = text.slice(location.offset, location.offset + 30).split('\n')[0];
    return sqlError(`SQL syntax error at line ${location.line}, column ${location.column}${near ? ` near "${near}"` : ' (unexpected end of statement)'}.`);
  }
  const message = error instanceof Error ? error.message.replace(/^Error:\s*/, '').trim() : '';
  return sqlError(message && message.length <= 200 ? `SQL syntax error: ${message}.` : 'SQL syntax error.');
}

/**
 * Every `?` node in source order. The parser builds each node's properties in the order their text
 * appears (select list, FROM, WHERE, …, LIMIT; left before right), so a depth-first walk over the
 * properties in insertion order meets the placeholders in text order.
 */
function collectPlaceholders(ast: Node): Node[] {
  const found: Node[] = [];
  const stack: unknown[] = [ast];
  // Iterative (the tree can be deep): push children in reverse so they pop in order.
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
    } else if (isNode(value)) {
      if (value.type === 'origin' && value.value === '?') {
        found.push(value);
        continue;
      }
      const children = Object.entries(value).filter(([key]) => key !== 'loc');
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]![1]);
    }
  }
  return found;
}
