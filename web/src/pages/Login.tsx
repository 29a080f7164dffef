import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api';
import { useSession } from '../session';
import { ErrorText, useAction } from '../ui';
import { t } from '../i18n';

export function Login() {
  const { signIn, ended } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const action = useAction();
  const [needsCode, setNeedsCode] = useState(false);
  const sso = useQuery(['sso'], () => api<{ enabled: boolean; login_url: string | null }>('/api/v2.1/sso/oidc/', { token: null }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      try {
        await signIn(email, password, code.trim() || undefined);
      } catch (error) {
        // The server answers "Two factor auth token is missing/invalid." when the account has 2FA on.
        if (error instanceof Error && /two factor/i.test(error.message)) setNeedsCode(true);
        throw error;
      }
    });
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
        {needsCode && (
          <label>
            {t('login.code')}
            <input inputMode="numeric" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value)} maxLength={11} />
          </label>
        )}
        <button type="submit" disabled={action.busy}>
          {t('login.submit')}
        </button>
        <ErrorText error={action.error} />
      </form>
      {sso.data?.enabled && sso.data.login_url && (
        <p>
          <a className="button" href={sso.data.login_url}>
            {t('login.sso')}
          </a>
        </p>
      )}
    </main>
  );
}
