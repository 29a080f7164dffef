import type { Column } from '../types';
import { isEditable, parseDuration } from './column-types';
import { cellText } from './search';

/** A block copied from a spreadsheet: tab-separated cells, one row a line (a trailing newline ends it). */
export function parseBlock(text: string): string[][] {
  const lines = text.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
  return lines.map((line) => line.split('\t'));
}

/** The text a cell puts on the clipboard. */
export function copyText(value: unknown): string {
  return cellText(value);
}

/**
 * A pasted text as the value of a column of this type; `undefined` for columns that cannot take
 * pasted text (read-only types, links, collaborators: those need real rows and users).
 */
export function pastedValue(column: Column, text: string): unknown {
  if (!isEditable(column.type) || column.type === 'collaborator' || column.type === 'link') return undefined;
  const t = text.trim();
  switch (column.type) {
    case 'number':
    case 'rate': {
      if (t === '') return null;
      const n = Number(t.replace(',', '.'));
      return Number.isFinite(n) ? n : undefined;
    }
    case 'checkbox':
      return ['true', '1', 'yes', 'x', '✓'].includes(t.toLowerCase());
    case 'duration':
      return parseDuration(t);
    case 'multiple-select':
      return t ? t.split(/\s*,\s*/) : [];
    case 'date':
    case 'single-select':
      return t || null;
    default:
      return text;
  }
}
