import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ColumnOptionsService } from './column-options.service.js';
import { actorOf, baseOf, GATEWAY } from './gateway-request.js';
import type { RowsService } from './rows.service.js';
import { AnyBody, AppendResponse, BaseUuidParams, Success } from './rows.schemas.js';

const write = { baseAuth: 'write', scope: ['structure'] } as const;

const OptionsOrSuccess = Type.Union([Success, Type.Object({ options: Type.Array(Type.Object({}, { additionalProperties: true })) })]);

/** Select options, cascade settings and the `batch-append-rows` alias the official clients call. */
export function columnOptionsRoutes({ options, rows, bodyLimit }: { options: ColumnOptionsService; rows: RowsService; bodyLimit: number }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const schema = (response: object) => ({ tags: ['base columns'], params: BaseUuidParams, body: AnyBody, response: { 200: response } });
    app.post(`${GATEWAY}/column-options/`, { config: write, bodyLimit, schema: schema(Success) }, async (request) =>
      options.add(baseOf(request), actorOf(request), request.body),
    );
    app.put(`${GATEWAY}/column-options/`, { config: write, bodyLimit, schema: schema(OptionsOrSuccess) }, async (request) =>
      options.update(baseOf(request), actorOf(request), request.body),
    );
    app.delete(`${GATEWAY}/column-options/`, { config: write, bodyLimit, schema: schema(Success) }, async (request) =>
      options.remove(baseOf(request), actorOf(request), request.body),
    );
    app.post(`${GATEWAY}/column-cascade-settings/`, { config: write, bodyLimit, schema: schema(Success) }, async (request) =>
      options.cascade(baseOf(request), actorOf(request), request.body),
    );
    // The original's older name for appending rows (the PHP and Python clients still call it).
    app.post(
      `${GATEWAY}/batch-append-rows/`,
      { config: { baseAuth: 'write' }, bodyLimit, schema: { tags: ['base rows'], params: BaseUuidParams, body: AnyBody, response: { 200: AppendResponse } } },
      async (request) => rows.append(baseOf(request), actorOf(request), request.body),
    );
  };
}
