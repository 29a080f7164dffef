import { SessionProvider, useSession } from './session';
import { useRoute, href } from './router';
import { Login } from './pages/Login';
import { Settings } from './pages/Settings';
import { Bases } from './pages/Bases';
import { Share } from './pages/Share';
import { Editor } from './pages/Editor';
import { Integrations } from './pages/Integrations';
import { Inbox, Bell } from './pages/Inbox';
import { Admin } from './pages/Admin';
import { GroupPage, Groups } from './pages/Groups';
import { Loading } from './ui';
import { TwoFactor } from './pages/TwoFactor';
import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from './api';
import { ExternalBase, externalLinkToken } from './pages/ExternalBase';
import { t } from './i18n';

export function App() {
  // An external link is opened without an account, so it needs no session.
  const linkToken = externalLinkToken(window.location.pathname);
  if (linkToken) return <ExternalBase token={linkToken} />;
  return (
    <SessionProvider>
      <Shell />
    </SessionProvider>
  );
}

function Shell() {
  const { token, user, signOut } = useSession();
  const route = useRoute();
  // An admin forced two-factor sign-in and it is not set up: the server serves only enrolment (403 elsewhere).
  // The page stays until the user has seen the recovery codes and continues.
  const twoFactor = useQuery(['two-factor'], () => api<{ enabled: boolean; force_2fa: boolean }>('/api/v2.1/user/two-factor-auth/'), { enabled: token !== null && user !== undefined });
  const setupRequired = twoFactor.data?.force_2fa === true && !twoFactor.data.enabled;
  const [enrolling, setEnrolling] = useState(false);
  useEffect(() => {
    if (setupRequired) setEnrolling(true);
  }, [setupRequired]);
  if (!token) return <Login />;
  if (!user || twoFactor.isLoading) return <Loading what={t('session.signingIn')} />;
  if (setupRequired || enrolling) {
    return (
      <>
        <header className="topbar">
          <span className="brand">{t('app.name')}</span>
          <span className="who" title={user.email}>
            {user.name || user.contact_email}
          </span>
          <button type="button" onClick={signOut}>
            {t('session.signOut')}
          </button>
        </header>
        <main>
          <TwoFactor />
          {!setupRequired && (
            <button type="button" onClick={() => setEnrolling(false)}>
              {t('app.continue')}
            </button>
          )}
        </main>
      </>
    );
  }
  return (
    <>
      <header className="topbar">
        <a className="brand" href={href()}>
          {t('app.name')}
        </a>
        <nav aria-label={t('nav.main')}>
          <a href={href()}>{t('nav.bases')}</a>
          <a href={href('groups')}>{t('nav.groups')}</a>
          {user.is_staff && <a href={href('admin')}>{t('nav.admin')}</a>}
          <a href={href('settings')}>{t('nav.settings')}</a>
        </nav>
        <Bell />
        <span className="who" title={user.email}>
          {user.name || user.contact_email}
        </span>
        <button type="button" onClick={signOut}>
          {t('session.signOut')}
        </button>
      </header>
      <main className={route[0] === 'base' && route[3] !== 'share' && route[3] !== 'integrations' ? 'fill' : undefined}>
        <Page route={route} />
      </main>
    </>
  );
}

function Page({ route }: { route: string[] }) {
  const [first, a, b, c, d, e, f] = route;
  switch (first) {
    case 'settings':
      return <Settings />;
    case 'inbox':
      return <Inbox />;
    case 'admin':
      return <Admin />;
    case 'groups':
      return a ? <GroupPage key={a} groupId={a} /> : <Groups />;
    case 'base':
      if (a && b) {
        if (c === 'share') return <Share workspaceId={a} baseName={b} />;
        if (c === 'integrations') return <Integrations workspaceId={a} baseName={b} />;
        return <Editor key={`${a}/${b}`} workspaceId={a} baseName={b} tableId={c === 'table' ? d : undefined} rowId={c === 'table' && e === 'row' ? f : undefined} />;
      }
      return <Bases />;
    default:
      return <Bases />;
  }
}
