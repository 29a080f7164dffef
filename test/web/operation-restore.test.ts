import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const WEB = path.resolve(import.meta.dirname, '../../web/src');

type Access = { access_token: string; dtable_uuid: string };
type Op = { op_id: number; author: string; operation: string; reverts: number | null };
type Restore = { latestOf(rowIds: string[]): Promise<number | undefined>; restore(opId: number): Promise<number | undefined> };
let operationRestore: (access: Access, refresh: () => Promise<unknown>, read: (access: Access, suffix: string, options?: object) => Promise<unknown>) => Restore;
let tokenUser: (token: string) => string;

/** A Base-Token's shape (header.payload.signature, base64url): only the payload is read. */
const token = (claims: object) => `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.signature`;
const op = (op_id: number, author: string, rows: string[], reverts: number | null = null): Op => ({
  op_id,
  author,
  operation: JSON.stringify(rows.length === 1 ? { op_type: 'modify_row', row_id: rows[0] } : { op_type: 'modify_rows', row_ids: rows }),
  reverts,
});

describe('undo through the operation log (web/src/grid/operation-restore.ts)', () => {
  beforeAll(async () => {
    // The console's modules read the browser's languages when loaded.
    vi.stubGlobal('navigator', { languages: ['en'], language: 'en' });
    // By path at run time, as test/web/undo-history.test.ts: the server's tsc does not type-check web/.
    ({ operationRestore, tokenUser } = (await import(/* @vite-ignore */ path.join(WEB, 'grid/operation-restore.ts'))) as {
      operationRestore: typeof operationRestore;
      tokenUser: typeof tokenUser;
    });
  });

  afterAll(() => {
    vi.unstubAllGlobals();
  });

  it('reads the signed-in user from the Base-Token, and nothing from a token it cannot read', () => {
    expect(tokenUser(token({ username: 'ab12@auth.local', dtable_uuid: 'u' }))).toBe('ab12@auth.local');
    // base64url's own characters (- and _), no padding, and UTF-8.
    expect(token({ username: '??>>~~' })).toMatch(/\.[^.]*-[^.]*\./);
    expect(token({ username: '??>>~~' })).toMatch(/\.[^.]*_[^.]*\./);
    expect(tokenUser(token({ username: '??>>~~' }))).toBe('??>>~~');
    expect(tokenUser(token({ username: 'ü?>' }))).toBe('ü?>');
    expect(tokenUser(token({ username: '', app_name: 'script' }))).toBe('');
    expect(tokenUser('not a token')).toBe('');
    expect(tokenUser('a.%%%.b')).toBe('');
  });

  it("takes the newest operation of exactly these rows by the signed-in user, passing over someone else's later one", async () => {
    const me = 'me@auth.local';
    const log = [op(9, 'other@auth.local', ['r1']), op(8, me, ['r1', 'r2']), op(7, me, ['r1']), op(6, me, ['r3'])];
    const asked: string[] = [];
    const restore = operationRestore({ access_token: token({ username: me }), dtable_uuid: 'u' }, async () => undefined, async (_access, suffix) => {
      asked.push(suffix);
      return { operations: log };
    });
    expect(await restore.latestOf(['r1'])).toBe(7);
    expect(await restore.latestOf(['r2', 'r1'])).toBe(8);
    expect(await restore.latestOf(['r4'])).toBeUndefined();
    expect(await restore.latestOf([])).toBeUndefined();
    expect(asked).toEqual(['operations/?per_page=20', 'operations/?per_page=20', 'operations/?per_page=20']);
  });

  it('without a user in its token (a token from an API-Token) takes the newest operation of the rows, whoever wrote it', async () => {
    const log = [op(9, 'script', ['r1']), op(7, 'someone@auth.local', ['r1'])];
    const restore = operationRestore({ access_token: token({ username: '', app_name: 'script' }), dtable_uuid: 'u' }, async () => undefined, async () => ({ operations: log }));
    expect(await restore.latestOf(['r1'])).toBe(9);
  });

  it('restores an operation, refreshes, and answers the operation that reverted it; the refresh runs when the restore is refused too', async () => {
    const log: Op[] = [op(3, 'me', ['r1'])];
    let refreshed = 0;
    const calls: Array<{ suffix: string; options?: object }> = [];
    let refuse = false;
    const restore = operationRestore({ access_token: token({ username: 'me' }), dtable_uuid: 'u' }, async () => void (refreshed += 1), async (_access, suffix, options) => {
      calls.push({ suffix, options });
      if (suffix.startsWith('restore-operations/')) {
        if (refuse) throw new Error('refused');
        log.unshift(op(4, 'me', ['r1'], 3));
        return {};
      }
      return { operations: log };
    });
    expect(await restore.restore(3)).toBe(4);
    expect(calls[0]).toEqual({ suffix: 'restore-operations/3/', options: { method: 'PUT', body: {} } });
    expect(refreshed).toBe(1);
    refuse = true;
    await expect(restore.restore(4)).rejects.toThrow('refused');
    expect(refreshed).toBe(2);
  });
});
