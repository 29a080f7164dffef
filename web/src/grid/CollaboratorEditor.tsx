import type { EditorProps } from 'react-data-grid';
import type { Row } from '../types';
import { ChoicePicker } from './ChoicePicker';
import { Avatar, type RelatedUser } from './people';
import { t } from '../i18n';

/**
 * Picks a collaborator cell's users from the base's users (never free text, so a rule that notifies
 * "users in this column" reaches real people), in the shared picker (ChoicePicker: type to filter,
 * ↑/↓ to move, Enter or Space to toggle, Ctrl+Enter or "Done" to save, Escape to cancel).
 */
export function collaboratorEditor(people: readonly RelatedUser[]) {
  const choices = people.map((p) => ({
    id: p.email,
    text: `${p.name} ${p.contact_email}`,
    content: (
      <>
        <Avatar user={p} />
        <span>
          {p.name || p.contact_email} <span className="muted small">{p.contact_email}</span>
        </span>
      </>
    ),
  }));
  return function CollaboratorEditor({ row, column, onRowChange, onClose }: EditorProps<Row>) {
    const label = typeof column.name === 'string' ? column.name : column.key;
    const initial = Array.isArray(row[column.key]) ? (row[column.key] as unknown[]).filter((v): v is string => typeof v === 'string') : [];
    return (
      <ChoicePicker
        title={t('collaborator.choose', { column: label })}
        findLabel={t('collaborator.find', { column: label })}
        listLabel={t('collaborator.users', { column: label })}
        placeholder={t('collaborator.placeholder')}
        none={t('collaborator.none')}
        className="people"
        choices={choices}
        initial={initial}
        onSave={(chosen) => onRowChange({ ...row, [column.key]: chosen }, true)}
        onCancel={() => onClose(false)}
      />
    );
  };
}
