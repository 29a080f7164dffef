import { useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { createPortal } from 'react-dom';
import type { EditorProps } from 'react-data-grid';
import type { Row } from '../types';
import { Avatar, type RelatedUser } from './people';
import { t } from '../i18n';

/**
 * Picks a collaborator cell's users from the base's users (never free text, so a rule that notifies
 * "users in this column" reaches real people). Keyboard: type to filter, ↑/↓ to move, Space or Enter
 * to toggle, Ctrl+Enter or "Done" to save, Escape to cancel.
 */
export function collaboratorEditor(people: readonly RelatedUser[]) {
  return function CollaboratorEditor({ row, column, onRowChange, onClose }: EditorProps<Row>) {
    const label = typeof column.name === 'string' ? column.name : column.key;
    const initial = Array.isArray(row[column.key]) ? (row[column.key] as unknown[]).filter((v): v is string => typeof v === 'string') : [];
    const [chosen, setChosen] = useState<string[]>(initial);
    const [filter, setFilter] = useState('');
    const [active, setActive] = useState(0);
    const list = useRef<HTMLUListElement>(null);
    const shown = useMemo(() => {
      const f = filter.trim().toLowerCase();
      return people.filter((p) => !f || `${p.name} ${p.contact_email}`.toLowerCase().includes(f));
    }, [filter]);
    const toggle = (id: string) => setChosen((c) => (c.includes(id) ? c.filter((x) => x !== id) : [...c, id]));
    const save = () => onRowChange({ ...row, [column.key]: chosen }, true);
    const onKey = (e: KeyboardEvent) => {
      e.stopPropagation();
      if (e.key === 'Escape') onClose(false);
      else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) save();
      else if (e.key === 'ArrowDown') setActive((a) => Math.min(a + 1, shown.length - 1));
      else if (e.key === 'ArrowUp') setActive((a) => Math.max(a - 1, 0));
      else if ((e.key === 'Enter' || (e.key === ' ' && e.target !== e.currentTarget.querySelector('input'))) && shown[active]) toggle(shown[active]!.email);
      else return;
      e.preventDefault();
    };
    const activeId = shown[active] ? `collab-${shown[active]!.email}` : undefined;
    return createPortal(
      <div className="dialog-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose(false)}>
        <div className="dialog" role="dialog" aria-modal="true" aria-label={t('collaborator.choose', { column: label })} onKeyDown={onKey}>
          <input
            autoFocus
            role="combobox"
            aria-label={t('collaborator.find', { column: label })}
            aria-expanded="true"
            aria-controls="collab-list"
            aria-activedescendant={activeId}
            placeholder={t('collaborator.placeholder')}
            value={filter}
            onChange={(e) => {
              setFilter(e.target.value);
              setActive(0);
            }}
          />
          <ul id="collab-list" ref={list} className="choices people" role="listbox" aria-multiselectable="true" aria-label={t('collaborator.users', { column: label })}>
            {shown.map((p, i) => (
              <li
                key={p.email}
                id={`collab-${p.email}`}
                role="option"
                aria-selected={chosen.includes(p.email)}
                className={i === active ? 'active' : undefined}
                onMouseDown={(e) => e.preventDefault()}
                onClick={() => {
                  setActive(i);
                  toggle(p.email);
                }}
              >
                <span className="tick" aria-hidden="true">{chosen.includes(p.email) ? '✓' : ''}</span>
                <Avatar user={p} />
                <span>
                  {p.name || p.contact_email} <span className="muted small">{p.contact_email}</span>
                </span>
              </li>
            ))}
            {shown.length === 0 && <li className="muted">{t('collaborator.none')}</li>}
          </ul>
          <div className="actions">
            <button type="button" className="primary" onClick={save}>
              {t('common.done')}
            </button>
            <button type="button" onClick={() => onClose(false)}>
              {t('common.cancel')}
            </button>
          </div>
        </div>
      </div>,
      document.body,
    );
  };
}
