import { useLayoutEffect, useRef, useState, type InputHTMLAttributes, type KeyboardEvent } from 'react';
import { type Column as GridColumn, type EditorProps, type FormatterProps } from 'react-data-grid';
import type { Column, Row, SelectOption, Table } from '../types';
import type { BaseAccess, WorkspaceRef } from './base';
import { fileItems, filesEditor, filesPreview } from './FilesEditor';
import { linkEditor } from './LinkEditor';
import { formatDuration, isEditable, parseDuration } from './column-types';
import { collaboratorEditor } from './CollaboratorEditor';
import { multipleSelectEditor } from './MultipleSelectEditor';
import { formatDate, formatInstant, safeHref } from './format';
import { Person, type RelatedUser } from './people';
import { useFocusWhenSelected } from './select-column';
import { t } from '../i18n';

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

/** A URL as a link only when it is http, https or mailto (never `javascript:`); else plain text. */
export function UrlText({ value, mailto = false }: { value: string; mailto?: boolean }) {
  const href = safeHref(mailto ? `mailto:${value}` : value);
  if (!href) return <>{value}</>;
  return (
    <a href={href} target={mailto ? undefined : '_blank'} rel="noreferrer noopener">
      {value}
    </a>
  );
}

/** The cell renderer for one column type. */
export function formatterFor(column: Column, people: ReadonlyMap<string, RelatedUser> = new Map(), canEdit = true) {
  const key = column.name;
  switch (column.type) {
    case 'checkbox':
      return function CheckboxCell({ row, onRowChange, isCellSelected }: Props) {
        const ref = useFocusWhenSelected(isCellSelected && canEdit);
        return (
          <input
            ref={ref}
            type="checkbox"
            aria-label={t('cells.keyOfRow', { key })}
            tabIndex={isCellSelected ? 0 : -1}
            checked={row[key] === true}
            disabled={!canEdit}
            // Toggled on click (not change): the grid's own cell click handling must not swallow it.
            onChange={() => undefined}
            onClick={(e) => {
              e.stopPropagation();
              if (canEdit) onRowChange({ ...row, [key]: row[key] !== true });
            }}
          />
        );
      };
    case 'date':
      return ({ row }: Props) => <>{formatDate(row[key], column.data?.format)}</>;
    case 'ctime':
    case 'mtime':
      return ({ row }: Props) => <>{formatInstant(row[key])}</>;
    case 'collaborator':
      return function CollaboratorCell({ row }: Props) {
        const value = row[key];
        if (!Array.isArray(value)) return null;
        return (
          <>
            {value.map((id) => (
              <Person key={String(id)} id={String(id)} people={people} />
            ))}
          </>
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
        return <span aria-label={t('cells.nOfMax', { n, max })}>{'★'.repeat(Math.max(0, Math.min(n, max)))}<span className="muted">{'☆'.repeat(Math.max(0, max - n))}</span></span>;
      };
    case 'duration':
      return ({ row }: Props) => <>{formatDuration(row[key])}</>;
    case 'url':
      return ({ row }: Props) => (typeof row[key] === 'string' ? <UrlText value={row[key] as string} /> : null);
    case 'email':
      return ({ row }: Props) => (typeof row[key] === 'string' ? <UrlText value={row[key] as string} mailto /> : null);
    case 'file':
    case 'image':
      return ({ row }: Props) => <>{fileItems(row[key], column.type).map((f) => f.name).join(', ')}</>;
    default:
      return ({ row }: Props) => <>{display(row[key])}</>;
  }
}

function InputEditor({
  row,
  column,
  onRowChange,
  onClose,
  type,
  toValue,
  fromValue,
  selectOnFocus = false,
  inputProps = {},
}: EProps & { type: string; toValue: (s: string) => unknown; fromValue: (v: unknown) => string; selectOnFocus?: boolean; inputProps?: InputHTMLAttributes<HTMLInputElement> }) {
  const key = column.key;
  const [initial] = useState(() => fromValue(row[key]));
  const [text, setText] = useState(initial);
  // Escape cancels: the blur that follows (the editor closing) must not save the text after all.
  const cancelled = useRef(false);
  // Unchanged text writes nothing: leaving a field must not rewrite (or, for a date, truncate) it.
  const commit = () => (cancelled.current || text === initial ? onClose(false) : onRowChange({ ...row, [key]: toValue(text) }, true));
  return (
    <input
      className="rdg-text-editor"
      aria-label={t('cells.editName', { name: String(column.name) })}
      autoFocus
      type={type}
      value={text}
      {...inputProps}
      // A typed digit that opened a rate or duration editor replaces its value instead of being added to it.
      onFocus={selectOnFocus ? (e) => e.currentTarget.select() : undefined}
      onChange={(e) => {
        cancelled.current = false;
        setText(e.target.value);
      }}
      onBlur={commit}
      onKeyDown={(e: KeyboardEvent) => {
        if (e.key === 'Enter') commit();
        if (e.key === 'Escape') {
          cancelled.current = true;
          setText(initial);
          onClose(false);
        }
      }}
    />
  );
}

/** The in-place editor for one column type (none for read-only types and checkboxes). */
function editorFor(column: Column, people: readonly RelatedUser[]) {
  switch (column.type) {
    case 'number':
      return (p: EProps) => <InputEditor {...p} type="number" toValue={(s) => (s.trim() === '' ? null : Number(s))} fromValue={(v) => (v === null || v === undefined ? '' : String(v))} />;
    case 'rate': {
      // Digits or ↑/↓ (the field's own steps), kept within 0…the column's maximum.
      const max = Number(column.data?.rate_max_number ?? 5);
      const toRate = (s: string) => (s.trim() === '' || !Number.isFinite(Number(s)) ? null : Math.max(0, Math.min(max, Math.round(Number(s)))));
      return (p: EProps) => (
        <InputEditor {...p} type="number" selectOnFocus inputProps={{ min: 0, max, step: 1 }} toValue={toRate} fromValue={(v) => (v === null || v === undefined ? '' : String(v))} />
      );
    }
    case 'date':
      // A format with a time of day gets a date-and-time field (`2026-03-04 09:30` ⇄ `2026-03-04T09:30`).
      if (String(column.data?.format ?? '').includes('HH'))
        return (p: EProps) => (
          <InputEditor {...p} type="datetime-local" toValue={(s) => (s ? s.replace('T', ' ') : null)} fromValue={(v) => (typeof v === 'string' ? v.slice(0, 16).replace(' ', 'T') : '')} />
        );
      return (p: EProps) => <InputEditor {...p} type="date" toValue={(s) => s || null} fromValue={(v) => (typeof v === 'string' ? v.slice(0, 10) : '')} />;
    case 'duration':
      return (p: EProps) => <InputEditor {...p} type="text" selectOnFocus inputProps={{ placeholder: 'h:mm', inputMode: 'numeric' }} toValue={parseDuration} fromValue={formatDuration} />;
    case 'collaborator':
      return collaboratorEditor(people);
    case 'multiple-select':
      return multipleSelectEditor(optionsOf(column));
    case 'single-select':
      return function SelectEditor({ row, column: c, onRowChange, onClose }: EProps) {
        return (
          <select
            autoFocus
            aria-label={t('cells.editName', { name: String(c.name) })}
            className="rdg-text-editor"
            value={typeof row[c.key] === 'string' ? (row[c.key] as string) : ''}
            onChange={(e) => onRowChange({ ...row, [c.key]: e.target.value || null }, true)}
            onBlur={() => onClose(false)}
            onKeyDown={(e) => {
              if (e.key === 'Escape') onClose(false);
            }}
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
        const [initial] = useState(() => (typeof row[c.key] === 'string' ? (row[c.key] as string) : ''));
        const [text, setText] = useState(initial);
        const cancelled = useRef(false);
        const field = useRef<HTMLTextAreaElement>(null);
        useLayoutEffect(() => {
          // The Enter that opened the editor (pressed on the cell) would also type a new line into it.
          const el = field.current;
          if (!el) return;
          const drop = (e: InputEvent) => {
            if (e.inputType === 'insertLineBreak' || e.inputType === 'insertParagraph') e.preventDefault();
          };
          const stop = () => el.removeEventListener('beforeinput', drop);
          el.addEventListener('beforeinput', drop);
          el.addEventListener('keydown', stop, { once: true });
          return stop;
        }, []);
        // Unchanged or cancelled (Escape) text writes nothing when the field is left.
        const commit = () => (cancelled.current || text === initial ? onClose(false) : onRowChange({ ...row, [c.key]: text }, true));
        return (
          <textarea
            ref={field}
            autoFocus
            aria-label={t('cells.editName', { name: String(c.name) })}
            aria-keyshortcuts="Control+Enter"
            className="long-editor"
            value={text}
            onChange={(e) => {
              cancelled.current = false;
              setText(e.target.value);
            }}
            onBlur={commit}
            onKeyDown={(e) => {
              if (e.key === 'Escape') {
                cancelled.current = true;
                setText(initial);
                onClose(false);
              } else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                e.stopPropagation();
                commit();
              } else if (e.key === 'Enter') {
                // A new line: the grid would otherwise take Enter as "close the editor" and drop the text.
                e.stopPropagation();
              }
            }}
          />
        );
      };
    default:
      return (p: EProps) => <InputEditor {...p} type="text" toValue={(s) => s} fromValue={(v) => (v === null || v === undefined ? '' : String(v))} />;
  }
}

export interface GridContext {
  access: BaseAccess;
  table: Table;
  tables: Table[];
  /** The base's users: collaborator names and choices. */
  people: readonly RelatedUser[];
  /** False for a read-only share or an external link: no editors, checkboxes disabled. */
  canEdit: boolean;
  /** The base's workspace (signed-in users): file and image cells can then be edited (read-only users and links preview them). */
  workspace?: WorkspaceRef;
}

/** Grid columns from the table's columns; keys are column names (rows are read with convert_keys). */
export function gridColumns(columns: Column[], context: GridContext): GridColumn<Row>[] {
  const people = new Map(context.people.map((p) => [p.email, p]));
  return columns.map((column, index) => {
    const formatter = formatterFor(column, people, context.canEdit);
    if (column.type === 'file' || column.type === 'image') {
      // Who may not change the cell still opens it: previews and downloads, without upload or remove.
      const editor = context.canEdit ? (context.workspace ? filesEditor(context.workspace, column) : undefined) : filesPreview(context.access, column);
      return { key: column.name, name: column.name, width: column.width ?? 160, resizable: true, formatter, ...(editor ? { editor, editorOptions: { editOnClick: false } } : {}) };
    }
    if (column.type === 'link') {
      return {
        key: column.name,
        name: column.name,
        width: column.width ?? 160,
        resizable: true,
        formatter,
        ...(context.canEdit ? { editor: linkEditor(context.access, context.table, context.tables, column) } : {}),
      };
    }
    const editable = context.canEdit && isEditable(column.type) && column.type !== 'checkbox';
    return {
      key: column.name,
      name: column.name,
      width: column.width ?? 160,
      resizable: true,
      frozen: index === 0,
      formatter,
      ...(editable ? { editor: editorFor(column, context.people), editorOptions: { editOnClick: false } } : {}),
      headerCellClass: isEditable(column.type) ? undefined : 'readonly-head',
    };
  });
}
