import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<ReturnType<typeof SerializerSelector>>;
type RouteSchema = Parameters<SerializerFactory>[0];

/**
 * Fastify's own response serializers (fast-json-stringify, with the same options and shared
 * schemas), each compiled when its route first answers with that status instead of when the
 * server starts: compiling two hundred routes' response schemas was about a fifth of a second of
 * every start (docs/benchmarks.md, "Start and restart"). test/route-schemas.test.ts compiles every
 * route's response schemas, so a schema fast-json-stringify refuses still fails in the tests.
 */
export function lazySerializerFactory(externalSchemas: unknown, serializerOpts: unknown) {
  const compile = SerializerSelector()(externalSchemas, serializerOpts as never);
  return (routeSchema: RouteSchema) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => (serialize ??= compile(routeSchema) as (data: unknown) => string)(data);
  };
}

/** Compiles one response schema now, as the lazy serializer would on first use (for the tests). */
export function compileResponseSchema(schema: object): (data: unknown) => string {
  return SerializerSelector()(undefined, {})({ schema } as RouteSchema) as (data: unknown) => string;
}
