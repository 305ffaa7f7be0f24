import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from './harness.js';
import { securityCases, securityExemptRoutes } from './security-cases.js';
import type { PreparedRequest } from './security/types.js';

const writeMethods = new Set(['POST', 'PATCH', 'DELETE', 'PUT']);

/** The body of a prepared request: JSON, or raw bytes with their content type (uploads). */
function payload(prepared: PreparedRequest) {
  return prepared.rawBody !== undefined ? { rawBody: prepared.rawBody, contentType: prepared.contentType } : { body: prepared.body };
}

function sameRequest(a: PreparedRequest, b: PreparedRequest): boolean {
  const raw = (request: PreparedRequest) => request.rawBody?.toString('base64') ?? null;
  return a.url === b.url && JSON.stringify(a.body) === JSON.stringify(b.body) && raw(a) === raw(b);
}

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('route coverage', () => {
  it('every authenticated route has a security case or a documented exemption', () => {
    const covered = new Set(securityCases.map((entry) => `${entry.method} ${entry.route}`));
    const missing = t.routes
      .filter((route) => !route.public && !route.admin)
      .map((route) => `${route.method} ${route.url}`)
      .filter((key) => !covered.has(key) && !(key in securityExemptRoutes));
    expect(missing).toEqual([]);
  });

  it('every security case names a route that exists', () => {
    const registered = new Set(t.routes.map((route) => `${route.method} ${route.url}`));
    const unknown = securityCases.map((entry) => `${entry.method} ${entry.route}`).filter((key) => !registered.has(key));
    expect(unknown).toEqual([]);
  });
});

describe.each(securityCases.map((entry) => [`${entry.method} ${entry.route}`, entry] as const))('%s', (_name, entry) => {
  it('401 without an API key', async () => {
    const prepared = await entry.prepare(t, t.clientA);
    const response = await t.request({ method: entry.method, url: prepared.url, ...payload(prepared), key: null });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('UNAUTHENTICATED');
  });

  it('401 with an unknown API key', async () => {
    const prepared = await entry.prepare(t, t.clientA);
    const unknownKey = `sk_test_${crypto.randomBytes(16).toString('hex')}`;
    const response = await t.request({ method: entry.method, url: prepared.url, ...payload(prepared), key: unknownKey });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('UNAUTHENTICATED');
  });

  it('succeeds for the owner', async () => {
    const prepared = await entry.prepare(t, t.clientA);
    const response = await t.request({ method: entry.method, url: prepared.url, ...payload(prepared) });
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
  });

  if (writeMethods.has(entry.method)) {
    it('403 with a read-only key', async () => {
      const prepared = await entry.prepare(t, t.clientA);
      const response = await t.request({ method: entry.method, url: prepared.url, ...payload(prepared), key: t.clientA.readOnlyKey });
      expect(response.status).toBe(403);
      expect(response.body.code).toBe('FORBIDDEN');
    });

    it('replays the first response for a repeated Idempotency-Key, and refuses the key for another request', async () => {
      const prepared = await entry.prepare(t, t.clientA);
      const idempotencyKey = `security-${crypto.randomUUID()}`;
      const first = await t.request({ method: entry.method, url: prepared.url, ...payload(prepared), idempotencyKey });
      expect(first.status, JSON.stringify(first.body)).toBeLessThan(300);
      const second = await t.request({ method: entry.method, url: prepared.url, ...payload(prepared), idempotencyKey });
      expect(second.status).toBe(first.status);
      expect(second.body).toEqual(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');

      const other = await entry.prepare(t, t.clientA);
      if (!sameRequest(other, prepared)) {
        const reused = await t.request({ method: entry.method, url: other.url, ...payload(other), idempotencyKey });
        expect(reused.status).toBe(422);
        expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
        expect(reused.body.details).toEqual([{ field: 'Idempotency-Key', message: 'was already used with a different request' }]);
      }
    });
  }

  const ownerMarkers = entry.ownerMarkers;
  if (ownerMarkers) {
    it("another client's list does not contain this client's records", async () => {
      const prepared = await entry.prepare(t, t.clientA);
      const markers = await ownerMarkers(t, t.clientA);
      expect(markers.length).toBeGreaterThan(0);
      const owner = await t.request({ method: entry.method, url: prepared.url, ...payload(prepared) });
      expect(owner.status, JSON.stringify(owner.body)).toBeLessThan(300);
      for (const marker of markers) expect(owner.raw.body).toContain(marker);
      const other = await t.request({ method: entry.method, url: prepared.url, ...payload(prepared), key: t.clientB.key });
      expect(other.status, JSON.stringify(other.body)).toBeLessThan(300);
      for (const marker of markers) expect(other.raw.body).not.toContain(marker);
    });
  }

  if (entry.ownsResource) {
    it("404 for another client's resource, the same as for a missing one", async () => {
      const prepared = await entry.prepare(t, t.clientB);
      const response = await t.request({ method: entry.method, url: prepared.url, ...payload(prepared) });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
      // A resource named in the body or the query (not the path) is named in details, so the
      // client knows which of its ids was not found (until 2026-12-07 several routes named none).
      const [path = '', query = ''] = prepared.url.split('?');
      if (!/[0-9a-f]{8}-[0-9a-f]{4}-/i.test(path)) {
        const bodyFields = prepared.body !== null && typeof prepared.body === 'object' ? Object.keys(prepared.body) : [];
        const fields = [...new URLSearchParams(query).keys(), ...bodyFields, ...(prepared.rawBody ? ['customerId'] : [])];
        expect(fields, JSON.stringify(response.body)).toContain(response.body.details?.[0]?.field);
      }
    });
  }
});
