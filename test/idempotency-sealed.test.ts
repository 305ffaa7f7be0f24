import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealedBody } from '../src/platform/http/idempotency.js';
import { individualBody } from './customers/fixtures.js';
import { createTestApp, type TestContext } from './harness.js';
import { fundWallet, newWallet } from './ledger/fixtures.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function storedRecord(key: string) {
  return t.deps.db
    .selectFrom('idempotency_keys')
    .select(['response_body', 'response_sealed'])
    .where('client_id', '=', t.clientA.id)
    .where('key', '=', key)
    .executeTakeFirstOrThrow();
}

// A response that shows a secret once is replayed for the idempotency retention: its stored copy
// must not hold the secret in clear.
describe('idempotency records of responses that show a secret', () => {
  it('a webhook creation is stored encrypted and replays the same secret', async () => {
    const key = crypto.randomUUID();
    const body = { name: 'sealed', url: 'https://example.com/hooks', subscribedEventTypes: ['CUSTOMER_CREATED'] };
    const first = await t.request({ method: 'POST', url: '/v1/webhooks', body, idempotencyKey: key });
    expect(first.status).toBe(201);
    const secret: string = first.body.data.secret;
    const stored = await storedRecord(key);
    expect(stored.response_sealed).toBe(true);
    expect(typeof stored.response_body).toBe('string');
    expect(JSON.stringify(stored.response_body)).not.toContain(secret.slice('whsec_'.length));

    const replay = await t.request({ method: 'POST', url: '/v1/webhooks', body, idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('a secret rotation too', async () => {
    const created = await t.request({ method: 'POST', url: '/v1/webhooks', body: { name: 'rotated', url: 'https://example.com/hooks', subscribedEventTypes: ['CUSTOMER_CREATED'] } });
    const key = crypto.randomUUID();
    const first = await t.request({ method: 'POST', url: `/v1/webhooks/${created.body.data.id}/rotate-secret`, idempotencyKey: key });
    expect(first.status).toBe(200);
    const stored = await storedRecord(key);
    expect(stored.response_sealed).toBe(true);
    expect(JSON.stringify(stored.response_body)).not.toContain(String(first.body.data.secret).slice('whsec_'.length));
    const replay = await t.request({ method: 'POST', url: `/v1/webhooks/${created.body.data.id}/rotate-secret`, idempotencyKey: key });
    expect(replay.body).toEqual(first.body);
  });

  it("an individual's document numbers are stored encrypted and replayed as they were", async () => {
    const key = crypto.randomUUID();
    const body = individualBody({}, { documentPassport: 'X9876543' });
    const first = await t.request({ method: 'POST', url: '/v1/customers/individual', body, idempotencyKey: key });
    expect(first.status).toBe(201);
    expect(first.body.data.kyc.documentPassport).toBe('****6543');
    const stored = await storedRecord(key);
    expect(stored.response_sealed).toBe(true);
    expect(JSON.stringify(stored.response_body)).not.toContain('X9876543');
    const replay = await t.request({ method: 'POST', url: '/v1/customers/individual', body, idempotencyKey: key });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('a KYC start and a re-run, whose SDK link is the hosted page\'s only credential, are stored encrypted', async () => {
    const customer = await t.request({ method: 'POST', url: '/v1/customers/individual', body: individualBody({}, { mainAddress: { street1: '1 Main St', cityCounty: 'Albany', stateRegion: 'NY', zip: '12207', countryCode: 'US' }, taxIdCountry: 'US' }) });
    expect(customer.status, JSON.stringify(customer.body)).toBe(201);
    const key = crypto.randomUUID();
    const started = await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId: customer.body.data.id }, idempotencyKey: key });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const token = String(started.body.data.sdk.link).split('/').at(-1) as string;
    const stored = await storedRecord(key);
    expect(stored.response_sealed).toBe(true);
    expect(JSON.stringify(stored.response_body)).not.toContain(token);
    const replay = await t.request({ method: 'POST', url: '/v1/compliance/kyc', body: { customerId: customer.body.data.id }, idempotencyKey: key });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(started.body);

    const rerunKey = crypto.randomUUID();
    const rerun = await t.request({ method: 'POST', url: `/v1/compliance/kyc/${started.body.data.onboardingId}/rerun`, idempotencyKey: rerunKey });
    expect(rerun.status).toBe(201);
    const rerunStored = await storedRecord(rerunKey);
    expect(rerunStored.response_sealed).toBe(true);
    expect(JSON.stringify(rerunStored.response_body)).not.toContain(String(rerun.body.data.sdk.link).split('/').at(-1));
  });

  it('other responses and refusals are stored as they are', async () => {
    const created = await t.request({ method: 'POST', url: '/v1/webhooks', body: { name: 'plain', url: 'https://example.com/hooks', subscribedEventTypes: ['CUSTOMER_CREATED'] } });
    const key = crypto.randomUUID();
    const patched = await t.request({ method: 'PATCH', url: `/v1/webhooks/${created.body.data.id}`, body: { name: 'renamed' }, idempotencyKey: key });
    expect(patched.status).toBe(200);
    const stored = await storedRecord(key);
    expect(stored.response_sealed).toBe(false);
    expect(stored.response_body).toEqual(patched.body);

    // A refusal of a sealed route (no secret in it) is stored as it is too.
    const refusedKey = crypto.randomUUID();
    const refused = await t.request({ method: 'POST', url: `/v1/webhooks/${crypto.randomUUID()}/rotate-secret`, idempotencyKey: refusedKey });
    expect(refused.status).toBe(404);
    const storedRefusal = await storedRecord(refusedKey);
    expect(storedRefusal.response_sealed).toBe(false);
    expect(storedRefusal.response_body).toEqual(refused.body);
  });

  // No batched route seals today; the batcher must still open a sealed record the same way
  // runWrite does, or a route that starts sealing would replay ciphertext.
  it('the write batcher replays a sealed record as runWrite does', async () => {
    const source = await newWallet(t);
    await fundWallet(t, t.clientA.id, source, 1_000n);
    const destination = await newWallet(t);
    const key = crypto.randomUUID();
    const body = { sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' };
    const first = await t.request({ method: 'POST', url: '/internal-transfer', body, idempotencyKey: key });
    expect(first.status).toBe(201);
    await t.deps.db
      .updateTable('idempotency_keys')
      .set({ response_body: sealedBody(t.deps, t.clientA.id, key, JSON.stringify(first.body)), response_sealed: true })
      .where('client_id', '=', t.clientA.id)
      .where('key', '=', key)
      .execute();
    expect(typeof (await storedRecord(key)).response_body).toBe('string');

    const replay = await t.request({ method: 'POST', url: '/internal-transfer', body, idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('the database refuses a sealed record that is not a ciphertext string', async () => {
    await expect(
      sql`INSERT INTO idempotency_keys (client_id, key, request_hash, method, path, status_code, response_body, response_sealed, created_at)
        VALUES (${t.clientA.id}, ${crypto.randomUUID()}, '\\x00'::bytea, 'POST', '/x', 200, '{"a": 1}'::jsonb, true, now())`.execute(t.deps.db),
    ).rejects.toThrow(/idempotency_keys_sealed_is_text/);
  });
});
