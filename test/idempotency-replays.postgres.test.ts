import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advisoryLockId } from '../src/platform/http/idempotency.js';
import { createTestApp, type TestContext } from './harness.js';
import { depositBody, linkedWallet } from './bank/fixtures.js';

// A request of an Idempotency-Key while another request of that key holds the key's lock (PostgreSQL
// only: on the embedded database one request runs at a time). The lock is held here by a
// transaction of the test, as a replay being answered holds it.

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

/** Runs `body` while another transaction holds the advisory lock of client A's `key`. */
async function whileKeyLocked<T>(key: string, body: () => Promise<T>): Promise<T> {
  const connection = await t.deps.database.pool.connect();
  try {
    await connection.query('BEGIN');
    await connection.query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryLockId(t.clientA.id, key)]);
    return await body();
  } finally {
    await connection.query('ROLLBACK').catch(() => undefined);
    connection.release();
  }
}

describe('an Idempotency-Key whose lock another request holds', () => {
  it('with its answer stored: replayed (until 2026-12-07 a 409 IDEMPOTENCY_REQUEST_IN_PROGRESS, as if it were still running)', async () => {
    const wallet = await linkedWallet(t);
    const request = { method: 'POST' as const, url: '/v1/sandbox/bank-deposits', key: t.clientA.key, body: depositBody(wallet.virtualAccountNumber, '1.00'), idempotencyKey: 'replayed-beside-a-replay' };
    const first = await t.request(request);
    expect(first.status).toBe(201);
    const again = await whileKeyLocked(request.idempotencyKey, () => t.request(request));
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.data).toEqual(first.body.data);
  });

  it('with no answer stored yet (its first request still running): 409 IDEMPOTENCY_REQUEST_IN_PROGRESS, nothing done', async () => {
    const wallet = await linkedWallet(t);
    const request = { method: 'POST' as const, url: '/v1/sandbox/bank-deposits', key: t.clientA.key, body: depositBody(wallet.virtualAccountNumber, '1.00'), idempotencyKey: 'first-still-running' };
    const answer = await whileKeyLocked(request.idempotencyKey, () => t.request(request));
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
    const listed = await t.request({ url: `/v1/transactions?walletId=${wallet.walletId}`, key: t.clientA.key });
    expect(listed.body.data).toEqual([]);
  });
});
