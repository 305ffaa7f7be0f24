import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../test/harness.js';
import { verifiesWith, verifyEveryDelivery, verifyWebhook, WebhookReceiver } from '../../../test/webhook-receiver.js';
import { AssertionError } from '../../platform/assert.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { DeliveryWorker, purgeOldDeliveries } from './delivery-worker.js';
import { sealPlaintextWebhookSecrets, webhookSecretBoxOf } from './webhook-secrets.js';
import { generateSecret } from './webhook-signing.js';
import type { EventType } from './event-types.js';
import { recordEvent } from './events.store.js';

// Compressed schedule: retries after about 1 s, 2 s and 3 s of the injected clock, then FAILED.
// The timeout is generous: with 300 ms, a receiver that answers at once was now and then recorded as
// timed out on a loaded machine (a flaky-test review, 2026-12-08); the one test of a receiver that
// hangs gives its worker a timeout of its own.
const env = {
  WEBHOOK_TIMEOUT_MS: '3000',
  WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s',
  WEBHOOK_RETRY_JITTER_PERCENT: '10',
  WEBHOOK_LEASE_MS: '5000',
  WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: '3',
  // A fixed cap (flow control cannot grow it): the concurrency tests count on exactly 3.
  WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION_MAX: '3',
  WEBHOOK_SECRET_OVERLAP_MS: '60000',
};

let t: TestContext;
let receiver: WebhookReceiver;
let worker: DeliveryWorker;
/** Every secret each subscription had, to verify every delivery at the end. */
const secrets = new Map<string, string[]>();

beforeAll(async () => {
  t = await createTestApp({ env });
  receiver = await WebhookReceiver.start();
  worker = new DeliveryWorker(t.deps);
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

interface Subscription {
  id: string;
  secret: string;
}

async function subscribe(client: TestClient, url: string, types: string[], extra: Record<string, unknown> = {}): Promise<Subscription> {
  const response = await t.request({
    method: 'POST',
    url: '/v1/webhooks',
    key: client.key,
    body: { name: 'test', url, subscribedEventTypes: types, ...extra },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  secrets.set(response.body.data.id, [response.body.data.secret]);
  return response.body.data;
}

async function record(client: TestClient, type: EventType, data: Record<string, unknown> = { customerId: 'c1' }) {
  return withTransaction(t.deps.db, (tx) => recordEvent(tx, { clientId: client.id, traceId: 'trace-delivery', now: t.clock.now() }, type, data));
}

/** Records one CUSTOMER_CREATED event for `client` and delivers it: the request its receiver got. */
async function deliveredNow(client: TestClient) {
  const event = await record(client, 'CUSTOMER_CREATED');
  await worker.deliverDue();
  const request = receiver.requestsFor(event.id)[0];
  if (!request) throw new Error('not delivered');
  return request;
}

async function deliveries(client: TestClient, subscriptionId: string, query = '') {
  const response = await t.request({ url: `/v1/webhooks/${subscriptionId}/deliveries?limit=200${query}`, key: client.key });
  expect(response.status).toBe(200);
  return response.body.data as Array<{
    id: string;
    eventId: string;
    eventType: string;
    status: string;
    attemptCount: number;
    nextAttemptAt: string | null;
    createdAt: string;
    updatedAt: string;
    completedAt: string | null;
    attempts: Array<{ attempt: number; succeeded: boolean; httpStatus: number | null; error: string | null; responseBody: string | null }>;
  }>;
}

describe('fan-out and delivery', () => {
  it('delivers an event once to each active subscription of its client that subscribes to its type, signed and verifiable', async () => {
    const client = await t.newClient('Fan-out');
    const customers = await subscribe(client, receiver.url('/fan/customers'), ['CUSTOMER_CREATED']);
    const both = await subscribe(client, receiver.url('/fan/both'), ['CUSTOMER_CREATED', 'VIRTUAL_ACCOUNT_CREATED']);
    await subscribe(client, receiver.url('/fan/paused'), ['CUSTOMER_CREATED'], { active: false });
    await subscribe(client, receiver.url('/fan/other-type'), ['LTV_LIQUIDATED']);
    const otherClient = await t.newClient('Other client');
    await subscribe(otherClient, receiver.url('/fan/other-client'), ['CUSTOMER_CREATED']);

    const event = await record(client, 'CUSTOMER_CREATED', { customerId: 'cust-1' });
    await worker.deliverDue();

    const received = receiver.requestsFor(event.id);
    expect(received.map((request) => request.path).sort()).toEqual(['/fan/both', '/fan/customers']);
    const stored = await t.request({ url: `/v1/events/${event.id}`, key: client.key });
    for (const [path, subscription] of [['/fan/customers', customers], ['/fan/both', both]] as const) {
      const request = receiver.requestsFor(event.id, path)[0];
      if (!request) throw new Error(`nothing at ${path}`);
      expect(verifyWebhook(subscription.secret, request)).toEqual(stored.body.data);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['openbaas-attempt']).toBe('1');
      expect(Number(request.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
    }
    const [toCustomers] = receiver.requestsFor(event.id, '/fan/customers');
    if (!toCustomers) throw new Error('nothing at /fan/customers');
    expect(verifiesWith(both.secret, toCustomers)).toBe(false);
    const log = await deliveries(client, customers.id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ eventId: event.id, status: 'DELIVERED', attemptCount: 1, nextAttemptAt: null });
    expect(log[0]?.attempts[0]).toMatchObject({ attempt: 1, succeeded: true, httpStatus: 200, error: null });

    await worker.deliverDue();
    expect(receiver.requestsFor(event.id)).toHaveLength(2);
  });

  it('delivery ids keep creation order, even for events of the same millisecond', async () => {
    const client = await t.newClient('Order');
    const first = await subscribe(client, receiver.url('/order/1'), ['CUSTOMER_CREATED']);
    const second = await subscribe(client, receiver.url('/order/2'), ['CUSTOMER_CREATED']);
    const events = [];
    for (let index = 0; index < 5; index++) events.push(await record(client, 'CUSTOMER_CREATED'));
    for (const subscription of [first, second]) {
      const log = await deliveries(client, subscription.id);
      expect(log.map((entry) => entry.eventId)).toEqual(events.map((event) => event.id).reverse());
    }
    const rows = await t.deps.db.selectFrom('webhook_deliveries').select(['id', 'event_id', 'subscription_id']).where('client_id', '=', client.id).orderBy('id').execute();
    expect(rows.map((row) => row.event_id)).toEqual(events.flatMap((event) => [event.id, event.id]));
    await worker.deliverDue();
  });

  it('retries a receiver that answers 500, hangs past the timeout, then is down, and delivers once it recovers, with one webhook-id', async () => {
    const client = await t.newClient('Flaky receiver');
    const flaky = await WebhookReceiver.start();
    try {
      const subscription = await subscribe(client, flaky.url(), ['CUSTOMER_CREATED']);
      const event = await record(client, 'CUSTOMER_CREATED');

      flaky.mode = 'error';
      expect(await worker.deliverDue()).toBe(1);
      let [delivery] = await deliveries(client, subscription.id);
      expect(delivery?.status).toBe('PENDING');
      const firstRetryMs = Date.parse(delivery?.nextAttemptAt ?? '') - t.clock.now().getTime();
      expect(firstRetryMs).toBeGreaterThanOrEqual(900);
      expect(firstRetryMs).toBeLessThanOrEqual(1100);

      // Not due yet: nothing is sent.
      t.clock.advance(800);
      expect(await worker.deliverDue()).toBe(0);

      flaky.mode = 'hang';
      t.clock.advance(400);
      const impatient = new DeliveryWorker({ ...t.deps, config: { ...t.deps.config, webhookTimeoutMs: 300 } });
      expect(await impatient.deliverDue()).toBe(1);

      await flaky.down();
      t.clock.advance(2300);
      expect(await worker.deliverDue()).toBe(1);

      await flaky.up();
      flaky.mode = 'ok';
      t.clock.advance(3400);
      expect(await worker.deliverDue()).toBe(1);

      [delivery] = await deliveries(client, subscription.id);
      expect(delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 4 });
      expect(delivery?.attempts.map((attempt) => [attempt.attempt, attempt.succeeded, attempt.httpStatus, attempt.error])).toEqual([
        [1, false, 500, null],
        [2, false, null, 'timed out after 300 ms'],
        [3, false, null, 'connection refused'],
        [4, true, 200, null],
      ]);
      const received = flaky.requestsFor(event.id);
      expect(received.map((request) => request.headers['openbaas-attempt'])).toEqual(['1', '2', '4']);
      expect(flaky.requests.every((request) => request.headers['webhook-id'] === event.id)).toBe(true);
      for (const request of received) verifyWebhook(subscription.secret, request);
    } finally {
      await flaky.stop();
    }
  });

  it('marks a delivery FAILED after the last retry; a manual retry sends it once more, without automatic retries', async () => {
    const client = await t.newClient('Failing receiver');
    const failing = await WebhookReceiver.start();
    try {
      failing.mode = 'error';
      failing.errorStatus = 503;
      const subscription = await subscribe(client, failing.url(), ['CUSTOMER_CREATED']);
      const event = await record(client, 'CUSTOMER_CREATED');
      for (const delayMs of [0, 1100, 2200, 3300]) {
        t.clock.advance(delayMs);
        expect(await worker.deliverDue()).toBe(1);
      }
      let [delivery] = await deliveries(client, subscription.id);
      expect(delivery).toMatchObject({ status: 'FAILED', attemptCount: 4, nextAttemptAt: null });
      t.clock.advance(3_600_000);
      expect(await worker.deliverDue()).toBe(0);

      const failedOnly = await deliveries(client, subscription.id, '&status=FAILED&eventType=CUSTOMER_CREATED');
      expect(failedOnly.map((entry) => entry.id)).toEqual([delivery?.id]);
      expect(await deliveries(client, subscription.id, '&status=DELIVERED')).toEqual([]);

      failing.mode = 'ok';
      const retried = await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${delivery?.id}/retry`, key: client.key });
      expect(retried.status).toBe(200);
      expect(retried.body.data).toMatchObject({ status: 'PENDING', nextAttemptAt: t.clock.now().toISOString() });
      expect(await worker.deliverDue()).toBe(1);
      [delivery] = await deliveries(client, subscription.id);
      expect(delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 5 });

      // A delivered one can be replayed too; a manual attempt that fails is final.
      failing.mode = 'error';
      await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${delivery?.id}/retry`, key: client.key });
      expect(await worker.deliverDue()).toBe(1);
      [delivery] = await deliveries(client, subscription.id);
      expect(delivery).toMatchObject({ status: 'FAILED', attemptCount: 6 });
      t.clock.advance(3_600_000);
      expect(await worker.deliverDue()).toBe(0);
      expect(failing.requestsFor(event.id).map((request) => request.headers['openbaas-attempt'])).toEqual(['1', '2', '3', '4', '5', '6']);
    } finally {
      await failing.stop();
    }
  });
});

describe('stopping delivery', () => {
  it('pausing, unsubscribing from a type and deleting cancel pending deliveries, and nothing more is sent', async () => {
    const client = await t.newClient('Stopper');
    const target = await WebhookReceiver.start();
    try {
      target.mode = 'error';
      const subscription = await subscribe(client, target.url(), ['CUSTOMER_CREATED', 'VIRTUAL_ACCOUNT_CREATED']);
      await record(client, 'CUSTOMER_CREATED');
      await record(client, 'VIRTUAL_ACCOUNT_CREATED', { customerId: 'c1', walletId: 'w1' });
      expect(await worker.deliverDue()).toBe(2);

      await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { subscribedEventTypes: ['CUSTOMER_CREATED'] } });
      const afterUnsubscribe = await deliveries(client, subscription.id);
      expect(afterUnsubscribe.map((entry) => [entry.eventType, entry.status]).sort()).toEqual([
        ['CUSTOMER_CREATED', 'PENDING'],
        ['VIRTUAL_ACCOUNT_CREATED', 'CANCELLED'],
      ]);

      await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: false } });
      await record(client, 'CUSTOMER_CREATED');
      const afterPause = await deliveries(client, subscription.id);
      expect(afterPause.map((entry) => entry.status)).toEqual(['CANCELLED', 'CANCELLED']);

      target.mode = 'ok';
      const before = target.requests.length;
      t.clock.advance(60_000);
      expect(await worker.deliverDue()).toBe(0);
      expect(target.requests.length).toBe(before);

      await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: true } });
      const afterResume = await record(client, 'CUSTOMER_CREATED');
      expect(await worker.deliverDue()).toBe(1);
      expect(target.requestsFor(afterResume.id)).toHaveLength(1);

      target.mode = 'error';
      await record(client, 'CUSTOMER_CREATED');
      expect(await worker.deliverDue()).toBe(1);
      await t.request({ method: 'DELETE', url: `/v1/webhooks/${subscription.id}`, key: client.key });
      await record(client, 'CUSTOMER_CREATED');
      target.mode = 'ok';
      t.clock.advance(60_000);
      expect(await worker.deliverDue()).toBe(0);
      const afterDelete = await deliveries(client, subscription.id);
      expect(afterDelete.map((entry) => `${entry.eventType} ${entry.status} ${entry.attemptCount}`).sort()).toEqual([
        'CUSTOMER_CREATED CANCELLED 1',
        'CUSTOMER_CREATED CANCELLED 1',
        'CUSTOMER_CREATED DELIVERED 1',
        'VIRTUAL_ACCOUNT_CREATED CANCELLED 1',
      ]);
    } finally {
      await target.stop();
    }
  });

  it('a pending delivery left on a paused subscription (a race with the pause) is never sent and is swept, dated by the client\'s clock', async () => {
    const client = await t.newClient('Race');
    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 86_400 } });
    const subscription = await subscribe(client, receiver.url('/race'), ['CUSTOMER_CREATED']);
    const event = await record(client, 'CUSTOMER_CREATED');
    // As if the event's transaction had read the subscription just before the pause committed.
    await sql`UPDATE webhook_subscriptions SET active = false WHERE id = ${subscription.id}`.execute(t.deps.db);
    expect(await worker.deliverDue()).toBe(0);
    expect(await worker.sweep()).toBeGreaterThanOrEqual(1);
    const [delivery] = await deliveries(client, subscription.id);
    expect(delivery).toMatchObject({ eventId: event.id, status: 'CANCELLED', attemptCount: 0 });
    expect(receiver.requestsFor(event.id)).toHaveLength(0);
    // (record() dates the event and its delivery by the wall clock; the sweep by the client's.)
    const clientNow = t.clock.now().getTime() + 86_400_000;
    expect([delivery?.updatedAt, delivery?.completedAt].map((at) => new Date(at ?? 0).getTime())).toEqual([clientNow, clientNow]);
  });
});

describe('secret rotation', () => {
  it('signs with the new and the previous secret during the overlap, then with the new one only', async () => {
    const client = await t.newClient('Rotation');
    const subscription = await subscribe(client, receiver.url('/rotation'), ['CUSTOMER_CREATED']);
    const rotated = await t.request({ method: 'POST', url: `/v1/webhooks/${subscription.id}/rotate-secret`, key: client.key });
    const newSecret: string = rotated.body.data.secret;
    secrets.get(subscription.id)?.push(newSecret);

    const duringRequest = await deliveredNow(client);
    expect(duringRequest.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(verifiesWith(newSecret, duringRequest)).toBe(true);
    expect(verifiesWith(subscription.secret, duringRequest)).toBe(true);

    t.clock.advance(60_001);
    const afterRequest = await deliveredNow(client);
    expect(afterRequest.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(verifiesWith(newSecret, afterRequest)).toBe(true);
    expect(verifiesWith(subscription.secret, afterRequest)).toBe(false);
  });

  it('the overlap ends at previousSecretExpiresAt by the client\'s clock (a sandbox clock ahead of the wall clock), and attempts are dated by that clock', async () => {
    const client = await t.newClient('Rotation ahead');
    const ahead = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 86_400 } });
    expect(ahead.status, JSON.stringify(ahead.body)).toBe(200);
    const subscription = await subscribe(client, receiver.url('/rotation-ahead'), ['CUSTOMER_CREATED']);
    const rotated = await t.request({ method: 'POST', url: `/v1/webhooks/${subscription.id}/rotate-secret`, key: client.key });
    const newSecret: string = rotated.body.data.secret;
    secrets.get(subscription.id)?.push(newSecret);
    const expiresAt = new Date(rotated.body.data.previousSecretExpiresAt as string);
    expect(expiresAt.getTime()).toBeGreaterThan(t.clock.now().getTime() + 86_000_000);

    const during = await deliveredNow(client);
    expect(during.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 61 } });
    const after = await deliveredNow(client);
    expect(after.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(verifiesWith(newSecret, after)).toBe(true);
    expect(verifiesWith(subscription.secret, after)).toBe(false);

    const log = await t.request({ url: `/v1/webhooks/${subscription.id}/deliveries?limit=200`, key: client.key });
    const attemptedAt = log.body.data.flatMap((delivery: { attempts: Array<{ attemptedAt: string }> }) => delivery.attempts.map((attempt) => new Date(attempt.attemptedAt).getTime()));
    expect(attemptedAt).toHaveLength(2);
    for (const at of attemptedAt) expect(at).toBeGreaterThan(t.clock.now().getTime() + 86_000_000);
    // The delivery's own dates follow the same clock: updated (and completed) when attempted.
    for (const delivery of log.body.data as Array<{ createdAt: string; updatedAt: string; completedAt: string; attempts: Array<{ attemptedAt: string }> }>) {
      expect(delivery.updatedAt >= delivery.createdAt, JSON.stringify(delivery)).toBe(true);
      expect(delivery.updatedAt).toBe(delivery.completedAt);
      expect(new Date(delivery.updatedAt).getTime()).toBeGreaterThan(t.clock.now().getTime() + 86_000_000);
    }
  });
});

describe('secrets at rest', () => {
  async function storedSecrets(client: TestClient, id: string) {
    const row = await t.deps.db
      .selectFrom('webhook_subscriptions')
      .select(['secret', 'previous_secret'])
      .where('client_id', '=', client.id)
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return row;
  }

  it('are stored encrypted, bound to their subscription; the previous one stays encrypted after a rotation', async () => {
    const client = await t.newClient('Sealed');
    const subscription = await subscribe(client, receiver.url('/sealed'), ['CUSTOMER_CREATED']);
    const stored = await storedSecrets(client, subscription.id);
    expect(stored.secret).toMatch(/^v1\./);
    expect(stored.secret).not.toContain(subscription.secret.slice('whsec_'.length));
    const box = webhookSecretBoxOf(t.deps);
    expect(box.open(client.id, subscription.id, stored.secret)).toBe(subscription.secret);
    // Copied onto another subscription, the value does not open.
    const other = await subscribe(client, receiver.url('/sealed-other'), ['CUSTOMER_CREATED']);
    expect(() => box.open(client.id, other.id, stored.secret)).toThrow();

    const rotated = await t.request({ method: 'POST', url: `/v1/webhooks/${subscription.id}/rotate-secret`, key: client.key });
    const newSecret: string = rotated.body.data.secret;
    secrets.get(subscription.id)?.push(newSecret);
    const afterRotation = await storedSecrets(client, subscription.id);
    expect(afterRotation.previous_secret).toBe(stored.secret);
    expect(afterRotation.secret).toMatch(/^v1\./);
    expect(box.open(client.id, subscription.id, afterRotation.secret)).toBe(newSecret);
  });

  it('a secret still in plain text (written before migration 0012) signs as before, and startup encrypts it', async () => {
    const client = await t.newClient('Plaintext');
    const subscription = await subscribe(client, receiver.url('/plaintext'), ['CUSTOMER_CREATED']);
    const legacy = generateSecret();
    const legacyPrevious = generateSecret();
    secrets.get(subscription.id)?.push(legacy);
    await sql`UPDATE webhook_subscriptions SET secret = ${legacy}, previous_secret = ${legacyPrevious},
      previous_secret_expires_at = ${new Date(t.clock.now().getTime() + 60_000)} WHERE client_id = ${client.id} AND id = ${subscription.id}`.execute(t.deps.db);

    const beforeRequest = await deliveredNow(client);
    expect(verifiesWith(legacy, beforeRequest)).toBe(true);
    expect(verifiesWith(legacyPrevious, beforeRequest)).toBe(true);

    expect(await sealPlaintextWebhookSecrets(t.deps)).toBeGreaterThanOrEqual(1);
    const sealed = await storedSecrets(client, subscription.id);
    expect(sealed.secret).toMatch(/^v1\./);
    expect(sealed.previous_secret).toMatch(/^v1\./);
    expect(await sealPlaintextWebhookSecrets(t.deps)).toBe(0);
    const leftInPlainText = await sql<{ count: string }>`SELECT count(*)::text AS count FROM webhook_subscriptions
      WHERE secret LIKE 'whsec\_%' OR previous_secret LIKE 'whsec\_%'`.execute(t.deps.db);
    expect(leftInPlainText.rows[0]?.count).toBe('0');

    const afterRequest = await deliveredNow(client);
    expect(verifiesWith(legacy, afterRequest)).toBe(true);
    expect(verifiesWith(legacyPrevious, afterRequest)).toBe(true);
  });

  it('the database refuses a secret in any other form', async () => {
    const client = await t.newClient('Refused');
    const subscription = await subscribe(client, receiver.url('/refused'), ['CUSTOMER_CREATED']);
    await expect(
      sql`UPDATE webhook_subscriptions SET secret = 'not-a-secret' WHERE client_id = ${client.id} AND id = ${subscription.id}`.execute(t.deps.db),
    ).rejects.toThrow(/webhook_subscriptions_secret_check/);
  });
});

describe('claims and concurrency', () => {
  it("a dead worker's claim comes back after the lease as a new attempt, and the lost attempt is logged", async () => {
    const client = await t.newClient('Dead worker');
    const subscription = await subscribe(client, receiver.url('/lease'), ['CUSTOMER_CREATED']);
    const event = await record(client, 'CUSTOMER_CREATED');
    const leaseUntil = new Date(t.clock.now().getTime() + 5000);
    // What a claim does, by a worker that then dies before recording anything.
    await sql`UPDATE webhook_deliveries SET attempt_count = 1, lease_token = gen_random_uuid(), lease_expires_at = ${leaseUntil}
      WHERE subscription_id = ${subscription.id}`.execute(t.deps.db);

    expect(await worker.deliverDue()).toBe(0);
    t.clock.advance(4999);
    expect(await worker.deliverDue()).toBe(0);
    t.clock.advance(1);
    expect(await worker.deliverDue()).toBe(1);

    expect(receiver.requestsFor(event.id).map((request) => request.headers['openbaas-attempt'])).toEqual(['2']);
    const [delivery] = await deliveries(client, subscription.id);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
    expect(delivery?.attempts.map((attempt) => [attempt.attempt, attempt.succeeded, attempt.error])).toEqual([
      [1, false, 'no outcome recorded: the worker stopped before recording it (its claim expired)'],
      [2, true, null],
    ]);
  });

  it('a retry of a delivery being sent right now (claimed, the lease in real time) answers 409, also for a client whose clock is ahead', async () => {
    const client = await t.newClient('Retry in flight');
    await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds: 86_400 } });
    const subscription = await subscribe(client, receiver.url('/in-flight'), ['CUSTOMER_CREATED']);
    await record(client, 'CUSTOMER_CREATED');
    const leaseUntil = new Date(t.clock.now().getTime() + 5000);
    // What a claim does (its lease by the wall clock), the request still under way.
    await sql`UPDATE webhook_deliveries SET attempt_count = 1, lease_token = gen_random_uuid(), lease_expires_at = ${leaseUntil}
      WHERE subscription_id = ${subscription.id}`.execute(t.deps.db);
    const [delivery] = await deliveries(client, subscription.id);
    const retried = await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${delivery?.id}/retry`, key: client.key });
    expect(retried.status, JSON.stringify(retried.body)).toBe(409);
    expect(retried.body.code).toBe('CONFLICT');
    t.clock.advance(5000);
    expect(await worker.deliverDue()).toBe(1);
  });

  it('an outcome that cannot be written is logged with its delivery, and the delivery is attempted again after its claim', async () => {
    const client = await t.newClient('Unwritable outcome');
    const subscription = await subscribe(client, receiver.url('/unwritable'), ['CUSTOMER_CREATED']);
    const event = await record(client, 'CUSTOMER_CREATED');
    const logged: Array<{ object: Record<string, unknown>; message: string }> = [];
    const logging = new DeliveryWorker(t.deps, { logger: { error: (object, message) => logged.push({ object: object as Record<string, unknown>, message }) } });
    // The database refuses this client's attempt log for a while (as an unavailable one would).
    await sql.raw(`
      CREATE FUNCTION refuse_attempts() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'attempt log unavailable'; END $$;
      CREATE TRIGGER refuse_attempts BEFORE INSERT ON webhook_delivery_attempts FOR EACH ROW
        WHEN (NEW.client_id = '${client.id}') EXECUTE FUNCTION refuse_attempts();`).execute(t.deps.db);
    try {
      expect(await logging.deliverDue()).toBe(1);
    } finally {
      await sql.raw('DROP TRIGGER refuse_attempts ON webhook_delivery_attempts; DROP FUNCTION refuse_attempts();').execute(t.deps.db);
    }
    expect(receiver.requestsFor(event.id)).toHaveLength(1);
    const [delivery] = await deliveries(client, subscription.id);
    expect(logged).toEqual([
      {
        object: expect.objectContaining({ clientId: client.id, deliveryId: delivery?.id, attempt: 1, err: expect.objectContaining({ message: expect.stringContaining('attempt log unavailable') }) }),
        message: expect.stringContaining('an attempt failed before its outcome was written'),
      },
    ]);
    expect(delivery).toMatchObject({ status: 'PENDING', attemptCount: 1 });

    t.clock.advance(5000);
    expect(await logging.deliverDue()).toBe(1);
    expect(receiver.requestsFor(event.id).map((request) => request.headers['openbaas-attempt'])).toEqual(['1', '2']);
    const [after] = await deliveries(client, subscription.id);
    expect(after).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
    expect(logged).toHaveLength(1);
  });

  it('never has more requests in flight to one subscription than its concurrency, even with two workers', async () => {
    const client = await t.newClient('Concurrency');
    const holding = await WebhookReceiver.start();
    try {
      holding.mode = 'hold';
      await subscribe(client, holding.url(), ['CUSTOMER_CREATED']);
      for (let index = 0; index < 10; index++) await record(client, 'CUSTOMER_CREATED');
      const second = new DeliveryWorker(t.deps);
      const running = Promise.all([worker.deliverDue(), second.deliverDue()]);
      let released = 0;
      while (released < 10) {
        // Each wave fills the subscription's 3 slots and no more, whichever worker claims.
        const expected = Math.min(3, 10 - released);
        await vi.waitFor(() => expect(holding.openNow).toBe(expected), { timeout: 10_000, interval: 5 });
        // A third claim now finds every slot taken (it would hang here on a request otherwise).
        expect(await new DeliveryWorker(t.deps).deliverDue()).toBe(0);
        expect(holding.openNow).toBe(expected);
        released += holding.openNow;
        holding.release();
      }
      await running;
      expect(holding.openMax).toBe(3);
      expect(holding.requests).toHaveLength(10);
      expect(released).toBe(10);
    } finally {
      await holding.stop();
    }
  });

  it('two workers claiming at once deliver every event exactly once', async () => {
    const client = await t.newClient('Two workers');
    const first = await subscribe(client, receiver.url('/two/a'), ['CUSTOMER_CREATED']);
    const second = await subscribe(client, receiver.url('/two/b'), ['CUSTOMER_CREATED']);
    const events = [];
    for (let index = 0; index < 60; index++) events.push(await record(client, 'CUSTOMER_CREATED'));
    const other = new DeliveryWorker(t.deps);
    const attempts = await Promise.all([worker.deliverDue(), other.deliverDue()]);
    expect(attempts[0] + attempts[1]).toBe(120);
    for (const event of events) {
      const a = receiver.requestsFor(event.id, '/two/a');
      const b = receiver.requestsFor(event.id, '/two/b');
      expect(a).toHaveLength(1);
      expect(b).toHaveLength(1);
      const [toA] = a;
      const [toB] = b;
      if (!toA || !toB) throw new Error('not delivered');
      verifyWebhook(first.secret, toA);
      verifyWebhook(second.secret, toB);
    }
  });
});

describe('receiver answers', () => {
  it('does not follow redirects: a 3xx is a failed attempt and the target is not called', async () => {
    const client = await t.newClient('Redirect');
    const redirecting = await WebhookReceiver.start();
    const target = await WebhookReceiver.start();
    try {
      redirecting.mode = 'redirect';
      redirecting.redirectTo = target.url();
      const subscription = await subscribe(client, redirecting.url(), ['CUSTOMER_CREATED']);
      await record(client, 'CUSTOMER_CREATED');
      await worker.deliverDue();
      const [delivery] = await deliveries(client, subscription.id);
      expect(delivery?.attempts[0]).toMatchObject({ succeeded: false, httpStatus: 302 });
      expect(delivery?.status).toBe('PENDING');
      expect(target.requests).toHaveLength(0);
    } finally {
      await redirecting.stop();
      await target.stop();
    }
  });

  it('keeps the start of a long answer, made storable (no NUL)', async () => {
    const client = await t.newClient('Long answer');
    const talkative = await WebhookReceiver.start();
    try {
      talkative.mode = 'error';
      talkative.responseBody = `a\u0000${'b'.repeat(50_000)}`;
      const subscription = await subscribe(client, talkative.url(), ['CUSTOMER_CREATED']);
      await record(client, 'CUSTOMER_CREATED');
      await worker.deliverDue();
      const [delivery] = await deliveries(client, subscription.id);
      const body = delivery?.attempts[0]?.responseBody ?? '';
      expect(body).toHaveLength(1000);
      expect(body.startsWith('a\uFFFDbbb')).toBe(true);
    } finally {
      await talkative.stop();
    }
  });
});

describe('event payloads', () => {
  it('an event whose payload breaks its schema is a bug of its emitter: refused, nothing recorded', async () => {
    const client = await t.newClient('Bad payload');
    await expect(record(client, 'CUSTOMER_CREATED', {})).rejects.toThrow(AssertionError);
    await expect(record(client, 'BANK_DEPOSIT_TRANSACTION_COMPLETED', { walletId: 'w', bankTransactionId: 'b', amount: 10, asset: 'USD', bankNetwork: 'ACH', counterparty: null })).rejects.toThrow(
      /amount must be string/,
    );
    const events = await t.request({ url: '/v1/events', key: client.key });
    expect(events.body.data).toEqual([]);
  });
});

describe('verification', () => {
  it('every request received in this file verifies with the standardwebhooks package', async () => {
    const checked = await verifyEveryDelivery(async (deliveryId) => {
      const row = await t.deps.db.selectFrom('webhook_deliveries').select('subscription_id').where('id', '=', deliveryId).executeTakeFirst();
      return row?.subscription_id;
    }, secrets);
    expect(checked).toBeGreaterThanOrEqual(100);
  });
});

// Last: it moves the clock a month ahead.
describe('retention', () => {
  it('purges deliveries finished longer ago than the event retention, never pending ones', async () => {
    const client = await t.newClient('Retention');
    const kept = await WebhookReceiver.start();
    try {
      const subscription = await subscribe(client, kept.url(), ['CUSTOMER_CREATED']);
      await record(client, 'CUSTOMER_CREATED');
      await worker.deliverDue();
      kept.mode = 'error';
      await record(client, 'CUSTOMER_CREATED');
      await worker.deliverDue();
      expect((await deliveries(client, subscription.id)).map((entry) => entry.status).sort()).toEqual(['DELIVERED', 'PENDING']);

      t.clock.advance(29 * 86_400_000);
      await purgeOldDeliveries(t.deps);
      expect(await deliveries(client, subscription.id)).toHaveLength(2);
      t.clock.advance(2 * 86_400_000);
      expect(await purgeOldDeliveries(t.deps)).toBeGreaterThanOrEqual(1);
      expect((await deliveries(client, subscription.id)).map((entry) => entry.status)).toEqual(['PENDING']);
    } finally {
      await kept.stop();
    }
  });
});

// After the signature check above: the reset deletes a subscription whose requests it would check.
describe('a sandbox reset during a delivery', () => {
  it('a delivery a sandbox reset deletes while it is being sent: its outcome is dropped quietly, and another client\'s outcome of the same batch is written', async () => {
    const gone = await t.newClient('Reset in flight');
    const kept = await t.newClient('Kept in flight');
    const holding = await WebhookReceiver.start();
    const logged: unknown[] = [];
    try {
      holding.mode = 'hold';
      await subscribe(gone, holding.url('/gone'), ['CUSTOMER_CREATED']);
      await subscribe(kept, holding.url('/kept'), ['CUSTOMER_CREATED']);
      await record(gone, 'CUSTOMER_CREATED');
      await record(kept, 'CUSTOMER_CREATED');
      // The attempts wait for the reset: a timeout of their own, so a slow reset (a busy machine, the
      // file's 300 ms being short) does not turn the kept client's attempt into a timed-out one.
      const patient = { ...t.deps, config: { ...t.deps.config, webhookTimeoutMs: 10_000, webhookLeaseMs: Math.max(t.deps.config.webhookLeaseMs, 20_000) } };
      const holder = new DeliveryWorker(patient, { logger: { error: (object, message) => logged.push({ object, message }) } });
      const running = holder.deliverDue();
      await vi.waitFor(() => expect(holding.openNow).toBe(2), { timeout: 10_000, interval: 5 });
      const reset = await t.request({ method: 'POST', url: '/v1/sandbox/reset', key: gone.key, body: { confirm: 'RESET' } });
      expect(reset.status).toBe(200);
      holding.release();
      await running;
      expect(logged).toEqual([]);
      const [delivery] = await t.deps.db.selectFrom('webhook_deliveries').select(['status', 'attempt_count']).where('client_id', '=', kept.id).execute();
      expect(delivery).toMatchObject({ status: 'DELIVERED' });
      expect(await t.deps.db.selectFrom('webhook_delivery_attempts').select('delivery_id').where('client_id', '=', kept.id).execute()).toHaveLength(1);
      expect(await t.deps.db.selectFrom('webhook_delivery_attempts').select('delivery_id').where('client_id', '=', gone.id).execute()).toHaveLength(0);
    } finally {
      await holding.stop();
    }
  });
});
