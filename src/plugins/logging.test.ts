import { describe, expect, it } from 'vitest';
import { redactUrl } from './logging.js';

describe('redactUrl', () => {
  it('hides external-link tokens in the path', () => {
    expect(redactUrl('/api/v2.1/external-link-tokens/abcdef0123456789abcd/access-token/')).toBe(
      '/api/v2.1/external-link-tokens/***/access-token/',
    );
  });

  it('hides secret query values and keeps the rest', () => {
    expect(redactUrl('/x/?password=hunter22&page=2&token=t0k')).toBe('/x/?password=***&page=2&token=***');
  });

  it('leaves ordinary URLs alone', () => {
    expect(redactUrl('/api/v2.1/workspaces/?detail=true')).toBe('/api/v2.1/workspaces/?detail=true');
  });
});

describe('redactUrl on decoded names and values', () => {
  it('sees through percent-encoded, double-encoded and bracketed query names', () => {
    expect(redactUrl('/x/?pass%77ord=hunter22&%70assword=a1&PASSWORD%5B%5D=b2&pass%2577ord=c3&page=2')).toBe(
      '/x/?pass%77ord=***&%70assword=***&PASSWORD%5B%5D=***&pass%2577ord=***&page=2',
    );
    expect(redactUrl('/x/?a=1;access%5Ftoken=zz')).toBe('/x/?a=1;access%5Ftoken=***');
  });

  it('hides link tokens after percent-encoded segment names and in secret route parameters', () => {
    expect(redactUrl('/api/v2.1/external%2Dlink%2Dtokens/abc123/access-token/')).toBe('/api/v2.1/external%2Dlink%2Dtokens/***/access-token/');
    expect(redactUrl('/api/v2.1/workspace/1/dtable/B/external-links/tok%65n99/')).toBe('/api/v2.1/workspace/1/dtable/B/external-links/***/');
    expect(redactUrl('/some/route/s%33cret/', { external_link_token: 's3cret', workspace_id: '1' })).toBe('/some/route/***/');
    expect(redactUrl('/w/1/', { workspace_id: '1' })).toBe('/w/1/');
  });
});
