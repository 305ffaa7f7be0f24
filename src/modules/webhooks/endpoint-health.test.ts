import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../test/harness.js';
import { verifyWebhook, WebhookReceiver } from '../../../test/webhook-receiver.js';
import { readClientNow } from '../../platform/client-clock.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { DeliveryWorker } from './delivery-worker.js';
import { recordEvent } from './events.store.js';
import { endpointFailedLongEnough } from './webhooks.service.js';

/**
 * Endpoint health (issue 27): an endpoint that fails every attempt for WEBHOOK_DISABLE_AFTER_MS
 * (left at its default, 3 days) by the client's clock is disabled; the client enables it again and
 * replays what it missed. Time moves with the sandbox clock (POST /v1/sandbox/clock/advance); the
 * injected clock stays still, so the client's clock moves by exactly what each test advances.
 */

const day = 86_400;
const period = 3 * day;

let t: TestContext;
let worker: DeliveryWorker;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  // One retry a minute after the first attempt, then FAILED: each delivery makes two attempts.
  t = await createTestApp({ env: { WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_SCHEDULE: '1m', WEBHOOK_RETRY_JITTER_PERCENT: '0' } });
  worker = new DeliveryWorker(t.deps);
});
afterAll(async () => {
  for (const receiver of receivers) await receiver.stop();
  await t.close();
});

async function receiver(mode: 'ok' | 'error'): Promise<WebhookReceiver> {
  const started = await WebhookReceiver.start();
  started.mode = mode;
  receivers.push(started);
  return started;
}

interface Webhook {
  id: string;
  active: boolean;
  status: string;
  disabledReason: string | null;
  disabledAt: string | null;
  failingSince: string | null;
}

async function subscribe(client: TestClient, url: string): Promise<{ id: string; secret: string }> {
  const response = await t.request({
    method: 'POST',
    url: '/v1/webhooks',
    key: client.key,
    body: { name: 'health', url, subscribedEventTypes: ['CUSTOMER_CREATED'] },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data;
}

async function webhook(client: TestClient, id: string): Promise<Webhook> {
  const response = await t.request({ url: `/v1/webhooks/${id}`, key: client.key });
  expect(response.status).toBe(200);
  return response.body.data;
}

async function advance(client: TestClient, seconds: number): Promise<void> {
  const response = await t.request({ method: 'POST', url: '/v1/sandbox/clock/advance', key: client.key, body: { seconds } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

async function clientNow(client: TestClient): Promise<Date> {
  return readClientNow(t.deps, t.deps.db, client.id);
}

/** Records a CUSTOMER_CREATED event at the client's time: its id. */
async function record(client: TestClient): Promise<string> {
  const now = await clientNow(client);
  const event = await withTransaction(t.deps.db, (tx) =>
    recordEvent(tx, { clientId: client.id, traceId: 'trace-health', now }, 'CUSTOMER_CREATED', { customerId: 'c1' }),
  );
  return event.id;
}

async function deliveries(client: TestClient, id: string) {
  const response = await t.request({ url: `/v1/webhooks/${id}/deliveries?limit=200`, key: client.key });
  expect(response.status).toBe(200);
  return response.body.data as Array<{ eventId: string; status: string; attemptCount: number; nextAttemptAt: string | null }>;
}

/**
 * A subscription of a fresh client whose endpoint answers 500: its first event fails at the start,
 * the second at exactly the end of the period, which disables it. The events and the start time.
 */
async function disabledSubscription(name: string) {
  const client = await t.newClient(name);
  const failing = await receiver('error');
  const subscription = await subscribe(client, failing.url());
  const startedAt = await clientNow(client);
  const first = await record(client);
  await worker.deliverDue();
  await advance(client, period);
  const second = await record(client);
  await worker.deliverDue();
  expect(await webhook(client, subscription.id)).toMatchObject({ status: 'DISABLED' });
  return { client, failing, subscription, startedAt, events: [first, second] };
}

describe('a failing endpoint is disabled', () => {
  it('after failing every attempt for the period by the client\'s clock, and not a second before', async () => {
    const client = await t.newClient('Failing for days');
    const failing = await receiver('error');
    const subscription = await subscribe(client, failing.url());
    expect(await webhook(client, subscription.id)).toMatchObject({
      active: true,
      status: 'ACTIVE',
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
    });

    const startedAt = await clientNow(client);
    await record(client);
    expect(await worker.deliverDue()).toBe(1);
    expect(await webhook(client, subscription.id)).toMatchObject({ status: 'ACTIVE', failingSince: startedAt.toISOString() });

    // Two days on: another event, its attempt and the first one's retry all fail.
    await advance(client, 2 * day);
    await record(client);
    expect(await worker.deliverDue()).toBe(2);
    // One second short of the period: still active, and the run still began at the first failure.
    await advance(client, day - 1);
    await record(client);
    expect(await worker.deliverDue()).toBe(2);
    expect(await webhook(client, subscription.id)).toMatchObject({ active: true, status: 'ACTIVE', failingSince: startedAt.toISOString() });

    await advance(client, 1);
    const last = await record(client);
    expect(await worker.deliverDue()).toBe(1);
    const disabledAt = await clientNow(client);
    expect(await webhook(client, subscription.id)).toEqual(
      expect.objectContaining({
        active: false,
        status: 'DISABLED',
        disabledReason: 'ENDPOINT_FAILING',
        disabledAt: disabledAt.toISOString(),
        failingSince: startedAt.toISOString(),
      }),
    );
    // Its pending deliveries are cancelled (the last event's retry, and the third's).
    const log = await deliveries(client, subscription.id);
    expect(log.filter((delivery) => delivery.status === 'PENDING')).toEqual([]);
    expect(log.find((delivery) => delivery.eventId === last)).toMatchObject({ status: 'CANCELLED', attemptCount: 1 });
    // The client hears of it as WEBHOOK_UPDATED, dated by its clock.
    const events = await t.request({ url: '/v1/events?type=WEBHOOK_UPDATED', key: client.key });
    expect(events.body.data).toEqual([
      expect.objectContaining({ type: 'WEBHOOK_UPDATED', createdAt: disabledAt.toISOString(), data: expect.objectContaining({ webhookId: subscription.id }) }),
    ]);
    // Nothing more is tried, whatever the clock says.
    await advance(client, day);
    expect(await worker.deliverDue()).toBe(0);
  });

  it('counts the client\'s clock only: another client\'s failing endpoint, whose clock did not move, stays active', async () => {
    const moving = await t.newClient('Clock moves');
    const still = await t.newClient('Clock still');
    const failing = await receiver('error');
    const movingSubscription = await subscribe(moving, failing.url('/moving'));
    const stillSubscription = await subscribe(still, failing.url('/still'));
    await record(moving);
    await record(still);
    await worker.deliverDue();
    await advance(moving, period);
    await record(moving);
    await record(still);
    await worker.deliverDue();
    expect(await webhook(moving, movingSubscription.id)).toMatchObject({ status: 'DISABLED' });
    expect(await webhook(still, stillSubscription.id)).toMatchObject({ status: 'ACTIVE', disabledAt: null });
  });
});

describe('the period', () => {
  it('is reached when the run has lasted it exactly, and never with WEBHOOK_DISABLE_AFTER_MS=0', () => {
    const since = new Date('2026-03-01T12:00:00.000Z');
    const at = (ms: number) => new Date(since.getTime() + ms);
    const threeDays = { webhookDisableAfterMs: period * 1000 };
    expect(endpointFailedLongEnough(threeDays, since, at(period * 1000 - 1))).toBe(false);
    expect(endpointFailedLongEnough(threeDays, since, at(period * 1000))).toBe(true);
    expect(endpointFailedLongEnough({ webhookDisableAfterMs: 0 }, since, at(365 * day * 1000))).toBe(false);
  });
});

describe('a new endpoint starts a new run', () => {
  it('a URL change of an active subscription clears failingSince: the new endpoint\'s first failure does not disable it', async () => {
    const client = await t.newClient('Moved endpoint');
    const failing = await receiver('error');
    const subscription = await subscribe(client, failing.url());
    await record(client);
    await worker.deliverDue();
    await advance(client, period - 10);
    const moved = await receiver('error');
    const changed = await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { url: moved.url('/new') } });
    expect(changed.status).toBe(200);
    expect(changed.body.data.failingSince).toBeNull();
    await advance(client, 10);
    await record(client);
    await worker.deliverDue();
    expect(moved.requests.length).toBeGreaterThan(0);
    expect(await webhook(client, subscription.id)).toMatchObject({ status: 'ACTIVE', failingSince: (await clientNow(client)).toISOString() });
  });
});

describe('a single success resets the run', () => {
  it('starts the period again at the next failure', async () => {
    const client = await t.newClient('Flaky');
    const flaky = await receiver('error');
    const subscription = await subscribe(client, flaky.url());
    await record(client);
    await worker.deliverDue();
    await advance(client, 2 * day);
    await record(client);
    await worker.deliverDue();
    expect((await webhook(client, subscription.id)).failingSince).not.toBeNull();

    flaky.mode = 'ok';
    await record(client);
    await worker.deliverDue();
    expect(await webhook(client, subscription.id)).toMatchObject({ status: 'ACTIVE', failingSince: null });

    // Failing again: more than the period after the first failure, but not after the new run began.
    flaky.mode = 'error';
    await advance(client, 2 * day);
    const runStartedAt = await clientNow(client);
    await record(client);
    await worker.deliverDue();
    await advance(client, period - 1);
    await record(client);
    await worker.deliverDue();
    expect(await webhook(client, subscription.id)).toMatchObject({ status: 'ACTIVE', failingSince: runStartedAt.toISOString() });
    await advance(client, 1);
    await record(client);
    await worker.deliverDue();
    expect(await webhook(client, subscription.id)).toMatchObject({ status: 'DISABLED', failingSince: runStartedAt.toISOString() });
  });
});

describe('a disabled subscription', () => {
  it('gets no new deliveries, and stays disabled through changes that do not set active', async () => {
    const { client, failing, subscription } = await disabledSubscription('Disabled');
    failing.mode = 'ok';
    const received = failing.requests.length;
    const missed = await record(client);
    expect(await worker.deliverDue()).toBe(0);
    expect(failing.requests).toHaveLength(received);
    expect((await deliveries(client, subscription.id)).map((delivery) => delivery.eventId)).not.toContain(missed);

    const renamed = await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { name: 'renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'renamed', status: 'DISABLED', disabledReason: 'ENDPOINT_FAILING' });
  });

  it('refuses a replay until it is active again (409)', async () => {
    const { client, subscription, startedAt } = await disabledSubscription('Replay refused');
    const response = await t.request({
      method: 'POST',
      url: `/v1/webhooks/${subscription.id}/replay`,
      key: client.key,
      body: { since: startedAt.toISOString() },
    });
    expect(response.status).toBe(409);
    expect(response.body.code).toBe('CONFLICT');
  });
});

describe('enabled again and replayed', () => {
  it('delivers every missed event exactly once, with its event id as webhook-id, and never an event already delivered', async () => {
    const client = await t.newClient('Comes back');
    const endpoint = await receiver('ok');
    const subscription = await subscribe(client, endpoint.url());
    const since = await clientNow(client);
    const delivered = await record(client);
    await worker.deliverDue();
    await advance(client, 60);
    endpoint.mode = 'error';
    const failedBefore = await record(client);
    await worker.deliverDue();
    await advance(client, period);
    const cancelled = await record(client);
    await worker.deliverDue();
    expect(await webhook(client, subscription.id)).toMatchObject({ status: 'DISABLED' });
    const whileDisabled = [await record(client), await record(client)];
    const missed = [failedBefore, cancelled, ...whileDisabled];

    endpoint.mode = 'ok';
    const enabled = await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: true } });
    expect(enabled.status).toBe(200);
    expect(enabled.body.data).toMatchObject({ active: true, status: 'ACTIVE', disabledReason: null, disabledAt: null, failingSince: null });
    // Enabling alone sends nothing: what was missed waits for the replay.
    expect(await worker.deliverDue()).toBe(0);

    const replay = () =>
      t.request({
        method: 'POST',
        url: `/v1/webhooks/${subscription.id}/replay`,
        key: client.key,
        body: { since: since.toISOString() },
        idempotencyKey: 'replay-after-disable',
      });
    const first = await replay();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data).toEqual({
      webhookId: subscription.id,
      since: since.toISOString(),
      until: (await clientNow(client)).toISOString(),
      scheduled: 4,
      more: false,
    });
    // The same request again (same Idempotency-Key) answers the same and schedules nothing more.
    const again = await replay();
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);

    const before = endpoint.requests.length;
    expect(await worker.deliverDue()).toBe(4);
    const sent = endpoint.requests.slice(before);
    expect(sent.map((request) => request.headers['webhook-id']).sort()).toEqual([...missed].sort());
    for (const request of sent) expect(verifyWebhook(subscription.secret, request)).toMatchObject({ id: request.headers['webhook-id'] });
    expect(endpoint.requestsFor(delivered)).toHaveLength(1);

    // A new replay over the same window (another key) finds nothing left to send.
    const later = await t.request({
      method: 'POST',
      url: `/v1/webhooks/${subscription.id}/replay`,
      key: client.key,
      body: { since: since.toISOString() },
    });
    expect(later.body.data).toMatchObject({ scheduled: 0, more: false });
    expect(await worker.deliverDue()).toBe(0);
    // Since the replay: each missed event once (the failed attempts before it were answered 500).
    const sinceReplay = endpoint.requests.slice(before).map((request) => request.headers['webhook-id']);
    expect(sinceReplay.sort()).toEqual([...missed].sort());
    const log = await deliveries(client, subscription.id);
    expect(log.every((delivery) => delivery.status === 'DELIVERED')).toBe(true);
  });

  it('from disabledAt, then from failingSince (the advice above), takes back the events recorded before them whose deliveries were cancelled or failed', async () => {
    const client = await t.newClient('Replay from the advice');
    const endpoint = await receiver('error');
    const subscription = await subscribe(client, endpoint.url());
    // The run of failures begins with an event recorded 10 s before its first attempt.
    const began = await record(client);
    await advance(client, 10);
    await worker.deliverDue();
    await advance(client, 60);
    await worker.deliverDue();
    // An event 30 s before the disable, failed once and waiting for its retry when the disable
    // cancels it, and the event whose failure disables the subscription.
    await advance(client, period - 60 - 30);
    const waiting = await record(client);
    await worker.deliverDue();
    await advance(client, 30);
    const last = await record(client);
    await worker.deliverDue();
    const disabled = await webhook(client, subscription.id);
    expect(disabled).toMatchObject({ status: 'DISABLED' });
    const log = await deliveries(client, subscription.id);
    expect(Object.fromEntries(log.map((delivery) => [delivery.eventId, delivery.status]))).toEqual({ [began]: 'FAILED', [waiting]: 'CANCELLED', [last]: 'CANCELLED' });

    endpoint.mode = 'ok';
    await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: true } });
    const replayFrom = async (since: string | null) => {
      const response = await t.request({ method: 'POST', url: `/v1/webhooks/${subscription.id}/replay`, key: client.key, body: { since } });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.data.scheduled as number;
    };
    expect(await replayFrom(disabled.disabledAt)).toBe(2);
    expect(await replayFrom(disabled.failingSince)).toBe(1);
    expect(await worker.deliverDue()).toBe(3);
    for (const id of [began, waiting, last]) expect(endpoint.requestsFor(id).at(-1)).toBeDefined();
    expect((await deliveries(client, subscription.id)).every((delivery) => delivery.status === 'DELIVERED')).toBe(true);
  });

  it('a delivery cancelled while it is being sent, then acknowledged by the endpoint, is DELIVERED, and a replay does not send it again', async () => {
    const client = await t.newClient('Paused in flight');
    const endpoint = await receiver('ok');
    endpoint.mode = 'hold';
    const subscription = await subscribe(client, endpoint.url());
    const since = await clientNow(client);
    const event = await record(client);
    const sending = worker.deliverDue();
    await vi.waitFor(() => expect(endpoint.requestsFor(event)).toHaveLength(1));
    const paused = await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: false } });
    expect(paused.status).toBe(200);
    endpoint.release();
    await sending;
    const [delivery] = await deliveries(client, subscription.id);
    expect(delivery).toMatchObject({ eventId: event, status: 'DELIVERED', attemptCount: 1 });

    endpoint.mode = 'ok';
    await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: true } });
    const replay = await t.request({ method: 'POST', url: `/v1/webhooks/${subscription.id}/replay`, key: client.key, body: { since: since.toISOString() } });
    expect(replay.body.data).toMatchObject({ scheduled: 0 });
    expect(await worker.deliverDue()).toBe(0);
    expect(endpoint.requestsFor(event)).toHaveLength(1);
  });

  it('a delivery cancelled while it is being sent is still being sent: a replay or a retry before the attempt ends sends nothing (the retry answers 409); acknowledged, it was sent once', async () => {
    // Until 2026-12-03 the cancellation dropped the claim, so a replay or a retry took the delivery
    // for a finished one and sent it again while the first request was open (found by an audit).
    for (const ending of ['acknowledged', 'failed'] as const) {
      const client = await t.newClient(`Replayed in flight, ${ending}`);
      const endpoint = await receiver('ok');
      endpoint.mode = ending === 'acknowledged' ? 'hold' : 'hang';
      const subscription = await subscribe(client, endpoint.url());
      const since = await clientNow(client);
      const event = await record(client);
      const sending = worker.deliverDue();
      await vi.waitFor(() => expect(endpoint.requestsFor(event)).toHaveLength(1));
      expect((await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: false } })).status).toBe(200);
      expect((await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: true } })).status).toBe(200);
      const replay = await t.request({ method: 'POST', url: `/v1/webhooks/${subscription.id}/replay`, key: client.key, body: { since: since.toISOString() } });
      expect(replay.body.data, ending).toMatchObject({ scheduled: 0 });
      const [cancelled] = await deliveries(client, subscription.id);
      const retry = await t.request({ method: 'POST', url: `/v1/webhooks/deliveries/${(cancelled as unknown as { id: string }).id}/retry`, key: client.key });
      expect(retry.status, ending).toBe(409);
      endpoint.release();
      await sending;
      expect(await worker.deliverDue(), ending).toBe(0);
      expect(endpoint.requestsFor(event), ending).toHaveLength(1);
      const [after] = await deliveries(client, subscription.id);
      expect(after, ending).toMatchObject({ eventId: event, status: ending === 'acknowledged' ? 'DELIVERED' : 'CANCELLED', attemptCount: 1 });
      if (ending === 'failed') {
        // The attempt over, the delivery is a cancelled one like any other: a replay now sends it.
        endpoint.mode = 'ok';
        const again = await t.request({ method: 'POST', url: `/v1/webhooks/${subscription.id}/replay`, key: client.key, body: { since: since.toISOString() } });
        expect(again.body.data).toMatchObject({ scheduled: 1 });
        expect(await worker.deliverDue()).toBe(1);
        expect(endpoint.requestsFor(event)).toHaveLength(2);
        expect((await deliveries(client, subscription.id))[0]).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
      }
    }
  });

  it('gives a replayed delivery the retry schedule from its start', async () => {
    const { client, failing, subscription, startedAt, events } = await disabledSubscription('Replay fails again');
    await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: true } });
    const replayed = await t.request({
      method: 'POST',
      url: `/v1/webhooks/${subscription.id}/replay`,
      key: client.key,
      body: { since: startedAt.toISOString() },
    });
    expect(replayed.body.data.scheduled).toBe(2);
    expect(await worker.deliverDue()).toBe(2);
    const now = await clientNow(client);
    const log = await deliveries(client, subscription.id);
    for (const id of events) {
      // Failed again, retried a minute later (the schedule's first delay), not FAILED at once.
      expect(log.find((delivery) => delivery.eventId === id)).toMatchObject({ status: 'PENDING', nextAttemptAt: new Date(now.getTime() + 60_000).toISOString() });
    }
    expect(failing.requests.length).toBeGreaterThan(0);
    // The run began again with the enable: no disable at once.
    expect(await webhook(client, subscription.id)).toMatchObject({ status: 'ACTIVE', failingSince: now.toISOString() });
  });

  it('replays only what the window holds, and refuses a window that ends before it starts (400)', async () => {
    const { client, subscription, startedAt, events } = await disabledSubscription('Replay window');
    await t.request({ method: 'PATCH', url: `/v1/webhooks/${subscription.id}`, key: client.key, body: { active: true } });
    const until = new Date(startedAt.getTime() + 1000).toISOString();
    const onlyFirst = await t.request({
      method: 'POST',
      url: `/v1/webhooks/${subscription.id}/replay`,
      key: client.key,
      body: { since: startedAt.toISOString(), until },
    });
    expect(onlyFirst.body.data).toMatchObject({ scheduled: 1, until });
    const log = await deliveries(client, subscription.id);
    expect(log.find((delivery) => delivery.eventId === events[0])).toMatchObject({ status: 'PENDING' });
    expect(log.find((delivery) => delivery.eventId === events[1])).toMatchObject({ status: 'CANCELLED' });

    const backwards = await t.request({
      method: 'POST',
      url: `/v1/webhooks/${subscription.id}/replay`,
      key: client.key,
      body: { since: until, until: startedAt.toISOString() },
    });
    expect(backwards.status).toBe(400);
    expect(backwards.body.code).toBe('VALIDATION_ERROR');

    // A leap second is a valid RFC 3339 time that no date can hold: 400 naming the field, not a 500.
    for (const [body, field] of [
      [{ since: '2026-06-30T23:59:60Z' }, 'since'],
      [{ since: startedAt.toISOString(), until: '2026-12-31T23:59:60Z' }, 'until'],
    ] as const) {
      const leap = await t.request({ method: 'POST', url: `/v1/webhooks/${subscription.id}/replay`, key: client.key, body });
      expect(leap.status, JSON.stringify(leap.body)).toBe(400);
      expect(leap.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field }] });
    }
  });
});

describe('another client', () => {
  it('cannot read, enable or replay the subscription (404), and its own subscription is unaffected', async () => {
    const { client, subscription, startedAt } = await disabledSubscription('Owner');
    const other = await t.newClient('Other');
    const healthy = await receiver('ok');
    const own = await subscribe(other, healthy.url());
    for (const request of [
      { url: `/v1/webhooks/${subscription.id}` },
      { method: 'PATCH' as const, url: `/v1/webhooks/${subscription.id}`, body: { active: true } },
      { method: 'POST' as const, url: `/v1/webhooks/${subscription.id}/replay`, body: { since: startedAt.toISOString() } },
    ]) {
      const response = await t.request({ ...request, key: other.key });
      expect(response.status, request.url).toBe(404);
    }
    expect(await webhook(client, subscription.id)).toMatchObject({ status: 'DISABLED' });
    const event = await record(other);
    await worker.deliverDue();
    expect(healthy.requestsFor(event)).toHaveLength(1);
    expect(await webhook(other, own.id)).toMatchObject({ status: 'ACTIVE', failingSince: null, disabledAt: null });
  });
});
