import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/**
 * The key of a path or query value that ajv's type coercion turned into ±Infinity ("1e309" passes its
 * integer, number and maximum checks once coerced), which no route can use: refused like a bad type.
 */
function nonFiniteKey(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === 'number' && !Number.isFinite(value)) return key;
    if (Array.isArray(value) && value.some((item) => typeof item === 'number' && !Number.isFinite(item))) return key;
  }
  return undefined;
}

/**
 * Fastify's own schema compilers (ajv for requests, fast-json-stringify for responses), each route's
 * schema compiled on the first request that needs it instead of all of them while the server starts.
 * Compiling the few hundred route schemas was about a quarter of the CPU time to the first answer;
 * validation and serialization are the same functions, only built later (once, then cached).
 */
export function lazySchemaCompilers(): CompilersFactory {
  const buildAjv = AjvCompiler();
  const buildSerializer = SerializerSelector();
  const factory = {
    buildValidator(externalSchemas: unknown, ajvOptions: unknown) {
      const compile = buildAjv(externalSchemas as never, ajvOptions as never);
      return (route: Parameters<typeof compile>[0]) => {
        let validate: ReturnType<typeof compile> | null = null;
        // Fastify passes { schema, method, url, httpPart }; ajv-compiler's type names only the schema.
        const part = (route as unknown as { httpPart?: string }).httpPart;
        // Fastify reads `errors` off the function it was given after a failed validation.
        const lazy = ((data: unknown) => {
          validate ??= compile(route);
          const result = validate(data);
          lazy.errors = validate.errors;
          if (result === true && (part === 'params' || part === 'querystring')) {
            const infinite = nonFiniteKey(data);
            if (infinite !== undefined) {
              lazy.errors = [{ keyword: 'type', instancePath: `/${infinite}`, schemaPath: '#/type', params: { type: 'number' }, message: 'must be a finite number' }];
              return false;
            }
          }
          return result;
        }) as ((data: unknown) => unknown) & { errors?: unknown };
        return lazy;
      };
    },
    buildSerializer(externalSchemas: unknown, serializerOptions: unknown) {
      const compile = buildSerializer(externalSchemas as never, serializerOptions as never);
      return (route: Parameters<typeof compile>[0]) => {
        let serialize: ReturnType<typeof compile> | null = null;
        return (doc: unknown) => (serialize ??= compile(route))(doc);
      };
    },
  };
  // The validator's declared type is ajv's full ValidateFunction; Fastify only calls it and reads `errors`.
  return factory as unknown as CompilersFactory;
}
