import { useState, type Dispatch, type ReactNode, type FormEvent, type SetStateAction } from 'react';
import { ApiError } from './api';
import { t } from './i18n';
import { serverErrorText } from './server-errors';

export function Loading({ what = t('common.loading') }: { what?: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null;
  // The server's messages are English by contract: shown in the user's language when known.
  const message = error instanceof ApiError ? serverErrorText(error.message) : error instanceof Error ? error.message : String(error);
  return (
    <p className="error" role="alert">
      {message}
    </p>
  );
}

/**
 * After a form's value was saved, empties the field only if it still holds what was sent: the live
 * channel may show the saved thing before the answer arrives, and the user may have typed the next one.
 */
export function clearIfSent<T>(set: Dispatch<SetStateAction<T>>, sent: T, empty: T): void {
  set((current) => (current === sent ? empty : current));
}

/** A delete (or other destructive) button that asks first. */
export function ConfirmButton(props: { label: string; question: string; onConfirm: () => void; disabled?: boolean; className?: string }) {
  return (
    <button
      type="button"
      className={props.className ?? 'danger'}
      disabled={props.disabled}
      onClick={() => {
        if (window.confirm(props.question)) props.onConfirm();
      }}
    >
      {props.label}
    </button>
  );
}

/** A one-field form: "New base name" + "Create". */
export function InlineForm(props: { label: string; button: string; onSubmit: (value: string) => Promise<unknown> | void; initial?: string; type?: string }) {
  const [value, setValue] = useState(props.initial ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const sent = value;
    try {
      await props.onSubmit(sent.trim());
      clearIfSent(setValue, sent, props.initial ?? '');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="inline" onSubmit={submit}>
      <input aria-label={props.label} placeholder={props.label} value={value} type={props.type ?? 'text'} onChange={(e) => setValue(e.target.value)} required />
      <button type="submit" disabled={busy}>
        {props.button}
      </button>
      <ErrorText error={error} />
    </form>
  );
}

/** Runs an async action, remembering its error and busy state for display. */
export function useAction() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const run = async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run, setError };
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setDone(true);
        } catch {
          window.prompt(t('ui.copy'), text);
        }
      }}
    >
      {done ? t('ui.copied') : label}
    </button>
  );
}

/** A base share's permission, as the sharing pages offer it (users and groups alike). */
export function PermissionSelect({ label, value, onChange }: { label: string; value: string; onChange: (permission: string) => void }) {
  return (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.target.value)}>
      {SHARE_PERMISSIONS.map(([permission, text]) => (
        <option key={permission} value={permission}>
          {text}
        </option>
      ))}
    </select>
  );
}

const SHARE_PERMISSIONS: Array<[string, string]> = [
  ['r', 'Read-only'],
  ['rw', 'Read-write'],
  ['admin', 'Admin'],
];

/** A table and one of its views, picked from the base (rules and automations). */
export function TableViewPicker<T extends { _id: string; name: string; views: Array<{ _id: string; name: string }> }>(props: {
  label: string;
  tables: T[];
  table: T;
  viewId: string | undefined;
  onTable: (tableId: string) => void;
  onView: (viewId: string) => void;
}) {
  return (
    <>
      <select aria-label={t('ui.labelTable', { label: props.label })} value={props.table._id} onChange={(e) => props.onTable(e.target.value)}>
        {props.tables.map((x) => (
          <option key={x._id} value={x._id}>
            {x.name}
          </option>
        ))}
      </select>
      <select aria-label={t('ui.labelView', { label: props.label })} value={props.viewId} onChange={(e) => props.onView(e.target.value)}>
        {props.table.views.map((v) => (
          <option key={v._id} value={v._id}>
            {v.name}
          </option>
        ))}
      </select>
    </>
  );
}
