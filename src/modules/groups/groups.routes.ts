import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { badRequest } from '../../shared/errors.js';
import { parsePage } from '../../shared/pagination.js';
import { currentAccount, type AccountsService } from '../accounts/index.js';
import { adminGroupRecord, groupRecord, memberRecord } from './groups.present.js';
import {
  AdminGroupRecord,
  BulkResult,
  GroupParams,
  GroupRecord,
  LooseBody,
  LooseQuery,
  MemberParams,
  MemberRecord,
  Success,
} from './groups.schemas.js';
import { parseFlag, type GroupsService } from './groups.service.js';

const tags = ['groups'];
const account = { auth: 'account' } as const;
const admin = { auth: 'admin' } as const;

/** Groups and their members (`/api/v2.1/groups/…`) and the system admin's group operations (`/api/v2.1/admin/groups/…`). */
export function groupsRoutes(groups: GroupsService, accounts: AccountsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v2.1/groups/', { config: account, schema: { tags, querystring: LooseQuery, response: { 200: Type.Array(GroupRecord) } } }, async (request) => {
      return (await groups.listFor(currentAccount(request))).map(groupRecord);
    });

    app.post('/api/v2.1/groups/', { config: account, schema: { tags, body: LooseBody, response: { 201: GroupRecord } } }, async (request, reply) => {
      const view = await groups.create(currentAccount(request), request.body?.name);
      return reply.code(201).send(groupRecord(view));
    });

    app.get(
      '/api/v2.1/search-group/',
      {
        config: account,
        schema: {
          tags,
          querystring: LooseQuery,
          response: { 200: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), owner: Type.String(), created_at: Type.String() })) },
        },
      },
      async (request) => {
        const q = request.query.q;
        if (typeof q !== 'string' || q.trim() === '' || q.length > 255) throw badRequest('q invalid.');
        const needle = q.trim().toLowerCase();
        const mine = await groups.listFor(currentAccount(request));
        return mine.filter((v) => v.group.name.toLowerCase().includes(needle)).map((v) => {
          const { id, name, owner, created_at } = groupRecord(v);
          return { id, name, owner, created_at };
        });
      },
    );

    app.get('/api/v2.1/groups/:group_id/', { config: account, schema: { tags, params: GroupParams, response: { 200: GroupRecord } } }, async (request) => {
      return groupRecord(await groups.get(currentAccount(request), request.params.group_id));
    });

    app.put('/api/v2.1/groups/:group_id/', { config: account, schema: { tags, params: GroupParams, body: LooseBody, response: { 200: GroupRecord } } }, async (request) => {
      const body = request.body ?? {};
      return groupRecord(await groups.update(currentAccount(request), request.params.group_id, { name: body.name, owner: body.owner }));
    });

    app.delete(
      '/api/v2.1/groups/:group_id/',
      { config: account, schema: { tags, params: GroupParams, querystring: LooseQuery, body: Type.Optional(LooseBody), response: { 200: Success } } },
      async (request) => {
        const deleteBases = request.body?.delete_bases ?? request.query.delete_bases;
        const moveBasesTo = request.body?.move_bases_to ?? request.query.move_bases_to;
        await groups.delete(currentAccount(request), request.params.group_id, deleteBases, moveBasesTo);
        return { success: true };
      },
    );

    app.get(
      '/api/v2.1/groups/:group_id/members/',
      { config: account, schema: { tags, params: GroupParams, querystring: LooseQuery, response: { 200: Type.Array(MemberRecord) } } },
      async (request) => {
        const adminsOnly = request.query.is_admin === 'true';
        return (await groups.members(currentAccount(request), request.params.group_id, adminsOnly)).map(memberRecord);
      },
    );

    app.post(
      '/api/v2.1/groups/:group_id/members/',
      { config: account, schema: { tags, params: GroupParams, body: LooseBody, response: { 201: MemberRecord } } },
      async (request, reply) => {
        const member = await groups.addMember(currentAccount(request), request.params.group_id, request.body?.email);
        return reply.code(201).send(memberRecord(member));
      },
    );

    app.post(
      '/api/v2.1/groups/:group_id/members/bulk/',
      { config: account, schema: { tags, params: GroupParams, body: LooseBody, response: { 200: BulkResult } } },
      async (request) => {
        const result = await groups.addMembers(currentAccount(request), request.params.group_id, request.body?.emails);
        return { success: result.success.map(memberRecord), failed: result.failed };
      },
    );

    app.put(
      '/api/v2.1/groups/:group_id/members/:email/',
      { config: account, schema: { tags, params: MemberParams, body: LooseBody, response: { 200: MemberRecord } } },
      async (request) => {
        const member = await groups.setAdmin(currentAccount(request), request.params.group_id, request.params.email, request.body?.is_admin);
        return memberRecord(member);
      },
    );

    app.delete(
      '/api/v2.1/groups/:group_id/members/:email/',
      { config: account, schema: { tags, params: MemberParams, response: { 200: Success } } },
      async (request) => {
        await groups.removeMember(currentAccount(request), request.params.group_id, request.params.email);
        return { success: true };
      },
    );

    app.get(
      '/api/v2.1/groups/:group_id/search-member/',
      { config: account, schema: { tags, params: GroupParams, querystring: LooseQuery, response: { 200: Type.Array(MemberRecord) } } },
      async (request) => {
        return (await groups.searchMembers(currentAccount(request), request.params.group_id, request.query.q)).map(memberRecord);
      },
    );

    // ---- system admin

    const ownerOf = async (ownerId: number) => accounts.findUserById(ownerId);

    app.get(
      '/api/v2.1/admin/groups/',
      {
        config: admin,
        schema: {
          tags,
          querystring: LooseQuery,
          response: { 200: Type.Object({ groups: Type.Array(AdminGroupRecord), page_info: Type.Object({ has_next_page: Type.Boolean(), current_page: Type.Integer() }) }) },
        },
      },
      async (request) => {
        const page = parsePage(request.query);
        const name = typeof request.query.name === 'string' && request.query.name.trim() !== '' ? request.query.name.trim().slice(0, 255) : undefined;
        const rows = await groups.listAll(page.offset, page.perPage + 1, name);
        const shown = rows.slice(0, page.perPage);
        const records = await Promise.all(shown.map(async (g) => adminGroupRecord(g, await ownerOf(g.owner_id))));
        return { groups: records, page_info: { has_next_page: rows.length > page.perPage, current_page: page.page } };
      },
    );

    app.post('/api/v2.1/admin/groups/', { config: admin, schema: { tags, body: LooseBody, response: { 200: AdminGroupRecord } } }, async (request) => {
      const body = request.body ?? {};
      const owner = await groups.user(body.group_owner, 'group_owner');
      const view = await groups.createFor(owner.id, body.group_name);
      return adminGroupRecord(view.group, owner);
    });

    app.put('/api/v2.1/admin/groups/:group_id/', { config: admin, schema: { tags, params: GroupParams, body: LooseBody, response: { 200: GroupRecord } } }, async (request) => {
      const group = await groups.find(request.params.group_id);
      const newOwner = await groups.user(request.body?.new_owner, 'new_owner');
      await groups.transfer(group, newOwner);
      return groupRecord(await groups.view(await groups.find(group.id)));
    });

    app.delete(
      '/api/v2.1/admin/groups/:group_id/',
      { config: admin, schema: { tags, params: GroupParams, querystring: LooseQuery, body: Type.Optional(LooseBody), response: { 200: Success } } },
      async (request) => {
        const group = await groups.find(request.params.group_id);
        await groups.deleteGroup(group, request.body?.delete_bases ?? request.query.delete_bases);
        return { success: true };
      },
    );

    app.get(
      '/api/v2.1/admin/groups/:group_id/members/',
      {
        config: admin,
        schema: { tags, params: GroupParams, response: { 200: Type.Object({ members: Type.Array(MemberRecord), group_name: Type.String(), total_count: Type.Integer() }) } },
      },
      async (request) => {
        const group = await groups.find(request.params.group_id);
        const members = await groups.membersOf(group);
        return { members: members.map(memberRecord), group_name: group.name, total_count: members.length };
      },
    );

    app.post(
      '/api/v2.1/admin/groups/:group_id/members/',
      { config: admin, schema: { tags, params: GroupParams, body: LooseBody, response: { 200: BulkResult } } },
      async (request) => {
        const group = await groups.find(request.params.group_id);
        const raw = request.body?.email;
        const emails = (Array.isArray(raw) ? raw : [raw]).filter((e): e is string => typeof e === 'string' && e.trim() !== '').map((e) => e.trim());
        if (emails.length === 0 || emails.length > 100) throw badRequest('email invalid.');
        const result = await groups.addMany(group, emails);
        return { success: result.success.map(memberRecord), failed: result.failed };
      },
    );

    app.put(
      '/api/v2.1/admin/groups/:group_id/members/:email/',
      { config: admin, schema: { tags, params: MemberParams, body: LooseBody, response: { 200: MemberRecord } } },
      async (request) => {
        const group = await groups.find(request.params.group_id);
        return memberRecord(await groups.setRole(group, request.params.email, parseFlag(request.body?.is_admin, 'is_admin')));
      },
    );

    app.delete(
      '/api/v2.1/admin/groups/:group_id/members/:email/',
      { config: admin, schema: { tags, params: MemberParams, response: { 200: Success } } },
      async (request) => {
        const group = await groups.find(request.params.group_id);
        await groups.remove(group, await groups.member(group, request.params.email));
        return { success: true };
      },
    );
  };
}
