import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp } from '../helpers/index.js';
import { BaseTokenSigner } from '../../src/modules/tokens/index.js';
import { client, join, listen, type LiveClient } from './live.support.js';

// Issue 33: the live channel's join-room judges a scoped token through the same policy as the gateway.
describe.each(DIALECTS)('live channel with scoped API-Tokens (%s)', (dialect) => {
  let t: TestApp;
  let url: string;
  const clients: LiveClient[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    url = await listen(t);
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await t.close();
  });

  it.each([
    ['unscoped', {}, null],
    ['row readers', { operations: ['read_rows'] }, null],
    ['SQL only', { operations: ['sql'] }, /operation read_rows/],
    ['one table', { tables: ['Table1'] }, /every table/],
    ['another network', { allowed_networks: ['10.0.0.0/8'] }, /allowed networks/],
  ])('%s', async (name, scope, refusal) => {
    const owner = await createUser(t);
    const base = await createBase(t, owner);
    // The network is judged at join; the exchange must pass, so that token gets its scope afterwards.
    const networks = 'allowed_networks' in scope;
    const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: name, permission: 'r', ...(networks ? {} : scope) } });
    const exchange = await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: created.json().api_token });
    let token = exchange.json().access_token as string;
    if (networks) {
      // A Base-Token issued for 127.0.0.1 through 10/8 is not possible; sign one with the scope directly.
      token = new BaseTokenSigner(t.config.secretKey, t.clock).sign({ baseUuid: base.uuid, permission: 'r', username: '', ownerId: owner.virtualId, appName: name, source: 'api-token', sourceId: 0, version: 0, scope: { networks: ['10.0.0.0/8'] } }).token;
    }
    const c = client(url, base.uuid);
    clients.push(c);
    const ack = await join(c, base.uuid, token);
    if (refusal === null) expect(ack).toEqual({ status: true });
    else {
      expect(ack.status).toBe(false);
      expect(ack.error_msg).toMatch(refusal);
    }
  });

  it('update-dtable: a row operation needs write_rows, a structure operation needs structure; nothing refused is written', async () => {
    const owner = await createUser(t);
    const base = await createBase(t, owner);
    const tokenWith = async (name: string, operations: string[]) => {
      const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: name, permission: 'rw', operations } });
      expect(created.statusCode, created.body).toBe(201);
      return (await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: created.json().api_token })).json().access_token as string;
    };
    const send = (c: LiveClient, op: object) => c.socket.timeout(8000).emitWithAck('update-dtable', base.uuid, JSON.stringify(op)) as Promise<{ status: boolean; message?: string }>;
    const connect = async (token: string) => {
      const c = client(url, base.uuid);
      clients.push(c);
      expect(await join(c, base.uuid, token)).toEqual({ status: true });
      return c;
    };
    const reader = await connect(await tokenWith('reader', ['read_rows']));
    const writer = await connect(await tokenWith('writer', ['read_rows', 'write_rows']));
    const insert = (id: string) => ({ op_type: 'insert_row', table_id: '0000', row_id: '', row_insert_position: 'insert_below', row_data: { _id: id } });
    expect(await send(reader, insert('AAAAAAAAAAAAAAAAAAAAAA'))).toEqual({ status: false, message: "The token's scope lacks the operation write_rows." });
    expect(await send(writer, insert('BBBBBBBBBBBBBBBBBBBBBB'))).toEqual({ status: true });
    expect(await send(writer, { op_type: 'rename_table', table_id: '0000', table_name: 'Renamed' })).toEqual({ status: false, message: "The token's scope lacks the operation structure." });
    const rows = await t.app.inject({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/rows/?table_name=Table1`, headers: { authorization: `Token ${await tokenWith('check', ['read_rows'])}` } });
    expect(rows.json().rows.map((r: { _id: string }) => r._id)).toEqual(['BBBBBBBBBBBBBBBBBBBBBB']);
  });

  it("a view share's token joins (its own room, which gets the view's changes only: view-share-live.test.ts)", async () => {
    const owner = await createUser(t);
    const viewer = await createUser(t);
    const base = await createBase(t, owner);
    const share = await t.request({ method: 'POST', url: basePath(base, 'user-view-shares/'), token: owner.token, payload: { table_id: '0000', view_id: '0000', permission: 'rw', to_user: viewer.email } });
    expect(share.statusCode, share.body).toBe(200);
    const res = await t.request({ method: 'GET', url: basePath(base, `user-view-share-access-token/?user_view_share_id=${share.json().id}`), token: viewer.token });
    expect(res.statusCode, res.body).toBe(200);
    const c = client(url, base.uuid);
    clients.push(c);
    expect(await join(c, base.uuid, res.json().access_token as string)).toEqual({ status: true });
  });
});
