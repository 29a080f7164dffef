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
