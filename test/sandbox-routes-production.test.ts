import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from './harness.js';

/**
 * Every sandbox control exists in sandbox mode only (CONTRACT §10): each route registered under
 * /v1/sandbox in sandbox mode answers 404 ROUTE_NOT_FOUND in production mode, whatever its method.
 */
let sandbox: TestContext;
let production: TestContext;

beforeAll(async () => {
  [sandbox, production] = await Promise.all([createTestApp(), createTestApp({ env: { OPENBAAS_MODE: 'production' } })]);
});
afterAll(async () => {
  await Promise.all([sandbox.close(), production.close()]);
});

describe('404 in production mode', () => {
  it('every /v1/sandbox route of the sandbox answers 404 ROUTE_NOT_FOUND in production', async () => {
    const routes = sandbox.routes.filter((route) => route.url.startsWith('/v1/sandbox'));
    expect(routes.length).toBeGreaterThanOrEqual(8);
    for (const route of routes) {
      const url = route.url.replace(/:[A-Za-z]+/g, '019ca945-0a00-74c1-8797-3bfde107f365');
      const response = await production.request({ method: route.method as 'GET', url, ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: {} }) });
      expect(response.status, `${route.method} ${route.url}`).toBe(404);
      expect(response.body.code, `${route.method} ${route.url}`).toBe('ROUTE_NOT_FOUND');
    }
    expect(production.routes.filter((route) => route.url.startsWith('/v1/sandbox'))).toEqual([]);
  });
});
