import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { individualBody } from './customers/fixtures.js';
import { createTestApp, type RequestOptions, type TestContext, type TestResponse } from './harness.js';
import { fundWallet, newWallet } from './ledger/fixtures.js';

// A replayed answer keeps the first answer's body, whose traceId is the first request's, while its
// X-Trace-Id header is the replay's own. Original-Trace-Id names the first request's trace id in a
// header too (as Stripe's Original-Request), on both replay paths: runWrite (and runPausableWrite)
// and the write batcher (internal transfers, trade quotes and executions). docs/api-design.md,
// "Trace ids".

let t: TestContext;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const traceId = (label: string) => `${label}-${crypto.randomUUID()}`;

/** Sends the request twice under one Idempotency-Key, each time with a trace id of its own. */
async function sentTwice(options: RequestOptions): Promise<{ first: TestResponse; replay: TestResponse; firstTrace: string; replayTrace: string }> {
  const idempotencyKey = crypto.randomUUID();
  const firstTrace = traceId('first');
  const replayTrace = traceId('replay');
  const first = await t.request({ ...options, idempotencyKey, headers: { ...options.headers, 'x-trace-id': firstTrace } });
  const replay = await t.request({ ...options, idempotencyKey, headers: { ...options.headers, 'x-trace-id': replayTrace } });
  return { first, replay, firstTrace, replayTrace };
}

/** What every replay answers: the first body, Idempotent-Replayed, the first trace id in Original-Trace-Id, its own in X-Trace-Id. */
function expectReplayOf(sent: Awaited<ReturnType<typeof sentTwice>>, status: number): void {
  const { first, replay, firstTrace, replayTrace } = sent;
  expect(first.status, JSON.stringify(first.body)).toBe(status);
  expect(first.body.traceId).toBe(firstTrace);
  expect({
    status: replay.status,
    replayed: replay.headers['idempotent-replayed'],
    originalTraceId: replay.headers['original-trace-id'],
    traceId: replay.headers['x-trace-id'],
    bodyTraceId: replay.body.traceId,
  }).toEqual({ status, replayed: 'true', originalTraceId: firstTrace, traceId: replayTrace, bodyTraceId: firstTrace });
  expect(replay.body).toEqual(first.body);
}

async function fundedWallet(amountMinor: bigint): Promise<string> {
  const wallet = await newWallet(t);
  if (amountMinor > 0n) await fundWallet(t, t.clientA.id, wallet, amountMinor);
  return wallet;
}

describe('a replayed success names the first trace id in Original-Trace-Id', () => {
  it('a customer creation (201, runWrite)', async () => {
    expectReplayOf(await sentTwice({ method: 'POST', url: '/v1/customers/individual', body: individualBody() }), 201);
  });

  it('a webhook creation (201, runWrite, stored sealed)', async () => {
    const body = { name: 'original-trace', url: 'https://example.com/hooks', subscribedEventTypes: ['CUSTOMER_CREATED'] };
    expectReplayOf(await sentTwice({ method: 'POST', url: '/v1/webhooks', body }), 201);
  });

  it('an internal transfer (201, the write batcher)', async () => {
    const source = await fundedWallet(10_000n);
    const destination = await newWallet(t);
    const body = { sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' };
    expectReplayOf(await sentTwice({ method: 'POST', url: '/v1/internal-transfer', body }), 201);
  });
});

describe('a replayed 4xx names the first trace id in Original-Trace-Id', () => {
  it('a secret rotation of an unknown webhook (404, runWrite)', async () => {
    const sent = await sentTwice({ method: 'POST', url: `/v1/webhooks/${crypto.randomUUID()}/rotate-secret` });
    expectReplayOf(sent, 404);
    expect(sent.replay.body.code).toBe('NOT_FOUND');
  });

  it('an internal transfer from an empty wallet (422 INSUFFICIENT_FUNDS, the write batcher)', async () => {
    const source = await fundedWallet(0n);
    const destination = await newWallet(t);
    const body = { sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' };
    const sent = await sentTwice({ method: 'POST', url: '/v1/internal-transfer', body });
    expectReplayOf(sent, 422);
    expect(sent.replay.body.code).toBe('INSUFFICIENT_FUNDS');
  });
});

describe('an answer that is not a replay carries no Original-Trace-Id', () => {
  it('the first answers, keyed or not, success or 4xx, batched or not', async () => {
    const source = await fundedWallet(10_000n);
    const destination = await newWallet(t);
    const transfer = { sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' };
    const answers = [
      await t.request({ method: 'POST', url: '/v1/customers/individual', body: individualBody(), idempotencyKey: crypto.randomUUID() }),
      await t.request({ method: 'POST', url: '/v1/customers/individual', body: individualBody() }),
      await t.request({ method: 'POST', url: `/v1/webhooks/${crypto.randomUUID()}/rotate-secret`, idempotencyKey: crypto.randomUUID() }),
      await t.request({ method: 'POST', url: '/v1/internal-transfer', body: transfer, idempotencyKey: crypto.randomUUID() }),
      await t.request({ method: 'POST', url: '/v1/internal-transfer', body: transfer }),
      await t.request({ method: 'POST', url: '/v1/internal-transfer', body: { ...transfer, amount: '1000.00' }, idempotencyKey: crypto.randomUUID() }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 404, 201, 201, 422]);
    for (const answer of answers) {
      expect(answer.headers['idempotent-replayed']).toBeUndefined();
      expect(answer.headers['original-trace-id']).toBeUndefined();
      expect(answer.headers['x-trace-id']).toBe(answer.body.traceId);
    }
  });

  it('a retry of a refused 400, which is not stored under its key, runs anew', async () => {
    const wallet = await newWallet(t);
    const sent = await sentTwice({ method: 'POST', url: '/v1/internal-transfer', body: { sourceWalletId: wallet, destinationWalletId: wallet, amount: '1.00', asset: 'USD' } });
    expect([sent.first.status, sent.replay.status]).toEqual([400, 400]);
    expect(sent.replay.headers['idempotent-replayed']).toBeUndefined();
    expect(sent.replay.headers['original-trace-id']).toBeUndefined();
    expect(sent.replay.body.traceId).toBe(sent.replayTrace);
  });
});
