import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestClient, type TestContext } from '../../../test/harness.js';
import { createIndividual } from '../../../test/customers/fixtures.js';
import { fundWallet, newWallet } from '../../../test/ledger/fixtures.js';
import { verifyWebhook, WebhookReceiver } from '../../../test/webhook-receiver.js';
import { eventTypes } from './event-types.js';
import { DeliveryWorker } from './index.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** Subscribing to every event type with ["*"], and the catalogue at GET /v1/events/types. */
let t: TestContext;
let receiver: WebhookReceiver;
let worker: DeliveryWorker;

beforeAll(async () => {
  t = await createTestApp();
  receiver = await WebhookReceiver.start();
  worker = new DeliveryWorker(t.deps);
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

async function subscribe(client: TestClient, types: unknown): Promise<any> {
  return t.request({ method: 'POST', url: '/v1/webhooks', key: client.key, body: { name: 'all', url: receiver.url(), subscribedEventTypes: types } });
}

describe('["*"]', () => {
  it('delivers every event type, on the single-event and the batched paths', async () => {
    const client = await t.newClient('every event');
    const created = await subscribe(client, ['*']);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.subscribedEventTypes).toEqual(['*']);
    const secret: string = created.body.data.secret;

    const customer = await createIndividual(t, client);
    const source = await newWallet(t, client);
    const destination = await newWallet(t, client);
    await fundWallet(t, client.id, source, 1000n);
    const moved = await t.request({ method: 'POST', url: '/v1/internal-transfer', key: client.key, body: { sourceWalletId: source, destinationWalletId: destination, amount: '1.00', asset: 'USD' } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(201);
    await worker.deliverDue();

    const types = new Set(receiver.requests.filter((request) => verifyWebhook(secret, request)).map((request) => verifyWebhook(secret, request).type));
    expect(types.has('CUSTOMER_CREATED')).toBe(true);
    expect(types.has('INTERNAL_TRANSACTION_COMPLETED')).toBe(true);
    expect(receiver.requests.some((request) => verifyWebhook(secret, request).data.customerId === customer.id)).toBe(true);
  });

  it('keeps pending deliveries when a subscription widens to ["*"]', async () => {
    const client = await t.newClient('widening');
    const created = await subscribe(client, ['CUSTOMER_CREATED']);
    await createIndividual(t, client);
    const widened = await t.request({ method: 'PATCH', url: `/v1/webhooks/${created.body.data.id}`, key: client.key, body: { subscribedEventTypes: ['*'] } });
    expect(widened.status, JSON.stringify(widened.body)).toBe(200);
    const pending = await t.request({ url: `/v1/webhooks/${created.body.data.id}/deliveries?status=PENDING`, key: client.key });
    expect(pending.body.data.map((delivery: any) => delivery.eventType)).toContain('CUSTOMER_CREATED');
  });

  it('must stand alone (400 naming subscribedEventTypes)', async () => {
    const response = await subscribe(t.clientA, ['*', 'CUSTOMER_CREATED']);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_ERROR');
    expect(response.body.details).toEqual([{ field: 'subscribedEventTypes', message: expect.stringContaining('only entry') }]);
  });
});

describe('GET /v1/events/types', () => {
  it('lists the whole catalogue with each payload\'s schema, and WEBHOOK_TEST as test-only', async () => {
    const response = await t.request({ url: '/v1/events/types' });
    expect(response.status).toBe(200);
    const listed = response.body.data as any[];
    expect(listed.filter((entry) => !entry.testOnly).map((entry) => entry.type)).toEqual([...eventTypes]);
    expect(listed.find((entry) => entry.testOnly)?.type).toBe('WEBHOOK_TEST');
    for (const entry of listed) {
      expect(entry.description.length, entry.type).toBeGreaterThan(0);
      expect(entry.payloadSchema.properties.traceId, entry.type).toBeDefined();
    }
    expect(listed.find((entry) => entry.type === 'CUSTOMER_CREATED').payloadSchema.properties.customerId).toBeDefined();
  });
});
