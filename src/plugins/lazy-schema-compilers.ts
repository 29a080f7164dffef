import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

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
        // Fastify reads `errors` off the function it was given after a failed validation.
        const lazy = ((data: unknown) => {
          validate ??= compile(route);
          const result = validate(data);
          lazy.errors = validate.errors;
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
