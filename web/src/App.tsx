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
  if (!token) return <Login />;
  if (!user) return <Loading what={t('session.signingIn')} />;
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
