import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createUser, createTestApp, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { client, join, listen, type LiveClient } from '../realtime/live.support.js';
import { addTable, appendRows, through } from './rows.fixtures.js';
import { PEOPLE_COLUMNS, addRedTeamView } from './view-share.fixtures.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Issue 30: the permission matrix. Every base route family × every way of access, in one table: each
 * way is a credential on a base (an Account-Token and the Base-Token it exchanges, a view share's
 * Base-Token, an external link's, an API-Token's), each family one probe through real HTTP (or the
 * live channel), each cell the status it must get ('-': the way has no such credential).
 */
const FAMILIES = [
  'token', // GET …/access-token/ with the Account-Token
  'rows', // GET rows/ of the table the view shows
  'otherTable', // GET rows/ of another table
  'write', // PUT rows/: a row the view shows, a column it shows
  'writeOutside', // PUT rows/: a row the view does not show
  'metadata', // GET metadata/
  'structure', // POST views/ (a new view)
  'sqlRead', // POST sql/ select
  'sqlHidden', // POST sql/ select naming the column the view hides
  'sqlOther', // POST sql/ select from another table
  'sqlWrite', // POST sql/ update
  'live', // join-room on the live channel (200: joined, 403: refused)
  'manage', // GET …/api-tokens/ with the Account-Token (admin)
  'files', // an upload link: with the Account-Token (rw), or with the API-Token itself (app-upload-link/)
  'webhooks', // GET …/webhooks/ with the Account-Token (admin)
  'rules', // GET …/notification-rules/ with the Account-Token
  'comments', // GET comments/ of a row the view shows, with the Base-Token
] as const;
type Family = (typeof FAMILIES)[number];

const MATRIX: Record<string, string> = {
  //                   token rows other write outs meta struc sqlR sqlH sqlO sqlW live mang files hook rule cmnt
  owner:               '200  200  200  200  200  200  200  200  200  200  200  200  200  200  200  200  200',
  'user share r':      '200  200  200  403  403  200  403  200  200  200  403  200  403  403  403  200  200',
  'user share rw':     '200  200  200  200  200  200  200  200  200  200  200  200  403  200  403  200  200',
  'user share admin':  '200  200  200  200  200  200  200  200  200  200  200  200  200  200  200  200  200',
  'group owner':       '200  200  200  200  200  200  200  200  200  200  200  200  200  200  200  200  200',
  'group admin':       '200  200  200  200  200  200  200  200  200  200  200  200  200  200  200  200  200',
  'group member':      '200  200  200  200  200  200  200  200  200  200  200  200  403  200  403  200  200',
  'group share r':     '200  200  200  403  403  200  403  200  200  200  403  200  403  403  403  200  200',
  'group share rw':    '200  200  200  200  200  200  200  200  200  200  200  200  403  200  403  200  200',
  'group share admin': '200  200  200  200  200  200  200  200  200  200  200  200  200  200  200  200  200',
  'view share r':      '403  200  403  403  403  200  403  200  403  403  403  200  403  403  403  403  403',
  'view share rw':     '403  200  403  200  403  200  403  200  403  403  200  200  403  403  403  403  403',
  'external link':     '-    200  200  403  403  200  403  200  200  200  403  200  -    -    -    -    200',
  'API-Token r':       '-    200  200  403  403  200  403  200  200  200  403  200  -    403  -    -    200',
  'API-Token rw':      '-    200  200  200  200  200  200  200  200  200  200  200  -    200  -    -    200',
};

describe.each(DIALECTS)('permission matrix: every base route family × every way of access (%s)', (dialect) => {
  let t: TestApp;
  let url: string;
  const clients: LiveClient[] = [];
  /** How each way gets its credentials: the base, the Account-Token user (if any), and its Base-Token. */
  const ways = new Map<string, { base: Fixture; user?: TestUser; apiToken?: string; baseToken: () => Promise<string | number> }>();

  interface Fixture extends TestBase {
    /** The row the view shows (Ann, red) and one it does not (Ben, blue). */
    inView: string;
    outside: string;
    viewId: string;
  }

  const req = (user: TestUser | string | undefined, method: Method, path: string, payload?: object) =>
    t.request({ method, url: path, ...(user === undefined ? {} : { token: typeof user === 'string' ? user : user.token }), ...(payload ? { payload } : {}) });

  /** A base with table People (Name, Team, Salary), rows Ann (red) and Ben (blue), and view Red (Team is red, Salary hidden). */
  async function fixture(owner: TestUser, workspaceId?: number): Promise<Fixture> {
    let base: TestBase;
    if (workspaceId === undefined) base = await createBase(t, owner);
    else {
      const res = await req(owner, 'POST', '/api/v2.1/dtables/', { name: `group base ${dialect}`, workspace_id: workspaceId });
      expect(res.statusCode, res.body).toBe(201);
      const b = res.json().table;
      base = { id: b.id, uuid: b.uuid, name: b.name, workspaceId: b.workspace_id };
    }
    const token = (await req(owner, 'GET', basePath(base, 'access-token/'))).json().access_token as string;
    const g = through(t, { owner, base, token });
    await addTable(g, 'People', PEOPLE_COLUMNS);
    const [inView, outside] = await appendRows(g, 'People', [
      { Name: 'Ann', Team: 'red', Salary: 1 },
      { Name: 'Ben', Team: 'blue', Salary: 2 },
    ]);
    return { ...base, inView: inView!, outside: outside!, viewId: await addRedTeamView(g, 'Red') };
  }

  const accountWay = (base: Fixture, user: TestUser) => ({
    base,
    user,
    baseToken: async () => {
      const res = await req(user, 'GET', basePath(base, 'access-token/'));
      return res.statusCode === 200 ? (res.json().access_token as string) : res.statusCode;
    },
  });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    url = await listen(t);
    const owner = await createUser(t, { name: 'Owner' });
    const personal = await fixture(owner);
    const tableId = ((await req((await accountWay(personal, owner).baseToken()) as string, 'GET', `/api-gateway/api/v2/dtables/${personal.uuid}/metadata/`)).json().metadata.tables as Array<{ _id: string; name: string }>).find((tb) => tb.name === 'People')!._id;
    ways.set('owner', accountWay(personal, owner));

    for (const permission of ['r', 'rw', 'admin'] as const) {
      const user = await createUser(t);
      expect((await req(owner, 'POST', basePath(personal, 'share/'), { email: user.email, permission })).statusCode).toBe(201);
      ways.set(`user share ${permission}`, accountWay(personal, user));
      // A group of its own, the base shared with it at this permission; its member gets the share's permission.
      const groupOwner = await createUser(t);
      const member = await createUser(t);
      const group = (await req(groupOwner, 'POST', '/api/v2.1/groups/', { name: `share ${permission}` })).json().id as number;
      // (Sharing with a group needs membership of it: the base's owner joins too.)
      for (const u of [member, owner]) expect((await req(groupOwner, 'POST', `/api/v2.1/groups/${group}/members/`, { email: u.email })).statusCode).toBe(201);
      const shared = await req(owner, 'POST', basePath(personal, 'group-shares/'), { group_id: group, permission });
      expect(shared.statusCode, shared.body).toBeLessThan(300);
      ways.set(`group share ${permission}`, accountWay(personal, member));
    }

    const gOwner = await createUser(t);
    const gAdmin = await createUser(t);
    const gMember = await createUser(t);
    const group = (await req(gOwner, 'POST', '/api/v2.1/groups/', { name: 'Team' })).json().id as number;
    for (const u of [gAdmin, gMember]) expect((await req(gOwner, 'POST', `/api/v2.1/groups/${group}/members/`, { email: u.email })).statusCode).toBe(201);
    expect((await req(gOwner, 'PUT', `/api/v2.1/groups/${group}/members/${gAdmin.email}/`, { is_admin: 'true' })).statusCode).toBe(200);
    const workspace = (await req(gMember, 'GET', '/api/v2.1/workspaces/')).json().workspace_list.find((w: { group_id?: number }) => w.group_id === group).id as number;
    const groupBase = await fixture(gMember, workspace);
    ways.set('group owner', accountWay(groupBase, gOwner));
    ways.set('group admin', accountWay(groupBase, gAdmin));
    ways.set('group member', accountWay(groupBase, gMember));

    for (const permission of ['r', 'rw'] as const) {
      const user = await createUser(t);
      const share = await req(owner, 'POST', basePath(personal, 'user-view-shares/'), { table_id: tableId, view_id: personal.viewId, permission, to_user: user.email });
      expect(share.statusCode, share.body).toBe(200);
      ways.set(`view share ${permission}`, {
        base: personal,
        user,
        baseToken: async () => (await req(user, 'GET', basePath(personal, `user-view-share-access-token/?user_view_share_id=${share.json().id}`))).json().access_token as string,
      });
    }

    const link = await req(owner, 'POST', basePath(personal, 'external-links/'));
    expect(link.statusCode, link.body).toBeLessThan(300);
    ways.set('external link', {
      base: personal,
      baseToken: async () => (await req(undefined, 'GET', `/api/v2.1/external-link-tokens/${link.json().token}/access-token/`)).json().access_token as string,
    });
    for (const permission of ['r', 'rw'] as const) {
      const created = await req(owner, 'POST', basePath(personal, 'api-tokens/'), { app_name: `matrix ${permission}`, permission });
      expect(created.statusCode, created.body).toBe(201);
      ways.set(`API-Token ${permission}`, {
        base: personal,
        apiToken: created.json().api_token as string,
        baseToken: async () => (await req(created.json().api_token as string, 'GET', '/api/v2.1/dtable/app-access-token/')).json().access_token as string,
      });
    }
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await t.close();
  });

  /** One probe: the status the family's call gets for this way, or '-' when the way has no credential for it. */
  async function probe(family: Family, way: string): Promise<string> {
    const { base, user, apiToken, baseToken } = ways.get(way)!;
    if (family === 'token') return user ? String((await req(user, 'GET', basePath(base, 'access-token/'))).statusCode) : '-';
    if (family === 'manage') return user ? String((await req(user, 'GET', basePath(base, 'api-tokens/'))).statusCode) : '-';
    if (family === 'webhooks') return user ? String((await req(user, 'GET', basePath(base, 'webhooks/'))).statusCode) : '-';
    if (family === 'rules') return user ? String((await req(user, 'GET', basePath(base, 'notification-rules/'))).statusCode) : '-';
    if (family === 'files') {
      if (user) return String((await req(user, 'GET', `/api/v2.1/workspace/${base.workspaceId}/dtable-asset-upload-link/?name=${encodeURIComponent(base.name)}`)).statusCode);
      return apiToken ? String((await req(apiToken, 'GET', '/api/v2.1/dtable/app-upload-link/')).statusCode) : '-';
    }
    // (A view share's user has no permission on the base: the Base-Token of those ways is the view's.)
    const token = await baseToken();
    if (typeof token === 'number') return String(token);
    const gw = (method: Method, suffix: string, payload?: object) => req(token, method, `/api-gateway/api/v2/dtables/${base.uuid}/${suffix}`, payload);
    const status = async (res: Promise<{ statusCode: number; body: string }>) => String((await res).statusCode);
    switch (family) {
      case 'rows':
        return status(gw('GET', 'rows/?table_name=People'));
      case 'otherTable':
        return status(gw('GET', 'rows/?table_name=Table1'));
      case 'write':
        return status(gw('PUT', 'rows/', { table_name: 'People', updates: [{ row_id: base.inView, row: { Name: 'Ann' } }] }));
      case 'writeOutside':
        return status(gw('PUT', 'rows/', { table_name: 'People', updates: [{ row_id: base.outside, row: { Name: 'Ben' } }] }));
      case 'metadata':
        return status(gw('GET', 'metadata/'));
      case 'structure':
        return status(gw('POST', 'views/?table_name=People', { name: `by ${way}`, type: 'table' }));
      case 'sqlRead':
        return status(gw('POST', 'sql/', { sql: 'select Name from People' }));
      case 'sqlHidden':
        return status(gw('POST', 'sql/', { sql: 'select Salary from People' }));
      case 'sqlOther':
        return status(gw('POST', 'sql/', { sql: 'select * from Table1' }));
      case 'sqlWrite':
        return status(gw('POST', 'sql/', { sql: "update People set Name = 'Ann' where Name = 'Ann'" }));
      case 'comments':
        return status(gw('GET', `comments/?row_id=${base.inView}`));
      case 'live': {
        const c = client(url, base.uuid);
        clients.push(c);
        const ack = await join(c, base.uuid, token);
        c.close();
        return ack.status ? '200' : '403';
      }
    }
  }

  it.each(Object.keys(MATRIX))('%s', async (way) => {
    const expected = MATRIX[way]!.trim().split(/\s+/);
    expect(expected).toHaveLength(FAMILIES.length);
    const got: string[] = [];
    for (const family of FAMILIES) got.push(await probe(family, way));
    // Compared as one row, so a failure shows every family of the way at once.
    expect(Object.fromEntries(FAMILIES.map((f, i) => [f, got[i]]))).toEqual(Object.fromEntries(FAMILIES.map((f, i) => [f, expected[i]])));
  });
});
