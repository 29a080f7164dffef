import { useState } from 'react';
import { useBaseAccess, useMetadata } from '../grid/base';
import { CopyButton, Loading } from '../ui';
import { t } from '../i18n';

const PLACEHOLDER = 'YOUR_API_TOKEN';

/** The Base-Token exchange and a first read of this base, in curl, Python and JavaScript, ready to paste. */
export function snippets(origin: string, baseUuid: string, table: string): Record<'curl' | 'python' | 'javascript', string> {
  const rows = `${origin}/api-gateway/api/v2/dtables/${baseUuid}/rows/?table_name=${encodeURIComponent(table)}&convert_keys=true`;
  return {
    curl: [
      '# 1. Exchange the API-Token for a Base-Token (valid 3 days)',
      `BASE_TOKEN=$(curl -s -H "Authorization: Token ${PLACEHOLDER}" \\`,
      `  ${origin}/api/v2.1/dtable/app-access-token/ | sed 's/.*"access_token":"\\([^"]*\\)".*/\\1/')`,
      '# 2. Read the rows of a table',
      `curl -s -H "Authorization: Token $BASE_TOKEN" "${rows}"`,
    ].join('\n'),
    python: [
      '# pip install seatable-api',
      'from seatable_api import Base',
      '',
      `base = Base("${PLACEHOLDER}", "${origin}")`,
      'base.auth()  # exchanges the API-Token for a Base-Token',
      `print(base.list_rows(${JSON.stringify(table)}))`,
    ].join('\n'),
    javascript: [
      `const server = ${JSON.stringify(origin)};`,
      `const apiToken = ${JSON.stringify(PLACEHOLDER)};`,
      '// 1. Exchange the API-Token for a Base-Token (valid 3 days)',
      "const auth = await fetch(`${server}/api/v2.1/dtable/app-access-token/`, { headers: { authorization: `Token ${apiToken}` } });",
      'const { access_token, dtable_uuid } = await auth.json();',
      '// 2. Read the rows of a table',
      `const res = await fetch(\`\${server}/api-gateway/api/v2/dtables/\${dtable_uuid}/rows/?table_name=${encodeURIComponent(table)}&convert_keys=true\`, {`,
      '  headers: { authorization: `Token ${access_token}` },',
      '});',
      'console.log((await res.json()).rows);',
    ].join('\n'),
  };
}

/** "Use the API": how a script reaches this base, with an API-Token made above. */
export function UseApi({ workspaceId, baseName }: { workspaceId: string; baseName: string }) {
  const access = useBaseAccess(workspaceId, baseName);
  const metadata = useMetadata(access.data);
  const [language, setLanguage] = useState<'curl' | 'python' | 'javascript'>('curl');
  if (!access.data || !metadata.data) return <Loading what={t('useApi.preparingTheExamples')} />;
  const code = snippets(window.location.origin, access.data.dtable_uuid, metadata.data.tables[0]?.name ?? 'Table1')[language];
  return (
    <section aria-labelledby="use-api">
      <h2 id="use-api">{t('useApi.useTheApi')}</h2>
      <p className="muted">
        {t('useApi.createAnApiToken')}{' '}<code>{PLACEHOLDER}</code>{t('useApi.theFullReferenceIs')}{' '}<a href="/api/docs/">{t('useApi.apiDocs')}</a>.
      </p>
      <div className="inline" role="radiogroup" aria-label={t('useApi.exampleLanguage')}>
        {(['curl', 'python', 'javascript'] as const).map((l) => (
          <label key={l} className="check">
            <input type="radio" name="api-language" checked={language === l} onChange={() => setLanguage(l)} />
            {l === 'curl' ? t('useApi.curl') : l === 'python' ? t('useApi.python') : t('useApi.javascript')}
          </label>
        ))}
        <CopyButton text={code} label={t('useApi.copyExample')} />
      </div>
      <pre className="code" data-testid={`api-example-${language}`} tabIndex={0} aria-label={t('useApi.languageExample', { language })}>
        {code}
      </pre>
    </section>
  );
}
