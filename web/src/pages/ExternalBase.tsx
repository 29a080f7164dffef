import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, ApiError, enc } from '../api';
import { href, useRoute } from '../router';
import { ErrorText, Loading } from '../ui';
import { BaseEditor } from '../grid/BaseEditor';
import type { BaseAccess } from '../grid/base';
import { t } from '../i18n';
import { serverErrorText } from '../server-errors';

/** `/dtable/external-links/<token>/` or `/dtable/external-links/custom/<name>/`: the link's token, else null. */
export function externalLinkToken(pathname: string): string | null {
  const m = /^\/dtable\/external-links\/(?:custom\/)?([^/]+)\/?$/.exec(pathname);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
}

type LinkAccess = BaseAccess & { dtable_name?: string };

/**
 * A base opened through an external link, without an account: read-only, asking for the link's
 * password when it has one. An unknown, deleted or expired link is one "not found" (the server's).
 */
export function ExternalBase({ token }: { token: string }) {
  const [password, setPassword] = useState<string | null>(null);
  const route = useRoute();
  const access = useQuery(
    ['external-link', token, password],
    () =>
      api<LinkAccess>(`/api/v2.1/external-link-tokens/${enc(token)}/access-token/`, {
        token: null,
        headers: password === null ? {} : { 'x-link-password': password },
      }),
    { retry: false, staleTime: 60 * 60 * 1000, refetchOnWindowFocus: false },
  );
  // 403: the link has a password (none or a wrong one given); 429: too many wrong guesses, wait.
  const needsPassword = access.error instanceof ApiError && (access.error.status === 403 || access.error.status === 429);
  let body;
  if (access.isLoading) body = <Loading what={t('link.opening')} />;
  else if (needsPassword) body = <PasswordForm error={password === null ? null : serverErrorText((access.error as ApiError).message)} onSubmit={setPassword} />;
  else if (access.error)
    body = (
      <>
        <h1>{t('link.unavailable')}</h1>
        <p>{t('link.unavailableText')}</p>
        <ErrorText error={access.error} />
      </>
    );
  else
    body = (
      <BaseEditor
        access={access.data!}
        title={access.data!.dtable_name ?? t('link.sharedBase')}
        tableId={route[0] === 'table' ? route[1] : undefined}
        tableHref={(id) => href('table', id)}
        comments={false}
      />
    );
  return (
    <>
      <header className="topbar">
        <span className="brand">{t('app.name')}</span>
        <span className="muted-inverse">{t('link.banner')}</span>
      </header>
      <main className="fill">{body}</main>
    </>
  );
}

function PasswordForm({ error, onSubmit }: { error: string | null; onSubmit: (password: string) => void }) {
  const [value, setValue] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit(value);
  };
  return (
    <form className="stack narrow" onSubmit={submit} aria-label={t('link.passwordForm')}>
      <h1>{t('link.protected')}</h1>
      <label>
        {t('link.password')}
        <input type="password" autoFocus value={value} onChange={(e) => setValue(e.target.value)} required />
      </label>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit">{t('link.open')}</button>
    </form>
  );
}
