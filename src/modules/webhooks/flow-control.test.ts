import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../test/harness.js';
import { verifyWebhook, WebhookReceiver } from '../../../test/webhook-receiver.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { DeliveryWorker } from './delivery-worker.js';
import { recordEvent } from './events.store.js';
import { EndpointFlowControl } from './flow-control.js';
import { parseRetryAfter, type PostOutcome } from './webhook-http.js';

const settings = { initial: 4, max: 10, growLatencyMs: 1000, decreaseSpacingMs: 1000, pauseMaxMs: 3_600_000 };
const ok = (latencyMs = 5): PostOutcome => ({ ok: true, httpStatus: 200, latencyMs, responseBody: 'ok', error: null });
const failed = (httpStatus: number | null, retryAfterMs?: number): PostOutcome => ({
  ok: false,
  httpStatus,
  latencyMs: 5,
  responseBody: null,
  error: httpStatus === null ? 'connection refused' : null,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});

describe('the flow control of one endpoint', () => {
  it('starts at the initial limit and grows by about one per full window of fast answers, up to the maximum', () => {
    const flow = new EndpointFlowControl(settings);
    expect(flow.limitOf('a', 0)).toBe(4);
    for (let index = 0; index < 4; index++) flow.observe('a', ok(), 0);
    expect(flow.limitOf('a', 0)).toBe(4);
    for (let index = 0; index < 2; index++) flow.observe('a', ok(), 0);
    expect(flow.limitOf('a', 0)).toBe(5);
    for (let index = 0; index < 500; index++) flow.observe('a', ok(), 0);
    expect(flow.limitOf('a', 0)).toBe(10);
    expect(flow.limitOf('other', 0)).toBe(4);
  });

  it('does not grow on slow answers', () => {
    const flow = new EndpointFlowControl(settings);
    for (let index = 0; index < 100; index++) flow.observe('a', ok(1500), 0);
    expect(flow.limitOf('a', 0)).toBe(4);
  });

  it('halves on timeouts, refused connections, 5xx and 429, once per spacing, never below 1; other 4xx change nothing', () => {
    const flow = new EndpointFlowControl(settings);
    for (let index = 0; index < 500; index++) flow.observe('a', ok(), 0);
    flow.observe('a', failed(503), 10_000);
    expect(flow.limitOf('a', 10_000)).toBe(5);
    flow.observe('a', failed(500), 10_500); // within the spacing: the same window's failure
    expect(flow.limitOf('a', 10_500)).toBe(5);
    flow.observe('a', failed(null), 11_000);
    expect(flow.limitOf('a', 11_000)).toBe(2);
    flow.observe('a', failed(429), 12_000);
    flow.observe('a', failed(502), 13_000);
    expect(flow.limitOf('a', 13_000)).toBe(1);
    flow.observe('a', failed(400), 20_000);
    flow.observe('a', failed(404), 21_000);
    expect(flow.limitOf('a', 21_000)).toBe(1);
  });

  it('pauses a subscription that answered 429 or 503 with Retry-After, capped, and lists it at 0 for the claim', () => {
    const flow = new EndpointFlowControl(settings);
    expect(flow.observe('a', failed(429, 30_000), 1000)).toBe(30_000);
    expect(flow.limitOf('a', 30_999)).toBe(0);
    expect(flow.claimLimits(30_999)).toEqual({ subscriptionIds: ['a'], limits: [0] });
    expect(flow.limitOf('a', 31_000)).toBe(2);
    expect(flow.observe('b', failed(503, 10 * 3_600_000), 0)).toBe(3_600_000);
    expect(flow.observe('c', failed(500, 30_000), 0)).toBeUndefined();
  });

  it('lists for the claim only the endpoints whose limit differs from the initial one', () => {
    const flow = new EndpointFlowControl(settings);
    for (let index = 0; index < 500; index++) flow.observe('fast', ok(), 0);
    flow.observe('steady', ok(2000), 0);
    expect(flow.claimLimits(0)).toEqual({ subscriptionIds: ['fast'], limits: [10] });
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('120', 0)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', 0)).toBe(0);
    const now = Date.parse('2026-03-01T12:00:00Z');
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('delivery with flow control', () => {
  let t: TestContext;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await createTestApp({
      env: { WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: '2', WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION_MAX: '12', WEBHOOK_RETRY_SCHEDULE: '1s,2s', WEBHOOK_TIMEOUT_MS: '2000' },
    });
  });
  afterAll(async () => {
    for (const receiver of receivers) await receiver.stop();
    await t.close();
  });

  async function endpoint(client: TestClient) {
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const response = await t.request({ method: 'POST', url: '/v1/webhooks', key: client.key, body: { name: 'flow', url: receiver.url(), subscribedEventTypes: ['CUSTOMER_CREATED'] } });
    expect(response.status).toBe(201);
    return { receiver, id: response.body.data.id as string, secret: response.body.data.secret as string };
  }

  async function events(client: TestClient, count: number) {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      const event = await withTransaction(t.deps.db, (tx) =>
        recordEvent(tx, { clientId: client.id, traceId: 'flow', now: t.clock.now() }, 'CUSTOMER_CREATED', { customerId: `c-${index}` }),
      );
      ids.push(event.id);
    }
    return ids;
  }

  it('grows the requests in flight of an endpoint that answers quickly, within the maximum, and delivers every event once', async () => {
    const client = await t.newClient('Grows');
    const { receiver, secret } = await endpoint(client);
    receiver.delayMs = 20;
    const ids = await events(client, 150);
    await new DeliveryWorker(t.deps).deliverDue();
    expect(receiver.openMax).toBeGreaterThan(2);
    expect(receiver.openMax).toBeLessThanOrEqual(12);
    expect(receiver.requests).toHaveLength(150);
    expect(new Set(receiver.requests.map((request) => request.headers['webhook-id']))).toEqual(new Set(ids));
    for (const request of receiver.requests) verifyWebhook(secret, request);
  });

  it('a 429 with Retry-After pauses that endpoint and moves its retry, while another client\'s endpoint is served', async () => {
    const limited = await t.newClient('Limited');
    const healthy = await t.newClient('Healthy');
    const slow = await endpoint(limited);
    const fine = await endpoint(healthy);
    slow.receiver.mode = 'error';
    slow.receiver.errorStatus = 429;
    slow.receiver.errorHeaders = { 'retry-after': '120' };
    const worker = new DeliveryWorker(t.deps);
    const [first] = await events(limited, 1);
    await worker.deliverDue();
    expect(slow.receiver.requests).toHaveLength(1);

    // Paused: nothing more goes to it, even a new event; the healthy endpoint gets everything.
    await events(limited, 3);
    const healthyIds = await events(healthy, 5);
    await worker.deliverDue();
    expect(slow.receiver.requests).toHaveLength(1);
    expect(fine.receiver.requests.map((request) => request.headers['webhook-id']).sort()).toEqual([...healthyIds].sort());

    // The refused delivery waits for the Retry-After, not for the 1 s of the retry schedule.
    const log = await t.request({ url: `/v1/webhooks/${slow.id}/deliveries?limit=10`, key: limited.key });
    const refused = (log.body.data as Array<{ eventId: string; status: string; nextAttemptAt: string; attempts: Array<{ httpStatus: number }> }>).find(
      (delivery) => delivery.eventId === first,
    );
    expect(refused?.status).toBe('PENDING');
    expect(refused?.attempts[0]?.httpStatus).toBe(429);
    expect(new Date(refused?.nextAttemptAt ?? 0).getTime() - t.clock.now().getTime()).toBeGreaterThanOrEqual(119_000);

    // After the pause the endpoint is served again.
    slow.receiver.mode = 'ok';
    t.clock.advance(121_000);
    await worker.deliverDue();
    expect(slow.receiver.requests).toHaveLength(5);
  });
});
