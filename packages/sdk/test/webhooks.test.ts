import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { DeliveryWorker } from '../../../src/modules/webhooks/index.js';
import { WebhookReceiver, type ReceivedWebhook } from '../../../test/webhook-receiver.js';
import { instantCustomer, startSdkServer, type SdkServer } from './server.js';
import { verifyWebhook, WebhookVerificationError, type OpenBaaS, type WebhookEvent, type WebhookEventOf, type WebhookVerificationReason } from '../src/index.js';

/** verifyWebhook against real deliveries of the server and against the reference implementation. */
let server: SdkServer;
let receiver: WebhookReceiver;
let api: OpenBaaS;
let secret: string;
/** A real delivery: the CUSTOMER_CREATED event of `customerId`. */
let delivery: ReceivedWebhook;
let customerId: string;

beforeAll(async () => {
  server = await startSdkServer();
  receiver = await WebhookReceiver.start();
  api = server.sdk();
  const { data: subscription } = await api.post('/v1/webhooks', { body: { name: 'sdk', url: receiver.url('/hooks'), subscribedEventTypes: ['*'] } });
  secret = subscription.secret;
  customerId = (await api.post('/v1/customers/individual', { body: instantCustomer('Hook') })).data.id;
  await new DeliveryWorker(server.t.deps).deliverDue();
  const received = receiver.requests.find((request) => JSON.parse(request.body).type === 'CUSTOMER_CREATED');
  if (!received) throw new Error('no CUSTOMER_CREATED delivery');
  delivery = received;
});
afterAll(async () => {
  await receiver.stop();
  await server.close();
});

async function refusal(promise: Promise<unknown>): Promise<WebhookVerificationReason> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  throw new Error('the webhook verified');
}

describe('verifyWebhook on real deliveries', () => {
  it('returns the typed event, the same as the reference implementation reads', async () => {
    const event = await verifyWebhook(delivery.body, delivery.headers, secret);
    expect(event).toEqual(new Webhook(secret).verify(delivery.body, delivery.headers));
    expect(event.id).toBe(delivery.headers['webhook-id']);
    if (event.type !== 'CUSTOMER_CREATED') throw new Error(`unexpected ${event.type}`);
    // Narrowed by `type`: the payload of this event type.
    expectTypeOf(event).toEqualTypeOf<WebhookEventOf<'CUSTOMER_CREATED'>>();
    expectTypeOf(event.data.customerId).toEqualTypeOf<string>();
    expect(event.data.customerId).toBe(customerId);
  });

  it('verifies every delivery received, of every type, from bytes or a Headers object too', async () => {
    await new DeliveryWorker(server.t.deps).deliverDue();
    expect(receiver.requests.length).toBeGreaterThan(0);
    const types = new Set<WebhookEvent['type']>();
    for (const request of receiver.requests) {
      const event = await verifyWebhook(new TextEncoder().encode(request.body), new Headers(request.headers), secret);
      types.add(event.type);
    }
    expect(types).toContain('CUSTOMER_CREATED');
  });

  it('refuses a changed body, another secret, missing headers and a malformed secret', async () => {
    expect(await refusal(verifyWebhook(delivery.body.replace(customerId, '01900000-0000-7000-8000-000000000000'), delivery.headers, secret))).toBe('INVALID_SIGNATURE');
    expect(await refusal(verifyWebhook(delivery.body, delivery.headers, `whsec_${btoa('another secret of 32 bytes......')}`))).toBe('INVALID_SIGNATURE');
    expect(await refusal(verifyWebhook(delivery.body, { ...delivery.headers, 'webhook-id': 'msg_other' }, secret))).toBe('INVALID_SIGNATURE');
    const { 'webhook-signature': _signature, ...unsigned } = delivery.headers;
    expect(await refusal(verifyWebhook(delivery.body, unsigned, secret))).toBe('MISSING_HEADERS');
    expect(await refusal(verifyWebhook(delivery.body, delivery.headers, 'not-a-secret'))).toBe('INVALID_SECRET');
  });

  it('refuses a delivery older or newer than five minutes (a replay), and takes one within them', async () => {
    const sentMs = Number(delivery.headers['webhook-timestamp']) * 1000;
    expect(await refusal(verifyWebhook(delivery.body, delivery.headers, secret, { now: sentMs + 301_000 }))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(await refusal(verifyWebhook(delivery.body, delivery.headers, secret, { now: sentMs - 301_000 }))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect((await verifyWebhook(delivery.body, delivery.headers, secret, { now: new Date(sentMs + 299_000) })).id).toBe(delivery.headers['webhook-id']);
    expect(await refusal(verifyWebhook(delivery.body, delivery.headers, secret, { now: sentMs + 61_000, toleranceSeconds: 60 }))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
  });
});

describe('verifyWebhook against the reference implementation (standardwebhooks)', () => {
  const body = JSON.stringify({ id: 'evt_1', type: 'CUSTOMER_CREATED', createdAt: '2026-03-01T12:00:00.000Z', data: { customerId: 'c1', traceId: 't1' } });

  it('accepts what the reference signs, and refuses what it refuses', async () => {
    const reference = new Webhook(secret);
    const now = new Date();
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': reference.sign('msg_1', now, body) };
    expect((await verifyWebhook(body, headers, secret)).type).toBe('CUSTOMER_CREATED');
    const old = new Date(now.getTime() - 400_000);
    const stale = { ...headers, 'webhook-timestamp': String(Math.floor(old.getTime() / 1000)), 'webhook-signature': reference.sign('msg_1', old, body) };
    expect(() => reference.verify(body, stale)).toThrow();
    expect(await refusal(verifyWebhook(body, stale, secret))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
  });

  it('accepts either signature while a rotated secret overlaps (two entries in webhook-signature)', async () => {
    const previous = `whsec_${btoa('the previous secret, 32 bytes...')}`;
    const now = new Date();
    const both = `${new Webhook(previous).sign('msg_2', now, body)} ${new Webhook(secret).sign('msg_2', now, body)}`;
    const headers = { 'webhook-id': 'msg_2', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': both };
    expect((await verifyWebhook(body, headers, secret)).id).toBe('evt_1');
    expect((await verifyWebhook(body, headers, previous)).id).toBe('evt_1');
    expect(await refusal(verifyWebhook(body, { ...headers, 'webhook-signature': both.replaceAll('v1,', 'v2,') }, secret))).toBe('INVALID_SIGNATURE');
  });
});
