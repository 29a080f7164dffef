import { useState, type FormEvent } from 'react';
import { useSession } from '../session';
import { ErrorText, useAction } from '../ui';
import { t } from '../i18n';

export function Login() {
  const { signIn, ended } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(() => signIn(email, password));
  };
  return (
    <main className="login">
      <h1>{t('app.name')}</h1>
      {ended && (
        <p className="notice" role="status">
          {ended}
        </p>
      )}
      <form onSubmit={submit} aria-label={t('login.form')}>
        <label>
          {t('login.email')}
          <input type="email" autoComplete="username" value={email} onChange={(e) => setEmail(e.target.value)} required />
        </label>
        <label>
          {t('login.password')}
          <input type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
        </label>
        <button type="submit" disabled={action.busy}>
          {t('login.submit')}
        </button>
        <ErrorText error={action.error} />
      </form>
    </main>
  );
}
