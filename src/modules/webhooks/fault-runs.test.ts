import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { verifyWebhook, WebhookReceiver } from '../../../test/webhook-receiver.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { createClientInTx } from '../tenants/tenants.service.js';
import type { Tx } from '../../platform/db/transaction.js';
import { DeliveryWorker } from './delivery-worker.js';
import { recordEvent } from './events.store.js';
import { createWebhook } from './webhooks.service.js';

/**
 * Fault runs of issue 27, each asserting that nothing is lost: a receiver that refuses
 * connections for a minute of the injected clock, a receiver slower than the timeout beside a
 * healthy one, and a thousand clients at once beside one with a backlog. (A worker killed with
 * SIGKILL mid-delivery is test/webhooks-processes.postgres.test.ts: it needs processes.)
 */

const retrySchedule = [5_000, 20_000, 60_000];

let t: TestContext;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  t = await createTestApp({
    env: {
      // 6 s: the healthy receiver's 20 deliveries below must all arrive before the slow one's
      // requests time out, and on a loaded machine they took up to 2.2 s (3 s was the timeout until
      // a flaky-test review, 2026-12-08).
      WEBHOOK_TIMEOUT_MS: '6000',
      WEBHOOK_RETRY_SCHEDULE: '5s,20s,60s',
      WEBHOOK_RETRY_JITTER_PERCENT: '0',
      WEBHOOK_LEASE_MS: '10000',
    },
  });
});
afterAll(async () => {
  for (const receiver of receivers) await receiver.stop();
  await t.close();
});

async function receiver(): Promise<WebhookReceiver> {
  const started = await WebhookReceiver.start();
  receivers.push(started);
  return started;
}

/** A client with one subscription to CUSTOMER_CREATED at `url`, made directly (quick enough for a thousand). */
async function subscribedClient(name: string, url: string, within?: Tx): Promise<{ clientId: string; subscriptionId: string; secret: string }> {
  const make = async (tx: Tx) => {
    const client = await createClientInTx(tx, t.deps, name);
    const webhook = await createWebhook(tx, { clientId: client.id, traceId: 'fault-runs', now: t.clock.now() }, t.deps, {
      name,
      url,
      eventTypes: ['CUSTOMER_CREATED'],
      active: true,
    });
    return { clientId: client.id, subscriptionId: webhook.id, secret: webhook.secret };
  };
  return within ? make(within) : withTransaction(t.deps.db, make);
}

async function record(clientId: string, count: number): Promise<string[]> {
  return withTransaction(t.deps.db, async (tx) => {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      ids.push((await recordEvent(tx, { clientId, traceId: 'fault-runs', now: t.clock.now() }, 'CUSTOMER_CREATED', { customerId: `c-${index}` })).id);
    }
    return ids;
  });
}

async function attemptsOf(subscriptionId: string) {
  const rows = await t.deps.db
    .selectFrom('webhook_delivery_attempts as a')
    .innerJoin('webhook_deliveries as d', (join) => join.onRef('d.client_id', '=', 'a.client_id').onRef('d.id', '=', 'a.delivery_id'))
    .select(['d.event_id', 'd.status', 'a.attempt_number', 'a.attempted_at', 'a.succeeded', 'a.error'])
    .where('d.subscription_id', '=', subscriptionId)
    .orderBy('a.attempted_at')
    .execute();
  return rows;
}

describe('a receiver that refuses connections for a minute, then comes back', () => {
  it('retries on the schedule, delivers every event once it is back, and loses none', async () => {
    const down = await receiver();
    const { clientId, subscriptionId, secret } = await subscribedClient('Down for a minute', down.url());
    const worker = new DeliveryWorker(t.deps);
    await down.down();
    const started = t.clock.now().getTime();
    const ids = await record(clientId, 40);

    // Attempts at 0 s, 5 s and 25 s all meet a closed port.
    expect(await worker.deliverDue()).toBe(40);
    t.clock.advance(retrySchedule[0] ?? 0);
    expect(await worker.deliverDue()).toBe(40);
    t.clock.advance(retrySchedule[1] ?? 0);
    expect(await worker.deliverDue()).toBe(40);
    // Back after a minute; the third retry is due at 85 s.
    t.clock.advance(35_000);
    await down.up();
    expect(await worker.deliverDue()).toBe(0);
    t.clock.advance(25_000);
    expect(await worker.deliverDue()).toBe(40);

    const received = new Set(down.requests.map((request) => request.headers['webhook-id']));
    expect(received).toEqual(new Set(ids));
    for (const request of down.requests) verifyWebhook(secret, request);
    const attempts = await attemptsOf(subscriptionId);
    expect(attempts).toHaveLength(160);
    // Every delivery made its attempts at 0, 5, 25 and 85 s (no jitter here), the last one succeeding.
    const offsets = [...new Set(attempts.map((attempt) => attempt.attempted_at.getTime() - started))].sort((a, b) => a - b);
    expect(offsets).toEqual([0, 5_000, 25_000, 85_000]);
    expect(attempts.filter((attempt) => attempt.succeeded)).toHaveLength(40);
    expect(attempts.filter((attempt) => !attempt.succeeded).every((attempt) => attempt.error === 'connection refused')).toBe(true);
    expect(new Set(attempts.map((attempt) => attempt.status))).toEqual(new Set(['DELIVERED']));
  });
});

describe('a receiver slower than the timeout beside a healthy one', () => {
  it('records the timeouts and retries them, while the healthy subscription is served at once', async () => {
    const slow = await receiver();
    const healthy = await receiver();
    slow.mode = 'hang';
    const slowClient = await subscribedClient('Slow endpoint', slow.url());
    const healthyClient = await subscribedClient('Healthy endpoint', healthy.url());
    const slowIdsSeen: string[] = [];
    // The worker's own loop, as in a running process (deliverDue would wait for every request).
    const worker = new DeliveryWorker(t.deps);
    const loop = worker.run();
    try {
      const slowIds = await record(slowClient.clientId, 10);
      await expect.poll(() => slow.requests.length, { timeout: 2500, interval: 5 }).toBe(10);
      // The slow endpoint holds its requests until the timeout (6 s); the healthy one is not behind them.
      const healthyIds = await record(healthyClient.clientId, 20);
      await expect.poll(() => healthy.requests.length, { timeout: 2500, interval: 5 }).toBe(20);
      expect(await attemptsOf(slowClient.subscriptionId)).toHaveLength(0);
      expect(new Set(healthy.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set(healthyIds));
      await expect.poll(async () => (await attemptsOf(slowClient.subscriptionId)).length, { timeout: 20_000, interval: 50 }).toBe(10);
      slowIdsSeen.push(...slowIds);
    } finally {
      await worker.stop();
      await loop;
    }

    // The slow endpoint's attempts are logged as timeouts and are due again after 5 s.
    const attempts = await attemptsOf(slowClient.subscriptionId);
    expect(attempts).toHaveLength(10);
    expect(attempts.every((attempt) => attempt.error === 'timed out after 6000 ms' && attempt.status === 'PENDING')).toBe(true);
    slow.mode = 'ok';
    t.clock.advance(retrySchedule[0] ?? 0);
    await new DeliveryWorker(t.deps).deliverDue();
    const delivered = new Set(slow.requests.filter((request) => request.headers['openbaas-attempt'] === '2').map((request) => request.headers['webhook-id']));
    expect(delivered).toEqual(new Set(slowIdsSeen));
  });
});

describe('a thousand clients at once, beside one with a backlog', () => {
  it('delivers every event, and no client waits for another client\'s backlog', async () => {
    const shared = await receiver();
    const busy = await subscribedClient('Backlog', shared.url('/backlog'));
    const backlogIds = await record(busy.clientId, 400);
    // The thousand clients, their subscriptions and their events in one transaction (quicker).
    const singles = await withTransaction(t.deps.db, async (tx) => {
      const made: Array<{ eventId: string; secret: string }> = [];
      for (let index = 0; index < 1000; index++) {
        const client = await subscribedClient(`Single ${index}`, shared.url(`/single/${index}`), tx);
        const event = await recordEvent(tx, { clientId: client.clientId, traceId: 'fault-runs', now: t.clock.now() }, 'CUSTOMER_CREATED', { customerId: 'c' });
        made.push({ eventId: event.id, secret: client.secret });
      }
      return made;
    });
    shared.delayMs = 2;
    const worker = new DeliveryWorker(t.deps);
    await worker.deliverDue();
    // On a loaded machine an answer can miss the timeout: its retry comes later, and nothing is lost.
    for (const delayMs of retrySchedule) {
      if (new Set(shared.requests.map((request) => request.headers['webhook-id'])).size === 1400) break;
      t.clock.advance(delayMs);
      await worker.deliverDue();
    }

    const order = shared.requests.map((request) => request.headers['webhook-id'] ?? '');
    expect(new Set(order)).toEqual(new Set([...backlogIds, ...singles.map((single) => single.eventId)]));
    // Each single client's first attempt arrived before the backlog client's first attempts were
    // half delivered: the backlog holds only its own subscription's slots. Judged on the first
    // attempts that succeeded: on a loaded machine (two test files at once on two cores, the
    // receiver in this very process) a few hundred of the 1,400 first connections missed the
    // timeout (3 s then) and reach the receiver late or not at all; when they arrive says nothing of the order
    // in which the worker sent them (in a loaded local run, 475 first attempts failed, and the 575
    // singles served at once all came before half the backlog). At least a tenth must be judged.
    const firstAttemptFailed = new Set(
      (
        await t.deps.db
          .selectFrom('webhook_delivery_attempts as a')
          .innerJoin('webhook_deliveries as d', (join) => join.onRef('d.client_id', '=', 'a.client_id').onRef('d.id', '=', 'a.delivery_id'))
          .select('d.event_id')
          .where('a.attempt_number', '=', 1)
          .where('a.succeeded', '=', false)
          .execute()
      ).map((row) => row.event_id),
    );
    const position = new Map<string, number>();
    shared.requests
      .filter((request) => request.headers['openbaas-attempt'] === '1' && !firstAttemptFailed.has(request.headers['webhook-id'] ?? ''))
      .forEach((request, index) => {
        const id = request.headers['webhook-id'] ?? '';
        if (!position.has(id)) position.set(id, index);
      });
    const judged = singles.filter((single) => position.has(single.eventId));
    expect(judged.length).toBeGreaterThanOrEqual(100);
    const backlogFirsts = [...backlogIds].map((id) => position.get(id)).filter((at): at is number => at !== undefined).sort((a, b) => a - b);
    const halfOfBacklog = backlogFirsts[Math.floor(backlogFirsts.length / 2)] ?? Infinity;
    const lastSingle = Math.max(...judged.map((single) => position.get(single.eventId) ?? Infinity));
    expect(lastSingle).toBeLessThan(halfOfBacklog);
    for (const single of singles.slice(0, 20)) {
      const request = shared.requestsFor(single.eventId)[0];
      if (!request) throw new Error('missing');
      verifyWebhook(single.secret, request);
    }
  });
});
