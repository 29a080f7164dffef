import { useMemo, useState, type KeyboardEvent, type ReactNode } from 'react';
import { createPortal } from 'react-dom';
import { t } from '../i18n';

let pickers = 0;

export interface Choice {
  id: string;
  /** What typing matches (lower-cased here). */
  text: string;
  /** How the choice is shown; its text when not given. */
  content?: ReactNode;
}

/**
 * A dialog that picks several of a list of choices, used by the collaborator, link and multiple select
 * editors (one widget for all of them, after the WAI-ARIA combobox with a multi-select listbox):
 * the filter field keeps the focus and points at the active choice (aria-activedescendant); typing
 * filters, ↑/↓ (Home/End) move, Enter toggles (Space too, on the list: Tab moves there), Ctrl+Enter or
 * "Done" saves, Escape or "Cancel" closes without saving; Tab stays in the dialog. Key presses stop
 * here: the grid behind it must not act on them.
 */
export function ChoicePicker({
  title,
  heading,
  findLabel,
  listLabel,
  placeholder,
  none,
  choices,
  initial,
  onSave,
  onCancel,
  busy = false,
  status,
  className,
  saveText = t('common.done'),
}: {
  /** The dialog's accessible name. */
  title: string;
  heading?: string;
  findLabel: string;
  listLabel: string;
  placeholder?: string;
  /** Shown when no choice matches the filter. */
  none: string;
  choices: readonly Choice[];
  initial: readonly string[];
  onSave: (chosen: string[]) => void;
  onCancel: () => void;
  busy?: boolean;
  /** Loading or error text under the list. */
  status?: ReactNode;
  className?: string;
  /** The save button's text ("Done" unless told). */
  saveText?: string;
}) {
  const [chosen, setChosen] = useState<string[]>(() => [...initial]);
  const [filter, setFilter] = useState('');
  const [active, setActive] = useState(0);
  const [prefix] = useState(() => `picker-${++pickers}`);
  const shown = useMemo(() => {
    const f = filter.trim().toLowerCase();
    return choices.filter((c) => !f || c.text.toLowerCase().includes(f));
  }, [filter, choices]);
  const at = Math.min(active, Math.max(shown.length - 1, 0));
  const toggle = (id: string) => setChosen((c) => (c.includes(id) ? c.filter((x) => x !== id) : [...c, id]));
  const save = () => {
    if (!busy) onSave(chosen);
  };
  const onKey = (e: KeyboardEvent) => {
    e.stopPropagation();
    const inFilter = (e.target as HTMLElement).getAttribute('role') === 'combobox';
    if (e.key === 'Tab') {
      // A modal dialog keeps the focus: Tab from its last control goes to its first, Shift+Tab back.
      const controls = [...e.currentTarget.querySelectorAll<HTMLElement>('input, [role=listbox], button:not(:disabled)')];
      const edge = e.shiftKey ? controls[0] : controls[controls.length - 1];
      if (e.target !== edge) return;
      (e.shiftKey ? controls[controls.length - 1] : controls[0])?.focus();
    } else if (e.key === 'Escape') onCancel();
    else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) save();
    else if (e.key === 'ArrowDown') setActive(Math.min(at + 1, shown.length - 1));
    else if (e.key === 'ArrowUp') setActive(Math.max(at - 1, 0));
    else if (e.key === 'Home' && !inFilter) setActive(0);
    else if (e.key === 'End' && !inFilter) setActive(shown.length - 1);
    else if ((e.key === 'Enter' || (e.key === ' ' && !inFilter)) && shown[at] && (inFilter || (e.target as HTMLElement).getAttribute('role') === 'listbox')) toggle(shown[at]!.id);
    else return;
    e.preventDefault();
  };
  const optionId = (i: number) => `${prefix}-option-${i}`;
  const activeId = shown[at] ? optionId(at) : undefined;
  const listId = `${prefix}-list`;
  return createPortal(
    <div className="dialog-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onCancel()}>
      <div className={`dialog ${className ?? ''}`} role="dialog" aria-modal="true" aria-label={title} onKeyDown={onKey}>
        {heading && <h3>{heading}</h3>}
        <input
          autoFocus
          role="combobox"
          aria-label={findLabel}
          aria-expanded="true"
          aria-controls={listId}
          aria-autocomplete="list"
          aria-activedescendant={activeId}
          placeholder={placeholder}
          value={filter}
          onChange={(e) => {
            setFilter(e.target.value);
            setActive(0);
          }}
        />
        <ul id={listId} className="choices picker" role="listbox" tabIndex={0} aria-multiselectable="true" aria-label={listLabel} aria-activedescendant={activeId}>
          {shown.map((c, i) => (
            <li
              key={c.id}
              id={optionId(i)}
              role="option"
              aria-selected={chosen.includes(c.id)}
              className={i === at ? 'active' : undefined}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => {
                setActive(i);
                toggle(c.id);
              }}
            >
              <span className="tick" aria-hidden="true">
                {chosen.includes(c.id) ? '✓' : ''}
              </span>
              {c.content ?? <span>{c.text}</span>}
            </li>
          ))}
        </ul>
        {shown.length === 0 && !status && <p className="muted">{none}</p>}
        {status}
        <div className="actions">
          <button type="button" className="primary" onClick={save} disabled={busy}>
            {saveText}
          </button>
          <button type="button" onClick={onCancel}>
            {t('common.cancel')}
          </button>
        </div>
      </div>
    </div>,
    document.body,
  );
}
