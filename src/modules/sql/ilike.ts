/**
 * ILIKE for the MySQL grammar (which has no ILIKE): the statement is scanned once, skipping string
 * literals, quoted names and comments as the grammar reads them; each ILIKE word outside them becomes
 * ` LIKE` (same length, so error positions stay true), and after parsing the LIKE nodes that came from
 * an ILIKE are marked `ILIKE` / `NOT ILIKE`. Text inside literals is never touched.
 */
import type { Node } from './parser.js';
import { sqlError } from './sql-error.js';

interface LikeWord {
  offset: number;
  insensitive: boolean;
}

/** The LIKE and ILIKE words of the statement outside literals and comments, in text order. */
function likeWords(text: string): LikeWord[] {
  const words: LikeWord[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === "'" || ch === '"' || ch === '`') {
      i = skipQuoted(text, i, ch);
    } else if ((ch === '-' && text[i + 1] === '-') || ch === '#') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end + 1;
    } else if (ch === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (/[A-Za-z_$\u0080-\uffff]/.test(ch)) {
      let end = i + 1;
      while (end < text.length && /[A-Za-z0-9_$\u0080-\uffff]/.test(text[end]!)) end++;
      const word = text.slice(i, end).toUpperCase();
      if (word === 'LIKE' || word === 'ILIKE') words.push({ offset: i, insensitive: word === 'ILIKE' });
      i = end;
    } else {
      i++;
    }
  }
  return words;
}

/** Index just past the literal opened at `start`: a doubled quote or (not in backticks) a backslash escapes. */
function skipQuoted(text: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '\\' && quote !== '`') i += 2;
    else if (ch === quote && text[i + 1] === quote) i += 2;
    else if (ch === quote) return i + 1;
    else i++;
  }
  return text.length;
}

/** The text the grammar parses: every ILIKE word outside literals replaced by ` LIKE`. */
export function withoutIlike(text: string): string {
  const words = likeWords(text).filter((w) => w.insensitive);
  if (words.length === 0) return text;
  let out = '';
  let from = 0;
  for (const w of words) {
    out += `${text.slice(from, w.offset)} LIKE`;
    from = w.offset + 5;
  }
  return out + text.slice(from);
}

/**
 * Mark the LIKE nodes of `ast` that were ILIKE in `text`: the n-th LIKE node in text order (left
 * operand, operator, right operand) is the n-th LIKE/ILIKE word.
 */
export function markIlike(ast: Node, text: string): void {
  const words = likeWords(text);
  if (!words.some((w) => w.insensitive)) return;
  const likes: Node[] = [];
  // In-order walk without recursion: [node, visited-left] frames.
  const stack: Array<{ value: unknown; emit?: Node }> = [{ value: ast }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.emit) {
      likes.push(frame.emit);
      continue;
    }
    const value = frame.value;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i] });
    } else if (typeof value === 'object' && value !== null) {
      const node = value as Node;
      const op = typeof node.operator === 'string' ? node.operator.toUpperCase() : '';
      const children = Object.entries(node).filter(([key]) => key !== 'loc');
      if (node.type === 'binary_expr' && (op === 'LIKE' || op === 'NOT LIKE')) {
        // Right side, then this LIKE, then left side: they pop left, LIKE, right.
        stack.push({ value: node.right }, { value: null, emit: node }, { value: node.left });
        for (const [key, child] of children.reverse()) if (key !== 'left' && key !== 'right') stack.push({ value: child });
      } else {
        for (let i = children.length - 1; i >= 0; i--) stack.push({ value: children[i]![1] });
      }
    }
  }
  if (likes.length !== words.length) throw sqlError('ILIKE could not be read here; write column ILIKE pattern.');
  likes.forEach((node, i) => {
    if (!words[i]!.insensitive) return;
    node.operator = String(node.operator).toUpperCase() === 'NOT LIKE' ? 'NOT ILIKE' : 'ILIKE';
  });
}
