/* eslint-disable @typescript-eslint/no-explicit-any */
import crypto from 'node:crypto';
import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext, type TestResponse } from '../../../test/harness.js';
import { depositBody, expectLedgerClean, linkedWallet, type LinkedWallet } from '../../../test/bank/fixtures.js';
import { fundWallet, newWallet } from '../../../test/ledger/fixtures.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { runDueSettlements } from '../bank-transfers/index.js';
import { DeliveryWorker } from '../webhooks/index.js';
import { flushRequestLog, purgeOldApiRequests } from './index.js';
import { RequestLog } from './request-log.js';
import { registerTestRoutes } from '../../../test/support/test-routes.js';
import { listeningPort } from '../../../test/support/raw-http.js';

const settlementDelayMs = 60_000;

let t: TestContext;
let receiver: WebhookReceiver;
let worker: DeliveryWorker;
let wallet: LinkedWallet;

beforeAll(async () => {
  t = await createTestApp({
    env: {
      SANDBOX_BANK_SETTLEMENT_DELAY_MS: String(settlementDelayMs),
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s',
      WEBHOOK_RETRY_JITTER_PERCENT: '10',
    },
  });
  receiver = await WebhookReceiver.start();
  worker = new DeliveryWorker(t.deps);
  wallet = await linkedWallet(t);
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

/** A trace id no other test uses. */
const newTraceId = (label: string) => `${label}-${crypto.randomUUID()}`;

function getTrace(traceId: string, client: TestClient = t.clientA, headers: Record<string, string> = {}): Promise<TestResponse> {
  return t.request({ url: `/v1/traces/${encodeURIComponent(traceId)}`, key: client.key, headers });
}

async function traceOf(traceId: string, client: TestClient = t.clientA): Promise<any> {
  const response = await getTrace(traceId, client);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

const kindsOf = (trace: any): string[] => trace.items.map((item: any) => item.kind);
const kindOrder = ['REQUEST', 'LEDGER_TRANSFER', 'RECORD', 'EVENT', 'DELIVERY', 'DELIVERY_ATTEMPT'];

function expectSorted(trace: any): void {
  for (let index = 1; index < trace.items.length; index++) {
    const before = trace.items[index - 1];
    const after = trace.items[index];
    expect(before.at <= after.at, `${before.kind} ${before.at} before ${after.kind} ${after.at}`).toBe(true);
    if (before.at === after.at) expect(kindOrder.indexOf(before.kind)).toBeLessThanOrEqual(kindOrder.indexOf(after.kind));
  }
  expect(trace.startedAt).toBe(trace.items[0].at);
  expect(trace.endedAt).toBe(trace.items.at(-1).at);
}

describe('GET /v1/traces/:traceId', () => {
  describe('200 retrieved', () => {
    it('a sandbox bank deposit: the request, its ledger transfer with entries, the record, the event, and the webhook delivery with a failed then a successful attempt', async () => {
      const subscription = await t.request({
        method: 'POST',
        url: '/v1/webhooks',
        body: { name: 'traces', url: receiver.url('/traces'), subscribedEventTypes: ['BANK_DEPOSIT_TRANSACTION_PENDING'] },
      });
      expect(subscription.status, JSON.stringify(subscription.body)).toBe(201);
      try {
        const traceId = newTraceId('deposit');
        const made = await t.request({
          method: 'POST',
          url: '/v1/sandbox/bank-deposits',
          body: depositBody(wallet.virtualAccountNumber, '25.00'),
          headers: { 'x-trace-id': traceId },
          idempotencyKey: `trace-deposit-${traceId}`,
        });
        expect(made.status, JSON.stringify(made.body)).toBe(201);
        expect(made.body.traceId).toBe(traceId);

        receiver.mode = 'error';
        expect(await worker.deliverDue()).toBe(1);
        t.clock.advance(1200);
        receiver.mode = 'ok';
        expect(await worker.deliverDue()).toBe(1);

        const response = await getTrace(traceId);
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.body.message).toBe('Trace retrieved');
        expect(response.body.traceId).toBe(response.headers['x-trace-id']);
        const trace = response.body.data;
        expect(trace.traceId).toBe(traceId);
        expect(trace.truncated).toBe(false);
        expect(kindsOf(trace)).toEqual(['REQUEST', 'LEDGER_TRANSFER', 'RECORD', 'EVENT', 'DELIVERY', 'DELIVERY_ATTEMPT', 'DELIVERY_ATTEMPT']);
        expectSorted(trace);
        const [request, transfer, record, event, delivery, failed, succeeded] = trace.items;
        expect(request).toEqual({
          kind: 'REQUEST',
          at: expect.any(String),
          id: expect.any(String),
          method: 'POST',
          path: '/v1/sandbox/bank-deposits',
          operationId: expect.any(String),
          statusCode: 201,
          durationMs: expect.any(Number),
          idempotencyKey: `trace-deposit-${traceId}`,
          errorCode: null,
        });
        expect(request.durationMs).toBeGreaterThanOrEqual(0);
        expect(transfer).toMatchObject({ kind: 'LEDGER_TRANSFER', transferKind: 'PENDING_CREDIT', parentTransactionId: made.body.data.parentTransactionId, holdId: null });
        expect(transfer.entries).toEqual([
          { asset: 'USD', amount: '25.00', debit: { accountId: expect.any(String), balance: 'AVAILABLE' }, credit: { accountId: expect.any(String), balance: 'PENDING' } },
        ]);
        expect(record).toMatchObject({
          kind: 'RECORD',
          recordType: 'WALLET_TRANSACTION',
          walletId: wallet.walletId,
          ledgerTransferId: transfer.id,
          parentTransactionId: transfer.parentTransactionId,
          operation: 'CREDIT',
          balanceType: 'PENDING',
          status: 'PENDING',
          amount: '25.00',
          asset: 'USD',
        });
        expect(event).toMatchObject({ kind: 'EVENT', type: 'BANK_DEPOSIT_TRANSACTION_PENDING', data: { traceId } });
        expect(delivery).toMatchObject({
          kind: 'DELIVERY',
          eventId: event.id,
          eventType: 'BANK_DEPOSIT_TRANSACTION_PENDING',
          subscriptionId: subscription.body.data.id,
          status: 'DELIVERED',
          attemptCount: 2,
          nextAttemptAt: null,
        });
        expect(failed).toMatchObject({ kind: 'DELIVERY_ATTEMPT', id: `${delivery.id}:1`, deliveryId: delivery.id, attemptNumber: 1, succeeded: false, httpStatus: 500 });
        expect(succeeded).toMatchObject({ kind: 'DELIVERY_ATTEMPT', id: `${delivery.id}:2`, deliveryId: delivery.id, attemptNumber: 2, succeeded: true, httpStatus: 200, error: null });
        expect(receiver.requestsFor(event.id, '/traces')).toHaveLength(2);
      } finally {
        await t.request({ method: 'DELETE', url: `/v1/webhooks/${subscription.body.data.id}` });
      }
    });

    it('a transfer written in one transaction with others shows only its own ledger transfer, records and events', async () => {
      const source = await newWallet(t);
      await fundWallet(t, t.clientA.id, source, 100_000n);
      const destination = await newWallet(t);
      const traceIds = Array.from({ length: 12 }, (_, index) => newTraceId(`batched-${index}`));
      const responses = await Promise.all(
        traceIds.map((traceId) =>
          t.request({ method: 'POST', url: '/internal-transfer', body: { sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' }, headers: { 'x-trace-id': traceId } }),
        ),
      );
      for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(201);
      // Rows written by one transaction share its xmin: some of these transfers were written together.
      const written = await sql<{ transactions: string }>`
        SELECT count(DISTINCT xmin::text)::text AS transactions FROM ledger_transfers WHERE client_id = ${t.clientA.id} AND trace_id = ANY(${traceIds}::text[])`.execute(t.deps.db);
      expect(Number(written.rows[0]?.transactions)).toBeLessThan(traceIds.length);
      const parents = new Set<string>();
      for (const [index, traceId] of traceIds.entries()) {
        const trace = await traceOf(traceId);
        expectSorted(trace);
        const transfers = trace.items.filter((item: any) => item.kind === 'LEDGER_TRANSFER');
        expect(transfers).toHaveLength(1);
        expect(transfers[0]).toMatchObject({ transferKind: 'TRANSFER', parentTransactionId: responses[index]?.body.data.parentTransactionId });
        expect(trace.items.filter((item: any) => item.kind === 'REQUEST')).toHaveLength(1);
        const records = trace.items.filter((item: any) => item.kind === 'RECORD');
        expect(records.map((record: any) => record.parentTransactionId)).toEqual([transfers[0].parentTransactionId, transfers[0].parentTransactionId]);
        for (const event of trace.items.filter((item: any) => item.kind === 'EVENT')) expect(event.data.traceId).toBe(traceId);
        parents.add(transfers[0].parentTransactionId);
      }
      expect(parents.size).toBe(traceIds.length);
      await expectLedgerClean(t);
    });

    it('a timer-driven effect (the deposit\'s settlement) has its own trace, without a request', async () => {
      const traceId = newTraceId('settled');
      const made = await t.request({ method: 'POST', url: '/v1/sandbox/bank-deposits', body: depositBody(wallet.virtualAccountNumber, '3.00'), headers: { 'x-trace-id': traceId } });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      t.clock.advance(settlementDelayMs);
      expect(await runDueSettlements(t.deps)).toBeGreaterThanOrEqual(1);

      const events = await t.request({ url: '/v1/events?type=BANK_DEPOSIT_TRANSACTION_COMPLETED&limit=200' });
      const completed = (events.body.data as any[]).find((event) => event.data.parentBankTransactionId === made.body.data.parentBankTransactionId);
      expect(completed).toBeDefined();
      const timerTraceId: string = completed.data.traceId;
      expect(timerTraceId).not.toBe(traceId);

      const timerTrace = await traceOf(timerTraceId);
      expectSorted(timerTrace);
      expect(kindsOf(timerTrace)).not.toContain('REQUEST');
      expect(timerTrace.items.filter((item: any) => item.kind === 'LEDGER_TRANSFER').map((item: any) => item.transferKind)).toContain('PENDING_CLEAR');
      expect(timerTrace.items.some((item: any) => item.kind === 'EVENT' && item.id === completed.id)).toBe(true);

      const requestTrace = await traceOf(traceId);
      expect(kindsOf(requestTrace)).toEqual(['REQUEST', 'LEDGER_TRANSFER', 'RECORD', 'EVENT']);
      expect(requestTrace.items[1].transferKind).toBe('PENDING_CREDIT');
      await expectLedgerClean(t);
    });

    it('a refused request appears with its status and error code, and nothing else', async () => {
      const invalid = newTraceId('invalid');
      const refused = await t.request({ method: 'POST', url: '/v1/sandbox/bank-deposits', body: depositBody(wallet.virtualAccountNumber, 'ten'), headers: { 'x-trace-id': invalid } });
      expect(refused.status).toBe(400);
      const trace = await traceOf(invalid);
      expect(trace.items).toEqual([
        expect.objectContaining({ kind: 'REQUEST', method: 'POST', path: '/v1/sandbox/bank-deposits', statusCode: 400, errorCode: refused.body.code }),
      ]);

      // A refusal answered by the write batcher (not the error handler) is logged the same way.
      const source = await newWallet(t);
      const short = newTraceId('short');
      const poor = await t.request({ method: 'POST', url: '/internal-transfer', body: { sourceWalletId: source, destinationWalletId: wallet.walletId, amount: '5.00', asset: 'USD' }, headers: { 'x-trace-id': short } });
      expect(poor.status).toBe(422);
      expect((await traceOf(short)).items).toEqual([expect.objectContaining({ kind: 'REQUEST', path: '/internal-transfer', statusCode: 422, errorCode: 'INSUFFICIENT_FUNDS' })]);
    });

    it('keeps the query string out of the path and is not itself logged', async () => {
      const traceId = newTraceId('query');
      expect((await t.request({ url: '/v1/events?limit=1', headers: { 'x-trace-id': traceId } })).status).toBe(200);
      const reader = newTraceId('reader');
      const response = await getTrace(traceId, t.clientA, { 'x-trace-id': reader });
      expect(response.status).toBe(200);
      expect(response.body.data.items).toEqual([expect.objectContaining({ kind: 'REQUEST', method: 'GET', path: '/v1/events', operationId: expect.any(String), statusCode: 200 })]);
      expect(response.body.traceId).toBe(reader);
      // Reading a trace (found or not) adds nothing to the reader's own trace id.
      expect((await getTrace(reader)).status).toBe(404);
    });
  });

  describe('400 validation', () => {
    it.each([
      ['a space', 'bad id'],
      ['a slash', 'a%2Fb'],
      ['129 characters', 'x'.repeat(129)],
    ])('refuses a trace id with %s, naming the field', async (_label, traceId) => {
      const response = await t.request({ url: `/v1/traces/${traceId.replace(' ', '%20')}` });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
      expect(response.body.details.map((detail: any) => detail.field)).toEqual(['traceId']);
      // One reason (a trace id too long also failed the pattern, which counted its length too, until 2026-12-06).
      expect(response.body.details[0].message).not.toContain('; or ');
    });
  });

  describe('404 not found', () => {
    it('answers NOT_FOUND for a trace id nothing carries', async () => {
      const response = await getTrace(newTraceId('unknown'));
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    });

    it('answers another client\'s trace exactly as an unknown one', async () => {
      const traceId = newTraceId('private');
      expect((await t.request({ method: 'POST', url: '/v1/sandbox/bank-deposits', body: depositBody(wallet.virtualAccountNumber, '1.00'), headers: { 'x-trace-id': traceId } })).status).toBe(201);
      expect((await traceOf(traceId)).items.length).toBeGreaterThan(1);
      const foreign = await getTrace(traceId, t.clientB);
      const unknownId = newTraceId('private');
      const unknown = await getTrace(unknownId, t.clientB);
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe(unknown.body.code);
      expect(foreign.body.message.replace(traceId, '<id>')).toBe(unknown.body.message.replace(unknownId, '<id>'));
      expect(Object.keys(foreign.body).sort()).toEqual(Object.keys(unknown.body).sort());
    });
  });

  describe('401 unauthenticated', () => {
    it('needs an API key', async () => {
      const response = await t.request({ url: '/v1/traces/anything', key: null });
      expect(response.status).toBe(401);
    });
  });
});

describe('the request log', () => {
  it('a row the database refuses costs only itself: the other rows of the same write are kept', async () => {
    const log = new RequestLog(t.deps.db, t.app.log);
    const row = (traceId: string, createdAt: Date) => ({
      clientId: t.clientA.id, id: crypto.randomUUID(), traceId, method: 'GET', path: '/v1/assets', operationId: null,
      statusCode: 200, durationMs: 1, idempotencyKey: null, errorCode: null, createdAt,
    });
    const kept = [newTraceId('kept'), newTraceId('kept')];
    const refused = newTraceId('refused');
    log.add(row(kept[0] ?? '', new Date()));
    // A date past the year 9999, which PostgreSQL cannot store.
    log.add(row(refused, new Date(Date.UTC(10_000, 0, 1))));
    log.add(row(kept[1] ?? '', new Date()));
    await log.flush();
    const rows = await t.deps.db.selectFrom('api_requests').select('trace_id').where('trace_id', 'in', [...kept, refused]).execute();
    expect(rows.map((entry) => entry.trace_id).sort()).toEqual([...kept].sort());
  });

  it('is written on close: a request answered just before the app closes is in the table', async () => {
    const own = await createTestApp();
    try {
      const traceId = newTraceId('closing');
      expect((await own.request({ url: '/v1/assets', headers: { 'x-trace-id': traceId } })).status).toBe(200);
      await own.app.close();
      const rows = await own.deps.db.selectFrom('api_requests').selectAll().where('trace_id', '=', traceId).execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ client_id: own.clientA.id, method: 'GET', path: '/v1/assets', status_code: 200, error_code: null });
    } finally {
      await own.close();
    }
  });

  // Until 2026-12-07 a request whose client closed the connection before the answer took effect but
  // was in neither the request log nor its trace (Fastify runs onResponse only when the response
  // finishes; found by an audit).
  it('logs a request whose client closed the connection before it was answered, with the status it was answered', async () => {
    const own = await createTestApp({ extraRoutes: registerTestRoutes });
    try {
      const port = await listeningPort(own.app);
      const traceId = newTraceId('gave-up');
      const body = JSON.stringify({ name: 'slow', amount: '1.00', asset: 'USD' });
      const socket = net.connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        [
          'POST /v1/test/things HTTP/1.1',
          'Host: localhost',
          `Authorization: ${own.clientA.key}`,
          `X-Trace-Id: ${traceId}`,
          'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(body)}`,
          '',
          body,
        ].join('\r\n'),
      );
      // The route takes 300 ms; the client leaves after 50.
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      // The write takes effect all the same: its event is there once the route has answered.
      const deadline = Date.now() + 5000;
      let rows: { status_code: number; path: string }[] = [];
      while (rows.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        await flushRequestLog(own.app);
        rows = await own.deps.db.selectFrom('api_requests').select(['status_code', 'path']).where('trace_id', '=', traceId).execute();
      }
      expect(rows).toEqual([{ status_code: 201, path: '/v1/test/things' }]);
      const trace = await own.request({ url: `/v1/traces/${traceId}` });
      expect(trace.status).toBe(200);
      expect(trace.body.data.items.map((item: any) => item.kind)).toEqual(expect.arrayContaining(['REQUEST', 'EVENT']));
    } finally {
      await own.close();
    }
  });

  it('is off with OPENBAAS_REQUEST_LOG=off: the request writes no row and its trace has the rest without a REQUEST item', async () => {
    const own = await createTestApp({ env: { OPENBAAS_REQUEST_LOG: 'off' } });
    try {
      const source = await newWallet(own);
      const destination = await newWallet(own);
      await fundWallet(own, own.clientA.id, source, 500n);
      const traceId = newTraceId('unlogged');
      const transfer = await own.request({
        method: 'POST',
        url: '/internal-transfer',
        headers: { 'x-trace-id': traceId },
        body: { sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' },
      });
      expect(transfer.status).toBe(201);
      const trace = await own.request({ url: `/v1/traces/${traceId}` });
      expect(trace.status).toBe(200);
      expect(trace.body.data.items.map((item: any) => item.kind)).toEqual(expect.arrayContaining(['LEDGER_TRANSFER', 'RECORD', 'EVENT']));
      expect(trace.body.data.items.map((item: any) => item.kind)).not.toContain('REQUEST');
      await own.app.close();
      expect(await own.deps.db.selectFrom('api_requests').select('id').where('client_id', '=', own.clientA.id).execute()).toEqual([]);
    } finally {
      await own.close();
    }
  });

  // Last: it moves the clock a month on.
  it('deletes rows older than EVENT_RETENTION_DAYS', async () => {
    const traceId = newTraceId('old');
    expect((await t.request({ url: '/v1/assets', headers: { 'x-trace-id': traceId } })).status).toBe(200);
    expect((await traceOf(traceId)).items).toHaveLength(1);
    t.clock.advance((t.config.eventRetentionDays - 1) * 86_400_000);
    expect(await purgeOldApiRequests(t.deps)).toBe(0);
    t.clock.advance(2 * 86_400_000);
    expect(await purgeOldApiRequests(t.deps)).toBeGreaterThanOrEqual(1);
    expect((await getTrace(traceId)).status).toBe(404);
  });
});
