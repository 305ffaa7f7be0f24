import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, testDatabase, type TestClient, type TestContext } from '../../../../test/harness.js';
import { balanceOf, deposit, expectLedgerClean, fund, linkedWallet, withdrawalBody } from '../../../../test/bank/fixtures.js';
import { complianceStatus, createReadyIndividual, startKyc } from '../../../../test/compliance/helpers.js';
import { createIndividual } from '../../../../test/customers/fixtures.js';
import { withTransaction } from '../../../platform/db/transaction.js';
import { timerKinds } from '../../timer-kinds.js';
import { runDueTimers, scheduleTimer, type TimerKind } from '../../timers/index.js';
import { advanceClock } from './clock.service.js';
import { DeliveryWorker } from '../../webhooks/index.js';
import { WebhookReceiver, verifyWebhook } from '../../../../test/webhook-receiver.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The sandbox's per-client virtual clock: reading it, advancing it, and the timers it runs. */
let t: TestContext;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function readClock(client: TestClient = t.clientA): Promise<any> {
  const response = await t.request({ url: '/v1/sandbox/clock', key: client.key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

async function advance(seconds: number, client: TestClient = t.clientA, idempotencyKey?: string): Promise<any> {
  const response = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds }, ...(idempotencyKey ? { idempotencyKey } : {}) });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

async function bankStatus(id: string, client: TestClient = t.clientA): Promise<string> {
  const response = await t.request({ url: `/v1/baas/transactions/${id}`, key: client.key });
  if (response.status !== 200) throw new Error(JSON.stringify(response.body));
  return response.body.data.status;
}

const worker = () => runDueTimers(t.deps.db, t.clock, timerKinds, { newTraceId: () => crypto.randomUUID() });

describe('200 GET /v1/sandbox/clock', () => {
  it('starts at the wall clock with no offset, and every client has its own', async () => {
    const client = await t.newClient('fresh clock');
    const clock = await readClock(client);
    expect(clock.offsetSeconds).toBe(0);
    expect(clock.now).toBe(t.clock.now().toISOString());
    expect(clock.pendingTimers).toBe(0);
    expect(clock.nextTimerDueAt).toBeNull();
  });
});

describe('200 POST /v1/sandbox/clock/advance: the due timers run', () => {
  it('settles pending deposits and withdrawals in due-time order, with their events, and moves only the caller\'s clock', async () => {
    const wallet = await linkedWallet(t);
    await fund(t, wallet, '500.00');
    const otherWallet = await linkedWallet(t, t.clientB);
    const startB = await readClock(t.clientB);

    const first = { id: (await deposit(t, wallet.virtualAccountNumber, '10.00')).parentBankTransactionId };
    t.clock.advance(5_000);
    const withdrawal = await t.request({ method: 'POST', url: '/v1/baas/transactions/withdrawal', body: withdrawalBody(wallet.walletId, { amount: '20.00' }) });
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).toBe(201);
    const withdrawalId: string = withdrawal.body.data.parentBankTransactionId;
    t.clock.advance(5_000);
    const second = { id: (await deposit(t, wallet.virtualAccountNumber, '30.00')).parentBankTransactionId };
    const otherDeposit = { id: (await deposit(t, otherWallet.virtualAccountNumber, '40.00', {}, t.clientB)).parentBankTransactionId };

    const before = await readClock();
    expect(before.pendingTimers).toBeGreaterThanOrEqual(3);

    const result = await advance(120);
    expect(result.offsetSeconds).toBe(before.offsetSeconds + 120);
    const ours = result.ran.filter((timer: any) => [first.id, withdrawalId, second.id].includes(timer.id));
    expect(ours.map((timer: any) => timer.id)).toEqual([first.id, withdrawalId, second.id]);
    expect(ours.every((timer: any) => timer.kind === 'bank-transfer.settle')).toBe(true);
    const dueTimes = result.ran.map((timer: any) => timer.dueAt);
    expect([...dueTimes].sort()).toEqual(dueTimes);
    expect(result.failed).toEqual([]);

    expect(await bankStatus(first.id)).toBe('COMPLETED');
    expect(await bankStatus(withdrawalId)).toBe('COMPLETED');
    expect(await bankStatus(second.id)).toBe('COMPLETED');
    expect(await balanceOf(t, wallet.walletId)).toEqual({ AVAILABLE: '520.00', RESERVED: '0.00', PENDING: '0.00' });

    // The events of the settlements carry the advance's trace id and were recorded at the due times.
    const events = (await t.request({ url: '/v1/events?type=BANK_DEPOSIT_TRANSACTION_COMPLETED&limit=200' })).body.data as any[];
    const settledFirst = events.find((event) => event.data.parentBankTransactionId === first.id);
    expect(settledFirst.createdAt).toBe(ours[0].dueAt);

    // Client B: neither its clock nor its payment moved.
    expect(await bankStatus(otherDeposit.id, t.clientB)).toBe('PENDING');
    const afterB = await readClock(t.clientB);
    expect(afterB.offsetSeconds).toBe(startB.offsetSeconds);
    await expectLedgerClean(t);
  });

  it('runs nothing when nothing came due, and new records carry the client\'s time', async () => {
    const client = await t.newClient('idle clock');
    const result = await advance(3600, client);
    expect(result.ran).toEqual([]);
    expect(result.now).toBe(new Date(t.clock.now().getTime() + 3600_000).toISOString());
    const customer = await createIndividual(t, client);
    expect(customer.createdAt).toBe(result.now);
    const other = await createIndividual(t, await t.newClient('untouched clock'));
    expect(other.createdAt).toBe(t.clock.now().toISOString());
  });

  it('expires a KYC link when its deadline passes, and the hosted page answers 410 by the client\'s clock', async () => {
    const client = await t.newClient('kyc clock');
    const customer = await createReadyIndividual(t, client);
    const started = await startKyc(t, customer.id, client);
    const link = new URL(started.sdk.link);
    expect((await t.app.inject({ url: link.pathname })).statusCode).toBe(200);

    const almost = await advance(24 * 3600 - 60, client);
    expect(almost.ran).toEqual([]);
    const result = await advance(120, client);
    expect(result.ran).toEqual([{ kind: 'kyc-link.expire', id: started.onboardingId, dueAt: expect.any(String) }]);
    expect((await complianceStatus(t, customer.id, client)).onboardingStatus).toBe('EXPIRED');
    expect((await t.app.inject({ url: link.pathname })).statusCode).toBe(410);
  });

  it('answers a repeated Idempotency-Key with the first answer and moves the clock once', async () => {
    const client = await t.newClient('idempotent clock');
    const key = `advance-${crypto.randomUUID()}`;
    const first = await advance(60, client, key);
    const replay = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 60 }, idempotencyKey: key });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data).toEqual(first);
    expect((await readClock(client)).offsetSeconds).toBe(60);
    const reused = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 61 }, idempotencyKey: key });
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await readClock(client)).offsetSeconds).toBe(60);
  });

  it('a repeat of an advance whose process died after moving the clock: 409 while its lease lasts, then it finishes without moving the clock again', async () => {
    const client = await t.newClient('crashed advance');
    const key = `advance-${crypto.randomUUID()}`;
    // What a process leaves when it dies after taking the lease (the clock moved, the key on the lease) and before answering.
    const leaseUntil = new Date(t.clock.now().getTime() + 60_000);
    await sql`UPDATE clients SET clock_offset_ms = 3600000, clock_advance_lease_until = ${leaseUntil}, clock_advance_key = ${key} WHERE id = ${client.id}`.execute(t.deps.db);
    const during = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 3600 }, idempotencyKey: key });
    expect([during.status, during.body.code]).toEqual([409, 'IDEMPOTENCY_REQUEST_IN_PROGRESS']);
    // The lease runs out (a minute later).
    await sql`UPDATE clients SET clock_advance_lease_until = ${new Date(t.clock.now().getTime() - 1)} WHERE id = ${client.id}`.execute(t.deps.db);
    const finished = await advance(3600, client, key);
    expect(finished.offsetSeconds).toBe(3600);
    expect((await readClock(client)).offsetSeconds).toBe(3600);
    const replay = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 3600 }, idempotencyKey: key });
    expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([200, 'true']);
    // Another advance moves it as usual.
    expect((await advance(60, client)).offsetSeconds).toBe(3660);
  });

  it('answers the time after the advance, and records its key at that time, however long the timers ran', async () => {
    // No API-key cache: the offset this process noted when the advance began is not kept past the
    // request's own start, as when the timers of a long advance outlast AUTH_CACHE_TTL_MS.
    const uncached = await createTestApp({ env: { AUTH_CACHE_TTL_MS: '0' } });
    try {
      const key = `advance-${crypto.randomUUID()}`;
      const response = await uncached.request({ method: 'POST', url: '/v1/sandbox/clock/advance', body: { seconds: 120 }, idempotencyKey: key });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const after = new Date(uncached.clock.now().getTime() + 120_000).toISOString();
      expect(response.body.data).toMatchObject({ now: after, offsetSeconds: 120 });
      const stored = await uncached.deps.db.selectFrom('idempotency_keys').select('created_at').where('client_id', '=', uncached.clientA.id).where('key', '=', key).executeTakeFirstOrThrow();
      expect(stored.created_at.toISOString()).toBe(after);
    } finally {
      await uncached.close();
    }
  });
});

describe('400', () => {
  it.each([
    ['zero', { seconds: 0 }],
    ['negative (a clock never moves back)', { seconds: -60 }],
    ['more than 400 days', { seconds: 400 * 86_400 + 1 }],
    ['a fraction', { seconds: 1.5 }],
    ['a string', { seconds: '60' }],
    ['missing', {}],
    ['an unknown field', { seconds: 60, minutes: 1 }],
  ])('%s → 400 naming the field', async (_name, body) => {
    const client = await t.newClient('refused clock');
    const response = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(response.body.details)).toMatch(/seconds|minutes/);
    expect((await readClock(client)).offsetSeconds).toBe(0);
  });
});

describe('422 SANDBOX_CLOCK_LIMIT', () => {
  const limitSeconds = 36_525 * 86_400;

  it('refuses to run more than 100 years ahead, moves nothing, and still goes up to the limit', async () => {
    const client = await t.newClient('far clock');
    // Thirty days short of the limit, as 91 advances of 400 days and one of 395 would leave it.
    await sql`UPDATE clients SET clock_offset_ms = ${(limitSeconds - 30 * 86_400) * 1000} WHERE id = ${client.id}`.execute(t.deps.db);
    const refused = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 31 * 86_400 } });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('SANDBOX_CLOCK_LIMIT');
    expect(refused.body.details).toEqual([{ field: 'seconds', message: `at most ${30 * 86_400} more` }]);
    // A restore gives back the snapshot's offset, not its time (docs/sandbox.md; until 2026-12-07 the message said its time).
    expect(refused.body.message).toMatch(/puts back its offset from the wall clock\.$/);
    expect((await readClock(client)).offsetSeconds).toBe(limitSeconds - 30 * 86_400);
    // The refusal is the answer to its Idempotency-Key, as on every write: replayed, and the key
    // cannot be taken for another request (which would move the clock).
    const keyed = { method: 'POST' as const, url: '/v1/sandbox/clock/advance', key: client.key, idempotencyKey: 'far-clock-limit' };
    const first = await t.request({ ...keyed, body: { seconds: 31 * 86_400 } });
    expect(first.status).toBe(422);
    const replayed = await t.request({ ...keyed, body: { seconds: 31 * 86_400 } });
    expect(replayed.status).toBe(422);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    const reused = await t.request({ ...keyed, body: { seconds: 60 } });
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await readClock(client)).offsetSeconds).toBe(limitSeconds - 30 * 86_400);
    const last = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 30 * 86_400 } });
    expect(last.status).toBe(200);
    expect(last.body.data.offsetSeconds).toBe(limitSeconds);
    const beyond = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 1 } });
    expect(beyond.status).toBe(422);
    expect(beyond.body.details).toEqual([{ field: 'seconds', message: 'at most 0 more' }]);
    // The client's work still writes dates the database takes: a request is logged and traced.
    const traced = await t.request({ url: '/v1/assets', key: client.key, headers: { 'x-trace-id': 'far-clock-trace' } });
    expect(traced.status).toBe(200);
    expect((await t.request({ url: '/v1/traces/far-clock-trace', key: client.key })).status).toBe(200);
  });

  it('the database refuses a clock beyond the limit', async () => {
    const client = await t.newClient('checked clock');
    await expect(sql`UPDATE clients SET clock_offset_ms = ${(limitSeconds + 1) * 1000} WHERE id = ${client.id}`.execute(t.deps.db)).rejects.toThrow(/clients_clock_offset_limit/);
  });
});

describe('the timer worker', () => {
  it('runs a timer when its client\'s clock reaches it, not before, and leaves a client under an advance to the advance', async () => {
    const client = await t.newClient('worker clock');
    const wallet = await linkedWallet(t, client);
    const received = { id: (await deposit(t, wallet.virtualAccountNumber, '12.00', {}, client)).parentBankTransactionId };
    expect((await worker()).some((timer) => timer.subjectId === received.id)).toBe(false);

    // An advance that holds the lease (as if its process were still running the timers).
    await sql`UPDATE clients SET clock_offset_ms = 120000, clock_advance_lease_until = ${new Date(t.clock.now().getTime() + 60_000)} WHERE id = ${client.id}`.execute(t.deps.db);
    expect((await worker()).some((timer) => timer.subjectId === received.id)).toBe(false);
    expect(await bankStatus(received.id, client)).toBe('PENDING');

    // The lease expires (the process died): the worker takes over.
    t.clock.advance(61_000);
    expect((await worker()).some((timer) => timer.subjectId === received.id)).toBe(true);
    expect(await bankStatus(received.id, client)).toBe('COMPLETED');
  });

  it('keeps a timer whose work fails, reports it, and tries it again later', async () => {
    const client = await t.newClient('failing timer');
    let attempts = 0;
    const flaky: TimerKind = {
      kind: 'test.flaky',
      run: async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('first run fails');
      },
    };
    const subjectId = crypto.randomUUID();
    await withTransaction(t.deps.db, (tx) => scheduleTimer(tx, { clientId: client.id, kind: flaky.kind, subjectId, dueAt: new Date(t.clock.now().getTime() + 1000), now: t.clock.now() }));
    const outcome = await advanceClock(t.deps, [flaky], { clientId: client.id, traceId: 'test', seconds: 10, idempotencyKey: undefined });
    expect(outcome).toMatchObject({ replay: false, ran: [], failed: [{ kind: 'test.flaky', id: subjectId, error: 'first run fails' }] });
    await sql`UPDATE clients SET clock_advance_lease_until = NULL WHERE id = ${client.id}`.execute(t.deps.db);
    const run = () => runDueTimers(t.deps.db, t.clock, [flaky], { newTraceId: () => 'test' });
    expect(await run()).toEqual([]);
    t.clock.advance(1_500);
    expect((await run()).map((timer) => timer.subjectId)).toEqual([subjectId]);
    expect(attempts).toBe(2);
  });
});

describe('concurrency', () => {
  it('two advances and the worker at once run every timer exactly once', async () => {
    const client = await t.newClient('racing clocks');
    const wallet = await linkedWallet(t, client);
    const deposits: string[] = [];
    for (let index = 0; index < 12; index++) {
      deposits.push((await deposit(t, wallet.virtualAccountNumber, '1.00', {}, client)).parentBankTransactionId);
      t.clock.advance(1_000);
    }
    const advanceOnce = (seconds: number) =>
      t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds } });
    const [a, b] = await Promise.all([advanceOnce(90), advanceOnce(90), worker(), worker()]);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    const ranByAdvances = [...a.body.data.ran, ...b.body.data.ran].map((timer: any) => timer.id);
    expect(new Set(ranByAdvances).size).toBe(ranByAdvances.length);
    expect((await readClock(client)).offsetSeconds).toBe(180);
    for (const id of deposits) expect(await bankStatus(id, client)).toBe('COMPLETED');
    const events = (await t.request({ url: '/v1/events?type=BANK_DEPOSIT_TRANSACTION_COMPLETED&limit=200', key: client.key })).body.data as any[];
    for (const id of deposits) expect(events.filter((event) => event.data.parentBankTransactionId === id)).toHaveLength(1);
    expect(await balanceOf(t, wallet.walletId, 'USD', client)).toMatchObject({ AVAILABLE: '12.00', PENDING: '0.00' });
    await expectLedgerClean(t);
  });

  it('lets the event loop take other work between two timers of an advance (on the embedded database a query needs no I/O, so a loop of queries alone held every other request until it ended)', async () => {
    const client = await t.newClient('yielding clock');
    const seen: boolean[] = [];
    let otherWorkRan = false;
    const databaseOnly: TimerKind = {
      kind: 'test.database-only',
      run: async (tx) => {
        await sql`SELECT 1`.execute(tx);
        seen.push(otherWorkRan);
      },
    };
    for (let index = 0; index < 20; index++) {
      await withTransaction(t.deps.db, (tx) =>
        scheduleTimer(tx, { clientId: client.id, kind: databaseOnly.kind, subjectId: crypto.randomUUID(), dueAt: new Date(t.clock.now().getTime() + 1000 + index), now: t.clock.now() }),
      );
    }
    // Work queued on the event loop (as a new request's socket read is) when the advance starts.
    setTimeout(() => {
      otherWorkRan = true;
    }, 0);
    const outcome = await advanceClock(t.deps, [databaseOnly], { clientId: client.id, traceId: 'test', seconds: 10, idempotencyKey: undefined });
    expect(outcome).toMatchObject({ replay: false, failed: [] });
    expect(seen).toHaveLength(20);
    expect(seen.slice(-10)).toEqual(Array.from({ length: 10 }, () => true));
  });

  it(`runs on ${testDatabase}`, () => {
    expect(['pglite', 'postgres']).toContain(testDatabase);
  });
});

describe('writes of the client while its clock advances', () => {
  // The advance moves the clock first, then runs its timers one transaction at a time, letting
  // other requests in between. A write of the same client answered in between acted at the new
  // time on a state whose earlier timers had not run (a credit line repaid during a 30-day
  // advance escaped that month's interest; found by an audit): it now waits for the advance.
  it('wait until every timer of the advance ran, then act at the new time; another client\'s do not wait', async () => {
    const client = await t.newClient('waiting writes');
    const bystander = await t.newClient('bystander writes');
    let timersRun = 0;
    const seenBy: Record<string, number> = {};
    let sent: Promise<unknown>[] = [];
    const send = (name: string, who: TestClient) =>
      createIndividual(t, who).then((customer) => {
        seenBy[name] = timersRun;
        return customer;
      });
    const counting: TimerKind = {
      kind: 'test.counting',
      run: async (tx) => {
        await sql`SELECT 1`.execute(tx);
        timersRun += 1;
        // A write of the client, and one of another client, arrive while the advance runs.
        if (timersRun === 1) sent = [send('client', client), send('bystander', bystander)];
      },
    };
    for (let index = 0; index < 30; index++) {
      await withTransaction(t.deps.db, (tx) =>
        scheduleTimer(tx, { clientId: client.id, kind: counting.kind, subjectId: crypto.randomUUID(), dueAt: new Date(t.clock.now().getTime() + 1000 + index), now: t.clock.now() }),
      );
    }
    const outcome = await advanceClock(t.deps, [counting], { clientId: client.id, traceId: 'test', seconds: 3600, idempotencyKey: undefined });
    expect(outcome).toMatchObject({ replay: false, failed: [] });
    const [created] = (await Promise.all(sent)) as [any, any];
    expect(seenBy.client).toBe(30);
    expect(seenBy.bystander).toBeLessThan(30);
    expect(new Date(created.createdAt).getTime()).toBeGreaterThanOrEqual(t.clock.now().getTime() + 3600 * 1000);
  });
});

describe('a write that waited for an advance longer than the key cache lasts', () => {
  it('acts at the time the advance left, not at the offset its API key was looked up with before the advance', async () => {
    const short = await createTestApp({ env: { AUTH_CACHE_TTL_MS: '300' } });
    try {
      // The key is looked up (and kept for 300 ms) with the clock before the advance.
      expect((await short.request({ url: '/v1/sandbox/clock' })).status).toBe(200);
      let sent: Promise<any> | undefined;
      const slow: TimerKind = {
        kind: 'test.slow',
        run: async (tx) => {
          await sql`SELECT 1`.execute(tx);
          sent ??= createIndividual(short, short.clientA);
          await new Promise((resolve) => setTimeout(resolve, 80));
        },
      };
      for (let index = 0; index < 8; index++) {
        await withTransaction(short.deps.db, (tx) =>
          scheduleTimer(tx, { clientId: short.clientA.id, kind: slow.kind, subjectId: crypto.randomUUID(), dueAt: new Date(short.clock.now().getTime() + 1000 + index), now: short.clock.now() }),
        );
      }
      const outcome = await advanceClock(short.deps, [slow], { clientId: short.clientA.id, traceId: 'test', seconds: 3600, idempotencyKey: undefined });
      expect(outcome).toMatchObject({ replay: false, failed: [] });
      const created = await sent;
      expect(created.createdAt).toBe(new Date(short.clock.now().getTime() + 3600 * 1000).toISOString());
    } finally {
      await short.close();
    }
  });
});

describe('webhook deliveries follow the client\'s clock', () => {
  it('delivers the events of an advance at once, and an advance brings a failed delivery\'s retry forward', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const client = await t.newClient('webhook clock');
      const created = await t.request({
        method: 'POST',
        url: '/v1/webhooks',
        key: client.key,
        body: { name: 'clock', url: receiver.url(), subscribedEventTypes: ['BANK_DEPOSIT_TRANSACTION_COMPLETED', 'CUSTOMER_CREATED'] },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const secret: string = created.body.data.secret;
      const wallet = await linkedWallet(t, client);
      const received = (await deposit(t, wallet.virtualAccountNumber, '5.00', {}, client)).parentBankTransactionId as string;
      const delivery = new DeliveryWorker(t.deps);

      // The settlement runs at the client's time (two minutes ahead of the wall clock); its event is due now, not in two minutes.
      await advance(120, client);
      await delivery.deliverDue();
      const completed = receiver.requests.filter((request) => verifyWebhook(secret, request).data.parentBankTransactionId === received);
      expect(completed).toHaveLength(1);

      // A failed attempt is retried after WEBHOOK_RETRY_SCHEDULE's first delay (5 s) by the client's clock: an advance brings it forward.
      receiver.mode = 'error';
      const customer = await createIndividual(t, client);
      await delivery.deliverDue();
      const attempts = () => receiver.requests.filter((request) => verifyWebhook(secret, request).data.customerId === customer.id).length;
      expect(attempts()).toBe(1);
      await delivery.deliverDue();
      expect(attempts()).toBe(1);
      receiver.mode = 'ok';
      await advance(10, client);
      await delivery.deliverDue();
      expect(attempts()).toBe(2);
    } finally {
      await receiver.stop();
    }
  });
});

describe('404 in production mode', () => {
  it('has no virtual clock (404)', async () => {
    const production = await createTestApp({ env: { OPENBAAS_MODE: 'production' } });
    try {
      expect((await production.request({ url: '/v1/sandbox/clock' })).status).toBe(404);
      expect((await production.request({ method: 'POST', url: '/v1/sandbox/clock/advance', body: { seconds: 60 } })).status).toBe(404);
    } finally {
      await production.close();
    }
  });
});

describe('docs/sandbox.md', () => {
  it('its table of what runs on your clock names every timer kind the program runs', async () => {
    const fs = await import('node:fs');
    const text = fs.readFileSync(new URL('../../../../docs/sandbox.md', import.meta.url), 'utf8');
    const documented = [...text.matchAll(/^\| `([a-z0-9.-]+)` \|/gm)].map((match) => match[1]);
    expect(documented.sort()).toEqual(timerKinds.map((kind) => kind.kind).filter((kind) => kind !== 'credit-line.interest').sort());
  });
});
