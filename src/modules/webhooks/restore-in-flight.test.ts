import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestContext } from '../../../test/harness.js';
import { individualBody } from '../../../test/customers/fixtures.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { DeliveryWorker } from './delivery-worker.js';

/**
 * A sandbox restore that commits while a delivery's attempt is in flight brings back the delivery
 * as the snapshot had it. The attempt's outcome, recorded afterwards, belongs to the state the
 * restore replaced: it is neither logged against the restored delivery nor counted in the
 * subscription's health (found by an audit: the restored subscription ended DISABLED "in the
 * future").
 */

let t: TestContext;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '1s,2s,3s', WEBHOOK_TIMEOUT_MS: '5000' } });
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

describe('an attempt in flight across a restore', () => {
  it('is not written into the restored state: no attempt on the restored delivery, no change to the endpoint health', async () => {
    const client = await t.newClient('restore in flight');
    const hook = await t.request({ method: 'POST', url: '/v1/webhooks', key: client.key, body: { name: 'flight', url: receiver.url('/flight'), subscribedEventTypes: ['CUSTOMER_CREATED'] } });
    expect(hook.status).toBe(201);
    const created = await t.request({ method: 'POST', url: '/v1/customers/individual', key: client.key, body: individualBody() });
    expect(created.status).toBe(201);
    const saved = await t.request({ method: 'POST', url: '/v1/sandbox/snapshots', key: client.key, body: { name: 'pending delivery' } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);

    receiver.mode = 'hang';
    const worker = new DeliveryWorker(t.deps);
    const sending = worker.deliverDue();
    for (let waited = 0; receiver.requests.filter((request) => request.path === '/flight').length === 0 && waited < 100; waited++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(receiver.requests.filter((request) => request.path === '/flight')).toHaveLength(1);
    // Without resendPendingDeliveries the restored pending delivery is cancelled: nothing claims it again.
    const restored = await t.request({ method: 'POST', url: `/v1/sandbox/snapshots/${saved.body.data.id as string}/restore`, key: client.key, body: {} });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    // The endpoint drops the connection: a failed attempt, recorded after the restore.
    receiver.release();
    await sending;
    receiver.mode = 'ok';

    const deliveries = (await t.request({ url: `/v1/webhooks/${hook.body.data.id as string}/deliveries`, key: client.key })).body.data as Array<{ status: string; attemptCount: number; attempts: unknown[] }>;
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ status: 'CANCELLED', attemptCount: 0, attempts: [] });
    const subscription = (await t.request({ url: `/v1/webhooks/${hook.body.data.id as string}`, key: client.key })).body.data;
    expect(subscription).toMatchObject({ status: 'ACTIVE', failingSince: null });
  });
});
