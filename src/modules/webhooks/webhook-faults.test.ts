import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../test/harness.js';
import { individualBody } from '../../../test/customers/fixtures.js';
import { verifyWebhook, WebhookReceiver } from '../../../test/webhook-receiver.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { DeliveryWorker } from './delivery-worker.js';
import { recordEvent } from './events.store.js';
import { webhookHttpClient } from './webhook-http.js';

// Compressed schedule, as in delivery.test.ts: retries after about 1 s, 2 s and 3 s of the injected clock.
const env = {
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s',
  WEBHOOK_RETRY_JITTER_PERCENT: '10',
  WEBHOOK_LEASE_MS: '5000',
};
const faultsUrl = '/v1/sandbox/webhooks/faults';

let t: TestContext;
let receiver: WebhookReceiver;
let worker: DeliveryWorker;
/** The worker's random source: the values queued here, then 0. */
let randomValues: number[] = [];

beforeAll(async () => {
  t = await createTestApp({ env });
  receiver = await WebhookReceiver.start();
  worker = new DeliveryWorker(t.deps, { random: () => randomValues.shift() ?? 0 });
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});
beforeEach(() => {
  randomValues = [];
});

async function subscribe(client: TestClient, url: string): Promise<{ id: string; secret: string }> {
  const response = await t.request({ method: 'POST', url: '/v1/webhooks', key: client.key, body: { name: 'faults', url, subscribedEventTypes: ['CUSTOMER_CREATED'] } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data;
}

async function record(client: TestClient) {
  return withTransaction(t.deps.db, (tx) =>
    recordEvent(tx, { clientId: client.id, traceId: 'trace-faults', now: t.clock.now() }, 'CUSTOMER_CREATED', { customerId: 'c1' }),
  );
}

async function setFaults(client: TestClient, body: Record<string, unknown>) {
  const response = await t.request({ method: 'PUT', url: faultsUrl, key: client.key, body });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

async function deliveries(client: TestClient, subscriptionId: string) {
  const response = await t.request({ url: `/v1/webhooks/${subscriptionId}/deliveries?limit=200`, key: client.key });
  expect(response.status).toBe(200);
  return response.body.data as Array<{
    id: string;
    eventId: string;
    status: string;
    attemptCount: number;
    nextAttemptAt: string | null;
    attempts: Array<{ attempt: number; succeeded: boolean; httpStatus: number | null; error: string | null; injectedFault: string | null }>;
  }>;
}

describe('the settings', () => {
  it('are all 0 until set; PUT replaces them (a field left out is 0), GET reads them, DELETE turns them off', async () => {
    const client = await t.newClient('Settings');
    const initial = await t.request({ url: faultsUrl, key: client.key });
    expect(initial.status).toBe(200);
    expect(initial.body.data).toEqual({ duplicateRate: 0, reorderWindowMs: 0, extraDelayMs: 0, enabled: false, updatedAt: null });

    const set = await setFaults(client, { duplicateRate: 0.25, reorderWindowMs: 5000, extraDelayMs: 600_000 });
    expect(set).toEqual({ duplicateRate: 0.25, reorderWindowMs: 5000, extraDelayMs: 600_000, enabled: true, updatedAt: t.clock.now().toISOString() });
    expect((await t.request({ url: faultsUrl, key: client.key })).body.data).toEqual(set);
    // Other clients are not affected.
    expect((await t.request({ url: faultsUrl, key: t.clientB.key })).body.data.enabled).toBe(false);

    expect(await setFaults(client, { extraDelayMs: 10 })).toMatchObject({ duplicateRate: 0, reorderWindowMs: 0, extraDelayMs: 10, enabled: true });
    expect(await setFaults(client, {})).toMatchObject({ duplicateRate: 0, reorderWindowMs: 0, extraDelayMs: 0, enabled: false });

    const deleted = await t.request({ method: 'DELETE', url: faultsUrl, key: client.key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ message: 'Webhook faults turned off', data: { duplicateRate: 0, reorderWindowMs: 0, extraDelayMs: 0, enabled: false, updatedAt: null } });
    expect((await t.request({ method: 'DELETE', url: faultsUrl, key: client.key })).body.message).toBe('Webhook faults were already off');
    expect((await t.request({ url: faultsUrl, key: client.key })).body.data.enabled).toBe(false);
  });

  it('refuses unknown fields, values out of range, fractional milliseconds and strings with 400 VALIDATION_ERROR', async () => {
    const client = await t.newClient('Validation');
    for (const body of [
      { duplicateRate: 0.5, chaos: true },
      { duplicateRate: 1.01 },
      { duplicateRate: -0.1 },
      { duplicateRate: '0.5' },
      { reorderWindowMs: 1.5 },
      { reorderWindowMs: -1 },
      { extraDelayMs: 600_001 },
      { extraDelayMs: null },
    ]) {
      const response = await t.request({ method: 'PUT', url: faultsUrl, key: client.key, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.code).toBe('VALIDATION_ERROR');
    }
    expect((await t.request({ url: faultsUrl, key: client.key })).body.data.enabled).toBe(false);
  });
});

describe('duplicates', () => {
  it('with duplicateRate 1 every event arrives twice, same body and webhook-id, both signed; the log marks the second', async () => {
    const client = await t.newClient('Duplicates');
    const other = await t.newClient('No faults');
    const subscription = await subscribe(client, receiver.url('/duplicates'));
    await subscribe(other, receiver.url('/no-faults'));
    await setFaults(client, { duplicateRate: 1 });

    const events = [await record(client), await record(client), await record(client)];
    const otherEvent = await record(other);
    expect(await worker.deliverDue()).toBe(4);

    for (const event of events) {
      const received = receiver.requestsFor(event.id, '/duplicates');
      expect(received).toHaveLength(2);
      const [first, second] = received;
      if (!first || !second) throw new Error('not delivered twice');
      expect(second.body).toBe(first.body);
      expect(second.headers['webhook-id']).toBe(event.id);
      expect(second.headers['openbaas-delivery-id']).toBe(first.headers['openbaas-delivery-id']);
      expect([first.headers['openbaas-attempt'], second.headers['openbaas-attempt']]).toEqual(['1', '2']);
      // Both verify with the reference library (which also checks that webhook-timestamp is current).
      expect(verifyWebhook(subscription.secret, first)).toMatchObject({ id: event.id, type: 'CUSTOMER_CREATED' });
      expect(verifyWebhook(subscription.secret, second)).toMatchObject({ id: event.id, type: 'CUSTOMER_CREATED' });
      expect(Number(second.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Number(first.headers['webhook-timestamp']));
    }
    expect(receiver.requestsFor(otherEvent.id)).toHaveLength(1);

    const log = await deliveries(client, subscription.id);
    expect(log).toHaveLength(3);
    for (const delivery of log) {
      expect(delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 2, nextAttemptAt: null });
      expect(delivery.attempts.map((attempt) => [attempt.attempt, attempt.succeeded, attempt.httpStatus, attempt.injectedFault])).toEqual([
        [1, true, 200, null],
        [2, true, 200, 'DUPLICATE'],
      ]);
    }

    // A manual replay takes the next number: the duplicate's number is never sent again.
    const [delivery] = log;
    if (!delivery) throw new Error('no delivery');
    expect((await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${delivery.id}/retry`, key: client.key })).status).toBe(200);
    expect(await worker.deliverDue()).toBe(1);
    expect(receiver.requestsFor(delivery.eventId, '/duplicates').map((request) => request.headers['openbaas-attempt'])).toEqual(['1', '2', '3', '4']);
    const [replayed] = (await deliveries(client, subscription.id)).filter((entry) => entry.id === delivery.id);
    expect(replayed?.attempts.map((attempt) => [attempt.attempt, attempt.injectedFault])).toEqual([
      [1, null],
      [2, 'DUPLICATE'],
      [3, null],
      [4, 'DUPLICATE'],
    ]);
  });

  it('a duplicate that fails is logged, and changes neither the delivery\'s status nor its schedule', async () => {
    const client = await t.newClient('Failing duplicate');
    // Answers 200 to the first request and 500 to every later one.
    let count = 0;
    const server = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        count += 1;
        response.writeHead(count === 1 ? 200 : 500).end(count === 1 ? 'ok' : 'down');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const subscription = await subscribe(client, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
      await setFaults(client, { duplicateRate: 1 });
      await record(client);
      expect(await worker.deliverDue()).toBe(1);
      const [delivery] = await deliveries(client, subscription.id);
      expect(delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 2, nextAttemptAt: null });
      expect(delivery?.attempts.map((attempt) => [attempt.attempt, attempt.succeeded, attempt.httpStatus, attempt.injectedFault])).toEqual([
        [1, true, 200, null],
        [2, false, 500, 'DUPLICATE'],
      ]);
      t.clock.advance(60_000);
      expect(await worker.deliverDue()).toBe(0);
      expect(count).toBe(2);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('delays', () => {
  it('extraDelayMs holds a delivery back by that much of the client\'s clock, without holding up other clients', async () => {
    const client = await t.newClient('Delayed');
    const other = await t.newClient('Not delayed');
    const subscription = await subscribe(client, receiver.url('/delayed'));
    await subscribe(other, receiver.url('/not-delayed'));
    await setFaults(client, { extraDelayMs: 5000 });

    const event = await record(client);
    const createdAtMs = t.clock.now().getTime();
    const otherEvent = await record(other);
    expect(await worker.deliverDue()).toBe(1);
    expect(receiver.requestsFor(otherEvent.id)).toHaveLength(1);
    expect(receiver.requestsFor(event.id)).toHaveLength(0);
    let [delivery] = await deliveries(client, subscription.id);
    expect(delivery).toMatchObject({ status: 'PENDING', attemptCount: 0, nextAttemptAt: new Date(createdAtMs + 5000).toISOString(), attempts: [] });

    t.clock.advance(4999);
    expect(await worker.deliverDue()).toBe(0);
    expect(receiver.requestsFor(event.id)).toHaveLength(0);

    t.clock.advance(1);
    expect(await worker.deliverDue()).toBe(1);
    const [received] = receiver.requestsFor(event.id);
    if (!received) throw new Error('not delivered');
    expect(received.headers['openbaas-attempt']).toBe('1');
    verifyWebhook(subscription.secret, received);
    [delivery] = await deliveries(client, subscription.id);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 1 });
    // The delay applies once: retries follow the usual schedule.
  });

  it('reorderWindowMs makes events arrive out of creation order (a fixed random source gives a fixed order)', async () => {
    const client = await t.newClient('Reordered');
    const subscription = await subscribe(client, receiver.url('/reordered'));
    await setFaults(client, { reorderWindowMs: 1000 });
    const events = [];
    for (let index = 0; index < 4; index++) events.push(await record(client));
    const startMs = t.clock.now().getTime();
    // Drawn in creation order: delays of 900, 600, 300 and 0 ms.
    randomValues = [0.9, 0.6, 0.3, 0];
    expect(await worker.deliverDue()).toBe(1);
    const log = await deliveries(client, subscription.id);
    expect(new Map(log.map((entry) => [entry.eventId, entry.nextAttemptAt]))).toEqual(
      new Map(events.map((event, index) => {
        const delayMs = [900, 600, 300][index];
        return [event.id, delayMs === undefined ? null : new Date(startMs + delayMs).toISOString()];
      })),
    );
    for (let step = 0; step < 10; step++) {
      t.clock.advance(100);
      await worker.deliverDue();
    }
    const arrived = receiver.requests.filter((request) => request.path === '/reordered').map((request) => request.headers['webhook-id']);
    expect(arrived).toEqual([events[3]?.id, events[2]?.id, events[1]?.id, events[0]?.id]);
    expect(arrived).not.toEqual(events.map((event) => event.id));
    for (const request of receiver.requests.filter((entry) => entry.path === '/reordered')) verifyWebhook(subscription.secret, request);
    expect((await deliveries(client, subscription.id)).every((entry) => entry.status === 'DELIVERED' && entry.attemptCount === 1)).toBe(true);
  });

  it("a held delivery is dated by the client's clock, like its creation (the claim wrote the wall clock)", async () => {
    const client = await t.newClient('Held ahead');
    const subscription = await subscribe(client, receiver.url('/held-ahead'));
    expect((await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 86_400 } })).status).toBe(200);
    await setFaults(client, { extraDelayMs: 600_000 });
    const created = await t.request({ method: 'POST', url: '/v1/customers/individual', key: client.key, body: individualBody() });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(await worker.deliverDue()).toBe(0);
    const [held] = (await t.request({ url: `/v1/webhooks/${subscription.id}/deliveries`, key: client.key })).body.data as Array<{ status: string; createdAt: string; updatedAt: string }>;
    expect(held).toMatchObject({ status: 'PENDING' });
    expect(new Date(held?.updatedAt ?? 0).getTime()).toBeGreaterThanOrEqual(new Date(held?.createdAt ?? 0).getTime());
  });

  it('a manual retry goes out at once, also of a delivery that was never attempted', async () => {
    const client = await t.newClient('Retried by hand');
    const subscription = await subscribe(client, receiver.url('/retried-by-hand'));
    const event = await record(client);
    // Paused before its first attempt: the delivery is cancelled with no attempt.
    expect((await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: false } })).status).toBe(200);
    const [cancelled] = await deliveries(client, subscription.id);
    expect(cancelled).toMatchObject({ status: 'CANCELLED', attemptCount: 0 });
    await setFaults(client, { extraDelayMs: 600_000 });
    expect((await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: true } })).status).toBe(200);
    const retried = await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${cancelled?.id ?? ''}/retry`, key: client.key });
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(await worker.deliverDue()).toBe(1);
    expect(receiver.requestsFor(event.id)).toHaveLength(1);
    expect((await deliveries(client, subscription.id))[0]).toMatchObject({ status: 'DELIVERED', attemptCount: 1 });
  });

  it('delays and duplicates combine; after DELETE deliveries go out at once, and once', async () => {
    const client = await t.newClient('Turned off');
    await subscribe(client, receiver.url('/turned-off'));
    await setFaults(client, { duplicateRate: 1, extraDelayMs: 2000 });
    const delayed = await record(client);
    expect(await worker.deliverDue()).toBe(0);
    t.clock.advance(2000);
    expect(await worker.deliverDue()).toBe(1);
    expect(receiver.requestsFor(delayed.id)).toHaveLength(2);

    expect((await t.request({ method: 'DELETE', url: faultsUrl, key: client.key })).status).toBe(200);
    const plain = await record(client);
    expect(await worker.deliverDue()).toBe(1);
    expect(receiver.requestsFor(plain.id)).toHaveLength(1);
  });
});

describe('production mode', () => {
  it('has no fault routes', async () => {
    const production = await createTestApp({ env: { OPENBAAS_MODE: 'production' } });
    try {
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const response = await production.request({ method, url: faultsUrl, ...(method === 'PUT' ? { body: { duplicateRate: 1 } } : {}) });
        expect(response.status, method).toBe(404);
        expect(response.body.code).toBe('ROUTE_NOT_FOUND');
      }
    } finally {
      await production.close();
    }
  });

  it('a worker in production mode never injects a fault, whatever the database holds', async () => {
    const client = await t.newClient('Production worker');
    await subscribe(client, receiver.url('/production'));
    await setFaults(client, { duplicateRate: 1, extraDelayMs: 5000, reorderWindowMs: 1000 });
    // The production worker, with a client that may reach the local receiver (production refuses loopback addresses).
    const production = new DeliveryWorker({ ...t.deps, config: { ...t.config, mode: 'production' } }, { random: () => 0.5, http: webhookHttpClient('sandbox') });
    const event = await record(client);
    expect(await production.deliverDue()).toBe(1);
    expect(receiver.requestsFor(event.id)).toHaveLength(1);
    const row = await t.deps.db.selectFrom('webhook_deliveries').select(['status', 'attempt_count', 'injected_delay_ms']).where('client_id', '=', client.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'DELIVERED', attempt_count: 1, injected_delay_ms: null });
  });
});
