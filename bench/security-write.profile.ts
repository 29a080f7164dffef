/**
 * Profile helper for bench/security-write.bench.ts: one case of it, `count` calls in one process, so
 * `node --cpu-prof` shows where the time goes; prints the CPU time per call.
 *
 *   npx tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/security-write.profile.ts [plain|scoped|scope|audited|read|scoped-read|off-insert|off-read] [count]
 *   PROFILE_OUT=/tmp/scoped-read.cpuprofile npx tsx bench/security-write.profile.ts scoped-read 3000   # the timed calls only
 *   node bench/lib/profile-diff.mjs /tmp/off-read.cpuprofile /tmp/scoped-read.cpuprofile            # self time per function, compared
 *
 * `off-…`: the app built without the audit trail and the per-use work (the bench's baseline), unscoped token.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { CommitScope, withCommitScope } from '../src/db/index.js';
import { scopedBaseToken, startBasegate } from './lib/servers.js';

const which = process.argv[2] ?? 'audited';
const count = Number(process.argv[3] ?? 3000);

// PROFILE_BASE_LIMIT: the per-base limit (the bench's default keeps it on but never reached, as served).
const basegate = await startBasegate({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: process.env.PROFILE_BASE_LIMIT ?? '10000000' });
const { app, container, seeded } = basegate;
const off = await buildApp(container, { logger: false, withoutAudit: true });
await off.ready();
const scopedToken = await scopedBaseToken(basegate);
const url = `/api-gateway/api/v2/dtables/${seeded.base.uuid}/rows/`;
const insert = async (token: string, on: FastifyInstance = app) => {
  const res = await on.inject({ method: 'POST', url, remoteAddress: '127.0.0.1', headers: { authorization: `Token ${token}` }, payload: { table_name: 'Table1', rows: [{ Name: 'bench' }] } });
  if (res.statusCode !== 200) throw new Error(`insert: ${res.statusCode} ${res.body}`);
};
const audited = async () => {
  const scope = new CommitScope();
  scope.appendix = container.audit.appendix(async () => ({ action: 'bench.insert', actor: 'api-token:scoped', ip: '127.0.0.1', target: `POST ${url}`, after: { table_name: 'Table1', rows: [{ Name: 'bench' }] } }));
  await withCommitScope(scope, () => insert(scopedToken));
};
const read = async (token: string, on: FastifyInstance = app) => {
  const res = await on.inject({ method: 'GET', url: `${url}?table_name=Table1&limit=100`, remoteAddress: '127.0.0.1', headers: { authorization: `Token ${token}` } });
  if (res.statusCode !== 200) throw new Error(`read: ${res.statusCode}`);
};
for (let i = 0; i < 100; i += 1) await insert(seeded.baseToken);
const scopeOnly = () => withCommitScope(new CommitScope(), () => insert(scopedToken));
const run = { plain: () => insert(seeded.baseToken), scoped: () => insert(scopedToken), scope: scopeOnly, audited, read: () => read(seeded.baseToken), 'scoped-read': () => read(scopedToken), 'off-insert': () => insert(seeded.baseToken, off), 'off-read': () => read(seeded.baseToken, off) }[which];
if (!run) throw new Error(`unknown case ${which}`);
for (let i = 0; i < 200; i += 1) await run();
await container.audit.seal();
// PROFILE_OUT=file.cpuprofile: a CPU profile of the timed calls alone (no start-up, no warm-up).
const session = process.env.PROFILE_OUT ? new Session() : null;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
}
const cpu = process.cpuUsage();
const start = process.hrtime.bigint();
for (let i = 0; i < count; i += 1) await run();
await container.audit.seal();
const used = process.cpuUsage(cpu);
if (session) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(process.env.PROFILE_OUT!, JSON.stringify(profile));
  session.disconnect();
}
console.log(`${which}: ${(Number(process.hrtime.bigint() - start) / 1000 / count).toFixed(0)} µs wall, ${((used.user + used.system) / count).toFixed(0)} µs CPU per call`);
await off.close();
await basegate.close();
