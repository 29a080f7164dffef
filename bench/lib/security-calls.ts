/**
 * The two calls of issue 33's cost aim, per arm, for the benches that count them in a process of their own
 * (`security-write.instructions.ts`, `security-write.allocations.ts`): a token-authenticated 100-row read
 * and a single-row insert through the gateway with `app.inject` (the whole Fastify pipeline in process):
 *   - off:      an app built on the same container with `withoutAudit` (no trail hooks, no per-use work
 *               for API-Tokens), called with the Base-Token of an unscoped `rw` API-Token: scopes and audit off;
 *   - off-b:    `off` again under another name, the control of a bench that compares arms within one process;
 *   - scoped:   the app as served, with the Base-Token of an API-Token scoped in every dimension (one table,
 *               two operations, an expiry, a network, its own rate budget): every scope check on every call;
 *   - unscoped: the served app with the unscoped token (informational);
 *   - only-<dimension> (`only-tables`, `only-operations`, `only-allowed_networks`, `only-rate_limit`): the served
 *               app with a token scoped in that one dimension of EVERY_DIMENSION (an ablation).
 * The table holds READ_ROWS rows before the first read. The answer is not parsed unless asked (the client's work).
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { EVERY_DIMENSION, scopedBaseToken, startBasegate } from './servers.js';

export const READ_ROWS = 100;

export interface SecurityCalls {
  read(parse?: boolean): Promise<void>;
  insert(): Promise<void>;
  close(): Promise<void>;
}

/** An arm's app (not listening), the Base-Token it is called with and the rows URL; the table seeded with READ_ROWS rows. */
export interface SecurityTarget {
  app: FastifyInstance;
  token: string;
  /** The gateway's rows URL of the seeded base (a path). */
  url: string;
  close(): Promise<void>;
}

/** One process's arms on one container and base: `targets[i]` is `arms[i]`'s app and token (arms may share an app). */
export interface SecurityTargets {
  targets: { arm: string; app: FastifyInstance; token: string }[];
  url: string;
  close(): Promise<void>;
}

export async function openSecurityTarget(arm: string): Promise<SecurityTarget> {
  const { targets, url, close } = await openSecurityTargets([arm]);
  return { app: targets[0]!.app, token: targets[0]!.token, url, close };
}

/** `arms` in one process: the served app and the `off` app share the container, the base and its table. */
export async function openSecurityTargets(arms: readonly string[]): Promise<SecurityTargets> {
  const basegate = await startBasegate({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '10000000' });
  const { app: served, container, seeded } = basegate;
  const off = await buildApp(container, { logger: false, withoutAudit: true });
  await off.ready();
  const close = async () => {
    await off.close();
    await basegate.close();
  };
  try {
    const expires = new Date(Date.now() + 365 * 24 * 3600 * 1000).toISOString();
    const targets: SecurityTargets['targets'] = [];
    for (const arm of arms) {
      const dimension = arm.startsWith('only-') ? (arm.slice('only-'.length) as keyof typeof EVERY_DIMENSION) : undefined;
      const [app, token] =
        arm === 'off' || arm === 'off-b'
          ? [off, seeded.baseToken]
          : arm === 'scoped'
            ? [served, await scopedBaseToken(basegate, { ...EVERY_DIMENSION, expires_at: expires })]
            : arm === 'unscoped'
              ? [served, seeded.baseToken]
              : dimension && dimension in EVERY_DIMENSION
                ? [served, await scopedBaseToken(basegate, { [dimension]: EVERY_DIMENSION[dimension] }, arm)]
                : [];
      if (!app || !token) throw new Error(`unknown arm ${arm}`);
      targets.push({ arm, app, token });
    }
    const url = `/api-gateway/api/v2/dtables/${seeded.base.uuid}/rows/`;
    const first = targets[0]!;
    for (let i = 0; i < READ_ROWS; i += 1) {
      const res = await first.app.inject({ method: 'POST', url, remoteAddress: '127.0.0.1', headers: { authorization: `Token ${first.token}` }, payload: INSERT_BODY });
      if (res.statusCode !== 200) throw new Error(`insert: ${res.statusCode} ${res.body}`);
    }
    return { targets, url, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The insert's body and the read's query, the same for every bench of these calls. */
export const INSERT_BODY = { table_name: 'Table1', rows: [{ Name: 'bench' }] };
export const READ_QUERY = `?table_name=Table1&limit=${READ_ROWS}`;

export async function openSecurityArm(arm: string): Promise<SecurityCalls> {
  const { app, token, url, close } = await openSecurityTarget(arm);
  const headers = { authorization: `Token ${token}` };
  const insert = async () => {
    const res = await app.inject({ method: 'POST', url, remoteAddress: '127.0.0.1', headers, payload: INSERT_BODY });
    if (res.statusCode !== 200) throw new Error(`insert: ${res.statusCode} ${res.body}`);
  };
  const read = async (parse = false) => {
    const res = await app.inject({ method: 'GET', url: `${url}${READ_QUERY}`, remoteAddress: '127.0.0.1', headers });
    if (res.statusCode !== 200 || (parse && res.json<{ rows: unknown[] }>().rows.length !== READ_ROWS)) throw new Error(`read: ${res.statusCode} ${res.body.slice(0, 200)}`);
  };
  return { read, insert, close };
}
