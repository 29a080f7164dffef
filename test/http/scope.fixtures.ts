import { expect } from 'vitest';
import type { TestApp, TestBase } from '../helpers/index.js';

type Answer = { statusCode: number; body: string; json(): unknown };

/**
 * Calls of the table-scope suites (tokens-scopes-links, tokens-scope-hidden): a gateway call with a
 * token, a 200 (its body), and the 403 naming the table outside the scope. `state` is read at each call
 * (the suites fill it in `beforeAll`).
 */
export function scopeCalls(state: () => { t: TestApp; base: TestBase; secret: string }) {
  const gw = (token: string, method: 'GET' | 'POST', path: string, payload?: object) => {
    const { t, base } = state();
    return t.app.inject({ method, url: `/api-gateway/api/v2/dtables/${base.uuid}/${path}`, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
  };
  const ok = async (res: Promise<Answer>) => {
    const answer = await res;
    expect(answer.statusCode, answer.body).toBe(200);
    return answer.body;
  };
  const refused = async (res: Promise<Answer>) => {
    const answer = await res;
    expect(answer.statusCode, answer.body).toBe(403);
    expect(answer.json()).toEqual({ error_msg: `The token's scope lacks the table ${state().secret}.` });
  };
  return { gw, ok, refused };
}
