import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { api } from '../api';
import { useSession } from '../session';
import { ErrorText, useAction } from '../ui';
import type { User } from '../types';

/** The user's own settings. The API has no password or e-mail change endpoint, so neither is offered. */
export function Settings() {
  const { user } = useSession();
  const client = useQueryClient();
  const [name, setName] = useState(user?.name ?? '');
  const [notify, setNotify] = useState(user?.email_notification ?? true);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    const updated = await action.run(() => api<User>('/api/v2.1/user/', { method: 'PUT', body: { name, email_notification: notify } }));
    if (updated) {
      setSaved(true);
      await client.invalidateQueries(['me']);
    }
  };
  return (
    <section>
      <h1>Settings</h1>
      <p className="muted">
        Signed in as {user?.contact_email} ({user?.email})
      </p>
      <form onSubmit={submit} className="stack" aria-label="Settings">
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} />
        </label>
        <label className="check">
          <input type="checkbox" checked={notify} onChange={(e) => setNotify(e.target.checked)} />
          E-mail me about notifications
        </label>
        <button type="submit" disabled={action.busy}>
          Save settings
        </button>
        {saved && <p role="status">Saved.</p>}
        <ErrorText error={action.error} />
      </form>
    </section>
  );
}
