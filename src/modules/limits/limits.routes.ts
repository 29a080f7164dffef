import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { currentAccount } from '../accounts/index.js';
import { badRequest, notFound } from '../../shared/errors.js';
import { normalizeUuid } from '../../shared/ids.js';
import { isoSeconds } from '../../shared/time.js';
import { WINDOW_SECONDS } from './limit-policy.js';
import type { Limits } from './limits.js';
import { BaseLimitRecord, BaseUuidParams, LimitsSummary, OverrideBody, Success } from './limits.schemas.js';

const tags = ['admin'];

/** Largest accepted override, as for the RATE_LIMIT_* variables. */
export const MAX_PER_MINUTE = 10_000_000;

/** System-admin view of the limits and per-base overrides, effective without a restart. */
export function limitsRoutes(limits: Limits, edition: string): FastifyPluginAsyncTypebox {
  const { service, overrides } = limits;
  const record = (uuid: string, name: string, perMinute: number | null) => ({
    base_uuid: uuid,
    base_name: name,
    per_minute: perMinute ?? service.defaults.base,
    default_per_minute: service.defaults.base,
    overridden: perMinute !== null,
  });

  return async (app) => {
    app.get(
      '/api/v2.1/admin/rate-limits/',
      { config: { auth: 'admin' }, schema: { tags, response: { 200: LimitsSummary } } },
      async () => ({
        edition,
        store: service.store,
        window_seconds: WINDOW_SECONDS,
        account_per_minute: service.defaults.account,
        base_per_minute: service.defaults.base,
        auth_token_per_minute: service.defaults['auth-token'],
        base_overrides: (await overrides.list()).map((o) => ({
          base_uuid: o.base_uuid,
          per_minute: o.per_minute,
          updated_at: isoSeconds(o.updated_at),
        })),
      }),
    );

    const path = '/api/v2.1/admin/rate-limits/bases/:base_uuid/';
    const params = { params: BaseUuidParams };

    app.get(path, { config: { auth: 'admin' }, schema: { tags, ...params, response: { 200: BaseLimitRecord } } }, async (request) => {
      const { base, perMinute } = await overrides.get(baseUuid(request.params.base_uuid));
      return record(base.uuid, base.name, perMinute);
    });

    app.put(
      path,
      { config: { auth: 'admin' }, schema: { tags, ...params, body: OverrideBody, response: { 200: BaseLimitRecord } } },
      async (request) => {
        const perMinute = parsePerMinute(request.body.per_minute);
        const base = await overrides.set(baseUuid(request.params.base_uuid), perMinute, currentAccount(request).id);
        return record(base.uuid, base.name, perMinute);
      },
    );

    app.delete(path, { config: { auth: 'admin' }, schema: { tags, ...params, response: { 200: Success } } }, async (request) => {
      await overrides.remove(baseUuid(request.params.base_uuid));
      return { success: true };
    });
  };
}

function baseUuid(raw: string): string {
  const uuid = normalizeUuid(raw);
  if (!uuid) throw notFound('dtable not found.');
  return uuid;
}

/** A whole number 0…MAX_PER_MINUTE, as a JSON number or a decimal string (form bodies). */
export function parsePerMinute(raw: unknown): number {
  const value = typeof raw === 'string' && /^\d{1,9}$/.test(raw.trim()) ? Number(raw.trim()) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_PER_MINUTE) {
    throw badRequest(`per_minute must be a whole number from 0 to ${MAX_PER_MINUTE} (0 = unlimited).`);
  }
  return value;
}
