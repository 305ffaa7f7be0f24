import { withTransaction } from '../../src/platform/db/transaction.js';
import { recordEvent } from '../../src/modules/webhooks/events.store.js';
import type { SecurityCase } from './types.js';

export const platformSecurityCases: SecurityCase[] = [
  { method: 'GET', route: '/v1/assets', ownsResource: false, prepare: async () => ({ url: '/v1/assets' }) },
  { method: 'GET', route: '/v1/events', ownsResource: false, prepare: async () => ({ url: '/v1/events' }) },
  { method: 'GET', route: '/v1/events/types', ownsResource: false, prepare: async () => ({ url: '/v1/events/types' }) },
  {
    method: 'GET',
    route: '/v1/events/:id',
    ownsResource: true,
    prepare: async (t, client) => {
      const event = await withTransaction(t.deps.db, (tx) =>
        recordEvent(tx, { clientId: client.id, traceId: 'security-test', now: t.clock.now() }, 'CUSTOMER_CREATED', { customerId: 'c1' }),
      );
      return { url: `/v1/events/${event.id}` };
    },
  },
];
