import { useState, type KeyboardEvent } from 'react';
import { TextEditor, type Column as GridColumn, type EditorProps, type FormatterProps } from 'react-data-grid';
import type { Column, Row, SelectOption, Table } from '../types';
import type { BaseAccess } from './base';
import { linkEditor } from './LinkEditor';
import { formatDuration, isEditable, parseDuration } from './column-types';

type Props = FormatterProps<Row>;
type EProps = EditorProps<Row>;

function optionsOf(column: Column): SelectOption[] {
  return column.data?.options ?? [];
}

function Chip({ option, name }: { option?: SelectOption; name: string }) {
  return (
    <span className="chip" style={{ background: option?.color ?? '#eee', color: option?.textColor ?? '#222' }}>
      {name}
    </span>
  );
}

function display(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'object' && v ? String((v as Record<string, unknown>).display_value ?? (v as Record<string, unknown>).row_id ?? '') : String(v))).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The cell renderer for one column type. */
function formatterFor(column: Column) {
  const key = column.name;
  switch (column.type) {
    case 'checkbox':
      return function CheckboxCell({ row, onRowChange, isCellSelected }: Props) {
        return (
          <input
            type="checkbox"
            aria-label={`${key} of row`}
            tabIndex={isCellSelected ? 0 : -1}
            checked={row[key] === true}
            // Toggled on click (not change): the grid's own cell click handling must not swallow it.
            onChange={() => undefined}
            onClick={(e) => {
              e.stopPropagation();
              onRowChange({ ...row, [key]: row[key] !== true });
            }}
          />
        );
      };
    case 'single-select':
      return function SelectCell({ row }: Props) {
        const value = row[key];
        if (typeof value !== 'string' || !value) return null;
        return <Chip name={value} option={optionsOf(column).find((o) => o.name === value || o.id === value)} />;
      };
    case 'multiple-select':
      return function MultiCell({ row }: Props) {
        const value = row[key];
        if (!Array.isArray(value)) return null;
        return (
          <>
            {value.map((v) => (
              <Chip key={String(v)} name={String(v)} option={optionsOf(column).find((o) => o.name === v || o.id === v)} />
            ))}
          </>
        );
      };
    case 'rate':
      return function RateCell({ row }: Props) {
        const n = Number(row[key] ?? 0);
        const max = Number(column.data?.rate_max_number ?? 5);
        return <span aria-label={`${n} of ${max}`}>{'★'.repeat(Math.max(0, Math.min(n, max)))}<span className="muted">{'☆'.repeat(Math.max(0, max - n))}</span></span>;
      };
    case 'duration':
      return ({ row }: Props) => <>{formatDuration(row[key])}</>;
    case 'url':
      return ({ row }: Props) => (typeof row[key] === 'string' ? <a href={row[key] as string} target="_blank" rel="noreferrer noopener">{row[key] as string}</a> : null);
    case 'email':
      return ({ row }: Props) => (typeof row[key] === 'string' ? <a href={`mailto:${row[key] as string}`}>{row[key] as string}</a> : null);
    default:
      return ({ row }: Props) => <>{display(row[key])}</>;
  }
}

function InputEditor({ row, column, onRowChange, onClose, type, toValue, fromValue }: EProps & { type: string; toValue: (s: string) => unknown; fromValue: (v: unknown) => string }) {
  const key = column.key;
  const [text, setText] = useState(fromValue(row[key]));
  const commit = () => onRowChange({ ...row, [key]: toValue(text) }, true);
  return (
    <input
      className="rdg-text-editor"
      aria-label={`Edit ${column.name}`}
      autoFocus
      type={type}
      value={text}
      onChange={(e) => setText(e.target.value)}
      onBlur={commit}
      onKeyDown={(e: KeyboardEvent) => {
        if (e.key === 'Enter') commit();
        if (e.key === 'Escape') onClose(false);
      }}
    />
  );
}

const splitList = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** The in-place editor for one column type (none for read-only types and checkboxes). */
function editorFor(column: Column) {
  switch (column.type) {
    case 'number':
    case 'rate':
      return (p: EProps) => <InputEditor {...p} type="number" toValue={(s) => (s.trim() === '' ? null : Number(s))} fromValue={(v) => (v === null || v === undefined ? '' : String(v))} />;
    case 'date':
      return (p: EProps) => <InputEditor {...p} type="date" toValue={(s) => s || null} fromValue={(v) => (typeof v === 'string' ? v.slice(0, 10) : '')} />;
    case 'duration':
      return (p: EProps) => <InputEditor {...p} type="text" toValue={parseDuration} fromValue={formatDuration} />;
    case 'multiple-select':
    case 'collaborator':
      return (p: EProps) => <InputEditor {...p} type="text" toValue={splitList} fromValue={(v) => (Array.isArray(v) ? v.join(', ') : '')} />;
    case 'single-select':
      return function SelectEditor({ row, column: c, onRowChange, onClose }: EProps) {
        return (
          <select
            autoFocus
            aria-label={`Edit ${c.name}`}
            className="rdg-text-editor"
            value={typeof row[c.key] === 'string' ? (row[c.key] as string) : ''}
            onChange={(e) => onRowChange({ ...row, [c.key]: e.target.value || null }, true)}
            onBlur={() => onClose(false)}
          >
            <option value="">—</option>
            {optionsOf(column).map((o) => (
              <option key={o.id} value={o.name}>
                {o.name}
              </option>
            ))}
          </select>
        );
      };
    case 'long-text':
      return function LongTextEditor({ row, column: c, onRowChange, onClose }: EProps) {
        const [text, setText] = useState(typeof row[c.key] === 'string' ? (row[c.key] as string) : '');
        return (
          <textarea
            autoFocus
            aria-label={`Edit ${c.name}`}
            className="long-editor"
            value={text}
            onChange={(e) => setText(e.target.value)}
            onBlur={() => onRowChange({ ...row, [c.key]: text }, true)}
            onKeyDown={(e) => {
              if (e.key === 'Escape') onClose(false);
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) onRowChange({ ...row, [c.key]: text }, true);
            }}
          />
        );
      };
    default:
      return TextEditor;
  }
}

/** Grid columns from the table's columns; keys are column names (rows are read with convert_keys). */
export function gridColumns(columns: Column[], context?: { access: BaseAccess; table: Table; tables: Table[] }): GridColumn<Row>[] {
  return columns.map((column, index) => {
    if (column.type === 'link' && context) {
      return {
        key: column.name,
        name: column.name,
        width: column.width ?? 160,
        resizable: true,
        formatter: formatterFor(column),
        editor: linkEditor(context.access, context.table, context.tables, column),
      };
    }
    const editable = isEditable(column.type) && column.type !== 'checkbox';
    return {
      key: column.name,
      name: column.name,
      width: column.width ?? 160,
      resizable: true,
      frozen: index === 0,
      formatter: formatterFor(column),
      ...(editable ? { editor: editorFor(column), editorOptions: { editOnClick: false } } : {}),
      headerCellClass: isEditable(column.type) ? undefined : 'readonly-head',
    };
  });
}
