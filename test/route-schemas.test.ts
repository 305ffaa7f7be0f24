import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileRouteSchema } from '../src/platform/http/validation.js';
import { compileResponseSchema } from '../src/platform/http/serialization.js';
import { createTestApp, type TestContext } from './harness.js';
import { registerTestRoutes } from './support/test-routes.js';

// Route schemas are compiled by Ajv on their first request, not when the server starts (it made
// every start about a second shorter). This compiles every registered route's request schemas with
// the same strict Ajv instances, so a schema Ajv refuses fails here instead of on its first request.

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp({ extraRoutes: registerTestRoutes });
});
afterAll(async () => {
  await t.close();
});

const requestParts = ['body', 'querystring', 'params', 'headers'] as const;

describe('every route schema compiles', () => {
  it('the body, query, path and header schemas of every route compile with the strict Ajv', () => {
    const failures: string[] = [];
    let compiled = 0;
    for (const route of t.routes) {
      for (const part of requestParts) {
        const schema = route.schema?.[part];
        if (schema === undefined) continue;
        try {
          compileRouteSchema(schema as object, part);
          compiled += 1;
        } catch (error) {
          failures.push(`${route.method} ${route.url} ${part}: ${(error as Error).message}`);
        }
      }
    }
    expect(failures).toEqual([]);
    // Every API route has at least its query schema: the walk above did reach the routes.
    expect(compiled).toBeGreaterThan(t.routes.filter((route) => route.url.startsWith('/v1')).length);
  });

  it('the response schemas of every route compile with fast-json-stringify (serializers are compiled on first use too)', () => {
    const failures: string[] = [];
    let compiled = 0;
    for (const route of t.routes) {
      const responses = (route.schema?.response ?? {}) as Record<string, object>;
      for (const [status, schema] of Object.entries(responses)) {
        try {
          compileResponseSchema(schema);
          compiled += 1;
        } catch (error) {
          failures.push(`${route.method} ${route.url} ${status}: ${(error as Error).message}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(compiled).toBeGreaterThan(t.routes.filter((route) => route.url.startsWith('/v1')).length / 2);
    expect(() => compileResponseSchema({ type: 'object', properties: { id: { $ref: '#/definitions/missing' } } })).toThrow();
  });

  it('a schema the strict Ajv refuses (an unknown keyword) fails to compile', () => {
    expect(() => compileRouteSchema({ type: 'object', colour: 'red' }, 'body')).toThrow(/strict mode: unknown keyword/);
    expect(() => compileRouteSchema({ type: 'object', properties: { id: { type: 'string', format: 'no-such-format' } } }, 'params')).toThrow(/unknown format/);
  });
});

describe('400 from a lazily compiled schema', () => {
  it('the first request to a route is validated exactly as later ones', async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await t.request({ method: 'POST', url: '/v1/test/things', body: { name: 'widget', amount: 10.5, asset: 'USD' } });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
      expect(response.body.details).toEqual([{ field: 'amount', message: expect.any(String) }]);
    }
  });
});
