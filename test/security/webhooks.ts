import crypto from 'node:crypto';
import type { TestClient, TestContext } from '../harness.js';
import type { SecurityCase } from './types.js';

/** Nothing listens on the discard port of loopback: test sends fail fast with "connection refused". */
const unreachableUrl = 'http://127.0.0.1:9/hooks';

function webhookBody() {
  return { name: `security ${crypto.randomUUID()}`, url: unreachableUrl, subscribedEventTypes: ['CUSTOMER_CREATED'] };
}

async function createWebhook(t: TestContext, client: TestClient): Promise<string> {
  const response = await t.request({ method: 'POST', url: '/v1/webhooks', key: client.key, body: webhookBody() });
  if (response.status !== 201) throw new Error(`could not create a webhook: ${JSON.stringify(response.body)}`);
  return response.body.data.id as string;
}

async function createDelivery(t: TestContext, client: TestClient): Promise<string> {
  const id = await createWebhook(t, client);
  const response = await t.request({ method: 'POST', url: `/v1/webhooks/${id}/test`, key: client.key });
  if (response.status !== 200) throw new Error(`could not create a delivery: ${JSON.stringify(response.body)}`);
  return response.body.data.id as string;
}

export const webhookSecurityCases: SecurityCase[] = [
  { method: 'POST', route: '/v1/webhooks', ownsResource: false, prepare: async () => ({ url: '/v1/webhooks', body: webhookBody() }) },
  { method: 'GET', route: '/v1/webhooks', ownsResource: false, prepare: async () => ({ url: '/v1/webhooks' }) },
  {
    method: 'GET',
    route: '/v1/webhooks/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/webhooks/${await createWebhook(t, client)}` }),
  },
  {
    method: 'PATCH',
    route: '/v1/webhooks/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/webhooks/${await createWebhook(t, client)}`, body: { name: 'renamed' } }),
  },
  {
    method: 'DELETE',
    route: '/v1/webhooks/:id',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/webhooks/${await createWebhook(t, client)}` }),
  },
  {
    method: 'POST',
    route: '/v1/webhooks/:id/rotate-secret',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/webhooks/${await createWebhook(t, client)}/rotate-secret` }),
  },
  {
    method: 'POST',
    route: '/v1/webhooks/:id/test',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/webhooks/${await createWebhook(t, client)}/test` }),
  },
  {
    method: 'POST',
    route: '/v1/webhooks/:id/replay',
    ownsResource: true,
    prepare: async (t, client) => ({
      url: `/v1/webhooks/${await createWebhook(t, client)}/replay`,
      body: { since: new Date(t.clock.now().getTime() - 3_600_000).toISOString() },
    }),
  },
  {
    method: 'GET',
    route: '/v1/webhooks/:id/deliveries',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/webhooks/${await createWebhook(t, client)}/deliveries` }),
  },
  {
    method: 'POST',
    route: '/v1/webhooks/deliveries/:deliveryId/retry',
    ownsResource: true,
    prepare: async (t, client) => ({ url: `/v1/webhooks/deliveries/${await createDelivery(t, client)}/retry` }),
  },
];
