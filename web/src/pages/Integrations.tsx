import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, basePath, rateLimitSeen } from '../api';
import { href } from '../router';
import { ConfirmButton, CopyButton, Empty, ErrorText, Loading, clearIfSent, useAction } from '../ui';
import { Webhooks } from './Webhooks';
import { Rules } from './Rules';
import { Automations } from './Automations';
import { UseApi } from './UseApi';
import { t } from '../i18n';

interface ApiToken {
  app_name: string;
  api_token: string;
  generated_by: string;
  generated_at: string;
  last_access: string;
  permission: string;
  tables?: string[];
  operations?: string[];
  allowed_networks?: string[];
  expires_at?: string;
  rate_limit?: number;
}

const OPERATIONS: Array<[string, string]> = [
  ['read_rows', 'read rows'],
  ['write_rows', 'write rows'],
  ['structure', 'change structure'],
  ['sql', 'SQL'],
  ['comments', 'comments'],
  ['files', 'files'],
];

const list = (text: string) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);

/** The optional scope fields of a new API-Token; only the fields filled in are sent (issue 33). */
function scopeBody(scope: { tables: string; operations: string[]; networks: string; expires: string; rate: string }): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (list(scope.tables).length > 0) body.tables = list(scope.tables);
  if (scope.operations.length > 0) body.operations = scope.operations;
  if (list(scope.networks).length > 0) body.allowed_networks = list(scope.networks);
  if (scope.expires) body.expires_at = new Date(scope.expires).toISOString();
  if (scope.rate.trim()) body.rate_limit = Number(scope.rate);
  return body;
}

function scopeSummary(t: ApiToken): string {
  const parts = [];
  if (t.tables?.length) parts.push(`tables: ${t.tables.join(', ')}`);
  if (t.operations?.length) parts.push(`operations: ${t.operations.join(', ')}`);
  if (t.allowed_networks?.length) parts.push(`networks: ${t.allowed_networks.join(', ')}`);
  if (t.expires_at) parts.push(`expires ${t.expires_at.slice(0, 16).replace('T', ' ')}`);
  if (t.rate_limit) parts.push(`${t.rate_limit}/min`);
  return parts.join('; ') || 'whole base';
}

/** API-Tokens, webhooks, notification rules and automations of one base. */
export function Integrations({ workspaceId, baseName }: { workspaceId: string; baseName: string }) {
  return (
    <section>
      <p>
        <a href={href('base', workspaceId, baseName)}>← {baseName}</a>
      </p>
      <h1>{t('integrations.integrationsOfBasename', { baseName })}</h1>
      <ApiTokens workspaceId={workspaceId} baseName={baseName} />
      <UseApi workspaceId={workspaceId} baseName={baseName} />
      <Webhooks workspaceId={workspaceId} baseName={baseName} />
      <Rules workspaceId={workspaceId} baseName={baseName} />
      <Automations workspaceId={workspaceId} baseName={baseName} />
      <h2>{t('integrations.rateLimit')}</h2>
      <p className="muted">
        {rateLimitSeen.limit
          ? t('integrations.lastBaseRequestRemaining', { remaining: rateLimitSeen.remaining, limit: rateLimitSeen.limit })
          : t('integrations.openTheBaseOnce')}
      </p>
    </section>
  );
}

function ApiTokens({ workspaceId, baseName }: { workspaceId: string; baseName: string }) {
  const client = useQueryClient();
  const key = ['api-tokens', workspaceId, baseName];
  const tokens = useQuery(key, () => api<{ api_tokens: ApiToken[] }>(basePath(workspaceId, baseName, 'api-tokens/')).then((r) => r.api_tokens));
  const [name, setName] = useState('');
  const [permission, setPermission] = useState('rw');
  const [scope, setScope] = useState({ tables: '', operations: [] as string[], networks: '', expires: '', rate: '' });
  const [fresh, setFresh] = useState<ApiToken | null>(null);
  const [temp, setTemp] = useState<string | null>(null);
  const action = useAction();
  const create = (e: FormEvent) => {
    e.preventDefault();
    const sent = name;
    void action.run(async () => {
      const token = await api<ApiToken>(basePath(workspaceId, baseName, 'api-tokens/'), { method: 'POST', body: { app_name: sent, permission, ...scopeBody(scope) } });
      setFresh(token);
      clearIfSent(setName, sent, '');
      setScope({ tables: '', operations: [], networks: '', expires: '', rate: '' });
      await client.invalidateQueries(key);
    });
  };
  return (
    <>
      <h2>{t('integrations.apiTokens')}</h2>
      <form className="inline" onSubmit={create} aria-label={t('integrations.newApiToken')}>
        <input aria-label={t('integrations.appName')} placeholder={t('integrations.appName')} value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
        <select aria-label={t('integrations.tokenPermission')} value={permission} onChange={(e) => setPermission(e.target.value)}>
          <option value="rw">{t('integrations.readWrite')}</option>
          <option value="r">{t('integrations.readOnly')}</option>
        </select>
        <details className="scope">
          <summary>{t('integrations.scopeOptional')}</summary>
          <label>
            {t('integrations.tablesCommaSeparatedEmpty')}
            <input aria-label={t('integrations.tokenTables')} value={scope.tables} onChange={(e) => setScope({ ...scope, tables: e.target.value })} maxLength={4000} />
          </label>
          <fieldset>
            <legend>{t('integrations.operationsNoneTickedAll')}</legend>
            {OPERATIONS.map(([value, label]) => (
              <label key={value} className="check">
                <input
                  type="checkbox"
                  aria-label={t('integrations.operationLabel', { label })}
                  checked={scope.operations.includes(value)}
                  onChange={(e) => setScope({ ...scope, operations: e.target.checked ? [...scope.operations, value] : scope.operations.filter((o) => o !== value) })}
                />
                {label}
              </label>
            ))}
          </fieldset>
          <label>
            {t('integrations.expires')}
            <input aria-label={t('integrations.tokenExpiry')} type="datetime-local" value={scope.expires} onChange={(e) => setScope({ ...scope, expires: e.target.value })} />
          </label>
          <label>
            {t('integrations.allowedNetworksCidrComma')}
            <input aria-label={t('integrations.tokenNetworks')} value={scope.networks} onChange={(e) => setScope({ ...scope, networks: e.target.value })} maxLength={4000} />
          </label>
          <label>
            {t('integrations.ownRateLimitRequests')}
            <input aria-label={t('integrations.tokenRateLimit')} type="number" min={1} value={scope.rate} onChange={(e) => setScope({ ...scope, rate: e.target.value })} />
          </label>
        </details>
        <button type="submit" disabled={action.busy}>
          {t('integrations.createApiToken')}
        </button>
        <button type="button" onClick={() => void action.run(async () => setTemp((await api<{ api_token: string }>(basePath(workspaceId, baseName, 'temp-api-token/'))).api_token))}>
          {t('integrations.temporaryToken1Hour')}
        </button>
      </form>
      <ErrorText error={action.error} />
      {fresh && (
        <div className="notice" role="status" aria-label={t('integrations.newToken')}>
          {t('integrations.tokenFor')}{' '}{fresh.app_name}{' '}{t('integrations.shownOnceCopyIt')}{' '}<code className="secret" data-testid="new-api-token">{fresh.api_token}</code> <CopyButton text={fresh.api_token} />
          <button type="button" onClick={() => setFresh(null)}>
            {t('common.done')}
          </button>
        </div>
      )}
      {temp && (
        <div className="notice" role="status">
          {t('integrations.temporaryApiToken')}{' '}<code className="secret">{temp}</code> <CopyButton text={temp} />
        </div>
      )}
      {tokens.isLoading ? (
        <Loading />
      ) : tokens.error ? (
        <ErrorText error={tokens.error} />
      ) : tokens.data?.length === 0 ? (
        <Empty>{t('integrations.noApiTokens')}</Empty>
      ) : (
        <table className="list" aria-label={t('integrations.apiTokens')}>
          <thead>
            <tr>
              <th>{t('integrations.app')}</th>
              <th>{t('common.permission')}</th>
              <th>{t('integrations.scope')}</th>
              <th>{t('integrations.created')}</th>
              <th>{t('integrations.lastAccess')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {tokens.data?.map((token) => (
              <tr key={token.app_name}>
                <td>{token.app_name}</td>
                <td>
                  <select
                    aria-label={t('integrations.permissionOfAppName', { app_name: token.app_name })}
                    value={token.permission}
                    onChange={(e) =>
                      void action.run(async () => {
                        await api(basePath(workspaceId, baseName, `api-tokens/${encodeURIComponent(token.app_name)}/`), { method: 'PUT', body: { permission: e.target.value } });
                        await client.invalidateQueries(key);
                      })
                    }
                  >
                    <option value="rw">{t('integrations.readWrite')}</option>
                    <option value="r">{t('integrations.readOnly')}</option>
                  </select>
                </td>
                <td>{scopeSummary(token)}</td>
                <td>{token.generated_at.slice(0, 16).replace('T', ' ')}</td>
                <td>{token.last_access ? token.last_access.slice(0, 16).replace('T', ' ') : t('integrations.never')}</td>
                <td>
                  <ConfirmButton
                    label={t('common.delete')}
                    question={t('integrations.deleteTheApiToken', { app_name: token.app_name })}
                    onConfirm={() =>
                      void action.run(async () => {
                        await api(basePath(workspaceId, baseName, `api-tokens/${encodeURIComponent(token.app_name)}/`), { method: 'DELETE' });
                        await client.invalidateQueries(key);
                      })
                    }
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
