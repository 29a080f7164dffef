import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { api } from '../api';
import { useSession } from '../session';
import { ErrorText, useAction } from '../ui';
import type { User } from '../types';
import { TwoFactor } from './TwoFactor';
import { t } from '../i18n';

/** The user's own settings: name, e-mail notifications, password. (The API has no e-mail change.) */
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
      <h1>{t('settings.title')}</h1>
      <p className="muted">
        {t('settings.signedInAs', { email: user?.contact_email ?? '', id: user?.email ?? '' })}
      </p>
      <form onSubmit={submit} className="stack" aria-label={t('settings.title')}>
        <label>
          {t('settings.name')}
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={255} />
        </label>
        <label className="check">
          <input type="checkbox" checked={notify} onChange={(e) => setNotify(e.target.checked)} />
          {t('settings.emailNotifications')}
        </label>
        <button type="submit" disabled={action.busy}>
          {t('settings.save')}
        </button>
        {saved && <p role="status">{t('settings.saved')}</p>}
        <ErrorText error={action.error} />
      </form>
      <ChangePassword />
      <TwoFactor />
    </section>
  );
}

/**
 * The server rotates the Account-Token when the password changes, so the console signs in again
 * with the new password at once and carries on with the new token.
 */
function ChangePassword() {
  const { user, signIn } = useSession();
  const [old, setOld] = useState('');
  const [fresh, setFresh] = useState('');
  const [repeat, setRepeat] = useState('');
  const [done, setDone] = useState(false);
  const action = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setDone(false);
    if (fresh !== repeat) {
      action.setError(new Error(t('password.mismatch')));
      return;
    }
    const changed = await action.run(async () => {
      await api('/api/v2.1/user/password/', { method: 'PUT', body: { old_password: old, new_password: fresh } });
      await signIn(user!.contact_email, fresh);
      return true;
    });
    if (changed) {
      setOld('');
      setFresh('');
      setRepeat('');
      setDone(true);
    }
  };
  return (
    <form onSubmit={submit} className="stack" aria-label={t('password.change')}>
      <h2>{t('password.title')}</h2>
      <label>
        {t('password.current')}
        <input type="password" autoComplete="current-password" value={old} onChange={(e) => setOld(e.target.value)} required />
      </label>
      <label>
        {t('password.new')}
        <input type="password" autoComplete="new-password" value={fresh} onChange={(e) => setFresh(e.target.value)} required />
      </label>
      <label>
        {t('password.repeat')}
        <input type="password" autoComplete="new-password" value={repeat} onChange={(e) => setRepeat(e.target.value)} required />
      </label>
      <button type="submit" disabled={action.busy}>
        {t('password.change')}
      </button>
      {done && <p role="status">{t('password.changed')}</p>}
      <ErrorText error={action.error} />
    </form>
  );
}
