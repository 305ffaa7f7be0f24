import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../test/harness.js';
import { apiKeyPrefix } from './api-key.js';
import { createApiKey, revokeApiKey } from './tenants.service.js';
import type { ApiKeySummaryView } from './tenants.service.js';

let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** A key as the route lists it. */
type Listed = ApiKeySummaryView;

async function listKeys(key: string, query = ''): Promise<{ status: number; keys: Listed[]; raw: string; body: Record<string, unknown> }> {
  const response = await t.request({ url: `/v1/api-keys${query}`, key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return { status: response.status, keys: response.body.data as Listed[], raw: response.raw.body, body: response.body };
}

/** A client with a full key, a read-only key, a key limited to an address range and a revoked key. */
async function clientWithKeys(): Promise<{ client: TestClient; restricted: string; revoked: string; revokedAt: string }> {
  const client = await t.newClient('Key lister');
  t.clock.advance(1_000);
  const restricted = (await createApiKey(t.deps, client.id, { allowedCidrs: ['10.0.0.0/8', '127.0.0.1'] })).key;
  t.clock.advance(1_000);
  const revoked = (await createApiKey(t.deps, client.id)).key;
  t.clock.advance(1_000);
  const { revokedAt } = await revokeApiKey(t.deps, apiKeyPrefix(revoked));
  return { client, restricted, revoked, revokedAt };
}

describe('200', () => {
  it("lists the client's own keys, newest first, with prefix, readOnly, allowedCidrs, createdAt, revokedAt and current", async () => {
    const { client, restricted, revoked, revokedAt } = await clientWithKeys();
    const { keys, body } = await listKeys(client.key);
    expect(body.message).toBe('API keys retrieved');
    expect(body.pagination).toEqual({ totalResults: 4, totalResultsExact: true, hasMoreResults: false, nextStartAfterId: null });
    expect(keys).toHaveLength(4);
    const byPrefix = new Map(keys.map((entry) => [entry.prefix, entry]));
    expect(byPrefix.get(apiKeyPrefix(client.key))).toEqual({
      prefix: apiKeyPrefix(client.key),
      readOnly: false,
      allowedCidrs: [],
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      revokedAt: null,
      current: true,
    });
    expect(byPrefix.get(apiKeyPrefix(client.readOnlyKey))).toMatchObject({ readOnly: true, revokedAt: null, current: false });
    expect(byPrefix.get(apiKeyPrefix(restricted))).toMatchObject({ readOnly: false, allowedCidrs: ['10.0.0.0/8', '127.0.0.1'], current: false });
    expect(byPrefix.get(apiKeyPrefix(revoked))).toMatchObject({ revokedAt, current: false });
    // Newest first: the revoked key was created last.
    expect(keys.map((entry) => entry.prefix)).toEqual([revoked, restricted, client.readOnlyKey, client.key].map(apiKeyPrefix));
    for (const entry of keys) expect(Object.keys(entry).sort()).toEqual(['allowedCidrs', 'createdAt', 'current', 'prefix', 'readOnly', 'revokedAt']);
  });

  it('marks as current only the key making the request', async () => {
    const { client, restricted } = await clientWithKeys();
    const asFull = await listKeys(client.key);
    expect(asFull.keys.filter((entry) => entry.current).map((entry) => entry.prefix)).toEqual([apiKeyPrefix(client.key)]);
    const asReadOnly = await listKeys(client.readOnlyKey);
    expect(asReadOnly.keys.filter((entry) => entry.current).map((entry) => entry.prefix)).toEqual([apiKeyPrefix(client.readOnlyKey)]);
    const restrictedResponse = await t.app.inject({ method: 'GET', url: '/v1/api-keys', headers: { authorization: restricted }, remoteAddress: '10.1.2.3' });
    expect(restrictedResponse.statusCode).toBe(200);
    const asRestricted = (JSON.parse(restrictedResponse.body) as { data: Listed[] }).data;
    expect(asRestricted.filter((entry) => entry.current).map((entry) => entry.prefix)).toEqual([apiKeyPrefix(restricted)]);
  });

  it('a read-only key can list the keys', async () => {
    const client = await t.newClient('Read-only lister');
    const { keys } = await listKeys(client.readOnlyKey);
    expect(keys.map((entry) => entry.prefix).sort()).toEqual([apiKeyPrefix(client.key), apiKeyPrefix(client.readOnlyKey)].sort());
  });

  it('shows a revoked key with the moment it was revoked', async () => {
    const { client, revoked, revokedAt } = await clientWithKeys();
    const { keys } = await listKeys(client.key);
    expect(revokedAt).toBe(t.clock.now().toISOString());
    expect(keys.find((entry) => entry.prefix === apiKeyPrefix(revoked))?.revokedAt).toBe(revokedAt);
    expect(keys.filter((entry) => entry.revokedAt !== null)).toHaveLength(1);
  });

  it('no field carries a secret: neither the full keys nor their hashes appear in the body', async () => {
    const { client, restricted, revoked } = await clientWithKeys();
    const fullKeys = [client.key, client.readOnlyKey, restricted, revoked];
    for (const requester of [client.key, client.readOnlyKey]) {
      const { raw } = await listKeys(requester);
      for (const key of fullKeys) {
        expect(raw).not.toContain(key);
        // Not even the secret part past the prefix, in any length that could help guess it.
        expect(raw).not.toContain(key.slice(apiKeyPrefix(key).length, apiKeyPrefix(key).length + 8));
      }
      expect(raw).not.toMatch(/hash|secret/i);
    }
  });

  it("never lists another client's keys", async () => {
    const mine = await clientWithKeys();
    const other = await clientWithKeys();
    const { keys, raw } = await listKeys(mine.client.key);
    const otherPrefixes = [other.client.key, other.client.readOnlyKey, other.restricted, other.revoked].map(apiKeyPrefix);
    for (const prefix of otherPrefixes) expect(raw).not.toContain(prefix);
    expect(keys).toHaveLength(4);
    const theirs = await listKeys(other.client.key);
    expect(theirs.keys.map((entry) => entry.prefix).sort()).toEqual([...otherPrefixes].sort());
    for (const key of [mine.client.key, mine.client.readOnlyKey, mine.restricted, mine.revoked]) expect(theirs.raw).not.toContain(apiKeyPrefix(key));
  });

  it('pages with limit and startAfterId, like every list', async () => {
    const { client } = await clientWithKeys();
    const first = await listKeys(client.key, '?limit=3');
    expect(first.keys).toHaveLength(3);
    expect(first.body.pagination).toMatchObject({ totalResults: 4, hasMoreResults: true, nextStartAfterId: expect.any(String) });
    const cursor = (first.body.pagination as { nextStartAfterId: string }).nextStartAfterId;
    const second = await listKeys(client.key, `?limit=3&startAfterId=${cursor}`);
    expect(second.keys).toHaveLength(1);
    expect(second.body.pagination).toEqual({ totalResults: 4, totalResultsExact: true, hasMoreResults: false, nextStartAfterId: null });
    expect([...first.keys, ...second.keys].map((entry) => entry.prefix)).toEqual((await listKeys(client.key)).keys.map((entry) => entry.prefix));
  });
});

describe('400', () => {
  it('refuses an unknown query parameter', async () => {
    const response = await t.request({ url: '/v1/api-keys?includeSecrets=true' });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('401', () => {
  it('without a key', async () => {
    const response = await t.request({ url: '/v1/api-keys', key: null });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('UNAUTHENTICATED');
  });

  it('with an unknown key', async () => {
    const response = await t.request({ url: '/v1/api-keys', key: 'sk_test_0000000000000000000000000000000000' });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('UNAUTHENTICATED');
  });
});

describe('403', () => {
  it('with a revoked key: a revoked key cannot even list the keys', async () => {
    const { revoked } = await clientWithKeys();
    const response = await t.request({ url: '/v1/api-keys', key: revoked });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
  });
});
