import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CATEGORIES } from '../formulas/index.js';
import { baseOf, GATEWAY } from './gateway-request.js';
import { AnyBody, BaseUuidParams } from './rows.schemas.js';
import type { FormulaPreviewService } from './formula-preview.js';

/** The function library as the console's formula builder lists it: name, category, argument counts (max null: any number). */
const FUNCTION_LIST = Object.entries(CATEGORIES).flatMap(([category, functions]) =>
  Object.entries(functions).map(([name, def]) => ({ name, category, min_args: def.min, max_args: def.max >= 255 ? null : def.max })),
);

const FunctionsResponse = Type.Object({
  functions: Type.Array(Type.Object({ name: Type.String(), category: Type.String(), min_args: Type.Integer(), max_args: Type.Union([Type.Integer(), Type.Null()]) })),
});
const PreviewResponse = Type.Object({
  result_type: Type.Unknown(),
  rows: Type.Array(Type.Object({ _id: Type.String(), value: Type.Unknown() })),
});

/** Reading the library and trying a formula change nothing: any Base-Token that may read rows. */
const read = { baseAuth: 'read', scope: ['read_rows', 'structure'] } as const;

/** The formula builder's helpers under `/api-gateway/api/v2/dtables/{base_uuid}/`. */
export function formulaPreviewRoutes({ preview, bodyLimit }: { preview: FormulaPreviewService; bodyLimit: number }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['base columns'];
    app.get(
      `${GATEWAY}/formula-functions/`,
      {
        config: read,
        schema: {
          tags,
          summary: 'List the formula functions',
          description: 'Every function a formula column may call, with its category and how many arguments it takes (`max_args` null: any number). Not in the original API; used by the console\'s formula builder.',
          params: BaseUuidParams,
          response: { 200: FunctionsResponse },
        },
      },
      async () => ({ functions: FUNCTION_LIST }),
    );
    app.post(
      `${GATEWAY}/formula-preview/`,
      {
        config: read,
        bodyLimit,
        schema: {
          tags,
          summary: 'Try a formula on the first rows',
          description:
            'Body `{table_name, formula, limit?}` (limit 1–20, default 5). The formula is checked as a new formula column\'s would be (the same 400 errors, with the position) and computed for the table\'s first rows in insertion order; nothing is stored. Not in the original API; used by the console\'s formula builder.',
          params: BaseUuidParams,
          body: AnyBody,
          response: { 200: PreviewResponse },
        },
      },
      async (request) => preview.preview(baseOf(request), request.body),
    );
  };
}
