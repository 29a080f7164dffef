import { CommitScope, withCommitScope } from '../src/db/index.js';
import { startBasegate } from './lib/servers.js';
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const b = await startBasegate({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '0' });
const { app, container, seeded } = b;
const url = `/api-gateway/api/v2/dtables/${seeded.base.uuid}/rows/`;
const insert = async (token: string) => { const r = await app.inject({ method: 'POST', url, remoteAddress: '127.0.0.1', headers: { authorization: `Token ${token}` }, payload: { table_name: 'Table1', rows: [{ Name: 'x' }] } }); if (r.statusCode !== 200) throw new Error(r.body); };
const scoped = async (withAppendix: boolean) => { const s = new CommitScope(); if (withAppendix) s.appendix = container.audit.appendix(async () => ({ action: 'b', actor: 'a', ip: '1', target: 't' })); await withCommitScope(s, () => insert(seeded.baseToken)); };
const cases: Array<[string, () => Promise<void>, boolean?]> = [
  ['plain', () => insert(seeded.baseToken)],
  ['scope only', () => scoped(false)],
  ['appendix', () => scoped(true)],
  ['appendix+seal', () => scoped(true), true],
];
const per: Record<string, number[]> = {};
for (const [, r] of cases) for (let i = 0; i < 30; i++) await r();
for (let round = 0; round < 9; round++) for (const [n, r, seal] of cases) {
  const s = process.hrtime.bigint(); for (let i = 0; i < 100; i++) await r(); if (seal) await container.audit.seal();
  (per[n] ??= []).push(Number(process.hrtime.bigint() - s) / 1000 / 100);
  if (!seal) await container.audit.seal();
}
const p = median(per['plain']!);
for (const n of Object.keys(per)) console.log(n.padEnd(14), median(per[n]!).toFixed(0), ((median(per[n]!) / p) * 100).toFixed(1) + '%');
await b.close();
