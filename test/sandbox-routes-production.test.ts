import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/modules/tenants/tenants.service.js';
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

describe('401: a key of the other mode', () => {
  it('a sandbox key kept in a data folder now run in production, and a live key on a sandbox server, open nothing, and the answer says why', async () => {
    // The keys a folder keeps from its sandbox days were made in sandbox mode.
    const asSandbox = { ...production.deps, config: { ...production.deps.config, mode: 'sandbox' as const } };
    const testKey = (await createApiKey(asSandbox, production.clientA.id)).key;
    const asProduction = { ...sandbox.deps, config: { ...sandbox.deps.config, mode: 'production' as const } };
    const liveKey = (await createApiKey(asProduction, sandbox.clientA.id)).key;
    for (const [context, key, wanted] of [[production, testKey, 'sk_live_'], [sandbox, liveKey, 'sk_test_']] as const) {
      for (const request of [{ url: '/v1/customers' }, { method: 'POST' as const, url: '/v1/customers/individual', body: {} }]) {
        const response = await context.request({ ...request, key });
        expect(response.status, key).toBe(401);
        expect(response.body.code).toBe('UNAUTHENTICATED');
        expect(response.body.message).toContain(`takes ${wanted} keys`);
      }
      // The client's own key of the server's mode still works.
      expect((await context.request({ url: '/v1/customers' })).status).toBe(200);
    }
  });
});
